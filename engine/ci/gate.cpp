#include "engine/ci/gate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "checker/json_object.hpp"
#include "engine/ci/gate_input.hpp"
#include "engine/ci/throughput_stats.hpp"

namespace lockbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

using gate_input::Baseline;
using gate_input::BaselineRun;
using gate_input::CurrentRun;
using gate_input::CurrentSuite;
using gate_input::kBaselineVersion;
using gate_input::Key;
using gate_input::kRefreshCommand;
using gate_input::parse_baseline;
using gate_input::parse_current;

// --- Comparing ---

struct Row {
    Key key;
    const BaselineRun* base = nullptr;
    const CurrentRun* cur = nullptr;
    std::vector<std::string> problems;  // in order of severity
    std::vector<std::string> reasons;
    std::optional<std::string> reference;
    std::optional<double> base_norm, cur_norm, change_pct, combined_noise;
    std::optional<double> yardstick_change_pct, yardstick_noise;
    bool compared = false;
    std::optional<std::string> skipped;  // the current suite could not run it, and why
    std::optional<std::string> failed;   // the current suite's run of it errored: the error
};

std::string pct(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
    return buf;
}

std::string num(double d) {
    std::ostringstream os;
    os << d;
    return os.str();
}

// The machine yardstick on both sides, when both have one.
struct Yardsticks {
    YardstickPoint base;
    YardstickPoint cur;
};

// One comparison of normalised throughput: a drop is a problem only beyond both the limit and the
// noise. `against` names the reference in the reasons.
void judge_drop(Row& r, double base_norm, double cur_norm, double combined_noise,
                const std::string& against, const GateOptions& options) {
    if (base_norm <= 0)
        return;
    const double drop = 1 - cur_norm / base_norm;
    const bool beyond_limit = cur_norm < base_norm * (1 - options.max_drop_pct / 100);
    const bool beyond_noise = drop > options.noise_factor * combined_noise;
    const std::string noise_words = pct(options.noise_factor * combined_noise) + " (" +
                                    num(options.noise_factor) + "x noise " + pct(combined_noise) +
                                    ")";
    if (beyond_limit && beyond_noise) {
        r.problems.push_back("SLOWER");
        r.reasons.push_back("drop " + pct(drop) + " vs " + against + " > " +
                            num(options.max_drop_pct) + "% limit and > " + noise_words);
    } else if (beyond_limit) {
        r.reasons.push_back("drop " + pct(drop) + " vs " + against + " > " +
                            num(options.max_drop_pct) + "% limit but within " + noise_words);
    }
}

// A p99 under a millisecond on a shared machine moves with the scheduler, not with lockbench.
constexpr double kP99FloorMs = 1.0;

// Acquire p99, as `base` and `cur` ratios to one reference: a rise beyond the limit fails.
void judge_p99(Row& r, double base, double cur, const std::string& against,
               const GateOptions& options) {
    if (!(base > 0) || !(cur > 0) || !r.cur || !r.cur->acquire_p99_ms ||
        *r.cur->acquire_p99_ms < kP99FloorMs)
        return;
    const double rise = cur / base - 1;
    if (rise * 100 > options.max_p99_rise_pct) {
        r.problems.push_back("LATENCY");
        r.reasons.push_back("acquire p99 rose " + pct(rise) + " vs " + against + " > " +
                            num(options.max_p99_rise_pct) + "% limit");
    }
}

