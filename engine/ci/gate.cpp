#include "engine/ci/gate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
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
#include "engine/run/result_folder.hpp"

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

// What the gate says about a cell. The kind decides whether it fails the gate, whether the short
// report shows it (what changed or failed) or only --verbose (what is routine), and how the summary
// line counts it.
enum class Kind {
    Failed,
    Missing,
    Unknown,
    Unexpected,
    Slower,
    Latency,
    WithinNoise,   // beyond the limit, within the noise: not a failure, but worth a look
    NotASlowdown,  // the reference got faster
    NotCompared,   // throughput could not be compared (the reference stopped)
    Skipped,       // this machine could not run it
    ChangedExpectation,
    New,
    Routine,  // faults injected, no other strategy to compare with: --verbose only
};

const char* problem_name(Kind kind) {
    switch (kind) {
        case Kind::Failed:
            return "FAILED";
        case Kind::Missing:
            return "MISSING";
        case Kind::Unknown:
            return "UNKNOWN";
        case Kind::Unexpected:
            return "UNEXPECTED OUTCOME";
        case Kind::Slower:
            return "SLOWER";
        case Kind::Latency:
            return "LATENCY";
        default:
            return nullptr;  // not a problem
    }
}

struct Finding {
    Kind kind;
    std::string words;  // plain words, naming what a number was measured against
};

struct Row {
    Key key;
    const BaselineRun* base = nullptr;
    const CurrentRun* cur = nullptr;
    std::vector<Finding> findings;  // problems in order of severity, then the rest
    std::optional<std::string> reference;
    std::optional<double> base_norm, cur_norm, change_pct, combined_noise;
    std::optional<double> yardstick_change_pct, yardstick_noise;
    bool compared = false;
    std::optional<std::string> skipped;  // the current suite could not run it, and why
    std::optional<std::string> failed;   // the current suite's run of it errored: the error

    void add(Kind kind, std::string words) { findings.push_back({kind, std::move(words)}); }
    std::vector<std::string> problems() const {
        std::vector<std::string> out;
        for (const auto& f : findings) {
            if (const char* name = problem_name(f.kind))
                out.push_back(name);
        }
        return out;
    }
    bool has(Kind kind) const {
        return std::any_of(findings.begin(), findings.end(),
                           [&](const Finding& f) { return f.kind == kind; });
    }
};

std::string pct(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
    return buf;
}

std::string signed_pct(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100);
    return buf;
}

constexpr const char* kMachineWords = "this machine";

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

// "allowed: 24.5%, 3x the measured noise of 8.2%": the larger of the limit and the noise, which
// is the drop a cell may show before it fails.
std::string allowed_words(double combined_noise, const GateOptions& options) {
    const double noise_allowance = options.noise_factor * combined_noise;
    if (noise_allowance * 100 <= options.max_drop_pct)
        return "allowed: " + num(options.max_drop_pct) + "%";
    return "allowed: " + pct(noise_allowance) + ", " + num(options.noise_factor) +
           "x the measured noise of " + pct(combined_noise);
}

// One comparison of normalised throughput: a drop is a problem only beyond both the limit and the
// noise. `against` names the reference the words give the drop against.
void judge_drop(Row& r, double base_norm, double cur_norm, double combined_noise,
                const std::string& against, const GateOptions& options) {
    if (base_norm <= 0)
        return;
    const double drop = 1 - cur_norm / base_norm;
    const bool beyond_limit = cur_norm < base_norm * (1 - options.max_drop_pct / 100);
    const bool beyond_noise = drop > options.noise_factor * combined_noise;
    const std::string words = "throughput " + pct(drop) + " below baseline against " + against +
                              " (" + allowed_words(combined_noise, options) + ")";
    if (beyond_limit && beyond_noise)
        r.add(Kind::Slower, words);
    else if (beyond_limit)
        r.add(Kind::WithinNoise, words);
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
        r.add(Kind::Latency, "acquire p99 " + pct(rise) + " above baseline against " + against +
                                 " (allowed: " + num(options.max_p99_rise_pct) + "%)");
    }
}

