#include "checker/incident.hpp"

#include <algorithm>
#include <limits>

#include "checker/json_object.hpp"

namespace lockbench::checker {

using nlohmann::json;
using Fields = json_input::JsonObject<IncidentError>;

namespace {

const json* field_of(const json& object, const char* name) {
    if (!object.is_object())
        return nullptr;
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> Incident::span(std::int64_t open_end_ns) const {
    return {start_ns, std::max(end_ns.value_or(open_end_ns), last_overlap_ns)};
}

json Incident::to_json() const {
    return json{{"key", key},
                {"process", process},
                {"token", token},
                {"mode", mode == LockMode::Shared ? "shared" : "exclusive"},
                {"start_ns", start_ns},
                {"end_ns", end_ns ? json(*end_ns) : json(nullptr)},
                {"grants", grants},
                {"processes", processes},
                {"later_processes", later_processes},
                {"first_overlap_ns", first_overlap_ns},
                {"last_overlap_ns", last_overlap_ns},
                {"lost_updates", lost_updates},
                {"fencing_saves", fencing_saves},
                {"message", message}};
}

Incident Incident::from_json(const json& j, const std::string& path) {
    Fields f(j, "", path, /*null_is_absent=*/true);
    constexpr std::int64_t kLowest = std::numeric_limits<std::int64_t>::min();
    constexpr std::int64_t kHighest = std::numeric_limits<std::int64_t>::max();
    const auto count = [&](const char* name) {
        return static_cast<std::uint64_t>(f.integer(name, 0, 0, kHighest));
    };
    Incident i;
    i.key = f.string("key", "");
    i.process = f.integer("process", 0, kLowest, kHighest);
    i.token = f.string("token", "");
    i.mode = f.choice("mode", LockMode::Exclusive,
                      {{"exclusive", LockMode::Exclusive}, {"shared", LockMode::Shared}});
    i.start_ns = f.integer("start_ns", 0, kLowest, kHighest);
    if (f.find("end_ns"))
        i.end_ns = f.integer("end_ns", 0, kLowest, kHighest);
    i.grants = count("grants");
    const auto process_list = [&](const char* name) {
        std::vector<std::int64_t> out;
        if (const json* ps = f.optional_array(name)) {
            for (std::size_t n = 0; n < ps->size(); ++n) {
                const json& p = (*ps)[n];
                if (!p.is_number_integer())
                    f.fail(f.at(name) + "/" + std::to_string(n),
                           "must be an integer, not " + json_input::type_name(p));
                out.push_back(p.get<std::int64_t>());
            }
        }
        return out;
    };
    i.processes = process_list("processes");
    i.later_processes = process_list("later_processes");
    i.first_overlap_ns = f.integer("first_overlap_ns", 0, kLowest, kHighest);
    i.last_overlap_ns = f.integer("last_overlap_ns", 0, kLowest, kHighest);
    i.lost_updates = count("lost_updates");
    i.fencing_saves = count("fencing_saves");
    i.message = f.string("message", "");
    return i;
}

std::vector<Incident> listed_incidents(const Report& report) {
    std::vector<Incident> out;
    const CheckResult* me = report.check("mutual_exclusion");
    if (!me)
        return out;
    const json* list = field_of(me->fields, "incident_list");
    if (!list || list->is_null())
        return out;
    if (!list->is_array())
        throw IncidentError(std::string(kIncidentListPath) + ": must be an array, not " +
                            json_input::type_name(*list));
    for (std::size_t n = 0; n < list->size(); ++n)
        out.push_back(
            Incident::from_json((*list)[n], kIncidentListPath + ("/" + std::to_string(n))));
    return out;
}

std::uint64_t incident_count(const Report& report) {
    const CheckResult* me = report.check("mutual_exclusion");
    return me ? me->count("incidents") : 0;
}

}  // namespace lockbench::checker
