#pragma once

// `lockbench run --clients-ramp`: the same workload at each client count, for each strategy, and
// one curve per strategy - throughput, acquire p50/p99 and fairness against clients - in
// `<out>/ramp-<UTC time>-<scenario>/` (ramp.json, ramp.txt and one run folder per point), which
// appears whole or not at all like every result. ramp.json is a RampFile (engine/results), which
// the dashboard reads back to plot. An interrupted
// ramp names the point it cut short ("interrupted_point": its run folder is there, off the curve).

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "checker/report.hpp"
#include "engine/ci/yardstick.hpp"
#include "engine/results/ramp_file.hpp"
#include "engine/run/workload.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

// "START:STEP:END" (END included; STEP may be omitted for 1) or "N,N,…" in increasing order.
// Throws WorkloadError naming what is wrong.
std::vector<int> parse_clients_ramp(const std::string& text);

struct RampOptions {
    Workload workload;                    // everything but clients and strategy
    std::vector<std::string> strategies;  // one curve each
    std::vector<int> clients;             // the points of every curve
    std::vector<Endpoint> redis;          // empty: embedded servers, as for a run
    std::string zookeeper;                // empty: an embedded ZooKeeper, as for a run
    std::filesystem::path out_dir = "results";
    bool progress = false;  // a progress line on stderr, for a terminal
    // Off a terminal (a CI log, `| tee`): one line on stderr per finished point instead, as a
    // suite prints per run, so that a ramp of many minutes does not look hung.
    bool progress_lines = false;
    const std::atomic<bool>* interrupt = nullptr;
    // The machine, measured once before the ramp (as `run` measures it): in ramp.json.
    std::optional<Yardstick> machine;
    std::string machine_not_measured;
};

struct RampOutcome {
    std::filesystem::path dir;
    RampFile ramp;  // what ramp.json holds
    bool interrupted = false;
    // Jepsen's composition over every point: a violation anywhere beats unknown beats valid.
    checker::Verdict verdict = checker::Verdict::Valid;
    // A point that failed (curves["failed"]) is that point's error, and the others are kept:
    // the highest exit code of those errors (docs/cli.md, exit codes: 2, 4 or 5), 0 when none
    // failed.
    int failure_exit_code = 0;
};

// Throws WorkloadError (exit 2) or EnvironmentError (exit 4) when it cannot start or cannot
// write the ramp; a point that fails is recorded in `failed`, and the ramp goes on.
RampOutcome run_ramp(const RampOptions& options);

// ramp.txt: one table per strategy.
std::string format_ramp(const RampFile& ramp);

}  // namespace lockbench