// A strategy that stopped completing cycles fails outright: normalisation would hide this if
// every strategy stopped at once.
bool flag_stopped(Row& r) {
    const double base_median = r.base->median, cur_median = r.cur->throughput.median;
    if (!(cur_median <= 0 && base_median > 0))
        return false;
    r.compared = true;
    r.add(Kind::Slower, "completed no cycles (baseline: " + num(base_median) + " cycles/s)");
    return true;
}

// How the scenario's reference moved against the machine, when it held there - within its
// allowance, as a run is judged - and `r` is not that reference; nullopt otherwise. Then a
// drop of `r` against the machine is not its own: a scenario bound by its timers does not speed
// up with the machine's redis-benchmark, so a faster machine reads as a slower run (seed001 x
// rwlock: -20.5 % against a machine 16.6 % faster, while its cycles/s were those of the baseline's
// build, run for run), and a drop that is its own shows against the reference. When every
// strategy is slower (the engine), the reference falls against the machine too and `r` is judged.
std::optional<double> reference_held_against_machine(const Row& r,
                                                     const std::optional<Reference>& ref_base,
                                                     const std::optional<Reference>& ref_cur,
                                                     const std::optional<Yardsticks>& yardsticks,
                                                     const GateOptions& options) {
    if (!yardsticks || !ref_base || !ref_cur || r.key.second == ref_base->name ||
        ref_base->median <= 0 || ref_cur->median <= 0)
        return std::nullopt;
    const double base_y = ref_base->median / yardsticks->base.cycles_per_s;
    const double cur_y = ref_cur->median / yardsticks->cur.cycles_per_s;
    const double combined =
        std::sqrt(ref_base->noise * ref_base->noise + ref_cur->noise * ref_cur->noise +
                  yardsticks->base.noise * yardsticks->base.noise +
                  yardsticks->cur.noise * yardsticks->cur.noise);
    const double drop = 1 - cur_y / base_y;
    const double allowance = std::max(options.max_drop_pct / 100, options.noise_factor * combined);
    if (drop > allowance)
        return std::nullopt;
    return -drop;
}

// Against the machine: every strategy slower by the same factor shows here, and only here.
// `reference_change`: the scenario's reference held against the machine (by that change), so a
// drop of this run there is noted, not judged.
void compare_with_machine(Row& r, const std::optional<Yardsticks>& yardsticks,
                          const GateOptions& options,
                          const std::optional<double>& reference_change) {
    if (!yardsticks)
        return;
    const double base_y = r.base->median / yardsticks->base.cycles_per_s;
    const double cur_y = r.cur->throughput.median / yardsticks->cur.cycles_per_s;
    const double combined = std::sqrt(r.base->noise * r.base->noise +
                                      r.cur->throughput.noise * r.cur->throughput.noise +
                                      yardsticks->base.noise * yardsticks->base.noise +
                                      yardsticks->cur.noise * yardsticks->cur.noise);
    r.compared = true;
    r.yardstick_change_pct = (cur_y / base_y - 1) * 100;
    r.yardstick_noise = combined;
    if (!reference_change) {
        judge_drop(r, base_y, cur_y, combined, kMachineWords, options);
    } else if (cur_y < base_y * (1 - options.max_drop_pct / 100)) {
        r.add(Kind::Routine, "throughput " + pct(1 - cur_y / base_y) + " below baseline against " +
                                 kMachineWords +
                                 ", not judged there: its scenario's reference held against it (" +
                                 signed_pct(*reference_change) +
                                 "), and this run is judged against that reference");
    }
}

// The acquire tail, against the same two references: the machine and the reference strategy.
void compare_acquire_p99(Row& r, const std::vector<Row*>& common,
                         const std::optional<Yardsticks>& yardsticks, const GateOptions& options) {
    const auto base_p99 = r.base->acquire_p99_ms, cur_p99 = r.cur->acquire_p99_ms;
    if (!base_p99 || !cur_p99)
        return;
    if (yardsticks) {
        judge_p99(r, *base_p99 * yardsticks->base.cycles_per_s,
                  *cur_p99 * yardsticks->cur.cycles_per_s, kMachineWords, options);
    }
    const auto reference_p99 = [&](bool baseline) -> std::optional<double> {
        for (const Row* other : common) {
            if (other != &r && other->key.second == options.reference_strategy)
                return baseline ? other->base->acquire_p99_ms : other->cur->acquire_p99_ms;
        }
        return std::nullopt;
    };
    const auto ref_b = reference_p99(true), ref_c = reference_p99(false);
    if (ref_b && ref_c && *ref_b > 0 && *ref_c > 0) {
        judge_p99(r, *base_p99 / *ref_b, *cur_p99 / *ref_c, options.reference_strategy + "'s p99",
                  options);
    }
}

