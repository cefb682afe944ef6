#include "engine/ci/suite.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

#include "checker/report.hpp"
#include "checker/story/markup_escape.hpp"
#include "engine/ci/yardstick.hpp"
#include "engine/results/run_summary.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/run.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/cluster.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/network_lab.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

struct Planned {
    Workload workload;
    fs::path file;
    std::string skip;  // why this machine cannot run it ("" = it can)
};

// One run of a pair, as the suite keeps it: its row, or why there is none.
struct PairRun {
    SuiteRow row;                                    // suite.json's row for this one run
    json expected_terms;                             // summary.json's, for judging repeated runs
    std::map<std::string, checker::Verdict> checks;  // each check's verdict
    json failure;       // the failed entry, when the run could not be done
    int exit_code = 0;  // that failure's
    json interrupted;   // the interrupted run, when Ctrl-C stopped it
};

SuiteRow run_row(const Workload& w, const RunSummary& s, const fs::path& dir, int attempts,
                 double wall_s) {
    const checker::Report& verdict = s.verdict;
    SuiteRow row{.scenario = w.name,
                 .strategy = w.strategy,
                 .dir = dir.string(),
                 .cycles_per_s = s.cycles_per_s,
                 .duration_s = s.duration_s,
                 .faults = !w.faults.empty(),
                 .acquire_p50_ms = s.acquire.p50,
                 .acquire_p99_ms = s.acquire.p99,
                 .server_us_per_cycle = s.server_us_per_cycle(),
                 .bottleneck = s.bottleneck(),
                 .valid = verdict.verdict,
                 .violations = verdict.violation_count(),
                 .unknown_reasons = verdict.unknown_reasons,
                 .expected = s.expected,
                 .as_expected = s.as_expected,
                 .attempts = attempts,
                 .wall_s = wall_s};
    for (const auto& second : s.timeseries)
        row.cycles_per_second.push_back(second.cycles);
    // What broke, named by the checks that found it (every one counts, listed or not).
    for (const auto& check : verdict.checks) {
        if (check.verdict() == checker::Verdict::Invalid)
            row.violation_kinds.push_back(check.name);
    }
    if (const auto* linearizability = verdict.check("linearizability"))
        row.linearizability = linearizability->verdict();
    return row;
}

