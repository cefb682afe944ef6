#include "engine/compare/compare.hpp"

#include <algorithm>
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

json spread_of(std::vector<double> values) {
    if (values.empty())
        return json{{"median", nullptr}, {"min", nullptr}, {"max", nullptr}};
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return json{{"median", median}, {"min", values.front()}, {"max", values.back()}};
}

// {"violated", "valid", "unknown", "not_applicable", "runs", "violation_rate", "wilson_95"}
json counts_json(const checker::VerdictCounts& c) {
    const int n = c.runs();
    const RateInterval ci = wilson_interval(c.violated, n);
    return json{
        {"violated", c.violated},
        {"valid", c.valid},
        {"unknown", c.unknown},
        {"not_applicable", c.not_applicable},
        {"runs", n},
        {"violation_rate", n > 0 ? json(static_cast<double>(c.violated) / n) : json(nullptr)},
        {"wilson_95", {ci.low, ci.high}}};
}

// "set_nx_px lost an update in 5 of 5 runs and broke mutual exclusion in 5 of 5", "fenced kept
// the data in 5 of 5 but broke mutual exclusion in 5 of 5", "reentrant_hash was safe in 5 of 5
// runs".
std::string reading_of(const std::string& strategy, const json& stats) {
    const int n = stats["runs"].get<int>();
    if (n == 0)
        return strategy + ": no run finished";
    const json& checks = stats["checks"];
    std::vector<std::string> broke;
    for (const auto& name : reading_order()) {
        if (checks.contains(name) && checks[name]["violated"].get<int>() > 0)
            broke.push_back(broke_words(name) + " in " + k_of_n(checks[name]));
    }
    for (const auto& [name, counts] : checks.items()) {
        const auto& order = reading_order();
        if (std::find(order.begin(), order.end(), name) == order.end() &&
            counts["violated"].get<int>() > 0)
            broke.push_back(broke_words(name) + " in " + k_of_n(counts));
    }
    const int unknown = stats["verdict"]["unknown"].get<int>();
    const std::string n_text = std::to_string(n);
    if (broke.empty()) {
        if (unknown == 0)
            return strategy + " was safe in " + n_text + " of " + n_text + " runs";
        return strategy + " showed no violation, but " + std::to_string(unknown) + " of " + n_text +
               " runs could not be judged (unknown)";
    }
    std::string words = strategy + " ";
    if (checks.contains("resource") && checks["resource"]["valid"].get<int>() == n)
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
std::vector<const json*> runs_of(const json& runs, std::size_t setting,
                                 const std::string& strategy) {
    std::vector<const json*> mine;
    for (const json& r : runs) {
        if (r["setting"].get<std::size_t>() == setting && r["strategy"] == strategy)
            mine.push_back(&r);
    }
    return mine;
}

// Each check any of the runs reported, as k of n over all of them.
json check_counts(const std::vector<const json*>& runs) {
    std::set<std::string> seen;
    for (const json* r : runs) {
        for (const auto& [name, valid] : (*r)["checks"].items())
            seen.insert(name);
    }
    json checks = json::object();
    for (const std::string& name : checker::Report::in_check_order(seen)) {
        checker::VerdictCounts counts;
        for (const json* r : runs) {
            const json& c = (*r)["checks"];
            // A check a run did not report took no part in it.
            counts.add(c.contains(name) ? checker::verdict_of(c[name])
                                        : checker::Verdict::NotApplicable);
        }
        checks[name] = counts_json(counts);
    }
    return checks;
}

// What one strategy did at one setting over its runs (compare.json's settings[i].strategies).
json strategy_stats(const std::string& strategy, const std::vector<const json*>& runs) {
    checker::VerdictCounts verdicts;
    std::vector<double> throughput, p99, server_cost;
    json run_names = json::array();
    json expected = nullptr;
    int as_expected = 0;
    for (const json* r : runs) {
        verdicts.add(checker::verdict_of((*r)["verdict"]));
        if ((*r)["cycles_per_s"].is_number())
            throughput.push_back((*r)["cycles_per_s"].get<double>());
        if ((*r)["acquire_p99_ms"].is_number())
            p99.push_back((*r)["acquire_p99_ms"].get<double>());
        if (const json us = r->value("server_us_per_cycle", json()); us.is_number())
            server_cost.push_back(us.get<double>());
        run_names.push_back((*r)["run"]);
        if ((*r)["expected"].is_string()) {
            expected = (*r)["expected"];
            as_expected += (*r)["as_expected"] == true;
        }
    }
    // The run's verdict is never "not applicable": a run nothing applied to is unknown.
    json stats{
        {"runs", static_cast<int>(runs.size())},
        {"verdict", counts_json({.violated = verdicts.violated,
                                 .valid = verdicts.valid,
                                 .unknown = verdicts.unknown + verdicts.not_applicable})},
        {"checks", check_counts(runs)},
        {"expected", expected},
        {"as_expected", expected.is_null() ? json(nullptr) : json(as_expected)},
        {"cycles_per_s", spread_of(throughput)},
        {"acquire_p99_ms", spread_of(p99)},
        // Where no run measured the servers (ZooKeeper, etcd of the user's):
        // null, never a median of nothing.
        {"server_us_per_cycle", server_cost.empty() ? json(nullptr) : spread_of(server_cost)},
        {"run_folders", run_names}};
    std::vector<json> terms;
    for (const json* r : runs)
        terms.push_back(r->value("expected_terms", json::array()));
    stats.update(judge_repeated(expected, terms).to_json());
    stats["reading"] = reading_of(strategy, stats);
    return stats;
}

// "fenced violated something at 2 of 6 settings (lease_ms=200, ...)": the first three named.
std::string sweep_reading(const json& compare, const std::string& strategy) {
    const json& settings = compare["settings"];
    std::vector<std::string> unsafe;
    std::size_t judged = 0;
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const Safety s = safety_of(settings[i]["strategies"][strategy]);
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
std::string overall_reading(const json& compare, bool swept) {
    const std::vector<std::string> strategies = compare["strategies"];
    const json& settings = compare["settings"];
    std::string reading;
    for (const std::string& strategy : strategies) {
        if (swept)
            reading += (reading.empty() ? "" : "; ") + sweep_reading(compare, strategy);
        else if (!settings.empty())
            reading += (reading.empty() ? "" : "; ") +
                       settings[0]["strategies"][strategy]["reading"].get<std::string>();
    }
    return reading;
}

}  // namespace

json summarise_compare(json compare) {
    const std::vector<std::string> strategies = compare["strategies"];
    json& settings = compare["settings"];
    for (std::size_t i = 0; i < settings.size(); ++i) {
        json per_strategy = json::object();
        for (const std::string& strategy : strategies)
            per_strategy[strategy] =
                strategy_stats(strategy, runs_of(compare["runs"], i, strategy));
        settings[i]["strategies"] = std::move(per_strategy);
    }
    const bool swept = !compare["sweep"].empty();
    compare["reading"] = overall_reading(compare, swept);
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
json compare_document(const CompareOptions& options,
                      const std::vector<std::vector<double>>& settings) {
    const Workload& w = options.base.workload;
    json sweep = json::array();
    for (const SweepAxis& axis : options.sweep)
        sweep.push_back(axis.to_json());
    json setting_list = json::array();
    for (const auto& setting : settings)
        setting_list.push_back({{"at", setting_json(options.sweep, setting)}});
    json compare{{"format", kCompareFormat},
                 {"version", kCompareVersion},
                 {"kind", options.kind},
                 {"scenario", w.name},
                 {"strategies", options.strategies},
                 {"repeat", options.repeat},
                 {"duration_s", w.duration_s},
                 {"seed", w.seed},
                 {"confidence", 0.95},
                 {"sweep", sweep},
                 {"settings", setting_list},
                 {"runs_planned", runs_planned(options, settings.size())},
                 {"runs", json::array()},
                 {"failed", json::array()}};
    if (options.base.machine)
        compare["yardstick"] = options.base.machine->to_json();
    else if (!options.base.machine_not_measured.empty())
        compare["yardstick"] = {{"not_measured", options.base.machine_not_measured}};
    return compare;
}

// One run's row of compare.json's "runs", from its summary.json.
json run_row(int round, std::size_t setting, const std::string& strategy, const RunOutcome& r,
             int exit_code) {
    const RunSummary& summary = r.summary;
    const checker::Report& report = summary.verdict;
    json checks = json::object();
    for (const auto& c : report.checks)
        checks[c.name] = checker::to_json(c.verdict());
    return {{"round", round},
            {"setting", setting},
            {"strategy", strategy},
            {"run", r.dir.filename().string()},
            {"verdict", checker::to_json(report.verdict)},
            {"checks", checks},
            {"unknown_reasons", report.unknown_reasons},
            {"expected", summary.expected ? json(*summary.expected) : json(nullptr)},
            {"as_expected", summary.as_expected ? json(*summary.as_expected) : json(nullptr)},
            {"cycles_per_s", summary.cycles_per_s},
            {"acquire_p99_ms", summary.acquire.p99},
            {"server_us_per_cycle",
             summary.server_us_per_cycle() ? json(*summary.server_us_per_cycle()) : json(nullptr)},
            {"expected_terms", summary.expected_terms_json()},
            {"exit_code", exit_code}};
}

// Makes the planned runs round by round into the comparison's folder, recording each in
// compare.json, until all are done or the user interrupts.
class CompareRunner {
  public:
    CompareRunner(const CompareOptions& options, const std::vector<std::vector<double>>& settings,
                  std::vector<std::vector<RunOptions>> plan, const fs::path& folder, json& compare,
                  CompareOutcome& outcome)
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
            compare_["interrupted_run"] = r.dir.filename().string();
            outcome_.interrupted = true;
            return;
        }
        const int exit_code = run_exit_code(r);
        if (exit_code == 1 || outcome_.runs_exit_code == 1)
            outcome_.runs_exit_code = 1;
        else if (exit_code == 3)
            outcome_.runs_exit_code = 3;
        compare_["runs"].push_back(run_row(round + 1, i, strategy, r, exit_code));
    }

    void record_failure(int round, std::size_t i, const std::string& strategy,
                        const std::string& where, const RunFailure& failure) {
        std::fprintf(stderr, "%sfailed: %s%s%s, round %d: %s\n",
                     options_.base.progress ? "\r\x1b[K" : "", strategy.c_str(),
                     where.empty() ? "" : " at ", where.c_str(), round + 1,
                     failure.message.c_str());
        compare_["failed"].push_back({{"round", round + 1},
                                      {"setting", i},
                                      {"strategy", strategy},
                                      {"error", failure.message},
                                      {"exit_code", failure.exit_code}});
        outcome_.failure_exit_code = std::max(outcome_.failure_exit_code, failure.exit_code);
    }

    const CompareOptions& options_;
    const std::vector<std::vector<double>>& settings_;
    const std::vector<std::vector<RunOptions>> plan_;
    const fs::path& folder_;
    json& compare_;
    CompareOutcome& outcome_;
    const std::size_t planned_;
    std::size_t started_ = 0;
};