std::string utc_iso_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// Normalises the fault-free runs of one scenario that both sides have, by the same reference on
// both sides, and judges each drop.
void compare_scenario(const std::vector<Row*>& rows, const std::optional<Yardsticks>& yardsticks,
                      const GateOptions& options) {
    std::vector<Row*> common;
    for (Row* r : rows) {
        if (r->base && r->cur && !r->base->faults && !r->cur->faults)
            common.push_back(r);
    }
    if (common.empty())
        return;
    // Both sides are normalised by the same rule over the same set of strategies: a strategy
    // added or dropped since the baseline does not move the reference.
    std::vector<ScenarioRun> base_runs;
    std::vector<ScenarioRun> cur_runs;
    for (const Row* r : common) {
        base_runs.push_back({r->key.second, {r->base->median, r->base->noise, 0}});
        cur_runs.push_back({r->key.second, r->cur->throughput});
    }
    for (std::size_t i = 0; i < common.size(); ++i) {
        Row* r = common[i];
        const auto ref_base = reference_for(base_runs, i, options.reference_strategy);
        const auto ref_cur = reference_for(cur_runs, i, options.reference_strategy);
        double base_median = r->base->median, cur_median = r->cur->throughput.median;
        if (cur_median <= 0 && base_median > 0) {
            // Normalisation would hide this if every strategy stopped at once.
            r->compared = true;
            r->problems.push_back("SLOWER");
            r->reasons.push_back("completed no cycles (baseline " + num(base_median) + "/s)");
            continue;
        }
        // Against the machine: every strategy slower by the same factor shows here, and only
        // here.
        if (yardsticks) {
            const double base_y = r->base->median / yardsticks->base.cycles_per_s;
            const double cur_y = r->cur->throughput.median / yardsticks->cur.cycles_per_s;
            const double combined = std::sqrt(r->base->noise * r->base->noise +
                                              r->cur->throughput.noise * r->cur->throughput.noise +
                                              yardsticks->base.noise * yardsticks->base.noise +
                                              yardsticks->cur.noise * yardsticks->cur.noise);
            r->compared = true;
            r->yardstick_change_pct = (cur_y / base_y - 1) * 100;
            r->yardstick_noise = combined;
            judge_drop(*r, base_y, cur_y, combined, "the machine (redis-benchmark)", options);
        }
        // The acquire tail, against the same two references.
        const auto base_p99 = r->base->acquire_p99_ms, cur_p99 = r->cur->acquire_p99_ms;
        if (base_p99 && cur_p99) {
            if (yardsticks) {
                judge_p99(*r, *base_p99 * yardsticks->base.cycles_per_s,
                          *cur_p99 * yardsticks->cur.cycles_per_s, "the machine (redis-benchmark)",
                          options);
            }
            const auto reference_p99 = [&](bool baseline) -> std::optional<double> {
                for (const Row* other : common) {
                    if (other != r && other->key.second == options.reference_strategy)
                        return baseline ? other->base->acquire_p99_ms : other->cur->acquire_p99_ms;
                }
                return std::nullopt;
            };
            const auto ref_b = reference_p99(true), ref_c = reference_p99(false);
            if (ref_b && ref_c && *ref_b > 0 && *ref_c > 0) {
                judge_p99(*r, *base_p99 / *ref_b, *cur_p99 / *ref_c,
                          options.reference_strategy + "'s p99", options);
            }
        }
        if (!ref_base || !ref_cur) {
            r->reasons.push_back(
                "throughput not compared to other strategies: none in this "
                "scenario");
            continue;
        }
        const Reference& ref_b = *ref_base;
        const Reference& ref_c = *ref_cur;
        r->reference = ref_b.name;
        if (ref_b.median <= 0 || ref_c.median <= 0) {
            r->reasons.push_back("throughput not compared: the reference completed no cycles");
            continue;
        }
        bool is_reference = r->key.second == ref_b.name;
        double base_norm = base_median / ref_b.median, cur_norm = cur_median / ref_c.median;
        // A run's ratio carries its own noise and its reference's; a run divided by itself
        // carries none. Independent errors add in squares.
        auto squared = [&](double own, double reference) {
            return is_reference ? 0 : own * own + reference * reference;
        };
        double combined = std::sqrt(squared(r->base->noise, ref_b.noise) +
                                    squared(r->cur->throughput.noise, ref_c.noise));
        r->compared = true;
        r->base_norm = base_norm;
        r->cur_norm = cur_norm;
        r->combined_noise = combined;
        if (base_norm <= 0)
            continue;
        r->change_pct = (cur_norm / base_norm - 1) * 100;
        if (is_reference)
            continue;
        const std::string ref_words =
            ref_b.name == kMedianReference ? "the other strategies' median" : ref_b.name;
        // A ratio moves when either side moves. With the machine measured on both sides, a drop
        // against a reference that rose against the machine, by a run that held against it (in
        // both directions: on a contended machine everything moves), is the reference getting
        // faster - seed001's rwlock after a timer fix - not this run slowing.
        if (yardsticks && r->yardstick_change_pct &&
            std::fabs(*r->yardstick_change_pct) < options.max_drop_pct) {
            const double ref_vs_machine = (ref_c.median / yardsticks->cur.cycles_per_s) /
                                              (ref_b.median / yardsticks->base.cycles_per_s) -
                                          1;
            const double drop = 1 - cur_norm / base_norm;
            if (drop * 100 > options.max_drop_pct && ref_vs_machine * 100 > options.max_drop_pct) {
                r->reasons.push_back("drop " + pct(drop) + " vs " + ref_words + ", which rose " +
                                     pct(ref_vs_machine) + " vs the machine while this run held (" +
                                     pct(*r->yardstick_change_pct / 100) + "): not a slowdown");
                continue;
            }
        }
        judge_drop(*r, base_norm, cur_norm, combined, ref_words, options);
    }
}

