#include "engine/ci/suite_row.hpp"

#include <limits>

#include "checker/json_object.hpp"
#include "engine/results/result_fields.hpp"
#include "engine/results/run_summary.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

using Fields = json_input::JsonObject<SuiteInputError>;

constexpr std::int64_t kMaxCount = std::numeric_limits<std::int64_t>::max();

json verdict_or_not_run(const std::optional<checker::Verdict>& verdict) {
    return verdict ? checker::to_json(*verdict) : json("not-run");
}

template <typename T>
json optional_json(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

int count(Fields& f, const std::string& field) {
    return static_cast<int>(f.integer(field, 0, 0, std::numeric_limits<int>::max()));
}

std::vector<std::string> string_list(Fields& f, const std::string& field) {
    std::vector<std::string> out;
    if (const json* list = f.optional_array(field)) {
        for (std::size_t i = 0; i < list->size(); ++i)
            out.push_back(f.string_of((*list)[i], f.at(field) + "/" + std::to_string(i)));
    }
    return out;
}

std::vector<std::uint64_t> whole_seconds_cycles(Fields& f) {
    std::vector<std::uint64_t> out;
    if (const json* series = f.optional_array("cycles_per_second")) {
        for (std::size_t s = 0; s < series->size(); ++s) {
            const json& v = (*series)[s];
            // Written in memory a count may be a signed integer; parsed from text, unsigned.
            const bool count =
                v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
            if (!count) {
                f.fail(f.at("cycles_per_second") + "/" + std::to_string(s),
                       "must be a whole number of cycles, not " + v.dump());
            }
            out.push_back(v.get<std::uint64_t>());
        }
    }
    return out;
}

std::map<std::string, CheckCounts> check_counts(Fields& f) {
    std::map<std::string, CheckCounts> out;
    const json* checks = f.optional_object("checks");
    if (!checks)
        return out;
    for (const auto& [name, counts] : checks->items()) {
        Fields c(counts, f.origin(), f.at("checks") + "/" + name);
        CheckCounts& cell = out[name];
        cell.counts.violated = count(c, "violated");
        cell.counts.valid = count(c, "valid");
        cell.counts.unknown = count(c, "unknown");
        cell.counts.not_applicable = count(c, "not_applicable");
        cell.runs = count(c, "runs");
    }
    return out;
}

RepeatedRuns repeated_runs(Fields& f) {
    RepeatedRuns r;
    r.repeat = count(f, "repeat");
    r.runs = count(f, "runs");
    r.dirs = string_list(f, "dirs");
    r.violated_runs = count(f, "violated_runs");
    r.as_expected_runs = count(f, "as_expected_runs");
    r.checks = check_counts(f);
    r.rate_terms = result_fields::read_rate_terms(f);
    return r;
}

}  // namespace

json SuiteRow::to_json() const {
    json row = {{"scenario", scenario},
                {"strategy", strategy},
                {"dir", dir},
                {"cycles_per_s", cycles_per_s},
                {"cycles_per_second", cycles_per_second},
                {"duration_s", duration_s},
                {"faults", faults},
                {"acquire_p50_ms", acquire_p50_ms},
                {"acquire_p99_ms", acquire_p99_ms},
                {"server_us_per_cycle", optional_json(server_us_per_cycle)},
                {"bottleneck", optional_json(bottleneck)},
                {"valid", checker::to_json(valid)},
                {"violations", violations},
                {"violation_kinds", violation_kinds},
                {"linearizability", verdict_or_not_run(linearizability)},
                {"unknown_reasons", unknown_reasons},
                {"expected", optional_json(expected)},
                {"as_expected", optional_json(as_expected)},
                {"attempts", attempts},
                {"wall_s", optional_json(wall_s)}};
    if (round)
        row["repeat"] = *round;
    if (repeated) {
        json checks = json::object();
        for (const auto& [name, cell] : repeated->checks) {
            checks[name] = {{"violated", cell.counts.violated},
                            {"valid", cell.counts.valid},
                            {"unknown", cell.counts.unknown},
                            {"not_applicable", cell.counts.not_applicable},
                            {"runs", cell.runs}};
        }
        json terms = json::array();
        for (const auto& term : repeated->rate_terms)
            terms.push_back(term.to_json());
        row["repeat"] = repeated->repeat;
        row["runs"] = repeated->runs;
        row["dirs"] = repeated->dirs;
        row["violated_runs"] = repeated->violated_runs;
        row["as_expected_runs"] = repeated->as_expected_runs;
        row["checks"] = checks;
        row["rate_terms"] = terms;
    }
    return row;
}

SuiteRow SuiteRow::from_json(const json& j, const std::string& origin, const std::string& path) {
    Fields f(j, origin, path);
    SuiteRow r;
    r.scenario = f.required_string("scenario");
    r.strategy = f.required_string("strategy");
    r.dir = f.string("dir", "");
    r.cycles_per_s = f.number("cycles_per_s", 0, 0);
    r.cycles_per_second = whole_seconds_cycles(f);
    r.duration_s = f.number("duration_s", 0, 0);
    r.faults = f.boolean("faults", false);
    r.acquire_p50_ms = f.number("acquire_p50_ms", 0, 0);
    r.acquire_p99_ms = f.number("acquire_p99_ms", 0, 0);
    r.server_us_per_cycle = f.optional_number("server_us_per_cycle", 0);
    r.bottleneck = f.optional_string("bottleneck");
    // An older or partial row without a verdict reads as the gate reads it: unknown.
    if (const json* valid = f.find("valid"))
        r.valid = verdict_at(f, *valid, f.at("valid"));
    r.violations = static_cast<std::uint64_t>(f.integer("violations", 0, 0, kMaxCount));
    r.violation_kinds = string_list(f, "violation_kinds");
    if (const json* lin = f.find("linearizability"); lin && *lin != "not-run")
        r.linearizability = verdict_at(f, *lin, f.at("linearizability"));
    r.unknown_reasons = string_list(f, "unknown_reasons");
    r.expected = f.optional_string("expected");
    r.as_expected = f.optional_boolean("as_expected");
    r.attempts = static_cast<int>(f.integer("attempts", 1, 1, std::numeric_limits<int>::max()));
    r.wall_s = f.optional_number("wall_s", 0);
    // A pair's row counts its runs; a single run of a repeated suite carries its round.
    if (f.find("runs"))
        r.repeated = repeated_runs(f);
    else if (f.find("repeat"))
        r.round = count(f, "repeat");
    return r;
}

}  // namespace lockbench
