#include "engine/compare/compare.hpp"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "checker/report.hpp"
#include "engine/compare/wilson.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/result_folder.hpp"

namespace lockbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The order a reading names what broke: the damage a user sees first.
const std::vector<std::string>& reading_order() {
    static const std::vector<std::string> order{"resource", "mutual_exclusion", "fencing",
                                                "linearizability", "liveness"};
    return order;
}

std::string broke_words(const std::string& check) {
    if (check == "resource")
        return "lost an update";
    if (check == "mutual_exclusion")
        return "broke mutual exclusion";
    if (check == "fencing")
        return "let a stale fencing number through";
    if (check == "linearizability")
        return "was not linearizable";
    if (check == "liveness")
        return "deadlocked or starved a waiter";
    return "violated " + check;
}

CompareSpread spread_of(std::vector<double> values) {
    if (values.empty())
        return {};
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return {.median = median, .min = values.front(), .max = values.back()};
}

CompareCounts counts_of(const checker::VerdictCounts& c) {
    const int n = c.runs();
    const RateInterval ci = wilson_interval(c.violated, n);
    return {
        .violated = c.violated,
        .valid = c.valid,
        .unknown = c.unknown,
        .not_applicable = c.not_applicable,
        .runs = n,
        .violation_rate = n > 0 ? std::optional(static_cast<double>(c.violated) / n) : std::nullopt,
        .wilson_95 = {ci.low, ci.high}};
}

// "set_nx_px lost an update in 5 of 5 runs and broke mutual exclusion in 5 of 5", "fenced kept
// the data in 5 of 5 but broke mutual exclusion in 5 of 5", "reentrant_hash was safe in 5 of 5
// runs".
std::string reading_of(const std::string& strategy, const CompareStrategyStats& stats) {
    const int n = stats.runs;
    if (n == 0)
        return strategy + ": no run finished";
    const std::map<std::string, CompareCounts>& checks = stats.checks;
    std::vector<std::string> broke;
    for (const auto& name : reading_order()) {
        if (const auto it = checks.find(name); it != checks.end() && it->second.violated > 0)
            broke.push_back(broke_words(name) + " in " + k_of_n(it->second));
    }
    for (const auto& [name, counts] : checks) {
        const auto& order = reading_order();
        if (std::find(order.begin(), order.end(), name) == order.end() && counts.violated > 0)
            broke.push_back(broke_words(name) + " in " + k_of_n(counts));
    }
    const int unknown = stats.verdict.unknown;
    const std::string n_text = std::to_string(n);
    if (broke.empty()) {
        if (unknown == 0)
            return strategy + " was safe in " + n_text + " of " + n_text + " runs";
        return strategy + " showed no violation, but " + std::to_string(unknown) + " of " + n_text +
               " runs could not be judged (unknown)";
    }
    std::string words = strategy + " ";
    if (const auto resource = checks.find("resource");
        resource != checks.end() && resource->second.valid == n)
        words += "kept the data in " + n_text + " of " + n_text + " runs but ";
    else
        broke.front() += " runs";
    for (std::size_t i = 0; i < broke.size(); ++i)
        words += (i == 0 ? "" : " and ") + broke[i];
    if (unknown > 0)
        words += " (" + std::to_string(unknown) + " unknown)";
    return words;
}

// The runs of one strategy at one setting, in the order they were made.
std::vector<const CompareRun*> runs_of(const std::vector<CompareRun>& runs, std::size_t setting,
                                       const std::string& strategy) {
    std::vector<const CompareRun*> mine;
    for (const CompareRun& r : runs) {
        if (r.setting == setting && r.strategy == strategy)
            mine.push_back(&r);
    }
    return mine;
}

// Each check any of the runs reported, as k of n over all of them.
std::map<std::string, CompareCounts> check_counts(const std::vector<const CompareRun*>& runs) {
    std::set<std::string> seen;
    for (const CompareRun* r : runs) {
        for (const auto& [name, verdict] : r->checks)
            seen.insert(name);
    }
    std::map<std::string, CompareCounts> checks;
    for (const std::string& name : seen) {
        checker::VerdictCounts counts;
        for (const CompareRun* r : runs) {
            // A check a run did not report took no part in it.
            const auto it = r->checks.find(name);
            counts.add(it != r->checks.end() ? it->second : checker::Verdict::NotApplicable);
        }
        checks[name] = counts_of(counts);
    }
    return checks;
}

