#include "engine/ci/gate_input.hpp"

#include <algorithm>

#include "checker/report.hpp"
#include "engine/results/run_summary.hpp"
#include "engine/run/json_reader.hpp"

namespace lockbench::gate_input {

using nlohmann::json;

namespace {

using Fields = json_input::JsonObject<GateInputError>;

// `valid` as strictly as a suite's row is read (SuiteRow::from_json): a typo there must not pass
// for "unknown", which the gate would report as a different outcome than the file says.
std::string outcome_words(Fields& f) {
    const checker::Verdict verdict = verdict_at(f, f.require("valid"), f.at("valid"));
    if (verdict != checker::Verdict::Invalid)
        return verdict == checker::Verdict::Valid ? "valid" : "unknown";
    std::string kinds;
    if (const json* k = f.optional_array("violation_kinds")) {
        for (std::size_t i = 0; i < k->size(); ++i) {
            kinds += (kinds.empty() ? "" : ",") +
                     f.string_of((*k)[i], f.at("violation_kinds") + "/" + std::to_string(i));
        }
    }
    return kinds.empty() ? "violations" : "violations: " + kinds;
}

// Optional; when present it must be whole, or the gate would divide by nothing.
std::optional<Yardstick> yardstick_of(Fields& top) {
    const json* y = top.find("yardstick");
    if (!y || y->is_null())
        return std::nullopt;
    auto yardstick = Yardstick::from_json(*y);
    if (!yardstick || !(yardstick->reference().cycles_per_s > 0))
        top.fail(top.at("yardstick"),
                 "must be a measured yardstick ({\"tool\", \"points\": "
                 "[{\"connections\", \"cycles_per_s\" > 0, …}]}) or null");
    return yardstick;
}

// The fields that name a run and say what it was expected to do: alike in a suite's runs and a
// baseline's, so that the gate pairs them.
template <class Run>
Run run_named_in(Fields& f) {
    Run r;
    r.scenario = f.required_string("scenario");
    r.strategy = f.required_string("strategy");
    r.faults = f.required_boolean("faults");
    r.expected = f.string_or_null("expected");
    return r;
}

std::vector<std::string> string_list(Fields& filter, const std::string& name) {
    std::vector<std::string> out;
    const json* list = filter.find(name);
    if (!list || list->is_null())
        return out;
    if (!list->is_array())
        filter.fail(filter.at(name), "must be an array of names, not " + type_name(*list));
    for (std::size_t i = 0; i < list->size(); ++i) {
        if (!(*list)[i].is_string()) {
            filter.fail(filter.at(name) + "/" + std::to_string(i),
                        "must be a name, not " + type_name((*list)[i]));
        }
        out.push_back((*list)[i].get<std::string>());
    }
    return out;
}

bool selects(const std::vector<std::string>& filter, const std::string& name) {
    return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

}  // namespace

bool CurrentSuite::includes(const Key& key) const {
    return selects(scenario_filter, key.first) && selects(strategy_filter, key.second);
}

std::string CurrentSuite::filter_words() const {
    // --no-topology names no scenario: the list is what it kept, too long to read.
    std::string out = no_topology ? "--no-topology" : "";
    if (!no_topology) {
        for (const auto& s : scenario_filter)
            out += (out.empty() ? "" : " ") + std::string("--scenario ") + s;
    }
    for (const auto& s : strategy_filter)
        out += (out.empty() ? "" : " ") + std::string("--strategy ") + s;
    return out;
}

CurrentSuite parse_current(const json& j, const std::string& origin) {
    Fields top(j, origin, "");
    CurrentSuite suite;
    suite.quick = top.required_boolean("quick");
    suite.yardstick = yardstick_of(top);
    suite.interrupted = top.required_boolean("interrupted");
    if (const json* filter = top.find("filter"); filter && !filter->is_null()) {
        if (!filter->is_object())
            top.fail("/filter", "must be an object or null, not " + type_name(*filter));
        Fields f(*filter, origin, "/filter");
        suite.scenario_filter = string_list(f, "scenarios");
        suite.strategy_filter = string_list(f, "strategies");
        suite.no_topology = f.boolean("no_topology", false);
    }
    const json& runs = top.required_array("runs");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::string path = "/runs/" + std::to_string(i);
        Fields f(runs[i], origin, path);
        auto r = run_named_in<CurrentRun>(f);
        r.as_expected = f.boolean_or_null("as_expected");
        r.got = outcome_words(f);
        r.cycles_per_s = f.required_number("cycles_per_s", 0);
        double duration = f.required_number("duration_s", 0);
        const json& series = f.required_array("cycles_per_second");
        std::vector<double> per_second;
        for (std::size_t s = 0; s < series.size(); ++s) {
            per_second.push_back(
                f.number_of(series[s], f.at("cycles_per_second") + "/" + std::to_string(s), 0));
        }
        r.throughput = throughput_of(per_second, duration, r.cycles_per_s);
        r.acquire_p99_ms = f.optional_number("acquire_p99_ms", 0);
        Key key{r.scenario, r.strategy};
        if (auto [it, fresh] = suite.index.emplace(key, suite.runs.size()); !fresh) {
            f.fail(path, "a second run of " + r.scenario + " x " + r.strategy +
                             " (first at /runs/" + std::to_string(it->second) + ")");
        }
        suite.runs.push_back(std::move(r));
    }
    if (const json* skipped = top.find("skipped")) {
        if (!skipped->is_array())
            top.fail("/skipped", "must be an array, not " + type_name(*skipped));
        for (std::size_t i = 0; i < skipped->size(); ++i) {
            Fields f((*skipped)[i], origin, "/skipped/" + std::to_string(i));
            Key key{f.required_string("scenario"), f.required_string("strategy")};
            suite.skipped[key] = f.required_string("reason");
        }
    }
    if (const json* failed = top.find("failed")) {
        if (!failed->is_array())
            top.fail("/failed", "must be an array, not " + type_name(*failed));
        for (std::size_t i = 0; i < failed->size(); ++i) {
            const std::string path = "/failed/" + std::to_string(i);
            Fields f((*failed)[i], origin, path);
            Key key{f.required_string("scenario"), f.required_string("strategy")};
            std::string error = f.required_string("error");
            if (const auto code = f.optional_number("exit_code", 0, 255))
                error += " (exit " + std::to_string(static_cast<int>(*code)) + ")";
            if (auto it = suite.index.find(key); it != suite.index.end()) {
                f.fail(path, key.first + " x " + key.second +
                                 " both failed and finished (at /runs/" +
                                 std::to_string(it->second) + ")");
            }
            if (!suite.failed.emplace(key, std::move(error)).second)
                f.fail(path, "a second failure of " + key.first + " x " + key.second);
        }
    }
    return suite;
}

Baseline parse_baseline(const json& j, const std::string& origin) {
    Fields top(j, origin, "");
    const json& version = top.require("version");
    if (version != json(kBaselineVersion)) {
        top.fail("/version", "must be " + std::to_string(kBaselineVersion) + ", not " +
                                 version.dump() + " (refresh it: " + kRefreshCommand + ")");
    }
    Baseline b;
    b.created = top.required_string("created");
    b.quick = top.required_boolean("quick");
    b.yardstick = yardstick_of(top);
    const json& runs = top.required_array("runs");
    if (runs.empty())
        top.fail("/runs", "is empty: a gate against nothing would pass anything");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::string path = "/runs/" + std::to_string(i);
        Fields f(runs[i], origin, path);
        auto r = run_named_in<BaselineRun>(f);
        r.cycles_per_s = f.required_number("cycles_per_s", 0);
        r.median = f.required_number("median_cycles_per_s", 0);
        r.noise = f.required_number("noise", 0);
        r.acquire_p99_ms = f.optional_number("acquire_p99_ms", 0);
        // Informational, written by make_baseline; checked so a hand edit fails loudly.
        f.optional_number("normalised", 0);
        if (const json* ref = f.find("reference"); ref && !ref->is_null() && !ref->is_string())
            f.fail(f.at("reference"), "must be a string or null, not " + type_name(*ref));
        Key key{r.scenario, r.strategy};
        if (auto [it, fresh] = b.index.emplace(key, b.runs.size()); !fresh) {
            f.fail(path, "a second entry for " + r.scenario + " x " + r.strategy +
                             " (first at /runs/" + std::to_string(it->second) + ")");
        }
        b.runs.push_back(std::move(r));
    }
    return b;
}

}  // namespace lockbench::gate_input
