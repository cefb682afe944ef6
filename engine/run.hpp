#pragma once

// `lockbench run`: start (or reach) the Redis deployment, run the workload's clients on
// event-loop threads for its duration, record the history, judge it, and write the result
// directory atomically: results/<UTC time>-<scenario>/ appears whole or not at all.

#include <atomic>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "fault_proxy.hpp"
#include "redis_connection.hpp"
#include "redis_server.hpp"
#include "result_folder.hpp"
#include "workload.hpp"

namespace lockbench {

struct RunOptions {
    Workload workload;
    std::vector<Endpoint> redis;  // empty: start embedded redis-server(s)
    std::filesystem::path out_dir = "results";
    bool progress = false;                         // a live line on stderr
    const std::atomic<bool>* interrupt = nullptr;  // set by SIGINT/SIGTERM
    std::string label;  // result folder name after the time stamp; default: the scenario name
};

struct RunOutcome {
    std::filesystem::path dir;
    nlohmann::json summary;
    bool interrupted = false;
};

// The servers a run talks to: started here (embedded) or given (--redis).
struct Deployment {
    std::vector<std::unique_ptr<RedisServer>> servers;  // embedded only; [0] is the master
    std::vector<Endpoint> endpoints;                    // what clients connect to
    // With network faults, one proxy per node in front of it; endpoints then name the proxies.
    std::vector<std::unique_ptr<FaultProxy>> proxies;
    bool embedded = true;

    // Puts a FaultProxy in front of every node and points the clients at them.
    void add_proxies();

    static Deployment start(const Workload& w, const std::vector<Endpoint>& external);
    // Throws EnvironmentError naming the endpoint if one does not answer PING, or if a server
    // that is not ours admits fewer clients than the run needs connections.
    void check_reachable(int connections_needed = 0) const;
    // Throws EnvironmentError if an embedded server died without the nemesis killing it.
    void check_alive();
};

// The connections a run may open to one node: what an embedded server's maxclients is set to.
int max_connections_per_node(const Workload& w);
// Raises this process's open-file limit for `w`'s clients on `nodes` nodes, or throws
// EnvironmentError naming the limit.
void reserve_file_descriptors(const Workload& w, std::size_t nodes, bool proxied);

// Throws WorkloadError (exit 2), EnvironmentError (exit 4) or std::runtime_error.
RunOutcome run_workload(const RunOptions& options);

// The exit code a finished run reports (README.md): 0 as expected / valid, 1 violation or
// unexpected outcome, 3 unknown, 130 interrupted.
int run_exit_code(const RunOutcome& outcome);

}  // namespace lockbench