// A ratio moves when either side moves. With the machine measured on both sides, a drop
// against a reference that rose against the machine, by a run that held against it (in
// both directions: on a contended machine everything moves), is the reference getting
// faster - seed001's rwlock after a timer fix - not this run slowing. True when it said so.
bool flag_reference_got_faster(Row& r, const Reference& ref_b, const Reference& ref_c,
                               double base_norm, double cur_norm, const std::string& ref_words,
                               const std::optional<Yardsticks>& yardsticks,
                               const GateOptions& options) {
    if (!(yardsticks && r.yardstick_change_pct &&
          std::fabs(*r.yardstick_change_pct) < options.max_drop_pct))
        return false;
    const double ref_vs_machine = (ref_c.median / yardsticks->cur.cycles_per_s) /
                                      (ref_b.median / yardsticks->base.cycles_per_s) -
                                  1;
    const double drop = 1 - cur_norm / base_norm;
    if (!(drop * 100 > options.max_drop_pct && ref_vs_machine * 100 > options.max_drop_pct))
        return false;
    r.add(Kind::NotASlowdown, "throughput " + pct(drop) + " below baseline against " + ref_words +
                                  ", which itself rose " + pct(ref_vs_machine) + " against " +
                                  kMachineWords + " while this run held (" +
                                  signed_pct(*r.yardstick_change_pct / 100) +
                                  "): the reference got faster, this run did not slow");
    return true;
}

// Throughput normalised by the reference strategy (or the others' median) on each side.
void compare_with_reference(Row& r, const std::optional<Reference>& ref_base,
                            const std::optional<Reference>& ref_cur,
                            const std::optional<Yardsticks>& yardsticks,
                            const GateOptions& options) {
    if (!ref_base || !ref_cur) {
        r.add(Kind::Routine,
              "throughput not compared with other strategies: none other in this scenario");
        return;
    }
    const Reference& ref_b = *ref_base;
    const Reference& ref_c = *ref_cur;
    r.reference = ref_b.name;
    if (ref_b.median <= 0 || ref_c.median <= 0) {
        r.add(Kind::NotCompared,
              "throughput not compared: the reference (" + ref_b.name + ") completed no cycles");
        return;
    }
    bool is_reference = r.key.second == ref_b.name;
    double base_norm = r.base->median / ref_b.median,
           cur_norm = r.cur->throughput.median / ref_c.median;
    // A run's ratio carries its own noise and its reference's; a run divided by itself
    // carries none. Independent errors add in squares.
    auto squared = [&](double own, double reference) {
        return is_reference ? 0 : own * own + reference * reference;
    };
    double combined = std::sqrt(squared(r.base->noise, ref_b.noise) +
                                squared(r.cur->throughput.noise, ref_c.noise));
    r.compared = true;
    r.base_norm = base_norm;
    r.cur_norm = cur_norm;
    r.combined_noise = combined;
    if (base_norm <= 0)
        return;
    r.change_pct = (cur_norm / base_norm - 1) * 100;
    if (is_reference)
        return;
    const std::string ref_words =
        ref_b.name == kMedianReference ? "the other strategies' median" : ref_b.name;
    if (flag_reference_got_faster(r, ref_b, ref_c, base_norm, cur_norm, ref_words, yardsticks,
                                  options))
        return;
    judge_drop(r, base_norm, cur_norm, combined, ref_words, options);
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
        Row& r = *common[i];
        const auto ref_base = reference_for(base_runs, i, options.reference_strategy);
        const auto ref_cur = reference_for(cur_runs, i, options.reference_strategy);
        if (flag_stopped(r))
            continue;
        compare_with_machine(
            r, yardsticks, options,
            reference_held_against_machine(r, ref_base, ref_cur, yardsticks, options));
        compare_acquire_p99(r, common, yardsticks, options);
        compare_with_reference(r, ref_base, ref_cur, yardsticks, options);
    }
}

