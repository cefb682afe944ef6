#include "engine/ci/suite.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <unistd.h>

#include "checker/report.hpp"
#include "checker/story/markup_escape.hpp"
#include "engine/ci/yardstick.hpp"
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

}  // namespace

SuiteOutcome run_suite(const SuiteOptions& options) {
    for (const auto& s : options.strategies) {
        if (!find_strategy(s))
            throw WorkloadError("--strategy: unknown '" + s + "'");
    }
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(options.scenarios_dir, ec)) {
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    }
    if (ec)
        throw WorkloadError(options.scenarios_dir.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());

    // Load and check everything first: a bad scenario fails the suite before any server starts.
    std::vector<Planned> plan;
    if (!options.redis.empty() && options.inventory)
        throw WorkloadError("--redis and --inventory both name the servers: give one");
    const std::vector<Endpoint> external_endpoints =
        options.inventory ? options.inventory->master_endpoints() : options.redis;
    const bool external = !external_endpoints.empty();
    bool replicas_checked = false;
    std::string no_replicas;
    // --redis names a Redis Cluster or not: the scenarios of the other kind are skipped.
    std::optional<bool> external_is_cluster;
    for (const auto& f : files) {
        Workload w = Workload::load(f);
        if (!options.scenarios.empty() &&
            std::find(options.scenarios.begin(), options.scenarios.end(), w.name) ==
                options.scenarios.end()) {
            continue;
        }
        for (const auto& [strategy, expected] : w.expect) {
            if (!options.strategies.empty() &&
                std::find(options.strategies.begin(), options.strategies.end(), strategy) ==
                    options.strategies.end()) {
                continue;
            }
            Workload as_run = w;
            as_run.strategy = strategy;
            // A demonstration keeps its own length: its faults and bounds are timed to it.
            if (options.quick && as_run.faults.empty())
                as_run.duration_s = std::min(as_run.duration_s, kQuickDuration);
            std::string skip;
            if (external) {
                // On the user's servers: what cannot run there is skipped, saying why (a bad
                // scenario is still an error below).
                skip = why_it_cannot_run({.workload = as_run,
                                          .redis = options.redis,
                                          .inventory = options.inventory,
                                          .zookeeper = options.zookeeper,
                                          .connections = options.connections});
                const StrategyInfo* info = find_strategy(strategy);
                if (skip.empty() && !external_endpoints.empty()) {
                    if (!external_is_cluster)
                        external_is_cluster = is_cluster_node(external_endpoints.front());
                    const bool wants_cluster = as_run.topology.kind == TopologyKind::Cluster;
                    if (wants_cluster && !*external_is_cluster)
                        skip = "a Redis Cluster scenario, and --redis names no cluster node";
                    if (!wants_cluster && *external_is_cluster)
                        skip =
                            "locks on one Redis, and --redis names a Redis Cluster (its "
                            "scenarios are the cluster-* ones)";
                }
                if (skip.empty() && info && info->capabilities.needs_replicas &&
                    as_run.topology.kind != TopologyKind::Cluster) {
                    if (!replicas_checked) {
                        replicas_checked = true;
                        Deployment probe;
                        probe.embedded = false;
                        probe.endpoints = {external_endpoints.at(0)};
                        try {
                            probe.check_replicas(StrategyOptions{}.wait_replicas);
                        } catch (const EnvironmentError& e) {
                            no_replicas = e.what();
                        }
                    }
                    skip = no_replicas;
                }
            }
            if (skip.empty() && options.connections) {
                // --connections: a scenario whose faults need one connection per client, or a
                // strategy that does not use lockbench's Redis connections, is skipped.
                Workload shared = as_run;
                shared.connections = *options.connections;
                if (shared.shares_connections())
                    skip = why_it_cannot_run({.workload = shared});
            }
            if (skip.empty()) {
                // A lock library this machine lacks (no npm ci, no JVM) is skipped, saying what
                // is missing; the scenario still runs for every strategy that is here.
                try {
                    find_strategy(strategy);
                } catch (const AdapterUnavailable& e) {
                    skip = e.what();
                }
            }
            if (skip.empty())
                as_run.validate();
            // Hosts in network namespaces need root: without it such a scenario is skipped,
            // saying so in one line, and never counted as passed.
            if (skip.empty() && as_run.topology.in_namespaces())
                skip = network_lab_unavailable();
            plan.push_back({std::move(as_run), f, skip});
        }
    }
    if (plan.empty())
        throw WorkloadError("no scenario matches the given --strategy/--scenario");

    SuiteOutcome outcome;
    // Like a run, a suite appears whole or not at all (an interrupted suite says so inside).
    ResultFolder folder(options.out_dir, "suite-" + utc_stamp());
    const fs::path& tmp = folder.tmp();

    const bool terminal = options.progress == SuiteProgress::Terminal;
    // What a line that must stay starts with: on a terminal, the progress line is wiped first.
    const char* wipe = terminal ? "\r\x1b[K" : "";
    const auto say = [&](const std::string& what) {
        if (terminal)
            std::fprintf(stderr, "\r\x1b[K%s", what.c_str());
        else if (options.progress == SuiteProgress::Lines)
            std::fprintf(stderr, "%s\n", what.c_str());
    };

    std::optional<Yardstick> yardstick;
    if (options.yardstick) {
        // Off a terminal a line stays: said once measured, so that a machine that cannot be
        // measured (no redis-server) says one line, the reason.
        if (terminal)
            say("measuring the machine (redis-benchmark)");
        yardstick = measure_yardstick();
        if (!terminal)
            say("measured the machine (redis-benchmark)");
    }

    json runs = json::array();
    json skipped = json::array();
    json failed = json::array();
    json interrupted_run = nullptr;
    bool all_ok = true;
    for (std::size_t i = 0; i < plan.size(); ++i) {
        if (options.interrupt && options.interrupt->load()) {
            outcome.interrupted = true;
            break;
        }
        const auto& p = plan[i];
        if (!p.skip.empty()) {
            std::fprintf(stderr, "%sskipped: %s x %s: %s\n", wipe, p.workload.name.c_str(),
                         p.workload.strategy.c_str(), p.skip.c_str());
            skipped.push_back({{"scenario", p.workload.name},
                               {"strategy", p.workload.strategy},
                               {"reason", p.skip}});
            continue;
        }
        const std::string counter = "[" + std::to_string(i + 1) + "/" +
                                    std::to_string(plan.size()) + "] " + p.workload.name + " x " +
                                    p.workload.strategy;
        if (terminal)
            say(counter);
        const auto started = std::chrono::steady_clock::now();
        const auto wall_s = [&] {
            return std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
                .count();
        };
        RunOptions ro{.workload = p.workload,
                      .redis = options.redis,
                      .inventory = options.inventory,
                      .zookeeper = options.zookeeper,
                      .connections = options.connections,
                      .out_dir = tmp,
                      .interrupt = options.interrupt,
                      .label = p.workload.name + "." + p.workload.strategy};
        RunOutcome r;
        int attempts = 1;
        try {
            r = run_workload(ro);
            // A demonstration races real timers on a shared machine; with --retries an
            // unexpected outcome is run again, and the table says it needed another try.
            while (
                !r.interrupted && attempts <= options.retries &&
                !(r.summary["as_expected"].is_boolean() && r.summary["as_expected"].get<bool>())) {
                ++attempts;
                r = run_workload(ro);
            }
        } catch (...) {
            // One run that could not be done (the machine, the disk, a bug) is that run's
            // error: the runs before it and after it are kept and written.
            const RunFailure failure = run_failure(std::current_exception());
            std::fprintf(stderr, "%sfailed: %s x %s: %s\n", wipe, p.workload.name.c_str(),
                         p.workload.strategy.c_str(), failure.message.c_str());
            failed.push_back({{"scenario", p.workload.name},
                              {"strategy", p.workload.strategy},
                              {"error", failure.message},
                              {"exit_code", failure.exit_code},
                              {"attempts", attempts},
                              {"wall_s", wall_s()}});
            outcome.failure_exit_code = std::max(outcome.failure_exit_code, failure.exit_code);
            all_ok = false;
            continue;
        }
        if (r.interrupted) {
            // Written like any interrupted run, inside the suite's folder: the table names it, so
            // no folder there is unaccounted for; it is no row, being no whole measurement.
            interrupted_run = {{"scenario", p.workload.name},
                               {"strategy", p.workload.strategy},
                               {"dir", fs::relative(r.dir, tmp).string()}};
            outcome.interrupted = true;
            break;
        }
        const auto& s = r.summary;
        bool as_expected = s["as_expected"].is_boolean() && s["as_expected"].get<bool>();
        all_ok = all_ok && as_expected;
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
        runs.push_back(
            {{"scenario", p.workload.name},
             {"strategy", p.workload.strategy},
             {"dir", fs::relative(r.dir, tmp).string()},
             {"cycles_per_s", s["throughput"]["cycles_per_s"]},
             {"cycles_per_second", per_second},
             {"duration_s", s["duration_s"]},
             {"faults", !p.workload.faults.empty()},
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
             {"wall_s", wall_s()}});
        if (options.progress == SuiteProgress::Lines) {
            char took[32];
            std::snprintf(took, sizeof took, " (%.1f s)", wall_s());
            say(counter + ": " +
                (s["as_expected"].is_null() ? std::string("UNKNOWN")
                 : as_expected              ? std::string("as expected")
                                            : std::string("UNEXPECTED")) +
                (attempts > 1 ? " (attempt " + std::to_string(attempts) + ")" : "") + took);
        }
    }
    // Measured again after the runs: a machine whose load changed meanwhile shows it as noise.
    if (yardstick && !outcome.interrupted) {
        say("measuring the machine again (redis-benchmark)");
        try {
            yardstick->absorb(measure_yardstick());
        } catch (const EnvironmentError& e) {
            // The runs are done and kept: the first measurement stands alone, saying so.
            std::fprintf(stderr, "%sthe machine could not be measured again: %s\n", wipe, e.what());
        }
    }
    if (terminal)
        std::fprintf(stderr, "\r\x1b[K");
    outcome.all_as_expected = all_ok && !outcome.interrupted;
    // The gate compares a filtered suite with the part of the baseline it selected.
    json filter = nullptr;
    if (!options.scenarios.empty() || !options.strategies.empty())
        filter = {{"scenarios", options.scenarios}, {"strategies", options.strategies}};
    outcome.table = {{"quick", options.quick},
                     {"filter", filter},
                     {"interrupted", outcome.interrupted},
                     {"interrupted_run", interrupted_run},
                     {"all_as_expected", outcome.all_as_expected},
                     {"yardstick", yardstick ? yardstick->to_json() : json(nullptr)},
                     {"runs", runs},
                     {"failed", failed},
                     {"skipped", skipped}};
    write_atomically(tmp / "suite.json", outcome.table.dump(2) + "\n");
    write_atomically(tmp / "report.txt", format_table(outcome.table));
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
        std::snprintf(line, sizeof line, "%-36s %-15s %9.0f %8.3f %9.3f %8s %5zu %5s  %-40s %s\n",
                      r["scenario"].get<std::string>().c_str(),
                      r["strategy"].get<std::string>().c_str(), r["cycles_per_s"].get<double>(),
                      r["acquire_p50_ms"].get<double>(), r["acquire_p99_ms"].get<double>(),
                      server_cost_cell(r).c_str(), r["violations"].get<std::size_t>(),
                      linearizability_word(r).c_str(),
                      r["expected"].is_string() ? r["expected"].get<std::string>().c_str() : "-",
                      outcome.c_str());
        out << line;
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
    out << ok << " of " << n << " runs as expected"
        << (failed.empty() ? "" : ", " + std::to_string(failed.size()) + " failed")
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