double median_of_numbers(std::vector<double> values) {
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

// Verdicts composed as a suite reads them: a violation in any run, else unknown in any, else valid.
checker::Verdict worst_of(const std::vector<checker::Verdict>& verdicts) {
    using checker::Verdict;
    const auto any = [&](Verdict v) {
        return std::find(verdicts.begin(), verdicts.end(), v) != verdicts.end();
    };
    if (any(Verdict::Invalid))
        return Verdict::Invalid;
    if (any(Verdict::Unknown))
        return Verdict::Unknown;
    if (any(Verdict::Valid))
        return Verdict::Valid;
    return Verdict::NotApplicable;
}

template <typename T>
void add_once(std::vector<T>& list, const T& item) {
    if (std::find(list.begin(), list.end(), item) == list.end())
        list.push_back(item);
}

// A side near a full core set the run's pace.
bool saturated(const std::optional<std::string>& bottleneck) {
    return bottleneck == "server" || bottleneck == "both";
}

// Each check over the runs: how often it said what.
std::map<std::string, CheckCounts> check_counts(const std::vector<PairRun>& done) {
    std::set<std::string> check_names;
    for (const PairRun& d : done) {
        for (const auto& [name, v] : d.checks)
            check_names.insert(name);
    }
    std::map<std::string, CheckCounts> checks;
    for (const auto& name : check_names) {
        CheckCounts& cell = checks[name];
        for (const PairRun& d : done) {
            const auto found = d.checks.find(name);
            cell.counts.add(found != d.checks.end() ? found->second
                                                    : checker::Verdict::NotApplicable);
        }
        cell.runs = static_cast<int>(done.size());
    }
    return checks;
}

// One row for a pair run N times: the fields a single run's row has, over its runs (medians;
// throughput as every run's whole-second samples one after another; a violation in any run),
// and the counts: per check "violated in k of n", the expectation judged over the runs.
SuiteRow repeated_row(const Workload& w, const std::vector<PairRun>& done, int repeat) {
    std::vector<double> throughput, p50, p99, server_cost;
    std::vector<checker::Verdict> verdicts, linearizability;
    std::vector<json> terms;
    SuiteRow row{.scenario = w.name,
                 .strategy = w.strategy,
                 .faults = !w.faults.empty(),
                 .expected = done.front().row.expected,
                 .attempts = 1,
                 .wall_s = 0.0};
    RepeatedRuns counted{.repeat = repeat, .runs = static_cast<int>(done.size())};
    for (const PairRun& d : done) {
        const SuiteRow& r = d.row;
        throughput.push_back(r.cycles_per_s);
        p50.push_back(r.acquire_p50_ms);
        p99.push_back(r.acquire_p99_ms);
        if (r.server_us_per_cycle)
            server_cost.push_back(*r.server_us_per_cycle);
        // The gate takes a run's whole seconds only; so does this, run by run.
        const auto whole = std::min(static_cast<std::size_t>(std::floor(r.duration_s)),
                                    r.cycles_per_second.size());
        row.cycles_per_second.insert(
            row.cycles_per_second.end(), r.cycles_per_second.begin(),
            r.cycles_per_second.begin() + static_cast<std::ptrdiff_t>(whole));
        row.duration_s += static_cast<double>(whole);
        *row.wall_s += r.wall_s.value_or(0);
        row.violations += r.violations;
        for (const auto& kind : r.violation_kinds)
            add_once(row.violation_kinds, kind);
        for (const auto& reason : r.unknown_reasons)
            add_once(row.unknown_reasons, reason);
        if ((!row.bottleneck || saturated(r.bottleneck)) && !saturated(row.bottleneck))
            row.bottleneck = r.bottleneck;
        counted.dirs.push_back(r.dir);
        verdicts.push_back(r.valid);
        counted.violated_runs += r.valid == checker::Verdict::Invalid;
        if (r.linearizability)
            linearizability.push_back(*r.linearizability);
        counted.as_expected_runs += r.ok();
        terms.push_back(d.expected_terms);
    }
    row.dir = counted.dirs.front();
    row.cycles_per_s = median_of_numbers(throughput);
    row.acquire_p50_ms = median_of_numbers(p50);
    row.acquire_p99_ms = median_of_numbers(p99);
    if (!server_cost.empty())
        row.server_us_per_cycle = median_of_numbers(server_cost);
    row.valid = worst_of(verdicts);
    if (!linearizability.empty())
        row.linearizability = worst_of(linearizability);
    counted.checks = check_counts(done);
    RepeatedJudgement judged =
        judge_repeated(row.expected ? json(*row.expected) : json(nullptr), terms);
    // The pair's outcome, what the gate and JUnit read: the expectation over the runs.
    row.as_expected = judged.expectation_met;
    counted.rate_terms = std::move(judged.rate_terms);
    row.repeated = std::move(counted);
    return row;
}
// Every .json in the scenarios folder, in name order.
std::vector<fs::path> scenario_files(const fs::path& scenarios_dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(scenarios_dir, ec)) {
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    }
    if (ec)
        throw WorkloadError(scenarios_dir.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
    return files;
}

bool selected(const std::vector<std::string>& chosen, const std::string& name) {
    return chosen.empty() || std::find(chosen.begin(), chosen.end(), name) != chosen.end();
}

// The user's servers (--redis, --inventory): what a pair needs of them that they lack. What they
// are (a cluster node or not, with replicas or not) is asked once, at the first pair that needs
// to know.
class ExternalServers {
  public:
    explicit ExternalServers(const SuiteOptions& options)
        : options_(options),
          endpoints_(options.inventory ? options.inventory->master_endpoints() : options.redis) {}

    bool given() const { return !endpoints_.empty(); }

    // Why `as_run` cannot run on them ("" = it can); a bad scenario is still an error later.
    std::string why_not(const Workload& as_run) {
        std::string skip = why_it_cannot_run({.workload = as_run,
                                              .redis = options_.redis,
                                              .inventory = options_.inventory,
                                              .zookeeper = options_.zookeeper,
                                              .connections = options_.connections});
        const StrategyInfo* info = find_strategy(as_run.strategy);
        if (skip.empty()) {
            if (!is_cluster_)
                is_cluster_ = is_cluster_node(endpoints_.front());
            const bool wants_cluster = as_run.topology.kind == TopologyKind::Cluster;
            if (wants_cluster && !*is_cluster_)
                skip = "a Redis Cluster scenario, and --redis names no cluster node";
            if (!wants_cluster && *is_cluster_)
                skip =
                    "locks on one Redis, and --redis names a Redis Cluster (its "
                    "scenarios are the cluster-* ones)";
        }
        if (skip.empty() && info && info->capabilities.needs_replicas &&
            as_run.topology.kind != TopologyKind::Cluster) {
            if (!no_replicas_)
                no_replicas_ = probe_replicas();
            skip = *no_replicas_;
        }
        return skip;
    }

  private:
    // "" when the first server has the replicas the strategy waits for, else why not.
    std::string probe_replicas() const {
        Deployment probe;
        probe.embedded = false;
        probe.endpoints = {endpoints_.at(0)};
        try {
            probe.check_replicas(StrategyOptions{}.wait_replicas);
        } catch (const EnvironmentError& e) {
            return e.what();
        }
        return "";
    }

    const SuiteOptions& options_;
    std::vector<Endpoint> endpoints_;
    std::optional<bool> is_cluster_;
    std::optional<std::string> no_replicas_;
};

// Why this machine cannot run `as_run` ("" = it can); throws WorkloadError for a bad scenario.
std::string why_skipped(Workload& as_run, ExternalServers& external,
                        const std::optional<int>& connections) {
    std::string skip;
    // On the user's servers: what cannot run there is skipped, saying why (a bad scenario is
    // still an error below).
    if (external.given())
        skip = external.why_not(as_run);
    if (skip.empty() && connections) {
        // --connections: a scenario whose faults need one connection per client, or a strategy
        // that does not use lockbench's Redis connections, is skipped.
        Workload shared = as_run;
        shared.connections = *connections;
        if (shared.shares_connections())
            skip = why_it_cannot_run({.workload = shared});
    }
    if (skip.empty()) {
        // A lock library this machine lacks (no npm ci, no JVM) is skipped, saying what is
        // missing; the scenario still runs for every strategy that is here.
        try {
            find_strategy(as_run.strategy);
        } catch (const AdapterUnavailable& e) {
            skip = e.what();
        }
    }
    if (skip.empty())
        as_run.validate();
    // Hosts in network namespaces need root: without it such a scenario is skipped, saying so in
    // one line, and never counted as passed.
    if (skip.empty() && as_run.topology.in_namespaces())
        skip = network_lab_unavailable();
    return skip;
}

// Every (scenario, strategy) pair the options select, loaded and checked first: a bad scenario
// fails the suite before any server starts.
std::vector<Planned> plan_pairs(const SuiteOptions& options, const std::vector<fs::path>& files) {
    if (!options.redis.empty() && options.inventory)
        throw WorkloadError("--redis and --inventory both name the servers: give one");
    ExternalServers external(options);
    std::vector<Planned> plan;
    for (const auto& f : files) {
        Workload w = Workload::load(f);
        if (!selected(options.scenarios, w.name) ||
            (options.no_topology && w.topology.many_servers()))
            continue;
        for (const auto& [strategy, expected] : w.expect) {
            if (!selected(options.strategies, strategy))
                continue;
            Workload as_run = w;
            as_run.strategy = strategy;
            // A demonstration keeps its own length: its faults and bounds are timed to it.
            if (options.quick && as_run.faults.empty())
                as_run.duration_s = std::min(as_run.duration_s, kQuickDuration);
            std::string skip = why_skipped(as_run, external, options.connections);
            plan.push_back({std::move(as_run), f, skip});
        }
    }
    if (plan.empty())
        throw WorkloadError("no scenario matches the given --strategy/--scenario/--no-topology");
    return plan;
}

// What the runs leave for suite.json, and how they went.
struct SuiteRows {
    std::vector<SuiteRow> runs;
    std::vector<SuiteRow> each_run;  // SuiteOutcome::each_run
    json skipped = json::array();
    json failed = json::array();
    json interrupted_run = nullptr;
    bool all_ok = true;
    bool interrupted = false;
    int failure_exit_code = 0;
};

// Runs the planned pairs into the suite's hidden folder, saying on stderr what it does.
class SuiteRunner {
  public:
    SuiteRunner(const SuiteOptions& options, const fs::path& tmp)
        : options_(options),
          tmp_(tmp),
          terminal_(options.progress == SuiteProgress::Terminal),
          wipe_(terminal_ ? "\r\x1b[K" : "") {}

    SuiteRows rows;

    std::optional<Yardstick> measure_machine() {
        if (!options_.yardstick)
            return std::nullopt;
        // Off a terminal a line stays: said once measured, so that a machine that cannot be
        // measured (no redis-server) says one line, the reason.
        if (terminal_)
            say("measuring the machine (redis-benchmark)");
        Yardstick yardstick = measure_yardstick();
        if (!terminal_)
            say("measured the machine (redis-benchmark)");
        return yardstick;
    }

    // Measured again after the runs: a machine whose load changed meanwhile shows it as noise.
    void measure_machine_again(std::optional<Yardstick>& yardstick) {
        if (!yardstick || rows.interrupted)
            return;
        say("measuring the machine again (redis-benchmark)");
        try {
            yardstick->absorb(measure_yardstick());
        } catch (const EnvironmentError& e) {
            // The runs are done and kept: the first measurement stands alone, saying so.
            std::fprintf(stderr, "%sthe machine could not be measured again: %s\n", wipe_,
                         e.what());
        }
    }

    void run_each_once(const std::vector<Planned>& plan) {
        for (std::size_t i = 0; i < plan.size(); ++i) {
            if (options_.interrupt && options_.interrupt->load()) {
                rows.interrupted = true;
                break;
            }
            const auto& p = plan[i];
            if (!p.skip.empty()) {
                skip(p);
                continue;
            }
            const std::string counter = "[" + std::to_string(i + 1) + "/" +
                                        std::to_string(plan.size()) + "] " + p.workload.name +
                                        " x " + p.workload.strategy;
            if (terminal_)
                say(counter);
            PairRun done =
                attempt(p, p.workload.name + "." + p.workload.strategy, options_.retries);
            if (!done.failure.is_null()) {
                rows.failed.push_back(done.failure);
                rows.failure_exit_code = std::max(rows.failure_exit_code, done.exit_code);
                rows.all_ok = false;
                continue;
            }
            if (!done.interrupted.is_null()) {
                rows.interrupted_run = done.interrupted;
                rows.interrupted = true;
                break;
            }
            rows.all_ok = rows.all_ok && done.row.ok();
            said(counter, done.row);
            rows.runs.push_back(std::move(done.row));
        }
    }

    // Round r runs every pair once, starting r pairs further on: a burst of machine noise falls on
    // the pairs alike, and no pair always runs first on a cold machine.
    void run_in_rounds(const std::vector<Planned>& plan) {
        std::vector<std::vector<PairRun>> done_of(plan.size());
        std::vector<json> failure_of(plan.size());
        std::size_t to_run = 0;
        for (const auto& p : plan) {
            if (!p.skip.empty())
                skip(p);
            else
                to_run += static_cast<std::size_t>(options_.repeat);
        }
        std::size_t started = 0;
        for (int round = 0; round < options_.repeat && !rows.interrupted; ++round) {
            for (std::size_t k = 0; k < plan.size(); ++k) {
                const std::size_t i = (k + static_cast<std::size_t>(round)) % plan.size();
                const auto& p = plan[i];
                if (!p.skip.empty())
                    continue;
                if (!failure_of[i].is_null()) {
                    // A pair that could not run once is that pair's error; its rate would not
                    // be one of its planned runs.
                    ++started;
                    continue;
                }
                if (options_.interrupt && options_.interrupt->load()) {
                    rows.interrupted = true;
                    break;
                }
                ++started;
                const std::string counter = "[" + std::to_string(started) + "/" +
                                            std::to_string(to_run) + "] " + p.workload.name +
                                            " x " + p.workload.strategy + ", round " +
                                            std::to_string(round + 1);
                if (terminal_)
                    say(counter);
                PairRun done = attempt(
                    p,
                    p.workload.name + "." + p.workload.strategy + ".r" + std::to_string(round + 1),
                    0);
                if (!done.failure.is_null()) {
                    done.failure["round"] = round + 1;
                    failure_of[i] = std::move(done.failure);
                    rows.failure_exit_code = std::max(rows.failure_exit_code, done.exit_code);
                    continue;
                }
                if (!done.interrupted.is_null()) {
                    rows.interrupted_run = done.interrupted;
                    rows.interrupted = true;
                    break;
                }
                said(counter, done.row);
                done_of[i].push_back(std::move(done));
            }
        }
        for (std::size_t i = 0; i < plan.size(); ++i) {
            // Every finished run, a failed pair's too (--csv's rows): round k is its k-th run,
            // since a pair that failed runs no more rounds.
            for (std::size_t k = 0; k < done_of[i].size(); ++k) {
                SuiteRow run = done_of[i][k].row;
                run.round = static_cast<int>(k) + 1;
                rows.each_run.push_back(std::move(run));
            }
            if (!failure_of[i].is_null()) {
                // Its runs that finished are named, so no folder in the suite is unaccounted for.
                json dirs = json::array();
                for (const auto& d : done_of[i])
                    dirs.push_back(d.row.dir);
                failure_of[i]["dirs"] = dirs;
                rows.failed.push_back(std::move(failure_of[i]));
                rows.all_ok = false;
            } else if (!done_of[i].empty()) {
                SuiteRow row = repeated_row(plan[i].workload, done_of[i], options_.repeat);
                rows.all_ok = rows.all_ok && row.ok();
                rows.runs.push_back(std::move(row));
            }
        }
    }

    // The progress line ends with the runs: what follows starts on a clean line.
    void finish_progress() const {
        if (terminal_)
            std::fprintf(stderr, "\r\x1b[K");
    }

  private:
    void say(const std::string& what) const {
        if (terminal_)
            std::fprintf(stderr, "\r\x1b[K%s", what.c_str());
        else if (options_.progress == SuiteProgress::Lines)
            std::fprintf(stderr, "%s\n", what.c_str());
    }

    // "[3/40] t1-holder-paused x set_nx_px: as expected (attempt 2) (4.1 s)"
    void said(const std::string& counter, const SuiteRow& row) const {
        if (options_.progress != SuiteProgress::Lines)
            return;
        char took[32];
        std::snprintf(took, sizeof took, " (%.1f s)", row.wall_s.value_or(0));
        say(counter + ": " +
            (!row.as_expected   ? std::string("UNKNOWN")
             : *row.as_expected ? std::string("as expected")
                                : std::string("UNEXPECTED")) +
            (row.attempts > 1 ? " (attempt " + std::to_string(row.attempts) + ")" : "") + took);
    }

    void skip(const Planned& p) {
        std::fprintf(stderr, "%sskipped: %s x %s: %s\n", wipe_, p.workload.name.c_str(),
                     p.workload.strategy.c_str(), p.skip.c_str());
        rows.skipped.push_back(
            {{"scenario", p.workload.name}, {"strategy", p.workload.strategy}, {"reason", p.skip}});
    }

    // One run of a pair: its row (and what repeated runs judge together), or its failure.
    PairRun attempt(const Planned& p, const std::string& label, int retries) const {
        PairRun done;
        const auto started = std::chrono::steady_clock::now();
        const auto wall_s = [&] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                .count();
        };
        RunOptions ro{.workload = p.workload,
                      .redis = options_.redis,
                      .inventory = options_.inventory,
                      .zookeeper = options_.zookeeper,
                      .connections = options_.connections,
                      .out_dir = tmp_,
                      .interrupt = options_.interrupt,
                      .label = label};
        RunOutcome r;
        int attempts = 1;
        try {
            r = run_workload(ro);
            // A demonstration races real timers on a shared machine; with --retries an
            // unexpected outcome is run again, and the table says it needed another try.
            while (!r.interrupted && attempts <= retries && r.summary.as_expected != true) {
                ++attempts;
                r = run_workload(ro);
            }
        } catch (...) {
            // One run that could not be done (the machine, the disk, a bug) is that run's
            // error: the runs before it and after it are kept and written.
            const RunFailure failure = run_failure(std::current_exception());
            std::fprintf(stderr, "%sfailed: %s x %s: %s\n", wipe_, p.workload.name.c_str(),
                         p.workload.strategy.c_str(), failure.message.c_str());
            done.failure = {{"scenario", p.workload.name}, {"strategy", p.workload.strategy},
                            {"error", failure.message},    {"exit_code", failure.exit_code},
                            {"attempts", attempts},        {"wall_s", wall_s()}};
            done.exit_code = failure.exit_code;
            return done;
        }
        if (r.interrupted) {
            // Written like any interrupted run, inside the suite's folder: the table names it, so
            // no folder there is unaccounted for; it is no row, being no whole measurement.
            done.interrupted = {{"scenario", p.workload.name},
                                {"strategy", p.workload.strategy},
                                {"dir", fs::relative(r.dir, tmp_).string()}};
            return done;
        }
        done.row = run_row(p.workload, r.summary, fs::relative(r.dir, tmp_), attempts, wall_s());
        done.expected_terms = r.summary.expected_terms_json();
        for (const auto& check : r.summary.verdict.checks)
            done.checks[check.name] = check.verdict();
        return done;
    }

    const SuiteOptions& options_;
    const fs::path& tmp_;
    const bool terminal_;
    // What a line that must stay starts with: on a terminal, the progress line is wiped first.
    const char* const wipe_;
};

