#include "engine/topology/deployment.hpp"

#include <sys/resource.h>
#include <thread>

#include "engine/topology/cluster.hpp"
#include "engine/topology/sentinel.hpp"
#include "strategies/client/zk_client.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

using namespace std::chrono_literals;

namespace {

Persistence persistence_of(const std::string& name) {
    if (name == "aof-everysec")
        return Persistence::AofEverysec;
    if (name == "aof-always")
        return Persistence::AofAlways;
    return Persistence::None;
}

}  // namespace

Deployment Deployment::start(const Workload& w, const std::vector<Endpoint>& external,
                             const std::string& zookeeper, const std::vector<Endpoint>& etcd) {
    Deployment d;
    if (w.resource_server_separate) {
        // Storage apart from the lock service, on a path of its own (T13).
        d.resource_server =
            std::make_unique<RedisServer>(RedisServerOptions{.maxclients = w.clients + 32});
        d.resource_proxy = std::make_unique<FaultProxy>(d.resource_server->endpoint());
    }
    const StrategyInfo* info = find_strategy(w.strategy);
    if (info && info->capabilities.zookeeper) {
        if (zookeeper.empty()) {
            d.zookeeper = std::make_unique<ZooKeeperEnsemble>(w.topology.zookeeper_servers);
            d.zookeeper_hosts = d.zookeeper->hosts();
        } else {
            d.zookeeper_hosts = zookeeper;
        }
    }
    if ((info && info->capabilities.etcd) || !etcd.empty())
        d.start_etcd(w, etcd);
    if (w.topology.kind == TopologyKind::Cluster) {
        if (!external.empty()) {
            d.embedded = false;
            d.endpoints = external;
            check_cluster(external);
        } else {
            start_cluster_deployment(d, w);
        }
        return d;
    }
    if (w.topology.kind == TopologyKind::Sentinel) {
        if (!external.empty()) {
            throw WorkloadError(
                "topology: 'sentinel' starts its own deployment in network "
                "namespaces; --redis names servers that are already there");
        }
        start_sentinel_deployment(d, w);
        return d;
    }
    if (!external.empty()) {
        d.embedded = false;
        d.endpoints = external;
        // A cluster node answers MOVED for most keys: every acquire would fail, and the run
        // would measure nothing.
        if (is_cluster_node(external.front())) {
            throw WorkloadError("--redis names " + external.front().to_string() +
                                ", a node of a Redis Cluster: give the workload "
                                "\"topology\": {\"kind\": \"cluster\"} to lock on it");
        }
        if (w.topology.kind == TopologyKind::Masters &&
            static_cast<int>(external.size()) != w.topology.masters) {
            throw WorkloadError("topology: " + std::to_string(w.topology.masters) +
                                " masters wanted but --redis names " +
                                std::to_string(external.size()));
        }
        return d;
    }
    const Persistence persistence = persistence_of(w.topology.persistence);
    const int masters = w.topology.kind == TopologyKind::Masters ? w.topology.masters : 1;
    const int maxclients = max_connections_per_node(w);
    for (int i = 0; i < masters; ++i) {
        d.servers.push_back(std::make_unique<RedisServer>(
            RedisServerOptions{.persistence = persistence, .maxclients = maxclients}));
        d.endpoints.push_back(d.servers.back()->endpoint());
    }
    if (w.topology.kind == TopologyKind::Replicated) {
        // The replica is for failover faults; clients talk to the master.
        d.servers.push_back(std::make_unique<RedisServer>(RedisServerOptions{
            .persistence = persistence,
            .maxclients = maxclients,
            .extra_args = {"--replicaof", "127.0.0.1", std::to_string(d.servers[0]->port())}}));
    }
    return d;
}

namespace {
// A command connection per client, and a pub/sub one where waiters are woken by messages.
std::uint64_t connections_per_client(const Workload& w) {
    const StrategyInfo* info = find_strategy(w.strategy);
    return info && info->capabilities.pubsub_wakeup ? 2 : 1;
}
}  // namespace

int max_connections_per_node(const Workload& w) {
    // Plus the nemesis, a replica and a redis-cli at hand.
    return static_cast<int>(connections_per_client(w)) * w.clients + 32;
}