// Where every strategy states an expectation, it decides over the runs together (a rate needs
// them all); one run's own exit code cannot judge a rate. Nothing to say otherwise.
std::optional<int> exit_code_by_expectations(const json& compare) {
    bool all_stated = !compare["runs"].empty();
    bool missed = false, undecided = false;
    for (const json& setting : compare["settings"]) {
        for (const auto& [strategy, stats] : setting["strategies"].items()) {
            all_stated = all_stated && stats["expected"].is_string();
            missed = missed || stats["expectation_met"] == false;
            undecided = undecided || stats["expectation_met"].is_null();
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
    json compare = compare_document(options, settings);
    CompareOutcome outcome;
    CompareRunner(options, settings, std::move(plan), folder.tmp(), compare, outcome).run_all();
    compare["interrupted"] = outcome.interrupted;
    compare["runs_done"] = compare["runs"].size();
    compare["complete"] = !outcome.interrupted && compare["failed"].empty();
    compare = summarise_compare(std::move(compare));
    if (const auto code = exit_code_by_expectations(compare))
        outcome.runs_exit_code = *code;
    write_atomically(folder.tmp() / "compare.json", compare.dump(2) + "\n");
    write_atomically(folder.tmp() / "compare.txt", format_compare(compare));
    write_atomically(folder.tmp() / "compare.html", compare_html(compare));
    outcome.compare = std::move(compare);
    outcome.dir = folder.commit();
    return outcome;
}

}  // namespace lockbench