// suite.json's filter: what the gate compares with the part of the baseline it selected. With
// --no-topology, its scenarios are the ones the plan kept.
json suite_filter(const SuiteOptions& options, const std::vector<Planned>& plan) {
    if (!options.no_topology) {
        if (options.scenarios.empty() && options.strategies.empty())
            return nullptr;
        return {{"scenarios", options.scenarios}, {"strategies", options.strategies}};
    }
    std::vector<std::string> kept;
    for (const auto& p : plan) {
        if (std::find(kept.begin(), kept.end(), p.workload.name) == kept.end())
            kept.push_back(p.workload.name);
    }
    return {{"scenarios", kept}, {"strategies", options.strategies}, {"no_topology", true}};
}

// suite.json: what ran, what failed, what was skipped, and what the suite was asked.
SuiteTable suite_table(const SuiteOptions& options, SuiteRows& rows, bool all_as_expected,
                       const std::optional<Yardstick>& yardstick, json filter) {
    SuiteTable table{.quick = options.quick,
                     .filter = std::move(filter),
                     .interrupted = rows.interrupted,
                     .interrupted_run = rows.interrupted_run,
                     .all_as_expected = all_as_expected,
                     .yardstick = yardstick ? yardstick->to_json() : json(nullptr),
                     .runs = std::move(rows.runs),
                     .failed = rows.failed,
                     .skipped = rows.skipped};
    // Only a repeated suite says so: one without --repeat reads as it always has.
    if (options.repeat > 1)
        table.repeat = options.repeat;
    return table;
}
}  // namespace

