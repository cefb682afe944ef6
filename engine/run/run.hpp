#pragma once

// `lockbench run`: start (or reach) the Redis deployment, run the workload's clients on
// event-loop threads for its duration, record the history, judge it, and write the result
// directory atomically: results/<UTC time>-<scenario>/ appears whole or not at all.

#include <atomic>
#include <exception>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/ci/yardstick.hpp"
#include "engine/results/run_summary.hpp"
#include "engine/run/result_folder.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/inventory.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

struct RunOptions {
    Workload workload;
    std::vector<Endpoint> redis;  // empty: start embedded redis-server(s)
    // The user's deployment, node by node (inventory.hpp): its masters are the lock nodes, and
    // server faults act on the hosts it gives a control for. Not with `redis`.
    std::optional<Inventory> inventory;
    // ZooKeeper strategies: the user's ensemble "HOST:PORT[,HOST:PORT…]"; empty: start one.
    std::string zookeeper;
    // The user's etcd, every member's client endpoint (--etcd); empty: start one when the
    // strategy needs it.
    std::vector<Endpoint> etcd;
    // --connections: Redis connections per server the clients share, in place of the workload's
    // `connections` (0: one per client).
    std::optional<int> connections;
    std::filesystem::path out_dir = "results";
    bool progress = false;                         // a live line on stderr
    const std::atomic<bool>* interrupt = nullptr;  // set by SIGINT/SIGTERM
    std::string label;  // result folder name after the time stamp; default: the scenario name
    // The machine, measured before the run (docs/gate.md: the yardstick): written into
    // summary.json and report.txt beside the run's throughput. Or why it was not measured.
    std::optional<Yardstick> machine;
    std::string machine_not_measured;
};

// Something lockbench itself got wrong (an exception no layer expected, in a client or anywhere):
// reported as a bug with its message, never as a problem with the user's input or machine.
class InternalError : public std::logic_error {
  public:
    using std::logic_error::logic_error;
};

struct RunOutcome {
    std::filesystem::path dir;
    RunSummary summary;  // what its summary.json holds
    bool interrupted = false;
};

// The workload as `options` run it: --connections in place of the workload's own.
Workload workload_as_run(const RunOptions& options);

// Throws WorkloadError (exit 2), EnvironmentError (exit 4) or std::runtime_error.
RunOutcome run_workload(const RunOptions& options);

// Why a run failed, as the command line reports an error (docs/cli.md, exit codes): one line and
// the exit code - 2 bad input, 4 environment (a system call or the disk included), 5 internal
// error.
struct RunFailure {
    std::string message;
    int exit_code = 5;
};
RunFailure run_failure(std::exception_ptr error);

// The exit code a finished run reports (docs/cli.md, exit codes): 0 as expected / valid, 1
// violation or unexpected outcome, 3 unknown, 130 interrupted.
int run_exit_code(const RunOutcome& outcome);

// Why run_workload would refuse `options` before starting anything (its workload, its faults and
// topology on the servers it names), or "" when it would not: what a suite on the user's servers
// skips, saying so.
std::string why_it_cannot_run(const RunOptions& options);

}  // namespace lockbench
