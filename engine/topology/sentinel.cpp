#include "engine/topology/sentinel.hpp"

#include <thread>

#include <nlohmann/json.hpp>

#include "engine/clients/client.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/network_lab.hpp"

namespace lockbench {

using namespace std::chrono_literals;

namespace {

std::string sentinel_config(const std::string& master_host, int quorum, const Workload& w) {
    const std::string name(kSentinelMasterName);
    return "sentinel monitor " + name + " " + master_host + " 6379 " + std::to_string(quorum) +
           "\n" + "sentinel down-after-milliseconds " + name + " " +
           std::to_string(w.topology.down_after_ms) + "\n" + "sentinel failover-timeout " + name +
           " " + std::to_string(w.topology.failover_timeout_ms) + "\n" +
           "sentinel parallel-syncs " + name + " 1\n";
}

// A field of a flat field/value reply (SENTINEL MASTER), "" when absent.
std::string field(const Reply& r, const std::string& name) {
    for (std::size_t i = 0; i + 1 < r.elements.size(); i += 2) {
        if (r.elements[i].str == name)
            return r.elements[i + 1].str;
    }
    return "";
}

std::optional<Endpoint> master_of(const Reply& r) {
    if (!r.is_array() || r.elements.size() != 2)
        return std::nullopt;
    try {
        return Endpoint{r.elements[0].str, std::stoi(r.elements[1].str), ""};
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

}  // namespace

void start_sentinel_deployment(Deployment& d, const Workload& w) {
    const int nodes = 1 + w.topology.replicas;
    d.open_node_lab(w, nodes);
    d.failover_timeout = std::chrono::milliseconds(w.topology.failover_timeout_ms);
    NetworkLab& lab = *d.lab;

    std::vector<std::string> common;
    if (w.topology.min_replicas_to_write > 0) {
        common = {"--min-replicas-to-write", std::to_string(w.topology.min_replicas_to_write),
                  "--min-replicas-max-lag", std::to_string(w.topology.min_replicas_max_lag_s)};
    }
    const std::string master_host = lab.address(0);
    const int maxclients = max_connections_per_node(w);
    for (int i = 0; i < nodes; ++i) {
        std::vector<std::string> args = common;
        if (i > 0) {
            args.insert(args.end(), {"--replicaof", master_host, "6379"});
        }
        d.servers.push_back(std::make_unique<RedisServer>(
            RedisServerOptions{.maxclients = maxclients,
                               .extra_args = args,
                               .netns_fd = lab.netns_fd(static_cast<std::size_t>(i)),
                               .host = lab.address(i)}));
    }
    const int quorum = nodes / 2 + 1;
    for (int i = 0; i < nodes; ++i) {
        d.sentinel_servers.push_back(std::make_unique<RedisServer>(
            RedisServerOptions{.netns_fd = lab.netns_fd(static_cast<std::size_t>(i)),
                               .host = lab.address(i),
                               .sentinel_config = sentinel_config(master_host, quorum, w)}));
        d.sentinels.push_back(d.sentinel_servers.back()->endpoint());
    }
    d.endpoints = {d.servers[0]->endpoint()};

    // Ready when the replicas stream from the master and every sentinel knows the others and
    // every replica (sentinels find each other through hello messages every 2 s).
    wait_until_together("Sentinel deployment", 20s, [&] {
        std::string missing;
        const std::string info = d.servers[0]->command({"INFO", "replication"}).str;
        if (info.find("connected_slaves:" + std::to_string(w.topology.replicas) + "\r") ==
            std::string::npos)
            missing = "the master's replicas to connect";
        for (std::size_t i = 0; missing.empty() && i < d.sentinel_servers.size(); ++i) {
            const Reply m = d.sentinel_servers[i]->command(
                {"SENTINEL", "MASTER", std::string(kSentinelMasterName)});
            if (field(m, "num-other-sentinels") != std::to_string(nodes - 1) ||
                field(m, "num-slaves") != std::to_string(w.topology.replicas))
                missing = "sentinel " + std::to_string(i) + " to find the others and the replicas";
        }
        return missing;
    });
}

std::optional<Endpoint> ask_sentinels_for_master(const std::vector<Endpoint>& sentinels,
                                                 std::chrono::milliseconds timeout) {
    for (const auto& s : sentinels) {
        try {
            Reply r = command_once(
                s, {"SENTINEL", "get-master-addr-by-name", std::string(kSentinelMasterName)},
                timeout);
            if (auto m = master_of(r))
                return m;
        } catch (const RedisError&) {
        }
    }
    return std::nullopt;
}

Task<void> follow_sentinel_master(EventLoop& loop, ClientEnvironment& env,
                                  std::vector<Endpoint> sentinels, Endpoint master,
                                  std::vector<SimulatedClient*> clients, std::string where,
                                  std::chrono::milliseconds interval) {
    // A short timeout: a sentinel across a partition must not keep the others from being asked.
    std::vector<std::unique_ptr<RedisConnection>> connections;
    for (const auto& s : sentinels) {
        connections.push_back(std::make_unique<RedisConnection>(
            loop, s, ConnectionOptions{.connect_timeout = 200ms, .command_timeout = 200ms}));
    }
    while (!env.stop) {
        co_await loop.sleep_for(interval);
        // Every sentinel it can reach is asked, and the newest configuration wins: right after a
        // partition heals, a sentinel that was cut off still names the old master until it hears
        // the others (a client that believed the first answer would go back to it).
        std::optional<Endpoint> newest;
        long long newest_epoch = -1;
        std::string told_by;
        for (auto& c : connections) {
            if (env.stop)
                break;
            // The epoch from SENTINEL MASTER; the address from get-master-addr-by-name, which
            // names the promoted replica as soon as a failover has promoted it (SENTINEL MASTER
            // keeps the old address until every replica is reconfigured).
            long long epoch = -1;
            std::optional<Endpoint> named;
            try {
                Reply m =
                    co_await c->command("SENTINEL", "MASTER", std::string(kSentinelMasterName));
                named = master_of(co_await c->command("SENTINEL", "get-master-addr-by-name",
                                                      std::string(kSentinelMasterName)));
                epoch = std::stoll(field(m, "config-epoch"));
            } catch (const RedisError&) {
                continue;  // unreachable from here
            } catch (const std::exception&) {
                continue;
            }
            if (!named)
                continue;
            if (epoch > newest_epoch) {
                newest_epoch = epoch;
                newest = named;
                told_by = c->endpoint().to_string();
            }
        }
        if (!newest || (newest->host == master.host && newest->port == master.port))
            continue;
        master = *newest;
        for (SimulatedClient* client : clients)
            client->redirect(master);
        if (env.history) {
            HistoryEvent e;
            e.type = EventType::Info;
            e.process = HistoryEvent::kNemesis;
            e.f = "switch-master";
            e.value = nlohmann::json{{"to", master.to_string()},
                                     {"clients", where},
                                     {"sentinel", told_by},
                                     {"config_epoch", newest_epoch}}
                          .dump();
            env.history->record(std::move(e));
        }
    }
}

}  // namespace lockbench