SuiteOutcome run_suite(const SuiteOptions& options) {
    if (options.repeat < 1)
        throw WorkloadError("--repeat must be 1 or more");
    if (options.repeat > 1 && options.retries > 0) {
        throw WorkloadError(
            "--retries runs a pair again until it is as expected, --repeat counts how often it "
            "is: give one of them");
    }
    for (const auto& s : options.strategies) {
        if (!find_strategy(s))
            throw WorkloadError("--strategy: unknown '" + s + "'");
    }
    const std::vector<Planned> plan = plan_pairs(options, scenario_files(options.scenarios_dir));

    // Like a run, a suite appears whole or not at all (an interrupted suite says so inside).
    ResultFolder folder(options.out_dir, "suite-" + utc_stamp());
    SuiteRunner runner(options, folder.tmp());
    std::optional<Yardstick> yardstick = runner.measure_machine();
    if (options.repeat <= 1)
        runner.run_each_once(plan);
    else
        runner.run_in_rounds(plan);
    runner.measure_machine_again(yardstick);
    runner.finish_progress();

    SuiteOutcome outcome;
    outcome.interrupted = runner.rows.interrupted;
    outcome.failure_exit_code = runner.rows.failure_exit_code;
    outcome.all_as_expected = runner.rows.all_ok && !outcome.interrupted;
    outcome.table = suite_table(options, runner.rows, outcome.all_as_expected, yardstick,
                                suite_filter(options, plan));
    outcome.each_run = std::move(runner.rows.each_run);
    write_atomically(folder.tmp() / "suite.json", outcome.table.to_json().dump(2) + "\n");
    write_atomically(folder.tmp() / "report.txt", format_table(outcome.table));
    outcome.dir = folder.commit();
    if (options.junit)
        write_atomically(*options.junit, junit_xml(outcome.table));
    return outcome;
}

