#include "engine/ci/suite.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <unistd.h>

#include "checker/report.hpp"
#include "checker/story/markup_escape.hpp"
#include "engine/ci/yardstick.hpp"
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

// The server's CPU per cycle, every node together; null where it was not measured.
json server_us_per_cycle(const json& summary) {
    const json cost = summary.value("server_cost", json());
    if (!cost.is_object() || !cost["total"].is_object())
        return nullptr;
    return cost["total"]["cpu_us_per_cycle"];
}

// One run of a pair, as the suite keeps it: its row, or why there is none.
struct PairRun {
    json row;                      // suite.json's row for this one run
    json expected_terms;           // summary.json's, for judging repeated runs together
    json checks = json::object();  // each check's verdict
    json failure;                  // the failed entry, when the run could not be done
    int exit_code = 0;             // that failure's
    json interrupted;              // the interrupted run, when Ctrl-C stopped it
};

json run_row(const Workload& w, const RunOutcome& r, const fs::path& dir, int attempts,
             double wall_s) {
    const auto& s = r.summary;
    const auto verdict = checker::Report::from_json(s["verdict"]);
    // What broke, named by the checks that found it (every one counts, listed or not).
    json kinds = json::array();
    for (const auto& check : verdict.checks) {
        if (check.verdict() == checker::Verdict::Invalid)
            kinds.push_back(check.name);
    }
    json per_second = json::array();
    for (const auto& point : s["timeseries"])
        per_second.push_back(point["cycles"]);
    const auto* linearizability = verdict.check("linearizability");
    return {{"scenario", w.name},
            {"strategy", w.strategy},
            {"dir", dir.string()},
            {"cycles_per_s", s["throughput"]["cycles_per_s"]},
            {"cycles_per_second", per_second},
            {"duration_s", s["duration_s"]},
            {"faults", !w.faults.empty()},
            {"acquire_p50_ms", s["latency_ms"]["acquire"]["p50"]},
            {"acquire_p99_ms", s["latency_ms"]["acquire"]["p99"]},
            {"server_us_per_cycle", server_us_per_cycle(s)},
            {"bottleneck",
             s.contains("server_cost") ? s["server_cost"]["bottleneck"]["side"] : json(nullptr)},
            {"valid", checker::to_json(verdict.verdict)},
            {"violations", verdict.violation_count()},
            {"violation_kinds", kinds},
            {"linearizability",
             linearizability ? checker::to_json(linearizability->verdict()) : json("not-run")},
            {"unknown_reasons", verdict.unknown_reasons},
            {"expected", s["expected"]},
            {"as_expected", s["as_expected"]},
            {"attempts", attempts},
            {"wall_s", wall_s}};
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

// One row for a pair run N times: the fields a single run's row has, over its runs (medians;
// throughput as every run's whole-second samples one after another; a violation in any run),
// and the counts: per check "violated in k of n", the expectation judged over the runs.
json repeated_row(const Workload& w, const std::vector<PairRun>& done, int repeat) {
    std::vector<double> throughput, p50, p99, server_cost;
    json per_second = json::array();
    double sampled_s = 0, wall_s = 0;
    std::uint64_t violations = 0;
    json kinds = json::array(), reasons = json::array(), dirs = json::array();
    json bottleneck = nullptr;
    std::vector<checker::Verdict> verdicts, linearizability;
    int as_expected = 0, violated_runs = 0;
    std::set<std::string> check_names;
    std::vector<json> terms;
    for (const PairRun& d : done) {
        const json& r = d.row;
        throughput.push_back(r["cycles_per_s"].get<double>());
        p50.push_back(r["acquire_p50_ms"].get<double>());
        p99.push_back(r["acquire_p99_ms"].get<double>());
        if (r["server_us_per_cycle"].is_number())
            server_cost.push_back(r["server_us_per_cycle"].get<double>());
        // The gate takes a run's whole seconds only; so does this, run by run.
        const auto whole = static_cast<std::size_t>(std::floor(r["duration_s"].get<double>()));
        for (std::size_t s = 0; s < whole && s < r["cycles_per_second"].size(); ++s)
            per_second.push_back(r["cycles_per_second"][s]);
        sampled_s += static_cast<double>(std::min(whole, r["cycles_per_second"].size()));
        wall_s += r["wall_s"].get<double>();
        violations += r["violations"].get<std::uint64_t>();
        for (const auto& kind : r["violation_kinds"]) {
            if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
                kinds.push_back(kind);
        }
        for (const auto& reason : r["unknown_reasons"]) {
            if (std::find(reasons.begin(), reasons.end(), reason) == reasons.end())
                reasons.push_back(reason);
        }
        if (bottleneck.is_null() || r["bottleneck"] == "server" || r["bottleneck"] == "both") {
            if (!(bottleneck == "server" || bottleneck == "both"))
                bottleneck = r["bottleneck"];
        }
        dirs.push_back(r["dir"]);
        const auto verdict = checker::verdict_of(r["valid"]);
        verdicts.push_back(verdict);
        violated_runs += verdict == checker::Verdict::Invalid;
        if (r["linearizability"] != "not-run")
            linearizability.push_back(checker::verdict_of(r["linearizability"]));
        as_expected += r["as_expected"] == true;
        for (const auto& [name, v] : d.checks.items())
            check_names.insert(name);
        terms.push_back(d.expected_terms);
    }
    const int n = static_cast<int>(done.size());
    json checks = json::object();
    for (const auto& name : checker::Report::in_check_order(check_names)) {
        checker::VerdictCounts counts;
        for (const PairRun& d : done)
            counts.add(d.checks.contains(name) ? checker::verdict_of(d.checks[name])
                                               : checker::Verdict::NotApplicable);
        checks[name] = {{"violated", counts.violated},
                        {"valid", counts.valid},
                        {"unknown", counts.unknown},
                        {"not_applicable", counts.not_applicable},
                        {"runs", n}};
    }
    const json expected = done.front().row["expected"];
    const json judged = judge_repeated(expected, terms);
    return {
        {"scenario", w.name},
        {"strategy", w.strategy},
        {"repeat", repeat},
        {"runs", n},
        {"dir", dirs.front()},
        {"dirs", dirs},
        {"cycles_per_s", median_of_numbers(throughput)},
        {"cycles_per_second", per_second},
        {"duration_s", sampled_s},
        {"faults", !w.faults.empty()},
        {"acquire_p50_ms", median_of_numbers(p50)},
        {"acquire_p99_ms", median_of_numbers(p99)},
        {"server_us_per_cycle",
         server_cost.empty() ? json(nullptr) : json(median_of_numbers(server_cost))},
        {"bottleneck", bottleneck},
        {"valid", checker::to_json(worst_of(verdicts))},
        {"violated_runs", violated_runs},
        {"violations", violations},
        {"violation_kinds", kinds},
        {"checks", checks},
        {"linearizability",
         linearizability.empty() ? json("not-run") : checker::to_json(worst_of(linearizability))},
        {"unknown_reasons", reasons},
        {"expected", expected},
        // The pair's outcome, what the gate and JUnit read: the expectation over the runs.
        {"as_expected", judged["expectation_met"]},
        {"as_expected_runs", as_expected},
        {"rate_terms", judged["rate_terms"]},
        {"attempts", 1},
        {"wall_s", wall_s}};
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
    json runs = json::array();
    json each_run = json::array();  // SuiteOutcome::each_run
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
            rows.all_ok = rows.all_ok && done.row["as_expected"] == true;
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
                json run = done_of[i][k].row;
                run["repeat"] = static_cast<int>(k) + 1;
                rows.each_run.push_back(std::move(run));
            }
            if (!failure_of[i].is_null()) {
                // Its runs that finished are named, so no folder in the suite is unaccounted for.
                json dirs = json::array();
                for (const auto& d : done_of[i])
                    dirs.push_back(d.row["dir"]);
                failure_of[i]["dirs"] = dirs;
                rows.failed.push_back(std::move(failure_of[i]));
                rows.all_ok = false;
            } else if (!done_of[i].empty()) {
                json row = repeated_row(plan[i].workload, done_of[i], options_.repeat);
                rows.all_ok = rows.all_ok && row["as_expected"] == true;
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
    void said(const std::string& counter, const json& row) const {
        if (options_.progress != SuiteProgress::Lines)
            return;
        char took[32];
        std::snprintf(took, sizeof took, " (%.1f s)", row["wall_s"].get<double>());
        const int attempts = row["attempts"].get<int>();
        say(counter + ": " +
            (row["as_expected"].is_null()     ? std::string("UNKNOWN")
             : row["as_expected"].get<bool>() ? std::string("as expected")
                                              : std::string("UNEXPECTED")) +
            (attempts > 1 ? " (attempt " + std::to_string(attempts) + ")" : "") + took);
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
            while (
                !r.interrupted && attempts <= retries &&
                !(r.summary["as_expected"].is_boolean() && r.summary["as_expected"].get<bool>())) {
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
        done.row = run_row(p.workload, r, fs::relative(r.dir, tmp_), attempts, wall_s());
        done.expected_terms = r.summary.value("expected_terms", json::array());
        const auto verdict = checker::Report::from_json(r.summary["verdict"]);
        for (const auto& check : verdict.checks)
            done.checks[check.name] = checker::to_json(check.verdict());
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
json suite_table(const SuiteOptions& options, const SuiteRows& rows, bool all_as_expected,
                 const std::optional<Yardstick>& yardstick, json filter) {
    json table = {{"quick", options.quick},
                  {"filter", filter},
                  {"interrupted", rows.interrupted},
                  {"interrupted_run", rows.interrupted_run},
                  {"all_as_expected", all_as_expected},
                  {"yardstick", yardstick ? yardstick->to_json() : json(nullptr)},
                  {"runs", rows.runs},
                  {"failed", rows.failed},
                  {"skipped", rows.skipped}};
    // Only a repeated suite says so: one without --repeat reads as it always has.
    if (options.repeat > 1)
        table["repeat"] = options.repeat;
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
    write_atomically(folder.tmp() / "suite.json", outcome.table.dump(2) + "\n");
    write_atomically(folder.tmp() / "report.txt", format_table(outcome.table));
    outcome.dir = folder.commit();
    if (options.junit)
        write_atomically(*options.junit, junit_xml(outcome.table));
    return outcome;
}

namespace {

// The server's column: its CPU per cycle, and "!" after it where it was the bottleneck (a side
// near a full core set the run's pace); "-" when not measured (or a suite from before).
std::string server_cost_cell(const json& run) {
    const json us = run.value("server_us_per_cycle", json());
    if (!us.is_number())
        return "-";
    char cell[32];
    const json side = run.value("bottleneck", json());
    std::snprintf(cell, sizeof cell, "%.1f%s", us.get<double>(),
                  side == "server" || side == "both" ? "!" : "");
    return cell;
}

// The linearizability column: what the search said about the lock service.
std::string linearizability_word(const json& run) {
    const json v = run.value("linearizability", json("not-run"));
    if (v == "not-run")
        return "-";
    switch (checker::verdict_of(v)) {
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
bool only_rates(const json& expected) {
    try {
        return expected.is_string() && Expectation::parse(expected.get<std::string>()).only_rates();
    } catch (const std::invalid_argument&) {
        return false;
    }
}

// A repeated pair's outcome after its verdict word: "violated in 3 of 3, as expected in 3 of 3".
std::string repeated_words(const json& row) {
    const std::string n = std::to_string(row["runs"].get<int>());
    std::string words =
        "violated in " + std::to_string(row["violated_runs"].get<int>()) + " of " + n;
    if (row["expected"].is_string() && !only_rates(row["expected"]))
        words +=
            ", as expected in " + std::to_string(row["as_expected_runs"].get<int>()) + " of " + n;
    return words;
}

// Under a repeated pair: each check that applied as k of n, and each rate term as the runs met it.
std::string repeated_lines(const json& row) {
    // suite.json's object sorts them by name: the lines go in the report's order.
    std::set<std::string> names;
    for (const auto& [name, counts] : row["checks"].items())
        names.insert(name);
    std::string checks;
    for (const auto& name : checker::Report::in_check_order(names)) {
        const json& counts = row["checks"][name];
        if (counts["not_applicable"] == counts["runs"])
            continue;
        checks += (checks.empty() ? "" : ", ") + name + " " +
                  std::to_string(counts["violated"].get<int>()) + " of " +
                  std::to_string(counts["runs"].get<int>());
        if (counts["unknown"].get<int>() > 0)
            checks += " (" + std::to_string(counts["unknown"].get<int>()) + " unknown)";
    }
    std::string out = "    violated: " + (checks.empty() ? std::string("-") : checks) + "\n";
    for (const auto& rate : row.value("rate_terms", json::array())) {
        out += "    rate " + rate["term"].get<std::string>() + ": held in " +
               std::to_string(rate["held"].get<int>()) + " of " +
               std::to_string(rate["runs"].get<int>()) +
               (rate["undecided"].get<int>() > 0
                    ? " (" + std::to_string(rate["undecided"].get<int>()) + " undecided)"
                    : "") +
               " -> " +
               (rate["met"].is_null()     ? "unknown"
                : rate["met"].get<bool>() ? "met"
                                          : "NOT MET") +
               "\n";
    }
    return out;
}

}  // namespace

std::string format_table(const json& table) {
    std::ostringstream out;
    char line[1024];
    std::snprintf(line, sizeof line, "%-36s %-15s %9s %8s %9s %8s %5s %5s  %-40s %s\n", "scenario",
                  "strategy", "cycles/s", "p50 ms", "p99 ms", "srv us/c", "viol", "lin", "expected",
                  "outcome");
    out << line;
    for (const auto& r : table["runs"]) {
        std::string outcome = r["as_expected"].is_null()     ? "UNKNOWN"
                              : r["as_expected"].get<bool>() ? "ok"
                                                             : "UNEXPECTED";
        if (r.value("attempts", 1) > 1)
            outcome += " (attempt " + std::to_string(r.value("attempts", 1)) + ")";
        if (r.contains("runs"))
            outcome += ": " + repeated_words(r);
        std::snprintf(line, sizeof line, "%-36s %-15s %9.0f %8.3f %9.3f %8s %5zu %5s  %-40s %s\n",
                      r["scenario"].get<std::string>().c_str(),
                      r["strategy"].get<std::string>().c_str(), r["cycles_per_s"].get<double>(),
                      r["acquire_p50_ms"].get<double>(), r["acquire_p99_ms"].get<double>(),
                      server_cost_cell(r).c_str(), r["violations"].get<std::size_t>(),
                      linearizability_word(r).c_str(),
                      r["expected"].is_string() ? r["expected"].get<std::string>().c_str() : "-",
                      outcome.c_str());
        out << line;
        if (r.contains("runs"))
            out << repeated_lines(r);
        for (const auto& reason : r.value("unknown_reasons", json::array()))
            out << "    unknown: " << reason.get<std::string>() << "\n";
    }
    const json failed = table.value("failed", json::array());
    for (const auto& f : failed) {
        std::snprintf(line, sizeof line,
                      "%-36s %-15s FAILED: ", f["scenario"].get<std::string>().c_str(),
                      f["strategy"].get<std::string>().c_str());
        out << line << f["error"].get<std::string>() << "\n";
    }
    std::size_t n = table["runs"].size() + failed.size(), ok = 0;
    for (const auto& r : table["runs"])
        ok += r["as_expected"].is_boolean() && r["as_expected"].get<bool>();
    const json skipped = table.value("skipped", json::array());
    for (const auto& sk : skipped) {
        std::snprintf(line, sizeof line, "%-36s %-15s skipped: %s\n",
                      sk["scenario"].get<std::string>().c_str(),
                      sk["strategy"].get<std::string>().c_str(),
                      sk["reason"].get<std::string>().c_str());
        out << line;
    }
    const bool server_bound =
        std::any_of(table["runs"].begin(), table["runs"].end(),
                    [](const json& r) { return server_cost_cell(r).back() == '!'; });
    if (server_bound)
        out << "srv us/c: the servers' CPU per lock cycle; ! the server was the bottleneck\n";
    if (table.contains("repeat"))
        out << ok << " of " << n << " pairs as expected over " << table["repeat"].get<int>()
            << " runs each";
    else
        out << ok << " of " << n << " runs as expected";
    out << (failed.empty() ? "" : ", " + std::to_string(failed.size()) + " failed")
        << (skipped.empty() ? "" : ", " + std::to_string(skipped.size()) + " skipped")
        << (table["interrupted"].get<bool>() ? " (INTERRUPTED)" : "") << "\n";
    return out.str();
}

namespace {

// JUnit's time attribute: seconds, as CI dashboards read them.
std::string seconds_of(const json& entry) {
    double s = 0;
    if (const auto wall = entry.find("wall_s"); wall != entry.end() && wall->is_number())
        s = wall->get<double>();
    else if (const auto d = entry.find("duration_s"); d != entry.end() && d->is_number())
        s = d->get<double>();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", s);
    return buf;
}

}  // namespace

std::string junit_xml(const json& table) {
    std::size_t failures = 0;
    for (const auto& r : table["runs"])
        failures += !(r["as_expected"].is_boolean() && r["as_expected"].get<bool>());
    std::ostringstream out;
    out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
    const json skipped = table.value("skipped", json::array());
    const json failed = table.value("failed", json::array());
    double total = 0;
    for (const auto& r : table["runs"])
        total += std::stod(seconds_of(r));
    for (const auto& f : failed)
        total += std::stod(seconds_of(f));
    char total_text[32];
    std::snprintf(total_text, sizeof total_text, "%.3f", total);
    out << "<testsuite name=\"lockbench\" tests=\""
        << table["runs"].size() + failed.size() + skipped.size() << "\" failures=\"" << failures
        << "\" errors=\"" << failed.size() << "\" skipped=\"" << skipped.size() << "\" time=\""
        << total_text << "\">\n";
    for (const auto& f : failed) {
        out << "  <testcase classname=\"" << markup_escape(f["scenario"].get<std::string>())
            << "\" name=\"" << markup_escape(f["strategy"].get<std::string>()) << "\" time=\""
            << seconds_of(f) << "\">\n"
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
    for (const auto& r : table["runs"]) {
        out << "  <testcase classname=\"" << markup_escape(r["scenario"].get<std::string>())
            << "\" name=\"" << markup_escape(r["strategy"].get<std::string>()) << "\" time=\""
            << seconds_of(r) << "\">\n";
        if (!(r["as_expected"].is_boolean() && r["as_expected"].get<bool>())) {
            std::string expected =
                r["expected"].is_string() ? r["expected"].get<std::string>() : "-";
            std::string got;
            switch (checker::verdict_of(r["valid"])) {
                case checker::Verdict::Valid:
                    got = "valid";
                    break;
                case checker::Verdict::Invalid:
                    got = std::to_string(r["violations"].get<std::uint64_t>()) +
                          " violations: " + r["violation_kinds"].dump();
                    break;
                case checker::Verdict::Unknown:
                case checker::Verdict::NotApplicable:
                    got = "unknown";
                    for (const auto& reason : r.value("unknown_reasons", json::array()))
                        got += "; " + reason.get<std::string>();
                    break;
            }
            if (r.contains("runs"))
                got += " (" + repeated_words(r) + ")";
            out << "    <failure message=\""
                << markup_escape("expected " + expected + ", got " + got) << "\">"
                << markup_escape(r["dir"].get<std::string>()) << "</failure>\n";
        }
        out << "  </testcase>\n";
    }
    out << "</testsuite>\n";
    return out.str();
}

}  // namespace lockbench
