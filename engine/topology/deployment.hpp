#pragma once

// The servers a run talks to: redis-servers the engine starts itself (embedded, on free
// loopback ports, always stopped), or a deployment the user names with --redis; with network
// faults, a fault proxy in front of every node. Sized for the run's clients: file descriptors
// here, maxclients there.

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/run/workload.hpp"
#include "engine/servers/controlled_server.hpp"
#include "engine/servers/etcd_server.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/servers/zookeeper_server.hpp"
#include "engine/topology/fault_proxy.hpp"
#include "engine/topology/network_lab.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

// The servers a run talks to: started here (embedded) or given (--redis).
struct Deployment {
    // Topology 'sentinel': the hosts every node runs in (declared first: it goes last, after
    // every server in it has stopped).
    std::unique_ptr<NetworkLab> lab;
    std::vector<std::unique_ptr<RedisServer>> servers;  // embedded only; [0] is the master
    std::vector<Endpoint> endpoints;                    // what clients connect to
    // With network faults, one proxy per node in front of it; endpoints then name the proxies.
    std::vector<std::unique_ptr<FaultProxy>> proxies;
    bool embedded = true;
    // ZooKeeper strategies only: the server or ensemble started here (topology's
    // zookeeper_servers), or none with --zookeeper; the hosts every client's session connects to
    // ("" when the strategy needs no ZooKeeper).
    std::unique_ptr<ZooKeeperEnsemble> zookeeper;
    std::string zookeeper_hosts;
    // etcd strategies (or --etcd): every member's client endpoint, which each client's session is
    // given (empty when the run has no etcd); the members started here (topology's
    // etcd_servers), none with --etcd. With a 'partition-etcd' fault each member runs in a host
    // of etcd_lab (declared before the members: it goes after them).
    std::unique_ptr<NetworkLab> etcd_lab;
    std::unique_ptr<EtcdCluster> etcd;
    std::vector<Endpoint> etcd_endpoints;
    // Topology 'sentinel': a sentinel beside each node (servers[i] and sentinel_servers[i] share
    // host i of the lab), their endpoints, and the host the isolated clients run in.
    std::vector<std::unique_ptr<RedisServer>> sentinel_servers;
    std::vector<Endpoint> sentinels;
    std::optional<std::size_t> clients_host;
    std::chrono::milliseconds failover_timeout{0};  // the sentinels' failover-timeout
    // --inventory: the user's nodes lockbench may act on for faults, parallel to endpoints
    // (null where the inventory gives no control for the node's host).
    std::vector<std::unique_ptr<ControlledServer>> controlled;
    // resource_server 'separate': the resource's own redis-server (embedded, also beside
    // --redis) and the fault proxy in front of it that clients reach it through.
    std::unique_ptr<RedisServer> resource_server;
    std::unique_ptr<FaultProxy> resource_proxy;

    // Puts a FaultProxy in front of every node and points the clients at them.
    void add_proxies();
    // Opens `lab` with a host per node, "n0", "n1", … (host i runs node i), and one more,
    // "clients", that `clients_host` names, when the workload isolates clients.
    void open_node_lab(const Workload& w, int nodes);

    // `zookeeper`: the user's ensemble ("HOST:PORT,…"), or "" to start one when the workload's
    // strategy needs it.
    // `etcd`: the user's etcd (--etcd), given to the clients whatever the strategy (an adapter's
    // needs are known only once it runs); empty: start one when the strategy needs it.
    static Deployment start(const Workload& w, const std::vector<Endpoint>& external,
                            const std::string& zookeeper = "",
                            const std::vector<Endpoint>& etcd = {});
    // The etcd part of start(): the user's (`external`), or the members of the workload's
    // topology started here - in hosts of a network lab when a fault partitions one (throws
    // EnvironmentError saying why when hosts cannot be made here).
    void start_etcd(const Workload& w, const std::vector<Endpoint>& external);
    // Throws EnvironmentError naming the endpoint if one does not answer PING, or if a server
    // that is not ours admits fewer clients than the run needs connections.
    void check_reachable(int connections_needed = 0) const;
    // Waits until `needed` replicas acknowledge a write to the master (embedded: up to 10 s,
    // while its replica syncs; --redis: 2 s); throws EnvironmentError naming the master otherwise.
    void check_replicas(int needed) const;
    // Throws EnvironmentError naming the hosts if ZooKeeper (when used) does not answer.
    void check_zookeeper_reachable() const;
    // Throws EnvironmentError naming the endpoint if an etcd member (when used) does not answer
    // its status.
    void check_etcd_reachable() const;
    // Throws EnvironmentError if an embedded server died without the nemesis killing it.
    void check_alive();
};

// The connections a run may open to one node: what an embedded server's maxclients is set to.
int max_connections_per_node(const Workload& w);
// Raises this process's open-file limit for `w`'s clients on `nodes` nodes, or throws
// EnvironmentError naming the limit.
void reserve_file_descriptors(const Workload& w, std::size_t nodes, bool proxied);

// Asks `missing` every 50 ms what a deployment still waits for, until it answers "" (ready). Past
// `timeout`: EnvironmentError "the `what` did not come together within ... (waiting for ...)".
void wait_until_together(const std::string& what, std::chrono::seconds timeout,
                         const std::function<std::string()>& missing);

}  // namespace lockbench