json SuiteTable::to_json() const {
    json rows = json::array();
    for (const auto& row : runs)
        rows.push_back(row.to_json());
    json table = {{"quick", quick},
                  {"filter", filter},
                  {"interrupted", interrupted},
                  {"interrupted_run", interrupted_run},
                  {"all_as_expected", all_as_expected},
                  {"yardstick", yardstick},
                  {"runs", rows},
                  {"failed", failed},
                  {"skipped", skipped}};
    if (repeat)
        table["repeat"] = *repeat;
    return table;
}

SuiteTable SuiteTable::from_json(const json& j, const std::string& origin) {
    json_input::JsonObject<SuiteInputError> top(j, origin, "");
    SuiteTable table;
    table.quick = top.boolean("quick", false);
    if (const json* filter = top.find("filter"))
        table.filter = *filter;
    table.interrupted = top.boolean("interrupted", false);
    if (const json* run = top.find("interrupted_run"))
        table.interrupted_run = *run;
    table.all_as_expected = top.boolean("all_as_expected", false);
    if (const json* yardstick = top.find("yardstick"))
        table.yardstick = *yardstick;
    const json& runs = top.required_array("runs");
    for (std::size_t i = 0; i < runs.size(); ++i)
        table.runs.push_back(SuiteRow::from_json(runs[i], origin, "/runs/" + std::to_string(i)));
    if (const json* failed = top.optional_array("failed"))
        table.failed = *failed;
    if (const json* skipped = top.optional_array("skipped"))
        table.skipped = *skipped;
    if (top.find("repeat"))
        table.repeat = static_cast<int>(top.integer("repeat", 1, 1, 1000));
    return table;
}

