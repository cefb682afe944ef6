#include "checker/incident.hpp"

#include <algorithm>

namespace lockbench::checker {

using nlohmann::json;

namespace {

const json* field_of(const json& object, const char* name) {
    if (!object.is_object())
        return nullptr;
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
}

std::string text_of(const json& object, const char* name) {
    const json* v = field_of(object, name);
    return v && v->is_string() ? v->get<std::string>() : std::string();
}

std::optional<std::int64_t> integer_of(const json& object, const char* name) {
    const json* v = field_of(object, name);
    if (v && v->is_number_integer())
        return v->get<std::int64_t>();
    return std::nullopt;
}

std::uint64_t count_of(const json& object, const char* name) {
    return static_cast<std::uint64_t>(
        std::max<std::int64_t>(0, integer_of(object, name).value_or(0)));
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
                {"first_overlap_ns", first_overlap_ns},
                {"last_overlap_ns", last_overlap_ns},
                {"lost_updates", lost_updates},
                {"fencing_saves", fencing_saves},
                {"message", message}};
}

Incident Incident::from_json(const json& j) {
    Incident i;
    i.key = text_of(j, "key");
    i.process = integer_of(j, "process").value_or(0);
    i.token = text_of(j, "token");
    i.mode = text_of(j, "mode") == "shared" ? LockMode::Shared : LockMode::Exclusive;
    i.start_ns = integer_of(j, "start_ns").value_or(0);
    i.end_ns = integer_of(j, "end_ns");
    i.grants = count_of(j, "grants");
    if (const json* ps = field_of(j, "processes"); ps && ps->is_array()) {
        for (const json& p : *ps) {
            if (p.is_number_integer())
                i.processes.push_back(p.get<std::int64_t>());
        }
    }
    i.first_overlap_ns = integer_of(j, "first_overlap_ns").value_or(0);
    i.last_overlap_ns = integer_of(j, "last_overlap_ns").value_or(0);
    i.lost_updates = count_of(j, "lost_updates");
    i.fencing_saves = count_of(j, "fencing_saves");
    i.message = text_of(j, "message");
    return i;
}

std::vector<Incident> listed_incidents(const Report& report) {
    std::vector<Incident> out;
    const CheckResult* me = report.check("mutual_exclusion");
    if (!me)
        return out;
    const json* list = field_of(me->fields, "incident_list");
    if (!list || !list->is_array())
        return out;
    for (const json& i : *list) {
        if (i.is_object())
            out.push_back(Incident::from_json(i));
    }
    return out;
}

std::uint64_t incident_count(const Report& report) {
    const CheckResult* me = report.check("mutual_exclusion");
    return me ? me->count("incidents") : 0;
}

}  // namespace lockbench::checker