void reserve_file_descriptors(const Workload& w, std::size_t nodes, bool proxied) {
    // Through the fault proxy each connection costs three descriptors here (ours, and both
    // ends of the proxy). Plus the history, logs, epoll, pipes.
    const std::uint64_t wanted = static_cast<std::uint64_t>(w.clients) * connections_per_client(w) *
                                     nodes * (proxied ? 3 : 1) +
                                 256;
    rlimit limit{};
    if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= wanted)
        return;
    rlimit raised = limit;
    raised.rlim_cur = wanted;
    if (limit.rlim_max < wanted)
        raised.rlim_max = wanted;  // allowed for root (CAP_SYS_RESOURCE), refused otherwise
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0)
        return;
    throw EnvironmentError(
        "--clients " + std::to_string(w.clients) + " needs about " + std::to_string(wanted) +
        " file descriptors, but this process may open at most " + std::to_string(limit.rlim_max) +
        " (ulimit -Hn); raise the limit or run fewer clients");
}

void Deployment::open_node_lab(const Workload& w, int nodes) {
    std::vector<std::string> names;
    for (int i = 0; i < nodes; ++i)
        names.push_back("n" + std::to_string(i));
    if (w.topology.isolated_clients > 0)
        names.push_back("clients");
    lab = std::make_unique<NetworkLab>(names);
    if (w.topology.isolated_clients > 0)
        clients_host = lab->index_of("clients");
}

void Deployment::add_proxies() {
    for (auto& ep : endpoints) {
        proxies.push_back(std::make_unique<FaultProxy>(ep));
        ep = proxies.back()->endpoint();
    }
}