namespace {

// The server's column: its CPU per cycle, and "!" after it where it was the bottleneck (a side
// near a full core set the run's pace); "-" when not measured (or a suite from before).
std::string server_cost_cell(const SuiteRow& run) {
    if (!run.server_us_per_cycle)
        return "-";
    char cell[32];
    std::snprintf(cell, sizeof cell, "%.1f%s", *run.server_us_per_cycle,
                  saturated(run.bottleneck) ? "!" : "");
    return cell;
}

// The linearizability column: what the search said about the lock service.
std::string linearizability_word(const SuiteRow& run) {
    if (!run.linearizability)
        return "-";
    switch (*run.linearizability) {
        case checker::Verdict::Valid:
            return "ok";
        case checker::Verdict::Invalid:
            return "VIOL";
        case checker::Verdict::Unknown:
            return "?";
        case checker::Verdict::NotApplicable:
            break;
    }
    return "-";  // nothing for the model to judge
}

// Rates alone: no single run decides the expectation, so "as expected in 0 of n" would say
// nothing; the rate lines under the row say how the runs met it.
bool only_rates(const std::string& expected) {
    try {
        return Expectation::parse(expected).only_rates();
    } catch (const std::invalid_argument&) {
        return false;
    }
}

// A repeated pair's outcome after its verdict word: "violated in 3 of 3, as expected in 3 of 3".
std::string repeated_words(const SuiteRow& row) {
    const RepeatedRuns& counted = *row.repeated;
    const std::string n = std::to_string(counted.runs);
    std::string words = "violated in " + std::to_string(counted.violated_runs) + " of " + n;
    if (row.expected && !only_rates(*row.expected))
        words += ", as expected in " + std::to_string(counted.as_expected_runs) + " of " + n;
    return words;
}

// Under a repeated pair: each check that applied as k of n, and each rate term as the runs met it.
std::string repeated_lines(const SuiteRow& row) {
    const RepeatedRuns& counted = *row.repeated;
    // suite.json's object sorts them by name: the lines go in the report's order.
    std::set<std::string> names;
    for (const auto& [name, cell] : counted.checks)
        names.insert(name);
    std::string checks;
    for (const auto& name : checker::Report::in_check_order(names)) {
        const CheckCounts& cell = counted.checks.at(name);
        if (cell.counts.not_applicable == cell.runs)
            continue;
        checks += (checks.empty() ? "" : ", ") + name + " " + std::to_string(cell.counts.violated) +
                  " of " + std::to_string(cell.runs);
        if (cell.counts.unknown > 0)
            checks += " (" + std::to_string(cell.counts.unknown) + " unknown)";
    }
    std::string out = "    violated: " + (checks.empty() ? std::string("-") : checks) + "\n";
    for (const auto& rate : counted.rate_terms) {
        out += "    rate " + rate.term + ": held in " + std::to_string(rate.held) + " of " +
               std::to_string(rate.runs) +
               (rate.undecided > 0 ? " (" + std::to_string(rate.undecided) + " undecided)" : "") +
               " -> " +
               (!rate.met   ? "unknown"
                : *rate.met ? "met"
                            : "NOT MET") +
               "\n";
    }
    return out;
}

}  // namespace