void judge_outcome(Row& r) {
    if (r.failed) {
        // A run that errored has no outcome: passing it would pass a build that never ran it.
        r.add(Kind::Failed, "the run could not be done: " + *r.failed);
        return;
    }
    if (!r.cur && r.skipped) {
        // Not run here, and said so: never counted as passed, never as missing.
        r.add(Kind::Skipped, "skipped on this machine: " + *r.skipped);
        return;
    }
    if (!r.cur) {
        r.add(Kind::Missing, "in the baseline, not in this suite run");
        return;
    }
    std::string expected = r.cur->expected.value_or("nothing stated");
    if (!r.cur->as_expected.has_value()) {
        r.add(Kind::Unknown, r.cur->expected ? "expected " + expected + ", outcome " + r.cur->got
                                             : "no expectation stated for this strategy");
    } else if (!*r.cur->as_expected) {
        r.add(Kind::Unexpected, "expected " + expected + ", got " + r.cur->got);
    }
    if (r.base && r.base->expected != r.cur->expected) {
        r.add(Kind::ChangedExpectation, "expectation changed from " +
                                            r.base->expected.value_or("nothing stated") + " to " +
                                            expected);
    }
    if (!r.base)
        r.add(Kind::New, "new: not in the baseline");
    else if (r.base->faults || r.cur->faults)
        r.add(Kind::Routine, "faults injected: outcome compared, throughput not");
}

json optional_number(const std::optional<double>& d) {
    return d ? json(*d) : json(nullptr);
}