// What one strategy did at one setting over its runs (compare.json's settings[i].strategies).
CompareStrategyStats strategy_stats(const std::string& strategy,
                                    const std::vector<const CompareRun*>& runs) {
    checker::VerdictCounts verdicts;
    std::vector<double> throughput, p99, server_cost;
    CompareStrategyStats stats;
    int as_expected = 0;
    for (const CompareRun* r : runs) {
        verdicts.add(r->verdict);
        throughput.push_back(r->cycles_per_s);
        p99.push_back(r->acquire_p99_ms);
        if (r->server_us_per_cycle)
            server_cost.push_back(*r->server_us_per_cycle);
        stats.run_folders.push_back(r->run);
        if (r->expected) {
            stats.expected = r->expected;
            as_expected += r->as_expected == true;
        }
    }
    stats.runs = static_cast<int>(runs.size());
    // The run's verdict is never "not applicable": a run nothing applied to is unknown.
    stats.verdict = counts_of({.violated = verdicts.violated,
                               .valid = verdicts.valid,
                               .unknown = verdicts.unknown + verdicts.not_applicable});
    stats.checks = check_counts(runs);
    if (stats.expected)
        stats.as_expected = as_expected;
    stats.cycles_per_s = spread_of(throughput);
    stats.acquire_p99_ms = spread_of(p99);
    // Where no run measured the servers (ZooKeeper, etcd of the user's): none, never a median
    // of nothing.
    if (!server_cost.empty())
        stats.server_us_per_cycle = spread_of(server_cost);
    std::vector<json> terms;
    for (const CompareRun* r : runs)
        terms.push_back(r->expected_terms);
    RepeatedJudgement judged =
        judge_repeated(stats.expected ? json(*stats.expected) : json(nullptr), terms);
    stats.expectation_met = judged.expectation_met;
    stats.rate_terms = std::move(judged.rate_terms);
    stats.reading = reading_of(strategy, stats);
    return stats;
}

// "fenced violated something at 2 of 6 settings (lease_ms=200, ...)": the first three named.
std::string sweep_reading(const CompareFile& compare, const std::string& strategy) {
    const std::vector<CompareSetting>& settings = compare.settings;
    std::vector<std::string> unsafe;
    std::size_t judged = 0;
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const Safety s = safety_of(settings[i].strategies.at(strategy));
        judged += s != Safety::Unknown;
        if (s == Safety::Unsafe)
            unsafe.push_back(setting_label(compare, i));
    }
    std::string words = strategy + " ";
    if (unsafe.empty())
        return words + "violated nothing at any of " + std::to_string(judged) + " settings";
    words += "violated something at " + std::to_string(unsafe.size()) + " of " +
             std::to_string(settings.size()) + " settings (";
    for (std::size_t k = 0; k < unsafe.size() && k < 3; ++k)
        words += (k ? ", " : "") + unsafe[k];
    return words + (unsafe.size() > 3 ? ", ...)" : ")");
}

// Without a sweep each strategy's own reading; with one, where each was unsafe.
std::string overall_reading(const CompareFile& compare, bool swept) {
    std::string reading;
    for (const std::string& strategy : compare.strategies) {
        if (swept)
            reading += (reading.empty() ? "" : "; ") + sweep_reading(compare, strategy);
        else if (!compare.settings.empty())
            reading +=
                (reading.empty() ? "" : "; ") + compare.settings[0].strategies.at(strategy).reading;
    }
    return reading;
}

}  // namespace

CompareFile summarise_compare(CompareFile compare) {
    for (std::size_t i = 0; i < compare.settings.size(); ++i) {
        std::map<std::string, CompareStrategyStats> per_strategy;
        for (const std::string& strategy : compare.strategies)
            per_strategy[strategy] = strategy_stats(strategy, runs_of(compare.runs, i, strategy));
        compare.settings[i].strategies = std::move(per_strategy);
    }
    compare.reading = overall_reading(compare, !compare.sweep.empty());
    return compare;
}