void judge_outcome(Row& r) {
    if (r.failed) {
        // A run that errored has no outcome: passing it would pass a build that never ran it.
        r.problems.push_back("FAILED");
        r.reasons.push_back("the run could not be done: " + *r.failed);
        return;
    }
    if (!r.cur && r.skipped) {
        // Not run here, and said so: never counted as passed, never as missing.
        r.reasons.push_back("SKIPPED on this machine: " + *r.skipped);
        return;
    }
    if (!r.cur) {
        r.problems.push_back("MISSING");
        r.reasons.push_back("in the baseline, not in this suite run");
        return;
    }
    std::string expected = r.cur->expected.value_or("nothing stated");
    if (!r.cur->as_expected.has_value()) {
        r.problems.push_back("UNKNOWN");
        r.reasons.push_back(r.cur->expected ? "expected " + expected + ", outcome " + r.cur->got
                                            : "no expectation stated for this strategy");
    } else if (!*r.cur->as_expected) {
        r.problems.push_back("UNEXPECTED OUTCOME");
        r.reasons.push_back("expected " + expected + ", got " + r.cur->got);
    }
    if (r.base && r.base->expected != r.cur->expected) {
        r.reasons.push_back("expectation changed from " +
                            r.base->expected.value_or("nothing stated") + " to " + expected);
    }
    if (!r.base)
        r.reasons.push_back("new: not in the baseline");
    else if (r.base->faults || r.cur->faults)
        r.reasons.push_back("faults injected: outcome only");
}

json optional_number(const std::optional<double>& d) {
    return d ? json(*d) : json(nullptr);
}

json row_json(const Row& r) {
    json j{{"scenario", r.key.first},
           {"strategy", r.key.second},
           {"verdict", !r.problems.empty() ? r.problems.front()
                       : r.skipped         ? "skipped"
                                           : "ok"},
           {"problems", r.problems},
           {"reasons", r.reasons},
           {"faults", (r.base && r.base->faults) || (r.cur && r.cur->faults)},
           {"compared", r.compared},
           {"reference", r.reference ? json(*r.reference) : json(nullptr)},
           {"change_pct", optional_number(r.change_pct)},
           {"combined_noise", optional_number(r.combined_noise)},
           {"yardstick_change_pct", optional_number(r.yardstick_change_pct)},
           {"yardstick_noise", optional_number(r.yardstick_noise)}};
    if (r.skipped)
        j["skipped"] = *r.skipped;
    if (r.failed)
        j["failed"] = *r.failed;
    j["baseline"] = r.base ? json{{"expected", r.base->expected ? json(*r.base->expected) : json()},
                                  {"normalised", optional_number(r.base_norm)},
                                  {"median_cycles_per_s", r.base->median},
                                  {"cycles_per_s", r.base->cycles_per_s},
                                  {"noise", r.base->noise},
                                  {"acquire_p99_ms", optional_number(r.base->acquire_p99_ms)}}
                           : json(nullptr);
    j["current"] =
        r.cur
            ? json{{"expected", r.cur->expected ? json(*r.cur->expected) : json()},
                   {"as_expected", r.cur->as_expected ? json(*r.cur->as_expected) : json(nullptr)},
                   {"outcome", r.cur->got},
                   {"normalised", optional_number(r.cur_norm)},
                   {"median_cycles_per_s", r.cur->throughput.median},
                   {"cycles_per_s", r.cur->cycles_per_s},
                   {"noise", r.cur->throughput.noise},
                   {"samples", r.cur->throughput.samples},
                   {"acquire_p99_ms", optional_number(r.cur->acquire_p99_ms)}}
            : json(nullptr);
    return j;
}

