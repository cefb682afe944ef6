#pragma once

// A workload file (workloads/*.json; schema in workloads/README.md): which strategy, how many
// clients, which keys, how long they hold and think, and the faults to inject. Parsing is strict
// - an unknown field or a wrong type is an error naming its JSON path - because a typo in a
// scenario must not silently run a different experiment.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench {

// A bad workload file or flag; the CLI maps it to exit code 2.
class WorkloadError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Milliseconds drawn per operation: constant, uniform [lo, hi] or exponential with a mean.
struct Distribution {
    enum class Kind { Constant, Uniform, Exponential };
    Kind kind = Kind::Constant;
    double a = 0;  // constant value, uniform low, or exponential mean
    double b = 0;  // uniform high

    static Distribution constant(double ms) { return {Kind::Constant, ms, 0}; }
    std::chrono::microseconds sample(std::mt19937_64& rng) const;
    nlohmann::json to_json() const;
};

struct KeyDistribution {
    enum class Kind { Uniform, Zipf };
    Kind kind = Kind::Uniform;
    double zipf_s = 0.99;
    nlohmann::json to_json() const;
};

enum class ResourceKind { None, Counter, Fenced };

enum class TopologyKind { Single, Replicated, Masters, Sentinel, Cluster };

struct Topology {
    TopologyKind kind = TopologyKind::Single;
    int masters = 1;                   // Masters: how many independent masters (Redlock)
    std::string persistence = "none";  // none | aof-everysec | aof-always
    // ZooKeeper strategies: the embedded ZooKeeper's servers, 1 (standalone) or an ensemble of
    // 3, 5 or 7 (for faults of the leader or a follower).
    int zookeeper_servers = 1;
    // etcd strategies: the embedded etcd's members, 1 or a cluster of 3, 5 or 7 (for faults of
    // the leader or another member).
    int etcd_servers = 1;
    // Sentinel: a real Redis Sentinel deployment, each node in a network namespace of its own
    // (network_lab.hpp; needs root): one master and `replicas` replicas, a sentinel beside each
    // (quorum: a majority of them). Clients find the master through the sentinels they can reach.
    int replicas = 2;
    int min_replicas_to_write = 0;  // Redis's min-replicas-to-write on every node
    int min_replicas_max_lag_s = 1;
    int down_after_ms = 1000;  // sentinel down-after-milliseconds
    int failover_timeout_ms = 3000;
    // The first `isolated_clients` clients run in a network namespace of their own ("clients"),
    // which a partition may put beside the old master: the split-brain case.
    int isolated_clients = 0;
    // Cluster: a Redis Cluster of `masters` masters (at least 3) with `replicas` replicas each
    // (default 1 there), on loopback; its cluster-node-timeout (how long a master may be
    // unreachable before its replica is promoted).
    int node_timeout_ms = 1000;
    // Cluster: every node in a namespace of its own even without isolated clients, so that a
    // partition can cut a master from its replica (a replica that lags behind, then promoted).
    bool namespaces = false;
    // Cluster: Redis's cluster-require-full-coverage. Off, the shards that still have a master
    // keep answering while another one fails over, instead of every node refusing with CLUSTERDOWN.
    bool require_full_coverage = true;

    // Every node a host in a network namespace of its own (network_lab.hpp; needs root): a
    // Sentinel deployment always, a cluster when asked or when some clients are isolated (its
    // split brain).
    bool in_namespaces() const {
        return kind == TopologyKind::Sentinel ||
               (kind == TopologyKind::Cluster && (namespaces || isolated_clients > 0));
    }
    // A deployment of many servers to start - a Sentinel deployment, a Redis Cluster, a ZooKeeper
    // ensemble: a scenario of ctest's opt-in label `topology`, which `suite --no-topology` (CI's
    // quick suite) leaves out.
    bool many_servers() const {
        return kind == TopologyKind::Sentinel || kind == TopologyKind::Cluster ||
               zookeeper_servers > 1;
    }
};

// A quorum strategy (Redlock) needs this many independent masters to mean what it says.
inline constexpr int kMinRedlockMasters = 3;

// Open-loop load: arrivals per second over all clients, evenly spaced or a Poisson stream
// (engine/clients/arrivals.hpp). Without one, each client starts its next cycle when the last one
// ends.
struct Rate {
    enum class Arrivals { Fixed, Poisson };
    double per_s = 0;
    Arrivals arrivals = Arrivals::Fixed;
    nlohmann::json to_json() const;
};
std::string_view to_string(Rate::Arrivals a);