namespace {

void check_compare_options(const CompareOptions& options) {
    if (options.strategies.empty())
        throw WorkloadError("compare: --strategy names no strategy");
    std::set<std::string> distinct(options.strategies.begin(), options.strategies.end());
    if (distinct.size() != options.strategies.size())
        throw WorkloadError("compare: --strategy names a strategy twice");
    if (options.repeat < 1)
        throw WorkloadError("compare: --repeat must be 1 or more");
    if (options.sweep.size() > kMaxSweepAxes)
        throw WorkloadError("compare: at most two --sweep (a heat map has two axes)");
}

// Per setting, per strategy (in the order given) the run to make; throws WorkloadError naming
// the strategy and setting that cannot run.
std::vector<std::vector<RunOptions>> plan_runs(const CompareOptions& options,
                                               const std::vector<std::vector<double>>& settings) {
    std::vector<std::vector<RunOptions>> plan(settings.size());
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const Workload at = at_setting(options.base.workload, options.sweep, settings[i]);
        for (const std::string& strategy : options.strategies) {
            RunOptions run = options.base;
            run.workload = at;
            run.workload.strategy = strategy;
            std::string why = why_it_cannot_run(run);
            if (!why.empty()) {
                const std::string where = setting_words(options.sweep, settings[i]);
                // "strategy: unknown 'x'" after "--strategy x" would say it twice.
                if (why.rfind("strategy: ", 0) == 0)
                    why.erase(0, 10);
                throw WorkloadError("--strategy " + strategy +
                                    (where.empty() ? "" : " at " + where) + ": " + why);
            }
            plan[i].push_back(std::move(run));
        }
    }
    return plan;
}

std::size_t runs_planned(const CompareOptions& options, std::size_t settings) {
    return options.strategies.size() * settings * static_cast<std::size_t>(options.repeat);
}

// compare.json before any run: what is compared, over which settings, on which machine.
CompareFile compare_document(const CompareOptions& options,
                             const std::vector<std::vector<double>>& settings) {
    const Workload& w = options.base.workload;
    CompareFile compare;
    compare.kind = options.kind;
    compare.scenario = w.name;
    compare.strategies = options.strategies;
    compare.repeat = options.repeat;
    compare.duration_s = w.duration_s;
    compare.seed = w.seed;
    compare.confidence = 0.95;
    for (const SweepAxis& axis : options.sweep)
        compare.sweep.push_back({.field = axis.field, .path = axis.path, .values = axis.values});
    for (const auto& setting : settings) {
        compare.settings.push_back({.at = setting_at(options.sweep, setting)});
    }
    compare.runs_planned = runs_planned(options, settings.size());
    if (options.base.machine)
        compare.yardstick = options.base.machine->to_json();
    else if (!options.base.machine_not_measured.empty())
        compare.yardstick = json{{"not_measured", options.base.machine_not_measured}};
    return compare;
}

// One run's row of compare.json's "runs", from its summary.json.
CompareRun run_row(int round, std::size_t setting, const std::string& strategy, const RunOutcome& r,
                   int exit_code) {
    const RunSummary& summary = r.summary;
    const checker::Report& report = summary.verdict;
    CompareRun row{.round = round,
                   .setting = setting,
                   .strategy = strategy,
                   .run = r.dir.filename().string(),
                   .verdict = report.verdict,
                   .unknown_reasons = report.unknown_reasons,
                   .expected = summary.expected,
                   .as_expected = summary.as_expected,
                   .cycles_per_s = summary.cycles_per_s,
                   .acquire_p99_ms = summary.acquire.p99,
                   .server_us_per_cycle = summary.server_us_per_cycle(),
                   .expected_terms = summary.expected_terms_json(),
                   .exit_code = exit_code};
    for (const auto& c : report.checks)
        row.checks[c.name] = c.verdict();
    return row;
}

// Makes the planned runs round by round into the comparison's folder, recording each in
// compare.json, until all are done or the user interrupts.
class CompareRunner {
  public:
    CompareRunner(const CompareOptions& options, const std::vector<std::vector<double>>& settings,
                  std::vector<std::vector<RunOptions>> plan, const fs::path& folder,
                  CompareFile& compare, CompareOutcome& outcome)
        : options_(options),
          settings_(settings),
          plan_(std::move(plan)),
          folder_(folder),
          compare_(compare),
          outcome_(outcome),
          planned_(runs_planned(options, settings.size())) {}

    void run_all() {
        const std::size_t n_strategies = options_.strategies.size();
        for (int round = 0; round < options_.repeat && !outcome_.interrupted; ++round) {
            for (std::size_t i = 0; i < settings_.size() && !outcome_.interrupted; ++i) {
                for (std::size_t k = 0; k < n_strategies && !outcome_.interrupted; ++k) {
                    if (options_.base.interrupt && options_.base.interrupt->load()) {
                        outcome_.interrupted = true;
                        break;
                    }
                    // Rotated each round, so no strategy always runs first (on a cold machine)
                    // or right after the same neighbour.
                    run_one(round, i, (k + static_cast<std::size_t>(round)) % n_strategies);
                }
            }
        }
        if (options_.base.progress)
            std::fprintf(stderr, "\r\x1b[K");
    }