std::string row_line(const Row& r) {
    auto fixed = [](const std::optional<double>& d, const char* format) {
        if (!d)
            return std::string("-");
        char buf[32];
        std::snprintf(buf, sizeof buf, format, *d);
        return std::string(buf);
    };
    bool faults = (r.base && r.base->faults) || (r.cur && r.cur->faults);
    std::string noise = "-";
    if (faults) {
        noise = "faults";
    } else if (r.base || r.cur) {
        noise = (r.base ? pct(r.base->noise) : "-") + "/" +
                (r.cur ? pct(r.cur->throughput.noise) : "-");
    }
    std::string verdict;
    for (const auto& p : r.problems)
        verdict += (verdict.empty() ? "" : ", ") + p;
    if (verdict.empty())
        verdict = r.skipped ? "skipped" : "ok";
    std::string reasons;
    for (const auto& why : r.reasons)
        reasons += (reasons.empty() ? "" : "; ") + why;
    if (!reasons.empty())
        verdict += ": " + reasons;
    char line[1024];
    std::snprintf(
        line, sizeof line, "%-36s %-15s %9s %9s %8s %13s %10s  %s\n", r.key.first.c_str(),
        r.key.second.c_str(), fixed(r.base_norm, "%.3f").c_str(), fixed(r.cur_norm, "%.3f").c_str(),
        fixed(r.change_pct, "%+.1f%%").c_str(), noise.c_str(),
        fixed(r.cur ? std::optional<double>(r.cur->throughput.median) : std::nullopt, "%.0f")
            .c_str(),
        verdict.c_str());
    return line;
}

}  // namespace

