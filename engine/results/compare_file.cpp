#include "engine/results/compare_file.hpp"

#include <limits>

#include "engine/results/result_fields.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

using CompareFields = json_input::JsonObject<CompareError>;
using result_fields::object_at;
using result_fields::read_rate_terms;
using result_fields::required_int;

json optional_json(const std::optional<double>& v) {
    return v ? json(*v) : json(nullptr);
}

json counts_json(const CompareCounts& c) {
    return json{{"violated", c.violated},
                {"valid", c.valid},
                {"unknown", c.unknown},
                {"not_applicable", c.not_applicable},
                {"runs", c.runs},
                {"violation_rate", optional_json(c.violation_rate)},
                {"wilson_95", {c.wilson_95.first, c.wilson_95.second}}};
}

json spread_json(const CompareSpread& s) {
    return json{{"median", optional_json(s.median)},
                {"min", optional_json(s.min)},
                {"max", optional_json(s.max)}};
}

json rate_terms_json(const std::vector<RateTermOutcome>& terms) {
    json out = json::array();
    for (const RateTermOutcome& t : terms)
        out.push_back(t.to_json());
    return out;
}

json stats_json(const CompareStrategyStats& s) {
    json checks = json::object();
    for (const auto& [name, counts] : s.checks)
        checks[name] = counts_json(counts);
    return json{{"runs", s.runs},
                {"verdict", counts_json(s.verdict)},
                {"checks", checks},
                {"expected", s.expected ? json(*s.expected) : json(nullptr)},
                {"as_expected", s.as_expected ? json(*s.as_expected) : json(nullptr)},
                {"expectation_met", s.expectation_met ? json(*s.expectation_met) : json(nullptr)},
                {"rate_terms", rate_terms_json(s.rate_terms)},
                {"cycles_per_s", spread_json(s.cycles_per_s)},
                {"acquire_p99_ms", spread_json(s.acquire_p99_ms)},
                {"server_us_per_cycle",
                 s.server_us_per_cycle ? spread_json(*s.server_us_per_cycle) : json(nullptr)},
                {"run_folders", s.run_folders},
                {"reading", s.reading}};
}

json run_json(const CompareRun& r) {
    json checks = json::object();
    for (const auto& [name, verdict] : r.checks)
        checks[name] = checker::to_json(verdict);
    return json{{"round", r.round},
                {"setting", r.setting},
                {"strategy", r.strategy},
                {"run", r.run},
                {"verdict", checker::to_json(r.verdict)},
                {"checks", checks},
                {"unknown_reasons", r.unknown_reasons},
                {"expected", r.expected ? json(*r.expected) : json(nullptr)},
                {"as_expected", r.as_expected ? json(*r.as_expected) : json(nullptr)},
                {"cycles_per_s", r.cycles_per_s},
                {"acquire_p99_ms", r.acquire_p99_ms},
                {"server_us_per_cycle", optional_json(r.server_us_per_cycle)},
                {"expected_terms", r.expected_terms},
                {"exit_code", r.exit_code}};
}

// A number, or null for none; required either way.
std::optional<double> number_or_null(CompareFields& f, const std::string& field) {
    const json& v = f.require(field);
    if (v.is_null())
        return std::nullopt;
    return f.number_of(v, f.at(field));
}

std::vector<std::string> strings_at(CompareFields& f, const std::string& field) {
    const json& list = f.required_array(field);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < list.size(); ++i)
        out.push_back(f.string_of(list[i], f.at(field) + "/" + std::to_string(i)));
    return out;
}

std::size_t index_at(CompareFields& f, const std::string& field) {
    return static_cast<std::size_t>(result_fields::required_count(f, field));
}

CompareCounts read_counts(CompareFields& f) {
    CompareCounts c{.violated = required_int(f, "violated"),
                    .valid = required_int(f, "valid"),
                    .unknown = required_int(f, "unknown"),
                    .not_applicable = required_int(f, "not_applicable"),
                    .runs = required_int(f, "runs"),
                    .violation_rate = number_or_null(f, "violation_rate")};
    const json& interval = f.required_array("wilson_95");
    if (interval.size() != 2)
        f.fail(f.at("wilson_95"), "must be [low, high], not " + interval.dump());
    c.wilson_95 = {f.number_of(interval[0], f.at("wilson_95") + "/0"),
                   f.number_of(interval[1], f.at("wilson_95") + "/1")};
    return c;
}

