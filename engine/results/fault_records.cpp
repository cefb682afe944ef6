#include "engine/results/fault_records.hpp"

#include <utility>

namespace lockbench {

using json = nlohmann::json;

namespace {

std::string scalar_text(const json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

}  // namespace

std::string describe_target(const json& target) {
    if (target.is_null())
        return "";
    if (!target.is_object())
        return scalar_text(target);
    // The field that names whom the fault hit comes first; the rest qualify it.
    static const std::vector<std::pair<std::string, std::string>> subjects = {
        {"client", "client "},
        {"node", "node "},
        {"holder", "the holder of "},
        {"master_of", "the master of "},
        {"from", "from "}};
    std::string subject;
    std::string subject_key;
    for (const auto& [key, words] : subjects) {
        if (const auto it = target.find(key); it != target.end()) {
            subject = words + scalar_text(*it);
            subject_key = key;
            break;
        }
    }
    std::string details;
    for (auto it = target.begin(); it != target.end(); ++it) {
        if (it.key() == subject_key)
            continue;
        // A role ("leader") or a shape ("hosts") reads on its own; a number needs its name.
        const bool bare = it.key() == "role" || it.key() == "shape";
        std::string part =
            bare ? scalar_text(it.value()) : it.key() + " " + scalar_text(it.value());
        if (it.key() == "point")
            part = "at " + scalar_text(it.value());
        details += (details.empty() ? "" : ", ") + part;
    }
    if (subject.empty())
        return details;
    return details.empty() ? subject : subject + " (" + details + ")";
}

json FaultWindow::to_json() const {
    return json{{"fault", fault},
                {"target", target},
                {"start_s", start_s},
                {"end_s", end_s ? json(*end_s) : json(nullptr)}};
}

bool FaultFiring::aimed_at_holder() const {
    return target.is_object() && target.contains("holder");
}

json FaultFiring::to_json() const {
    json entry{{"fault", fault},
               {"target", target},
               {"at_s", at_s},
               {"due", due},
               {"took_effect", took_effect},
               {"missed", missed ? json(*missed) : json(nullptr)}};
    if (point)
        entry["point"] = *point;
    if (processes)
        entry["processes"] = *processes;
    return entry;
}

}  // namespace lockbench