GateResult run_gate(const json& baseline, const json& current, const GateOptions& options) {
    Baseline base = parse_baseline(baseline, options.baseline_name);
    CurrentSuite cur = parse_current(current, options.current_name);

    std::map<Key, Row> rows;  // sorted by (scenario, strategy): the report reads like the suite's
    for (const auto& b : base.runs) {
        Row& r = rows[{b.scenario, b.strategy}];
        r.key = {b.scenario, b.strategy};
        r.base = &b;
    }
    for (const auto& c : cur.runs) {
        Row& r = rows[{c.scenario, c.strategy}];
        r.key = {c.scenario, c.strategy};
        r.cur = &c;
    }
    std::size_t skipped = 0;
    for (const auto& [key, why] : cur.skipped) {
        if (auto it = rows.find(key); it != rows.end() && !it->second.cur) {
            it->second.skipped = why;
            ++skipped;
        }
    }
    for (const auto& [key, error] : cur.failed) {
        Row& r = rows[key];
        r.key = key;
        r.failed = error;
    }
    for (auto& [key, r] : rows)
        judge_outcome(r);
    std::vector<std::string> notes;
    std::optional<Yardsticks> yardsticks;
    if (!base.yardstick) {
        notes.push_back(
            "the baseline has no machine yardstick: throughput is compared to other "
            "strategies only, so a slowdown of every strategy cannot be seen (refresh "
            "the baseline)");
    } else if (!cur.yardstick) {
        notes.push_back(
            "this suite measured no machine yardstick (--no-yardstick): throughput is "
            "compared to other strategies only");
    } else if (base.yardstick->reference().connections != cur.yardstick->reference().connections) {
        notes.push_back(
            "the yardsticks were measured at different connection counts: not "
            "compared");
    } else {
        yardsticks = Yardsticks{base.yardstick->reference(), cur.yardstick->reference()};
    }
    // For a person reading a failure: did our own connection layer change, or the machine?
    if (base.yardstick && cur.yardstick && base.yardstick->lockbench_cycles_per_s &&
        cur.yardstick->lockbench_cycles_per_s) {
        const double b = *base.yardstick->lockbench_cycles_per_s;
        const double c = *cur.yardstick->lockbench_cycles_per_s;
        notes.push_back(
            "lockbench's own connection, one connection, the yardstick's two commands: "
            "baseline " +
            num(std::round(b)) + ", current " + num(std::round(c)) + " cycles/s (" +
            (b > 0 ? pct(c / b - 1) : std::string("-")) + "; for diagnosis, not judged)");
    }
    std::map<std::string, std::vector<Row*>> by_scenario;
    for (auto& [key, r] : rows)
        by_scenario[key.first].push_back(&r);
    for (const auto& [scenario, scenario_rows] : by_scenario)
        compare_scenario(scenario_rows, yardsticks, options);

    std::size_t problems = 0;
    if (cur.interrupted) {
        ++problems;
        notes.push_back("INTERRUPTED: the suite run did not finish");
    }
    if (base.quick != cur.quick) {
        notes.push_back(std::string("the baseline is from a ") + (base.quick ? "quick" : "full") +
                        " suite, this run is " + (cur.quick ? "quick" : "full") +
                        ": throughput compares runs of different lengths");
    }
    for (const auto& [key, r] : rows)
        problems += r.problems.size();

    GateResult result;
    result.pass = problems == 0;
    std::ostringstream out;
    out << "baseline: " << options.baseline_name << " (created " << base.created << ", "
        << (base.quick ? "quick" : "full") << " suite)\n";
    out << "current:  " << options.current_name << " (" << (cur.quick ? "quick" : "full")
        << " suite)\n";
    out << "throughput: fault-free runs, median per-second cycles / " << options.reference_strategy
        << "'s in the same scenario (median of strategies where absent)";
    if (yardsticks) {
        out << " and / the machine yardstick (redis-benchmark, " << yardsticks->base.connections
            << " connections: baseline " << num(std::round(yardsticks->base.cycles_per_s))
            << ", current " << num(std::round(yardsticks->cur.cycles_per_s)) << " cycles/s)";
    }
    out << "; SLOWER = drop > " << num(options.max_drop_pct) << "% and > "
        << num(options.noise_factor) << "x noise\n";
    for (const auto& n : notes)
        out << "note: " << n << "\n";
    char header[256];
    std::snprintf(header, sizeof header, "%-36s %-15s %9s %9s %8s %13s %10s  %s\n", "scenario",
                  "strategy", "base norm", "cur norm", "change", "noise b/c", "cycles/s",
                  "verdict");
    out << header;
    json rows_json = json::array();
    for (const auto& [key, r] : rows) {
        out << row_line(r);
        rows_json.push_back(row_json(r));
    }
    if (result.pass && skipped > 0)
        out << "gate: PASS, with " << skipped << " baseline run(s) SKIPPED on this machine\n";
    else if (result.pass)
        out << "gate: PASS\n";
    else
        out << "gate: FAIL (" << problems << (problems == 1 ? " problem)\n" : " problems)\n");
    result.report = out.str();
    result.json = {
        {"pass", result.pass},
        {"problems", problems},
        {"skipped", skipped},
        {"interrupted", cur.interrupted},
        {"max_drop_pct", options.max_drop_pct},
        {"noise_factor", options.noise_factor},
        {"reference_strategy", options.reference_strategy},
        {"baseline",
         {{"file", options.baseline_name}, {"created", base.created}, {"quick", base.quick}}},
        {"current", {{"file", options.current_name}, {"quick", cur.quick}}},
        {"yardstick", yardsticks ? json{{"connections", yardsticks->base.connections},
                                        {"baseline_cycles_per_s", yardsticks->base.cycles_per_s},
                                        {"current_cycles_per_s", yardsticks->cur.cycles_per_s}}
                                 : json(nullptr)},
        {"notes", notes},
        {"rows", rows_json}};
    return result;
}