json row_json(const Row& r) {
    const auto problems = r.problems();
    json reasons = json::array();
    for (const auto& f : r.findings)
        reasons.push_back(f.words);
    json j{{"scenario", r.key.first},
           {"strategy", r.key.second},
           {"verdict", !problems.empty() ? problems.front()
                       : r.skipped       ? "skipped"
                                         : "ok"},
           {"problems", problems},
           {"reasons", reasons},
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

// Findings in words, each problem named once before the findings it covers ("LATENCY: a; b").
std::string findings_words(const Row& r, bool routine_too) {
    std::string out;
    const char* last_problem = nullptr;
    for (const auto& f : r.findings) {
        if (f.kind == Kind::Routine && !routine_too)
            continue;
        const char* problem = problem_name(f.kind);
        out += out.empty() ? "" : "; ";
        if (problem && (!last_problem || std::string(problem) != last_problem))
            out += std::string(problem) + ": ";
        last_problem = problem;
        out += f.words;
    }
    return out;
}

// The short report's line for a cell that changed or failed, or nullopt for one that is routine.
std::optional<std::string> cell_line(const Row& r) {
    const bool shown = std::any_of(r.findings.begin(), r.findings.end(),
                                   [](const Finding& f) { return f.kind != Kind::Routine; });
    if (!shown)
        return std::nullopt;
    return r.key.first + " / " + r.key.second + ": " + findings_words(r, false) + "\n";
}

// A new cell that ran as expected says nothing but "new": those of one scenario share a line.
bool only_new(const Row& r) {
    return r.has(Kind::New) && std::all_of(r.findings.begin(), r.findings.end(), [](const auto& f) {
               return f.kind == Kind::New || f.kind == Kind::Routine;
           });
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
    std::string verdict = r.problems().empty() ? (r.skipped ? "skipped" : "ok") : "";
    const std::string words = findings_words(r, true);
    if (!words.empty())
        verdict += (verdict.empty() ? "" : ": ") + words;
    char line[2048];
    std::snprintf(
        line, sizeof line, "%-36s %-15s %9s %9s %8s %10s %13s %10s  %s\n", r.key.first.c_str(),
        r.key.second.c_str(), fixed(r.base_norm, "%.3f").c_str(), fixed(r.cur_norm, "%.3f").c_str(),
        fixed(r.change_pct, "%+.1f%%").c_str(), fixed(r.yardstick_change_pct, "%+.1f%%").c_str(),
        noise.c_str(),
        fixed(r.cur ? std::optional<double>(r.cur->throughput.median) : std::nullopt, "%.0f")
            .c_str(),
        verdict.c_str());
    return line;
}

// "1 UNEXPECTED OUTCOME, 2 SLOWER": each kind of problem with its count, in order of severity.
std::string problem_counts(const std::map<Key, Row>& rows, bool interrupted) {
    std::vector<std::pair<std::string, std::size_t>> counts;
    if (interrupted)
        counts.emplace_back("INTERRUPTED", 1);
    for (Kind kind : {Kind::Failed, Kind::Missing, Kind::Unknown, Kind::Unexpected, Kind::Slower,
                      Kind::Latency}) {
        std::size_t n = 0;
        for (const auto& [key, r] : rows) {
            n += std::count_if(r.findings.begin(), r.findings.end(),
                               [&](const Finding& f) { return f.kind == kind; });
        }
        if (n > 0)
            counts.emplace_back(problem_name(kind), n);
    }
    std::string out;
    for (const auto& [name, n] : counts)
        out += (out.empty() ? "" : ", ") + std::to_string(n) + " " + name;
    return out;
}

// What the numbers mean, said once: printed whenever a cell is.
std::string legend(const std::optional<Yardsticks>& yardsticks, const GateOptions& options) {
    std::ostringstream out;
    out << "how to read this:\n"
        << "  throughput: fault-free runs' median cycles per second, compared as ratios, never as "
           "raw numbers:\n"
        << "    \"against " << options.reference_strategy << "\": to " << options.reference_strategy
        << "'s in the same scenario (the other strategies' median where it did not run)\n";
    if (yardsticks) {
        out << "    \"against " << kMachineWords
            << "\": to the cycles per second redis-benchmark measured on it ("
            << yardsticks->base.connections << " connections: baseline "
            << num(std::round(yardsticks->base.cycles_per_s)) << ", current "
            << num(std::round(yardsticks->cur.cycles_per_s)) << ")\n";
    }
    out << "    \"below baseline\": how far that ratio fell since the baseline\n"
        << "  SLOWER: fell more than " << num(options.max_drop_pct) << "% and more than "
        << num(options.noise_factor) << "x the measured noise, the variation of the per-second\n"
        << "    throughput (baseline and this suite combined); \"allowed\" is the larger of the "
           "two\n"
        << "  LATENCY: a fault-free run's acquire p99 (1 ms or more) rose more than "
        << num(options.max_p99_rise_pct) << "% against a reference\n"
        << "  runs with faults injected are judged by their outcome only; --verbose lists every "
           "cell\n";
    return out.str();
}

// Every cell of either suite, sorted by (scenario, strategy): the report reads like the suite's.
struct Cells {
    std::map<Key, Row> rows;
    std::size_t filtered_out = 0;  // baseline cells the current suite's filter left out
    std::size_t skipped = 0;       // baseline cells this machine could not run
};

Cells pair_cells(const Baseline& base, const CurrentSuite& cur) {
    Cells cells;
    auto& rows = cells.rows;
    for (const auto& b : base.runs) {
        // A suite run with --scenario/--strategy is compared with the part of the baseline it
        // selected: what it left out is not missing.
        if (!cur.includes({b.scenario, b.strategy})) {
            ++cells.filtered_out;
            continue;
        }
        Row& r = rows[{b.scenario, b.strategy}];
        r.key = {b.scenario, b.strategy};
        r.base = &b;
    }
    for (const auto& c : cur.runs) {
        Row& r = rows[{c.scenario, c.strategy}];
        r.key = {c.scenario, c.strategy};
        r.cur = &c;
    }
    for (const auto& [key, why] : cur.skipped) {
        if (auto it = rows.find(key); it != rows.end() && !it->second.cur) {
            it->second.skipped = why;
            ++cells.skipped;
        }
    }
    for (const auto& [key, error] : cur.failed) {
        Row& r = rows[key];
        r.key = key;
        r.failed = error;
    }
    return cells;
}

// Whether the two machines can be compared through their yardsticks, and the notes that say why
// not; `diagnosis` is for --verbose only.
struct MachineComparison {
    std::optional<Yardsticks> yardsticks;
    std::vector<std::string> notes;
    std::vector<std::string> diagnosis;
};

MachineComparison compare_machines(const Baseline& base, const CurrentSuite& cur) {
    MachineComparison m;
    if (!base.yardstick) {
        m.notes.push_back(
            "the baseline has no machine yardstick: throughput is compared to other "
            "strategies only, so a slowdown of every strategy cannot be seen (refresh "
            "the baseline)");
    } else if (!cur.yardstick) {
        m.notes.push_back(
            "this suite measured no machine yardstick (--no-yardstick): throughput is "
            "compared to other strategies only");
    } else if (base.yardstick->reference().connections != cur.yardstick->reference().connections) {
        m.notes.push_back(
            "the yardsticks were measured at different connection counts: not "
            "compared");
    } else {
        m.yardsticks = Yardsticks{base.yardstick->reference(), cur.yardstick->reference()};
    }
    // For a person reading a failure: did our own connection layer change, or the machine?
    if (base.yardstick && cur.yardstick && base.yardstick->lockbench_cycles_per_s &&
        cur.yardstick->lockbench_cycles_per_s) {
        const double b = *base.yardstick->lockbench_cycles_per_s;
        const double c = *cur.yardstick->lockbench_cycles_per_s;
        m.diagnosis.push_back(
            "lockbench's own connection doing the yardstick's two commands on one connection: "
            "baseline " +
            num(std::round(b)) + ", current " + num(std::round(c)) + " cycles/s (" +
            (b > 0 ? signed_pct(c / b - 1) : std::string("-")) +
            "); shown to tell a slower connection layer from a slower machine, not judged");
    }
    return m;
}

void compare_each_scenario(std::map<Key, Row>& rows, const std::optional<Yardsticks>& yardsticks,
                           const GateOptions& options) {
    std::map<std::string, std::vector<Row*>> by_scenario;
    for (auto& [key, r] : rows)
        by_scenario[key.first].push_back(&r);
    for (const auto& [scenario, scenario_rows] : by_scenario)
        compare_scenario(scenario_rows, yardsticks, options);
}

// What the verdict line counts.
struct Tally {
    std::size_t problems = 0;
    std::size_t within_noise = 0, changed_expectation = 0, fresh = 0, not_a_slowdown = 0;
};

Tally tally(const std::map<Key, Row>& rows, bool interrupted) {
    Tally t;
    t.problems = interrupted ? 1 : 0;
    for (const auto& [key, r] : rows) {
        t.problems += r.problems().size();
        t.within_noise += r.has(Kind::WithinNoise) && !r.has(Kind::Slower);
        t.changed_expectation += r.has(Kind::ChangedExpectation);
        t.fresh += r.has(Kind::New);
        t.not_a_slowdown += r.has(Kind::NotASlowdown);
    }
    return t;
}

// First the verdict and its counts, in one line: what a CI log shows when it is folded.
std::string verdict_line(const Cells& cells, const Tally& t, bool interrupted) {
    std::ostringstream out;
    out << "gate " << (t.problems == 0 ? "PASS" : "FAIL") << ": " << cells.rows.size()
        << (cells.rows.size() == 1 ? " cell, " : " cells, ") << t.problems
        << (t.problems == 1 ? " problem" : " problems");
    if (t.problems > 0)
        out << " (" << problem_counts(cells.rows, interrupted) << ")";
    const std::pair<std::size_t, const char*> counts[] = {
        {t.within_noise, " slower within noise"},
        {t.not_a_slowdown, " slower only against a reference that got faster"},
        {t.changed_expectation,
         t.changed_expectation == 1 ? " expectation changed" : " expectations changed"},
        {t.fresh, " new"},
        {cells.skipped, " skipped on this machine"}};
    for (const auto& [n, what] : counts) {
        if (n > 0)
            out << ", " << n << what;
    }
    out << "\n";
    return out.str();
}

// "compared current.json (quick suite, unfiltered) with baseline.json (full suite, created …)"
std::string compared_line(const Baseline& base, const CurrentSuite& cur, std::size_t filtered_out,
                          const GateOptions& options) {
    std::ostringstream out;
    out << "compared " << options.current_name << " (" << (cur.quick ? "quick" : "full")
        << " suite";
    if (cur.filtered()) {
        out << " of " << cur.filter_words() << "; the baseline's " << filtered_out
            << (filtered_out == 1 ? " other cell is" : " other cells are") << " left out";
    } else {
        out << ", unfiltered";
    }
    out << ") with " << options.baseline_name << " (" << (base.quick ? "quick" : "full")
        << " suite, created " << base.created << ")\n";
    return out.str();
}

// The cells: with --verbose a table of every one, else those that changed or failed in words
// (the new ones of a scenario on one line); the legend whenever a cell is shown.
std::string cells_text(const std::map<Key, Row>& rows, const MachineComparison& machines,
                       const GateOptions& options) {
    std::ostringstream out;
    bool shown = false;
    if (options.verbose) {
        for (const auto& d : machines.diagnosis)
            out << "note: " << d << "\n";
        char header[256];
        std::snprintf(header, sizeof header, "%-36s %-15s %9s %9s %8s %10s %13s %10s  %s\n",
                      "scenario", "strategy", "base norm", "cur norm", "vs ref", "vs machine",
                      "noise b/c", "cycles/s", "verdict");
        out << header;
        for (const auto& [key, r] : rows)
            out << row_line(r);
        shown = true;
    } else {
        std::map<std::string, std::vector<std::string>> fresh_by_scenario;
        for (const auto& [key, r] : rows) {
            if (only_new(r)) {
                fresh_by_scenario[key.first].push_back(key.second);
            } else if (auto line = cell_line(r)) {
                out << *line;
                shown = true;
            }
        }
        for (const auto& [scenario, strategies] : fresh_by_scenario) {
            std::string names;
            for (const auto& s : strategies)
                names += (names.empty() ? "" : ", ") + s;
            out << scenario << " / " << names << ": new, not in the baseline (outcome as "
                << "expected)\n";
            shown = true;
        }
    }
    if (shown)
        out << legend(machines.yardsticks, options);
    return out.str();
}

// The gate's result as data (--json): the same verdict, counts and rows as the report.
json gate_json(const Baseline& base, const CurrentSuite& cur, const Cells& cells, const Tally& t,
               const MachineComparison& machines, const GateOptions& options) {
    json rows_json = json::array();
    for (const auto& [key, r] : cells.rows)
        rows_json.push_back(row_json(r));
    json filter = nullptr;
    if (cur.filtered()) {
        filter = {{"scenarios", cur.scenario_filter}, {"strategies", cur.strategy_filter}};
        if (cur.no_topology)
            filter["no_topology"] = true;
    }
    const auto& yardsticks = machines.yardsticks;
    return {
        {"pass", t.problems == 0},
        {"problems", t.problems},
        {"skipped", cells.skipped},
        {"interrupted", cur.interrupted},
        {"max_drop_pct", options.max_drop_pct},
        {"noise_factor", options.noise_factor},
        {"reference_strategy", options.reference_strategy},
        {"baseline",
         {{"file", options.baseline_name}, {"created", base.created}, {"quick", base.quick}}},
        {"current", {{"file", options.current_name}, {"quick", cur.quick}, {"filter", filter}}},
        {"left_out_by_filter", cells.filtered_out},
        {"yardstick", yardsticks ? json{{"connections", yardsticks->base.connections},
                                        {"baseline_cycles_per_s", yardsticks->base.cycles_per_s},
                                        {"current_cycles_per_s", yardsticks->cur.cycles_per_s}}
                                 : json(nullptr)},
        {"notes", machines.notes},
        {"rows", rows_json}};
}

}  // namespace

GateResult run_gate(const json& baseline, const json& current, const GateOptions& options) {
    Baseline base = parse_baseline(baseline, options.baseline_name);
    CurrentSuite cur = parse_current(current, options.current_name);

    Cells cells = pair_cells(base, cur);
    for (auto& [key, r] : cells.rows)
        judge_outcome(r);
    MachineComparison machines = compare_machines(base, cur);
    compare_each_scenario(cells.rows, machines.yardsticks, options);
    if (base.quick != cur.quick) {
        machines.notes.push_back(std::string("the baseline is from a ") +
                                 (base.quick ? "quick" : "full") + " suite, this run is " +
                                 (cur.quick ? "quick" : "full") +
                                 ": throughput compares runs of different lengths");
    }
    const Tally t = tally(cells.rows, cur.interrupted);

    GateResult result;
    result.pass = t.problems == 0;
    std::string report = verdict_line(cells, t, cur.interrupted) +
                         compared_line(base, cur, cells.filtered_out, options);
    if (cur.interrupted)
        report += "INTERRUPTED: the suite run did not finish\n";
    for (const auto& n : machines.notes)
        report += "note: " + n + "\n";
    result.report = report + cells_text(cells.rows, machines, options);
    result.json = gate_json(base, cur, cells, t, machines, options);
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