CompareSpread read_spread(CompareFields& f) {
    return {.median = number_or_null(f, "median"),
            .min = number_or_null(f, "min"),
            .max = number_or_null(f, "max")};
}

// A field of JSON kept as written, an array; absent in files written before it: [].
json array_or_empty(CompareFields& f, const std::string& field) {
    const json* v = f.optional_array(field);
    return v ? *v : json::array();
}

CompareStrategyStats read_stats(const json& j, const std::string& origin, const std::string& path) {
    CompareFields f(j, origin, path);
    CompareStrategyStats s;
    s.runs = required_int(f, "runs");
    CompareFields verdict = object_at(f, "verdict");
    s.verdict = read_counts(verdict);
    const json& checks = f.require("checks");
    const CompareFields checks_object(checks, origin, f.at("checks"));
    for (const auto& [name, counts] : checks.items()) {
        CompareFields c(counts, origin, f.at("checks") + "/" + name);
        s.checks[name] = read_counts(c);
    }
    s.expected = f.string_or_null("expected");
    if (const json& k = f.require("as_expected"); !k.is_null())
        s.as_expected = required_int(f, "as_expected");
    s.expectation_met = f.optional_boolean("expectation_met");
    s.rate_terms = read_rate_terms(f);
    CompareFields throughput = object_at(f, "cycles_per_s");
    s.cycles_per_s = read_spread(throughput);
    CompareFields p99 = object_at(f, "acquire_p99_ms");
    s.acquire_p99_ms = read_spread(p99);
    // null: the servers were not measured; absent in files written before it was.
    if (const json* cost = f.find("server_us_per_cycle"); cost && !cost->is_null()) {
        CompareFields spread(*cost, origin, f.at("server_us_per_cycle"));
        s.server_us_per_cycle = read_spread(spread);
    }
    s.run_folders = strings_at(f, "run_folders");
    s.reading = f.required_string("reading");
    return s;
}

CompareSetting read_setting(const json& j, const std::string& origin, const std::string& path) {
    CompareFields f(j, origin, path);
    CompareSetting setting;
    const json& at = f.require("at");
    const CompareFields at_object(at, origin, f.at("at"));
    for (const auto& [field, value] : at.items())
        setting.at[field] = at_object.number_of(value, f.at("at") + "/" + field);
    const json& all = f.require("strategies");
    const CompareFields all_object(all, origin, f.at("strategies"));
    for (const auto& [strategy, stats] : all.items())
        setting.strategies[strategy] =
            read_stats(stats, origin, f.at("strategies") + "/" + strategy);
    return setting;
}

checker::Verdict verdict_field(CompareFields& f, const std::string& field) {
    return verdict_at(f, f.require(field), f.at(field));
}

CompareRun read_run(const json& j, const std::string& origin, const std::string& path) {
    CompareFields f(j, origin, path);
    CompareRun r{.round = required_int(f, "round"),
                 .setting = index_at(f, "setting"),
                 .strategy = f.required_string("strategy"),
                 .run = f.required_string("run"),
                 .verdict = verdict_field(f, "verdict")};
    const json& checks = f.require("checks");
    const CompareFields checks_object(checks, origin, f.at("checks"));
    for (const auto& [name, valid] : checks.items())
        r.checks[name] = verdict_at(checks_object, valid, f.at("checks") + "/" + name);
    r.unknown_reasons = strings_at(f, "unknown_reasons");
    r.expected = f.string_or_null("expected");
    r.as_expected = f.boolean_or_null("as_expected");
    r.cycles_per_s = f.required_number("cycles_per_s");
    r.acquire_p99_ms = f.required_number("acquire_p99_ms");
    r.server_us_per_cycle = f.optional_number("server_us_per_cycle");
    r.expected_terms = array_or_empty(f, "expected_terms");
    r.exit_code = required_int(f, "exit_code");
    return r;
}

CompareFailure read_failure(const json& j, const std::string& origin, const std::string& path) {
    CompareFields f(j, origin, path);
    return {.round = required_int(f, "round"),
            .setting = index_at(f, "setting"),
            .strategy = f.required_string("strategy"),
            .error = f.required_string("error"),
            .exit_code = required_int(f, "exit_code")};
}

CompareAxis read_axis(const json& j, const std::string& origin, const std::string& path) {
    CompareFields f(j, origin, path);
    CompareAxis axis{.field = f.required_string("field"), .path = f.required_string("path")};
    const json& values = f.required_array("values");
    for (std::size_t i = 0; i < values.size(); ++i)
        axis.values.push_back(f.number_of(values[i], f.at("values") + "/" + std::to_string(i)));
    return axis;
}