json make_baseline(const json& suite_table, const GateOptions& options) {
    CurrentSuite suite = parse_current(suite_table, options.current_name);
    if (suite.interrupted) {
        throw GateInputError(options.current_name +
                             ": /interrupted: the suite did not finish; a baseline must be whole");
    }
    if (!suite.failed.empty()) {
        const auto& [key, error] = *suite.failed.begin();
        throw GateInputError(options.current_name + ": /failed: " + key.first + " x " + key.second +
                             " could not be run (" + error + "); a baseline must be whole");
    }
    for (std::size_t i = 0; i < suite.runs.size(); ++i) {
        const auto& r = suite.runs[i];
        if (r.as_expected != true) {
            throw GateInputError(options.current_name + ": /runs/" + std::to_string(i) +
                                 "/as_expected: " + r.scenario + " x " + r.strategy + " is " +
                                 (r.as_expected ? "not as expected" : "unknown") +
                                 "; a baseline must be a known-good suite");
        }
    }
    if (suite.runs.empty())
        throw GateInputError(options.current_name + ": /runs: is empty");

    // The reference run_gate would take, by the same rule, within this one suite.
    std::map<std::string, std::vector<std::size_t>> by_scenario;  // fault-free runs
    for (std::size_t i = 0; i < suite.runs.size(); ++i) {
        if (!suite.runs[i].faults)
            by_scenario[suite.runs[i].scenario].push_back(i);
    }
    std::vector<std::optional<Reference>> references(suite.runs.size());
    for (const auto& [scenario, indices] : by_scenario) {
        std::vector<ScenarioRun> runs;
        for (std::size_t i : indices)
            runs.push_back({suite.runs[i].strategy, suite.runs[i].throughput});
        for (std::size_t j = 0; j < indices.size(); ++j)
            references[indices[j]] = reference_for(runs, j, options.reference_strategy);
    }

    json runs = json::array();
    for (std::size_t i = 0; i < suite.runs.size(); ++i) {
        const CurrentRun& r = suite.runs[i];
        json normalised = nullptr, reference = nullptr;
        if (const auto& ref = references[i]) {
            reference = ref->name;
            if (ref->median > 0)
                normalised = r.throughput.median / ref->median;
        }
        runs.push_back({{"scenario", r.scenario},
                        {"strategy", r.strategy},
                        {"expected", r.expected ? json(*r.expected) : json(nullptr)},
                        {"faults", r.faults},
                        {"normalised", normalised},
                        {"reference", reference},
                        {"median_cycles_per_s", r.throughput.median},
                        {"cycles_per_s", r.cycles_per_s},
                        {"noise", r.throughput.noise},
                        {"samples", r.throughput.samples},
                        {"acquire_p99_ms", optional_number(r.acquire_p99_ms)}});
    }
    return {{"version", kBaselineVersion},
            {"created", utc_iso_now()},
            {"quick", suite.quick},
            {"reference_strategy", options.reference_strategy},
            {"yardstick", suite.yardstick ? suite.yardstick->to_json() : json(nullptr)},
            {"refresh", kRefreshCommand},
            {"runs", runs}};
}

fs::path latest_suite_dir(const fs::path& results_dir) {
    // suite-YYYYMMDDTHHMMSSZ: anything else (a run folder, suite-x.tmp) is not a finished name.
    auto is_suite_name = [](const std::string& name) {
        static constexpr std::string_view kPattern = "suite-DDDDDDDDTDDDDDDZ";
        if (name.size() != kPattern.size())
            return false;
        for (std::size_t i = 0; i < name.size(); ++i) {
            bool ok =
                kPattern[i] == 'D' ? (name[i] >= '0' && name[i] <= '9') : name[i] == kPattern[i];
            if (!ok)
                return false;
        }
        return true;
    };
    std::error_code ec;
    std::optional<fs::path> newest;
    for (const auto& entry : fs::directory_iterator(results_dir, ec)) {
        std::string name = entry.path().filename().string();
        std::error_code dir_ec;
        if (!is_suite_name(name) || !entry.is_directory(dir_ec))
            continue;
        if (!newest || name > newest->filename().string())
            newest = entry.path();
    }
    if (ec)
        throw GateInputError(results_dir.string() + ": " + ec.message());
    if (!newest) {
        throw GateInputError(results_dir.string() +
                             ": no suite-YYYYMMDDTHHMMSSZ folder (run `lockbench suite` first)");
    }
    return *newest;
}

json load_gate_json(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw GateInputError(path.string() + ": cannot open");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        throw GateInputError(path.string() + ": cannot read");
    return json_input::parse_text<GateInputError>(text, path.string());
}

}  // namespace lockbench
