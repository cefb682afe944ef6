#include "engine/topology/cluster.hpp"

#include <algorithm>
#include <charconv>
#include <sstream>
#include <thread>

#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/network_lab.hpp"
#include "strategies/client/cluster_routing.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

using namespace std::chrono_literals;

namespace {

// A field of an INFO-style reply ("cluster_state:ok"), "" when absent.
std::string info_field(const std::string& text, const std::string& name) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        if (line.rfind(name + ":", 0) == 0) {
            std::string value = line.substr(name.size() + 1);
            while (!value.empty() && (value.back() == '\r' || value.back() == '\n'))
                value.pop_back();
            return value;
        }
    }
    return "";
}

std::vector<ClusterNode> parse_cluster_nodes(const std::string& text) {
    std::vector<ClusterNode> out;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        std::istringstream fields(line);
        ClusterNode n;
        std::string address, flags, ping, pong, epoch, link;
        if (!(fields >> n.id >> address >> flags >> n.master_id >> ping >> pong >> epoch >> link))
            continue;
        // ip:port@cport[,hostname]
        const auto at = address.find('@');
        try {
            n.endpoint = Endpoint::parse(address.substr(0, at));
        } catch (const std::invalid_argument&) {
            continue;  // noaddr: a node being forgotten
        }
        std::istringstream flag_list(flags);
        for (std::string f; std::getline(flag_list, f, ',');) {
            if (f == "master")
                n.master = true;
            if (f == "fail")
                n.failed = true;
        }
        if (n.master_id == "-")
            n.master_id.clear();
        for (std::string range; fields >> range;) {
            if (range.starts_with('['))
                continue;  // a slot migrating or importing
            const auto dash = range.find('-');
            try {
                const int lo = std::stoi(range.substr(0, dash));
                const int hi = dash == std::string::npos ? lo : std::stoi(range.substr(dash + 1));
                n.slots.emplace_back(lo, hi);
            } catch (const std::exception&) {
            }
        }
        out.push_back(std::move(n));
    }
    return out;
}

}  // namespace

bool ClusterNode::owns(int slot) const {
    for (const auto& [lo, hi] : slots) {
        if (slot >= lo && slot <= hi)
            return true;
    }
    return false;
}

std::string cluster_key(const std::string& name) {
    return "{" + name + "}";
}

std::optional<std::vector<ClusterNode>> read_cluster_nodes(const std::vector<Endpoint>& nodes,
                                                           std::chrono::milliseconds timeout) {
    for (const auto& node : nodes) {
        try {
            Reply r = command_once(node, {"CLUSTER", "NODES"}, timeout);
            auto view = parse_cluster_nodes(r.as_string());
            if (!view.empty()) {
                // A node names itself by the address it was told; the password is ours to add.
                for (auto& n : view) {
                    n.endpoint.password = node.password;
                    n.endpoint.user = node.user;
                }
                return view;
            }
        } catch (const RedisError&) {
        }
    }
    return std::nullopt;
}

const ClusterNode* master_of_slot(const std::vector<ClusterNode>& view, int slot) {
    for (const auto& n : view) {
        if (n.master && !n.failed && n.owns(slot))
            return &n;
    }
    return nullptr;
}

std::vector<const ClusterNode*> shards_of(const std::vector<ClusterNode>& view) {
    std::vector<const ClusterNode*> out;
    for (const auto& n : view) {
        if (n.master && !n.slots.empty())
            out.push_back(&n);
    }
    const auto lowest = [](const ClusterNode* n) {
        return std::min_element(n->slots.begin(), n->slots.end())->first;
    };
    std::sort(out.begin(), out.end(),
              [&](const ClusterNode* a, const ClusterNode* b) { return lowest(a) < lowest(b); });
    return out;
}

std::optional<int> selected_slot(const std::string& selector,
                                 const std::vector<ClusterNode>& view) {
    if (selector.rfind("shard:", 0) != 0)
        return key_slot(cluster_key(selector));
    const auto shards = shards_of(view);
    std::size_t n = 0;
    const auto digits = std::string_view(selector).substr(6);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), n);
    if (ec != std::errc() || end != digits.data() + digits.size() || n >= shards.size())
        return std::nullopt;
    return std::min_element(shards[n]->slots.begin(), shards[n]->slots.end())->first;
}

std::vector<std::string> shard_hash_tags(const std::vector<ClusterNode>& view) {
    std::vector<std::string> tags;
    for (const ClusterNode* shard : shards_of(view)) {
        for (int i = 0;; ++i) {
            std::string tag = "s" + std::to_string(i);
            if (shard->owns(key_slot(tag))) {
                tags.push_back(std::move(tag));
                break;
            }
        }
    }
    return tags;
}