std::string format_table(const SuiteTable& table) {
    std::ostringstream out;
    char line[1024];
    std::snprintf(line, sizeof line, "%-36s %-15s %9s %8s %9s %8s %5s %5s  %-40s %s\n", "scenario",
                  "strategy", "cycles/s", "p50 ms", "p99 ms", "srv us/c", "viol", "lin", "expected",
                  "outcome");
    out << line;
    for (const SuiteRow& r : table.runs) {
        std::string outcome = !r.as_expected ? "UNKNOWN" : *r.as_expected ? "ok" : "UNEXPECTED";
        if (r.attempts > 1)
            outcome += " (attempt " + std::to_string(r.attempts) + ")";
        if (r.repeated)
            outcome += ": " + repeated_words(r);
        std::snprintf(line, sizeof line, "%-36s %-15s %9.0f %8.3f %9.3f %8s %5zu %5s  %-40s %s\n",
                      r.scenario.c_str(), r.strategy.c_str(), r.cycles_per_s, r.acquire_p50_ms,
                      r.acquire_p99_ms, server_cost_cell(r).c_str(),
                      static_cast<std::size_t>(r.violations), linearizability_word(r).c_str(),
                      r.expected ? r.expected->c_str() : "-", outcome.c_str());
        out << line;
        if (r.repeated)
            out << repeated_lines(r);
        for (const auto& reason : r.unknown_reasons)
            out << "    unknown: " << reason << "\n";
    }
    const json& failed = table.failed;
    for (const auto& f : failed) {
        std::snprintf(line, sizeof line,
                      "%-36s %-15s FAILED: ", f["scenario"].get<std::string>().c_str(),
                      f["strategy"].get<std::string>().c_str());
        out << line << f["error"].get<std::string>() << "\n";
    }
    const std::size_t n = table.runs.size() + failed.size();
    const auto ok = static_cast<std::size_t>(std::count_if(
        table.runs.begin(), table.runs.end(), [](const SuiteRow& r) { return r.ok(); }));
    const json& skipped = table.skipped;
    for (const auto& sk : skipped) {
        std::snprintf(line, sizeof line, "%-36s %-15s skipped: %s\n",
                      sk["scenario"].get<std::string>().c_str(),
                      sk["strategy"].get<std::string>().c_str(),
                      sk["reason"].get<std::string>().c_str());
        out << line;
    }
    const bool server_bound =
        std::any_of(table.runs.begin(), table.runs.end(),
                    [](const SuiteRow& r) { return server_cost_cell(r).back() == '!'; });
    if (server_bound)
        out << "srv us/c: the servers' CPU per lock cycle; ! the server was the bottleneck\n";
    if (table.repeat)
        out << ok << " of " << n << " pairs as expected over " << *table.repeat << " runs each";
    else
        out << ok << " of " << n << " runs as expected";
    out << (failed.empty() ? "" : ", " + std::to_string(failed.size()) + " failed")
        << (skipped.empty() ? "" : ", " + std::to_string(skipped.size()) + " skipped")
        << (table.interrupted ? " (INTERRUPTED)" : "") << "\n";
    return out.str();
}

