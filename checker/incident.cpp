#include "checker/incident.hpp"

#include <algorithm>
#include <limits>

#include "checker/json_object.hpp"

namespace lockbench::checker {

using nlohmann::json;
using Fields = json_input::JsonObject<IncidentError>;

namespace {

constexpr std::int64_t kLowest = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kHighest = std::numeric_limits<std::int64_t>::max();

const json* field_of(const json& object, const char* name) {
    if (!object.is_object())
        return nullptr;
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
}

// The hold an incident is about and a hold in a witness are read alike: whose, with what token
// and mode, from when to when (no end: open at the end of the history).
template <class Hold>
void read_hold(Fields& f, Hold& h) {
    h.process = f.integer("process", 0, kLowest, kHighest);
    h.token = f.string("token", "");
    h.mode = f.choice("mode", LockMode::Exclusive,
                      {{"exclusive", LockMode::Exclusive}, {"shared", LockMode::Shared}});
    h.start_ns = f.integer("start_ns", 0, kLowest, kHighest);
    if (f.find("end_ns"))
        h.end_ns = f.integer("end_ns", 0, kLowest, kHighest);
}

// ... and written alike.
template <class Hold>
json hold_fields(const Hold& h) {
    return json{{"process", h.process},
                {"token", h.token},
                {"mode", lock_mode_word(h.mode)},
                {"start_ns", h.start_ns},
                {"end_ns", h.end_ns ? json(*h.end_ns) : json(nullptr)}};
}

}  // namespace

std::pair<std::int64_t, std::int64_t> Incident::span(std::int64_t open_end_ns) const {
    return {start_ns, std::max(end_ns.value_or(open_end_ns), last_overlap_ns)};
}

json Incident::to_json() const {
    json j = hold_fields(*this);
    j.update(json{{"key", key},
                  {"grants", grants},
                  {"processes", processes},
                  {"later_processes", later_processes},
                  {"first_overlap_ns", first_overlap_ns},
                  {"last_overlap_ns", last_overlap_ns},
                  {"lost_updates", lost_updates},
                  {"fencing_saves", fencing_saves},
                  {"message", message}});
    return j;
}

Incident Incident::from_json(const json& j, const std::string& path) {
    Fields f(j, "", path, /*null_is_absent=*/true);
    const auto count = [&](const char* name) {
        return static_cast<std::uint64_t>(f.integer(name, 0, 0, kHighest));
    };
    Incident i;
    i.key = f.string("key", "");
    read_hold(f, i);
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

namespace {

std::uint64_t index_field(Fields& f, const char* name) {
    return static_cast<std::uint64_t>(f.integer(name, 0, 0, kHighest));
}

json hold_json(const OverlapEvidence::Hold& h) {
    json j = hold_fields(h);
    j["start_index"] = h.start_index;
    return j;
}

OverlapEvidence::Hold hold_from(const json& j, const std::string& path) {
    Fields f(j, "", path, /*null_is_absent=*/true);
    OverlapEvidence::Hold h;
    read_hold(f, h);
    h.start_index = index_field(f, "start_index");
    return h;
}

json write_json(const LostUpdateEvidence::Write& w) {
    return json{
        {"process", w.process}, {"value", w.value}, {"time_ns", w.time_ns}, {"index", w.index}};
}

LostUpdateEvidence::Write write_from(const json& j, const std::string& path) {
    Fields f(j, "", path, /*null_is_absent=*/true);
    return {.process = f.integer("process", 0, kLowest, kHighest),
            .value = f.integer("value", 0, kLowest, kHighest),
            .time_ns = f.integer("time_ns", 0, kLowest, kHighest),
            .index = index_field(f, "index")};
}

// Each listed witness of `kind` with evidence, read by `read` at its summary.json path.
template <class Evidence>
std::vector<Evidence> evidence_of(const Report& report, const char* kind) {
    std::vector<Evidence> out;
    for (std::size_t n = 0; n < report.witnesses.size(); ++n) {
        const Witness& w = report.witnesses[n];
        if (w.kind != kind || w.evidence.is_null())
            continue;
        out.push_back(Evidence::from_json(w.evidence,
                                          "/verdict/violations/" + std::to_string(n) + "/witness"));
    }
    return out;
}

}  // namespace

json OverlapEvidence::to_json() const {
    return json{{"key", key},
                {"first", hold_json(first)},
                {"second", hold_json(second)},
                {"overlap_ns", overlap_ns},
                {"released_by", released_by ? json{{"process", released_by->process},
                                                   {"token", released_by->token},
                                                   {"time_ns", released_by->time_ns},
                                                   {"index", released_by->index}}
                                            : json(nullptr)}};
}

OverlapEvidence OverlapEvidence::from_json(const json& j, const std::string& path) {
    Fields f(j, "", path, /*null_is_absent=*/true);
    OverlapEvidence e;
    e.key = f.string("key", "");
    e.first = hold_from(f.require("first"), f.at("first"));
    e.second = hold_from(f.require("second"), f.at("second"));
    e.overlap_ns = f.integer("overlap_ns", 0, kLowest, kHighest);
    if (const json* r = f.optional_object("released_by")) {
        Fields rf(*r, "", f.at("released_by"), /*null_is_absent=*/true);
        e.released_by = Release{.process = rf.integer("process", 0, kLowest, kHighest),
                                .token = rf.string("token", ""),
                                .time_ns = rf.integer("time_ns", 0, kLowest, kHighest),
                                .index = index_field(rf, "index")};
    }
    return e;
}

json LostUpdateEvidence::to_json() const {
    json j{{"key", key}, {"overwritten", write_json(overwritten)}, {"write", write_json(write)}};
    if (late)
        j["late"] = write_json(*late);
    return j;
}

LostUpdateEvidence LostUpdateEvidence::from_json(const json& j, const std::string& path) {
    Fields f(j, "", path, /*null_is_absent=*/true);
    LostUpdateEvidence e;
    e.key = f.string("key", "");
    e.overwritten = write_from(f.require("overwritten"), f.at("overwritten"));
    e.write = write_from(f.require("write"), f.at("write"));
    if (const json* late = f.find("late"))
        e.late = write_from(*late, f.at("late"));
    return e;
}

std::vector<OverlapEvidence> overlap_evidence(const Report& report) {
    return evidence_of<OverlapEvidence>(report, "mutual_exclusion");
}

std::vector<LostUpdateEvidence> lost_update_evidence(const Report& report) {
    return evidence_of<LostUpdateEvidence>(report, "resource");
}

std::uint64_t incident_count(const Report& report) {
    const CheckResult* me = report.check("mutual_exclusion");
    return me ? me->count("incidents") : 0;
}

}  // namespace lockbench::checker