// Each element of the array `field` read by `read` at its own path.
template <class Read>
auto read_each(CompareFields& top, const std::string& field, Read read) {
    const json& list = top.required_array(field);
    std::vector<decltype(read(list, top.origin(), std::string()))> out;
    for (std::size_t i = 0; i < list.size(); ++i)
        out.push_back(read(list[i], top.origin(), top.at(field) + "/" + std::to_string(i)));
    return out;
}

void check_format(CompareFields& top) {
    const json& format = top.require("format");
    if (format != kCompareFormat)
        top.fail("/format", format.dump() + " is not " + kCompareFormat);
    const json& version = top.require("version");
    if (version != kCompareVersion)
        top.fail("/version", version.dump() + " is not one this build reads (" +
                                 std::to_string(kCompareVersion) + ")");
}

}  // namespace

const CompareStrategyStats* CompareFile::stats_at(const std::string& strategy, std::size_t column,
                                                  std::size_t row) const {
    const std::size_t columns = sweep.empty() ? 1 : sweep[0].values.size();
    const std::size_t index = row * columns + column;
    if (index >= settings.size())
        return nullptr;
    const auto it = settings[index].strategies.find(strategy);
    return it == settings[index].strategies.end() ? nullptr : &it->second;
}

json CompareFile::to_json() const {
    json sweep_json = json::array();
    for (const CompareAxis& axis : sweep)
        sweep_json.push_back({{"field", axis.field}, {"path", axis.path}, {"values", axis.values}});
    json settings_json = json::array();
    for (const CompareSetting& setting : settings) {
        json per_strategy = json::object();
        for (const auto& [strategy, stats] : setting.strategies)
            per_strategy[strategy] = stats_json(stats);
        json at = json::object();
        for (const auto& [field, value] : setting.at)
            at[field] = value;
        settings_json.push_back({{"at", at}, {"strategies", per_strategy}});
    }
    json runs_json = json::array();
    for (const CompareRun& r : runs)
        runs_json.push_back(run_json(r));
    json failed_json = json::array();
    for (const CompareFailure& f : failed) {
        failed_json.push_back({{"round", f.round},
                               {"setting", f.setting},
                               {"strategy", f.strategy},
                               {"error", f.error},
                               {"exit_code", f.exit_code}});
    }
    json out{{"format", kCompareFormat},
             {"version", kCompareVersion},
             {"kind", kind},
             {"scenario", scenario},
             {"strategies", strategies},
             {"repeat", repeat},
             {"duration_s", duration_s},
             {"seed", seed},
             {"confidence", confidence},
             {"sweep", sweep_json},
             {"settings", settings_json},
             {"runs_planned", runs_planned},
             {"runs", runs_json},
             {"failed", failed_json},
             {"runs_done", runs_done},
             {"interrupted", interrupted},
             {"complete", complete},
             {"reading", reading}};
    if (interrupted_run)
        out["interrupted_run"] = *interrupted_run;
    if (yardstick)
        out["yardstick"] = *yardstick;
    return out;
}

CompareFile CompareFile::from_json(const json& j, const std::string& origin) {
    CompareFields top(j, origin, "");
    check_format(top);
    CompareFile c;
    c.kind = top.required_string("kind");
    c.scenario = top.required_string("scenario");
    c.strategies = strings_at(top, "strategies");
    c.repeat = required_int(top, "repeat");
    c.duration_s = top.required_number("duration_s", 0);
    c.seed = result_fields::required_count(top, "seed");
    c.confidence = top.required_number("confidence", 0, 1);
    c.sweep = read_each(top, "sweep", read_axis);
    c.settings = read_each(top, "settings", read_setting);
    c.runs_planned = index_at(top, "runs_planned");
    c.runs = read_each(top, "runs", read_run);
    c.failed = read_each(top, "failed", read_failure);
    c.runs_done = index_at(top, "runs_done");
    c.interrupted = top.required_boolean("interrupted");
    c.complete = top.required_boolean("complete");
    c.interrupted_run = top.optional_string("interrupted_run");
    if (const json* y = top.optional_object("yardstick"))
        c.yardstick = *y;
    c.reading = top.required_string("reading");
    return c;
}

}  // namespace lockbench