std::vector<const ClusterNode*> replicas_of(const std::vector<ClusterNode>& view,
                                            const ClusterNode& master) {
    std::vector<const ClusterNode*> out;
    for (const auto& n : view) {
        if (!n.master && n.master_id == master.id)
            out.push_back(&n);
    }
    return out;
}

void start_cluster_deployment(Deployment& d, const Workload& w) {
    const int masters = w.topology.masters;
    const int nodes = masters * (1 + w.topology.replicas);
    const int maxclients = max_connections_per_node(w);
    if (w.topology.in_namespaces()) {
        // Each node a host of its own, and the isolated clients on one more, so that a partition
        // can cut a master off from its replica, or off with some clients (network_lab.hpp).
        d.open_node_lab(w, nodes);
    }
    for (int i = 0; i < nodes; ++i) {
        std::vector<std::string> args = {"--cluster-enabled",
                                         "yes",
                                         "--cluster-config-file",
                                         "nodes.conf",
                                         "--cluster-node-timeout",
                                         std::to_string(w.topology.node_timeout_ms),
                                         "--cluster-require-full-coverage",
                                         w.topology.require_full_coverage ? "yes" : "no"};
        RedisServerOptions options{.maxclients = maxclients};
        if (d.lab) {
            options.netns_fd = d.lab->netns_fd(static_cast<std::size_t>(i));
            options.host = d.lab->address(i);
        } else {
            // The cluster bus on a port of its own: the default, the node's port + 10000, does
            // not exist for a free port above 55535. Both picked at once, so they differ.
            const auto ports = pick_free_ports(2);
            options.port = ports[0];
            args.insert(args.end(), {"--cluster-port", std::to_string(ports[1])});
        }
        options.extra_args = std::move(args);
        d.servers.push_back(std::make_unique<RedisServer>(std::move(options)));
        d.endpoints.push_back(d.servers.back()->endpoint());
    }
    // redis-cli makes the first `masters` nodes masters and gives each of them replicas from
    // the rest; the roles are read back below rather than assumed.
    std::vector<std::string> create = {find_executable("redis-cli"), "--cluster", "create"};
    for (const auto& ep : d.endpoints)
        create.push_back(ep.to_string());
    create.insert(create.end(),
                  {"--cluster-replicas", std::to_string(w.topology.replicas), "--cluster-yes"});
    output_of(create);

    wait_until_together("Redis Cluster", 30s, [&] {
        std::string missing;
        for (std::size_t i = 0; missing.empty() && i < d.servers.size(); ++i) {
            const std::string info = d.servers[i]->command({"CLUSTER", "INFO"}).as_string();
            if (info_field(info, "cluster_state") != "ok" ||
                info_field(info, "cluster_known_nodes") != std::to_string(nodes))
                missing = "node " + d.endpoints[i].to_string() + " to see the whole cluster";
            const std::string repl = d.servers[i]->command({"INFO", "replication"}).as_string();
            if (missing.empty() && info_field(repl, "role") == "slave" &&
                info_field(repl, "master_link_status") != "up")
                missing = "replica " + d.endpoints[i].to_string() + " to sync";
        }
        if (missing.empty()) {
            // Every node must agree on the roles too (a replica each master can fail over to).
            auto view = read_cluster_nodes({d.endpoints.front()}, 2s);
            int replicas = 0;
            for (const auto& n : view.value_or(std::vector<ClusterNode>{}))
                replicas += n.master ? 0 : 1;
            if (replicas != nodes - masters)
                missing = "every replica to be known as one";
        }
        return missing;
    });
}

bool is_cluster_node(const Endpoint& node) {
    try {
        return info_field(command_once(node, {"INFO", "cluster"}, 2s).as_string(),
                          "cluster_enabled") == "1";
    } catch (const IoError& e) {
        throw EnvironmentError("cannot reach Redis at " + node.to_string() + ": " + e.what());
    } catch (const RedisError&) {
        return false;  // it answered, and not as a cluster node would (INFO renamed, ...)
    }
}

void check_cluster(const std::vector<Endpoint>& nodes) {
    for (const auto& node : nodes) {
        std::string state;
        try {
            state = info_field(command_once(node, {"CLUSTER", "INFO"}, 2s).as_string(),
                               "cluster_state");
        } catch (const IoError& e) {
            // The cluster may well be ok without it, but the user named it: a verdict on fewer
            // nodes than they think they tested would mislead.
            throw EnvironmentError("cannot reach Redis Cluster node " + node.to_string() +
                                   " (every --redis endpoint must answer; leave it out to run "
                                   "on the others): " +
                                   e.what());
        } catch (const RedisError& e) {
            throw EnvironmentError(
                "Redis at " + node.to_string() +
                " is not a node of a Redis Cluster (topology 'cluster'): " + e.what());
        }
        if (state != "ok") {
            throw EnvironmentError("the Redis Cluster at " + node.to_string() +
                                   " says cluster_state:" + state + ", not ok");
        }
    }
}

}  // namespace lockbench
