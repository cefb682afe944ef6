#pragma once

// One run of a workload in the steps run_workload() reads as (run.cpp): deploy the servers, wire
// the clients and faults to them, drive the run to its deadline, finish with the summary and the
// result folder. Internal to engine/run/: the members hold what one step hands the next, declared
// in the order the steps make them, so that they are destroyed in reverse (the clients before the
// servers they talk to, the servers before the result folder).

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/clients/client.hpp"
#include "engine/clients/client_threads.hpp"
#include "engine/clients/history_recorder.hpp"
#include "engine/nemesis/nemesis.hpp"
#include "engine/run/result_folder.hpp"
#include "engine/run/run.hpp"
#include "engine/run/server_cost.hpp"
#include "engine/run/summary.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/fault_proxy.hpp"
#include "engine/topology/server_cleanup.hpp"
#include "strategies/client/shared_connections.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/external/external_strategy.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

// The servers a run names (--redis, or an inventory's masters), none for embedded ones.
std::vector<Endpoint> external_servers(const RunOptions& options);

// The terminal's progress line during a run: where it is, its pace, the errors so far and the
// violations the streaming checks have found so far (capitals once there is one).
std::string progress_line(double elapsed_s, double duration_s, const std::string& strategy,
                          double cycles_per_s, std::uint64_t errors, std::uint64_t violations);

// What the run's faults and topology need of servers lockbench did not start; throws WorkloadError
// naming what cannot be done there, before anything starts.
void check_external(const Workload& w, const std::vector<std::unique_ptr<Fault>>& faults,
                    const RunOptions& options, std::size_t external);

class WorkloadRun {
  public:
    explicit WorkloadRun(const RunOptions& run_options) : options(run_options) {}
    WorkloadRun(const WorkloadRun&) = delete;
    WorkloadRun& operator=(const WorkloadRun&) = delete;

    // Checks the workload and its faults, opens the result folder, starts (or reaches) the
    // servers and checks they can carry the run.
    void deploy();
    // The clients' environment and sessions, started and connected, waiting at their gates.
    void wire();
    // Opens the gates, fires the faults until the deadline (or an interrupt), stops the clients
    // and heals the faults.
    void drive();
    // Judges the history and writes the result folder whole.
    RunOutcome finish();

  private:
    void check_deployment();
    void make_environment();
    ClientThreads::Placement placement();
    void wire_adapter();
    std::unique_ptr<Session> make_session(EventLoop& loop, int index, int incarnation, Clock clock);
    void share_connections(Session& session, EventLoop& loop, int index);
    void wait_connected();
    std::string lock_service_name() const;
    void start_measuring();
    void drive_to_deadline();
    void stop_and_heal();
    SummaryInputs summary_inputs(const ClientStats& total);
    void describe_deployment(RunSummary& summary) const;
    void write_files(const RunSummary& summary, const ClientStats& total) const;

    const RunOptions& options;

    // deploy
    std::vector<Endpoint> external;
    std::vector<const InventoryNode*> inventory_masters;
    Workload w;
    std::vector<std::unique_ptr<Fault>> faults;
    const StrategyInfo* strategy = nullptr;
    bool proxied = false;
    std::optional<ResultFolder> dir;
    Deployment deployment;
    bool cluster = false;
    std::vector<std::string> shard_tags;

    // wire
    std::string nonce;
    std::string key_prefix;
    std::string adapter_namespace;
    std::optional<CleanUpOnFailure> clean_up_on_failure;
    ConnectionOptions connection;
    std::optional<KeyPicker> keys;
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> next_process{0};
    std::atomic<std::uint64_t> live_cycles{0}, live_errors{0};
    std::atomic<int> connected{0};
    std::mutex connect_error_mutex;
    std::string connect_error;
    ClientDirectory directory;
    std::vector<Endpoint> endpoints;
    std::optional<Endpoint> resource_endpoint;
    std::string zookeeper_hosts;
    std::vector<Endpoint> etcd_endpoints;
    std::optional<ClientEnvironment> env;
    bool own_zookeeper_proxies = false;
    std::mutex zookeeper_proxies_mutex;
    std::vector<std::unique_ptr<FaultProxy>> zookeeper_proxies;
    // --connections: each client thread's loop's shared connections, held by its sessions.
    std::mutex shared_connections_mutex;
    std::map<EventLoop*, std::weak_ptr<SharedConnections>> shared_connections;
    std::optional<AdapterSpec> adapter_spec;
    std::shared_ptr<AdapterRun> adapter_run;
    std::atomic<std::uint64_t> library_lost_signals{0};
    std::atomic<std::uint64_t> library_late_grants{0};
    std::optional<ClientThreads> clients;

    // drive
    std::vector<MeteredServer> metered;
    std::vector<ServerReading> servers_before;
    EventLoop::TimePoint metered_from{};
    EventLoop::TimePoint start{};
    double cpu_start = 0;
    std::optional<HistoryRecorder> history;
    std::optional<NemesisContext> nemesis_context;
    std::optional<Nemesis> nemesis;
    bool interrupted = false;
    std::string environment_failure;
    EventLoop::TimePoint nemesis_until{};  // the faults due before this were all fired
    double cpu_used = 0;
    EventLoop::TimePoint metered_until{};
    std::vector<ServerReading> servers_after;
    EventLoop::TimePoint end{};
};

}  // namespace lockbench