void Deployment::check_reachable(int connections_needed) const {
    for (const auto& ep : endpoints) {
        EventLoop loop;
        RedisConnection c(loop, ep, {.connect_timeout = 2000ms, .command_timeout = 2000ms});
        try {
            run_sync(loop,
                     [](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(c));
        } catch (const RedisError& e) {
            // The server's own words say what is wrong, not what to do about it.
            const std::string said = e.what();
            const bool no_password = said.find("NOAUTH") != std::string::npos;
            const bool wrong_password =
                said.find("WRONGPASS") != std::string::npos ||
                said.find("invalid password") != std::string::npos ||
                said.find("without any password configured") != std::string::npos;
            throw EnvironmentError(
                "cannot reach Redis at " + ep.to_string() + ": " + said +
                (no_password      ? " (it wants a password: --password-file FILE, "
                                    "LOCKBENCH_REDIS_PASSWORD or --password)"
                 : wrong_password ? " (the password given with --password, --password-file or "
                                    "LOCKBENCH_REDIS_PASSWORD was refused)"
                                  : ""));
        }
        // A server refuses connections beyond its maxclients (ours too, when it could not get the
        // file descriptors for what it was asked): every client past it would only record
        // errors. Where CONFIG is disabled, the run's own check of how many clients got answers
        // still catches it.
        std::optional<long long> maxclients;
        try {
            Reply r = run_sync(loop, [](RedisConnection& conn) -> Task<Reply> {
                co_return co_await conn.command("CONFIG", "GET", "maxclients");
            }(c));
            if (r.is_array() && r.elements.size() == 2 && r.elements[1].is_string())
                maxclients = std::stoll(r.elements[1].as_string());
        } catch (const std::exception&) {
        }
        if (maxclients && *maxclients < connections_needed) {
            throw EnvironmentError("Redis at " + ep.to_string() + " accepts at most " +
                                   std::to_string(*maxclients) +
                                   " clients (maxclients), but this run opens up to " +
                                   std::to_string(connections_needed) +
                                   " connections to it; raise maxclients or run fewer clients");
        }
    }
}

void Deployment::check_replicas(int needed) const {
    const Endpoint& master = endpoints.at(0);
    EventLoop loop;
    RedisConnection c(loop, master, {.connect_timeout = 2000ms, .command_timeout = 2000ms});
    // A replica that says it is online may not acknowledge yet (just after its full sync it took
    // a second here): ask the way the strategy will. PUBLISH is replicated, writes no key (this
    // may be the user's server), and WAIT then counts the replicas that acknowledged it.
    // Ours may still be syncing; the user's gets a moment for a replica between two acks.
    const auto deadline = EventLoop::now() + (embedded ? 10s : 2s);
    long long acknowledged = 0;
    for (;;) {
        try {
            acknowledged = run_sync(loop, [](RedisConnection& conn, int n) -> Task<long long> {
                co_await conn.command("PUBLISH", "lockbench:replica-probe", "1");
                Reply r = co_await conn.command("WAIT", std::to_string(n), "200");
                co_return r.as_integer();
            }(c, needed));
        } catch (const RedisError& e) {
            throw EnvironmentError("cannot ask Redis at " + master.to_string() +
                                   " for its replicas: " + e.what());
        }
        if (acknowledged >= needed || EventLoop::now() >= deadline)
            break;
    }
    if (acknowledged < needed) {
        throw EnvironmentError(
            "Redis at " + master.to_string() + " has " + std::to_string(acknowledged) +
            " replica(s) acknowledging writes, and this strategy counts a grant "
            "only once " +
            std::to_string(needed) + " acknowledged it: point --redis at a master with replicas");
    }
}

void Deployment::check_zookeeper_reachable() const {
    if (zookeeper_hosts.empty())
        return;
    EventLoop loop;
    try {
        ZkClient zk(loop, zookeeper_hosts, 10'000ms, 5'000ms);
        run_sync(loop, zk.connected());
    } catch (const RedisError& e) {
        throw EnvironmentError("cannot reach ZooKeeper at " + zookeeper_hosts + ": " + e.what());
    }
}

void Deployment::start_etcd(const Workload& w, const std::vector<Endpoint>& external) {
    if (!external.empty()) {
        etcd_endpoints = external;
        return;
    }
    bool partitioned = false;
    for (const auto& fault : w.faults)
        partitioned |= fault.value("fault", "") == "partition-etcd";
    std::vector<EtcdHost> hosts;
    if (partitioned) {
        if (const std::string why = network_lab_unavailable(); !why.empty()) {
            throw EnvironmentError(
                "'partition-etcd' runs each etcd member in a network namespace of its own: " + why);
        }
        std::vector<std::string> names;
        for (int i = 0; i < w.topology.etcd_servers; ++i)
            names.push_back("etcd" + std::to_string(i + 1));
        etcd_lab = std::make_unique<NetworkLab>(names);
        for (std::size_t i = 0; i < etcd_lab->size(); ++i)
            hosts.push_back({etcd_lab->netns_fd(i), etcd_lab->address(static_cast<int>(i))});
    }
    etcd = std::make_unique<EtcdCluster>(w.topology.etcd_servers, EtcdServerOptions{}, hosts);
    etcd_endpoints = etcd->endpoints();
}

void Deployment::check_etcd_reachable() const {
    for (const auto& ep : etcd_endpoints) {
        try {
            etcd_status(ep, 2000ms);
        } catch (const EtcdGatewayError& e) {
            throw EnvironmentError("cannot reach etcd: " + std::string(e.what()));
        }
    }
}

void Deployment::check_alive() {
    for (std::size_t i = 0; etcd && i < etcd->size(); ++i) {
        EtcdServer& m = etcd->member(i);
        if (m.running() && !m.alive()) {
            throw EnvironmentError("etcd " + m.name() + " on " + m.endpoint().to_string() +
                                   " died during the run: " + m.log_tail(1));
        }
    }
    for (std::size_t i = 0; zookeeper && i < zookeeper->size(); ++i) {
        ZooKeeperServer& z = zookeeper->server(i);
        if (z.running() && !z.alive()) {
            throw EnvironmentError("ZooKeeper on port " + std::to_string(z.port()) +
                                   " died during the run: " + z.log_tail(1));
        }
    }
    if (resource_server && resource_server->running() && !resource_server->alive()) {
        throw EnvironmentError("the resource's redis-server on " +
                               resource_server->endpoint().to_string() +
                               " died during the run: " + resource_server->log_tail(1));
    }
    for (auto* group : {&servers, &sentinel_servers}) {
        for (auto& s : *group) {
            if (s->running() && !s->alive()) {
                throw EnvironmentError(
                    std::string(group == &servers ? "redis-server" : "redis-sentinel") + " on " +
                    s->endpoint().to_string() + " died during the run: " + s->log_tail(1));
            }
        }
    }
}

void wait_until_together(const std::string& what, std::chrono::seconds timeout,
                         const std::function<std::string()>& missing) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const std::string waiting_for = missing();
        if (waiting_for.empty())
            return;
        if (std::chrono::steady_clock::now() >= deadline) {
            throw EnvironmentError("the " + what + " did not come together within " +
                                   std::to_string(timeout.count()) + " s (waiting for " +
                                   waiting_for + ")");
        }
        std::this_thread::sleep_for(50ms);
    }
}

}  // namespace lockbench