// How the run's history is judged (the checker's options).
struct CheckSettings {
    std::int64_t liveness_bound_ms = 10'000;          // an orphaned lock longer than this: deadlock
    std::optional<std::int64_t> starvation_bound_ms;  // a wait longer than this: starvation
    // Linearizability model: auto|none|mutex|rwlock|register. `auto` is the lock model that fits
    // the workload: rwlock when some acquires are shared, mutex otherwise.
    std::string model = "auto";
    double time_limit_s = 30;  // for the linearizability search
};

struct Workload {
    std::string name = "adhoc";
    std::string description;
    // One line of what the scenario shows, for `lockbench scenarios` ("" : the description's
    // first sentence stands in).
    std::string summary;
    std::string strategy = "set_nx_px";
    // A user's own adapter (strategies/adapters/PROTOCOL.md), "CMD ARGS": the strategy is then
    // `command:CMD ARGS`, which is what workload.json records.
    std::string client_command;
    int clients = 16;
    int threads = 1;  // event-loop threads the clients are spread over
    // Redis connections per server the clients share, auto-pipelined (shared_connections.hpp);
    // 0 (or as many as clients): one connection per client.
    int connections = 0;
    // A lock library's clients packed this many to one adapter process (the last may have
    // fewer); 1: one process per client. A process fault then hits every client of the process.
    int clients_per_process = 1;
    int keys = 4;
    KeyDistribution key_distribution;
    Distribution hold_ms = Distribution::constant(1);
    Distribution think_ms = Distribution::constant(0);
    std::optional<Rate> rate;  // open loop; none: closed loop
    std::int64_t lease_ms = 1000;
    std::int64_t wait_ms = 200;  // wait budget of each acquire
    double shared_ratio = 0.0;   // fraction of acquires in shared mode (RW strategies)
    int reentry_depth = 1;       // acquires per hold, for re-entrant strategies
    // Seed 001's risk: unlock in a `finally` even when the acquire failed.
    bool release_on_failed_acquire = false;
    // T7: a release that timed out is sent again, as client libraries retry ambiguous calls.
    bool retry_ambiguous_release = false;
    ResourceKind resource = ResourceKind::Counter;
    // Where the resource lives: beside the lock (the lock's Redis, the same connection), or on a
    // redis-server of its own behind a network path of its own, where a write can be delayed
    // on its way to storage (T13).
    bool resource_server_separate = false;
    std::uint64_t seed = 1;
    double duration_s = 5;
    std::int64_t connect_timeout_ms = 1000;
    std::int64_t command_timeout_ms = 1000;
    Topology topology;
    CheckSettings checks;
    nlohmann::json faults = nlohmann::json::array();  // the nemesis schedule (faults issue)
    std::map<std::string, std::string> expect;  // strategy -> safe | violates:<check> | deadlocks
    // The strategy whose failure the scenario is about, which `lockbench demo` shows by default
    // ("": the first its expectations say breaks). One of `expect`'s: t10 breaks every lock it
    // names, but its story is reentrant_hash's watchdog paused with its holder.
    std::string demo_strategy;

    // Strict parse; `origin` names the file in errors ("workloads/t1.json: /hold_ms: ...").
    static Workload from_json(const nlohmann::json& j, const std::string& origin = "workload");
    static Workload load(const std::filesystem::path& path);
    // The text of a workload file; throws WorkloadError for anything that is not one.
    static Workload parse(std::string_view text, const std::string& origin);
    // Everything, resolved (defaults filled in): what `workload.json` of a result contains.
    nlohmann::json to_json() const;
    // Fills what depends on the strategy, so that workload.json records what really ran: a
    // quorum strategy on the default single topology runs on kMinRedlockMasters masters (or on
    // the `external_nodes` given with --redis), a strategy that waits for replicas on a
    // replicated one, and the `auto` model becomes mutex or rwlock.
    void resolve(std::size_t external_nodes = 0);
    // Fewer connections than clients: clients share them (`--connections`).
    bool shares_connections() const { return connections > 0 && connections < clients; }
    // Cross-field checks (e.g. shared_ratio on a strategy without shared mode).
    void validate() const;
    // validate()'s part for clients_per_process.
    void validate_packing() const;
    // One line when the strategy hands out fencing numbers and the resource ignores them (the
    // default `counter`): the run measures the lock without its fence, which a user who chose
    // the strategy for its fence would not guess. "" otherwise.
    std::string unused_fence_note() const;
};

std::string_view to_string(ResourceKind k);
std::string_view to_string(TopologyKind k);

// Picks keys 0..n-1 with the workload's distribution.
class KeyPicker {
  public:
    KeyPicker(int keys, KeyDistribution dist);
    int pick(std::mt19937_64& rng) const;

  private:
    int keys_;
    KeyDistribution dist_;
    std::vector<double> cdf_;  // zipf only
};

}  // namespace lockbench