  private:
    void run_one(int round, std::size_t i, std::size_t s) {
        RunOptions run = plan_[i][s];
        const std::string& strategy = options_.strategies[s];
        const std::string where = setting_words(options_.sweep, settings_[i]);
        run.out_dir = folder_;
        run.progress = false;
        run.label =
            strategy + (where.empty() ? "" : "-" + where) + "-r" + std::to_string(round + 1);
        ++started_;
        if (options_.base.progress) {
            std::fprintf(stderr, "\r\x1b[K[%zu/%zu] %s%s%s, round %d", started_, planned_,
                         strategy.c_str(), where.empty() ? "" : " at ", where.c_str(), round + 1);
        }
        RunOutcome r;
        try {
            r = run_workload(run);
        } catch (...) {
            // A run that could not be done is that run's error; the others still answer.
            record_failure(round, i, strategy, where, run_failure(std::current_exception()));
            return;
        }
        if (r.interrupted) {
            // Its folder stays (marked interrupted), but half a run is not a sample.
            compare_.interrupted_run = r.dir.filename().string();
            outcome_.interrupted = true;
            return;
        }
        const int exit_code = run_exit_code(r);
        if (exit_code == 1 || outcome_.runs_exit_code == 1)
            outcome_.runs_exit_code = 1;
        else if (exit_code == 3)
            outcome_.runs_exit_code = 3;
        compare_.runs.push_back(run_row(round + 1, i, strategy, r, exit_code));
    }

    void record_failure(int round, std::size_t i, const std::string& strategy,
                        const std::string& where, const RunFailure& failure) {
        std::fprintf(stderr, "%sfailed: %s%s%s, round %d: %s\n",
                     options_.base.progress ? "\r\x1b[K" : "", strategy.c_str(),
                     where.empty() ? "" : " at ", where.c_str(), round + 1,
                     failure.message.c_str());
        compare_.failed.push_back({.round = round + 1,
                                   .setting = i,
                                   .strategy = strategy,
                                   .error = failure.message,
                                   .exit_code = failure.exit_code});
        outcome_.failure_exit_code = std::max(outcome_.failure_exit_code, failure.exit_code);
    }

    const CompareOptions& options_;
    const std::vector<std::vector<double>>& settings_;
    const std::vector<std::vector<RunOptions>> plan_;
    const fs::path& folder_;
    CompareFile& compare_;
    CompareOutcome& outcome_;
    const std::size_t planned_;
    std::size_t started_ = 0;
};

// Where every strategy states an expectation, it decides over the runs together (a rate needs
// them all); one run's own exit code cannot judge a rate. Nothing to say otherwise.
std::optional<int> exit_code_by_expectations(const CompareFile& compare) {
    bool all_stated = !compare.runs.empty();
    bool missed = false, undecided = false;
    for (const CompareSetting& setting : compare.settings) {
        for (const auto& [strategy, stats] : setting.strategies) {
            all_stated = all_stated && stats.expected.has_value();
            missed = missed || stats.expectation_met == false;
            undecided = undecided || !stats.expectation_met.has_value();
        }
    }
    if (!all_stated)
        return std::nullopt;
    return missed ? 1 : undecided ? 3 : 0;
}

}  // namespace

CompareOutcome run_compare(const CompareOptions& options) {
    check_compare_options(options);
    const std::vector<std::vector<double>> settings = sweep_cells(options.sweep);
    // Every run is planned and checked before any starts: a strategy that cannot run this
    // workload, or a setting the workload refuses, fails in a second, not an hour in.
    std::vector<std::vector<RunOptions>> plan = plan_runs(options, settings);

    ResultFolder folder(options.base.out_dir, options.kind + "-" + utc_stamp() + "-" +
                                                  safe_name(options.base.workload.name));
    CompareFile compare = compare_document(options, settings);
    CompareOutcome outcome;
    CompareRunner(options, settings, std::move(plan), folder.tmp(), compare, outcome).run_all();
    compare.interrupted = outcome.interrupted;
    compare.runs_done = compare.runs.size();
    compare.complete = !outcome.interrupted && compare.failed.empty();
    compare = summarise_compare(std::move(compare));
    if (const auto code = exit_code_by_expectations(compare))
        outcome.runs_exit_code = *code;
    write_atomically(folder.tmp() / "compare.json", compare.to_json().dump(2) + "\n");
    write_atomically(folder.tmp() / "compare.txt", format_compare(compare));
    write_atomically(folder.tmp() / "compare.html", compare_html(compare));
    outcome.compare = std::move(compare);
    outcome.dir = folder.commit();
    return outcome;
}

}  // namespace lockbench