std::string format_table(const json& table) {
    return format_table(SuiteTable::from_json(table, "suite.json"));
}

namespace {

// JUnit's time attribute: seconds, as CI dashboards read them.
std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    return buf;
}

// A failed pair's seconds: its wall-clock time, or 0 in an older table.
std::string failure_seconds(const json& failure) {
    const auto wall = failure.find("wall_s");
    return seconds_text(wall != failure.end() && wall->is_number() ? wall->get<double>() : 0);
}

// A run's seconds: its wall-clock time, or its measured duration in an older table.
std::string run_seconds(const SuiteRow& row) {
    return seconds_text(row.wall_s.value_or(row.duration_s));
}

// What a run that was not as expected got instead, in the failure's message.
std::string what_it_got(const SuiteRow& r) {
    std::string got;
    switch (r.valid) {
        case checker::Verdict::Valid:
            got = "valid";
            break;
        case checker::Verdict::Invalid:
            got = std::to_string(r.violations) + " violations: " + json(r.violation_kinds).dump();
            break;
        case checker::Verdict::Unknown:
        case checker::Verdict::NotApplicable:
            got = "unknown";
            for (const auto& reason : r.unknown_reasons)
                got += "; " + reason;
            break;
    }
    if (r.repeated)
        got += " (" + repeated_words(r) + ")";
    return got;
}

}  // namespace

std::string junit_xml(const SuiteTable& table) {
    const auto failures = static_cast<std::size_t>(std::count_if(
        table.runs.begin(), table.runs.end(), [](const SuiteRow& r) { return !r.ok(); }));
    std::ostringstream out;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    const json& skipped = table.skipped;
    const json& failed = table.failed;
    double total = 0;
    for (const auto& r : table.runs)
        total += std::stod(run_seconds(r));
    for (const auto& f : failed)
        total += std::stod(failure_seconds(f));
    out << "<testsuite name=\"lockbench\" tests=\""
        << table.runs.size() + failed.size() + skipped.size() << "\" failures=\"" << failures
        << "\" errors=\"" << failed.size() << "\" skipped=\"" << skipped.size() << "\" time=\""
        << seconds_text(total) << "\">\n";
    for (const auto& f : failed) {
        out << "  <testcase classname=\"" << markup_escape(f["scenario"].get<std::string>())
            << "\" name=\"" << markup_escape(f["strategy"].get<std::string>()) << "\" time=\""
            << failure_seconds(f) << "\">\n"
            << "    <error message=\"" << markup_escape(f["error"].get<std::string>())
            << "\"/>\n  </testcase>\n";
    }
    for (const auto& sk : skipped) {
        out << "  <testcase classname=\"" << markup_escape(sk["scenario"].get<std::string>())
            << "\" name=\"" << markup_escape(sk["strategy"].get<std::string>())
            << "\" time=\"0.000\">\n"
            << "    <skipped message=\"" << markup_escape(sk["reason"].get<std::string>())
            << "\"/>\n  </testcase>\n";
    }
    for (const auto& r : table.runs) {
        out << "  <testcase classname=\"" << markup_escape(r.scenario) << "\" name=\""
            << markup_escape(r.strategy) << "\" time=\"" << run_seconds(r) << "\">\n";
        if (!r.ok()) {
            out << "    <failure message=\""
                << markup_escape("expected " + r.expected.value_or("-") + ", got " + what_it_got(r))
                << "\">" << markup_escape(r.dir) << "</failure>\n";
        }
        out << "  </testcase>\n";
    }
    out << "</testsuite>\n";
    return out.str();
}

std::string junit_xml(const json& table) {
    return junit_xml(SuiteTable::from_json(table, "suite.json"));
}

}  // namespace lockbench
