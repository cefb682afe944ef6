#include "engine/cli/server_options.hpp"

#include <sstream>
#include <stdexcept>

#include "engine/cli/user_input.hpp"
#include "engine/run/run.hpp"
#include "engine/run/workload.hpp"

namespace lockbench::cli {

std::optional<Inventory> load_inventory(const std::string& file) {
    if (file.empty())
        return std::nullopt;
    return Inventory::load(file);
}

std::string parse_zookeeper_list(const std::string& list_text) {
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        try {
            Endpoint::parse(item);
        } catch (const std::invalid_argument& e) {
            throw WorkloadError(std::string("--zookeeper: ") + e.what());
        }
    }
    if (!list_text.empty() && (list_text.back() == ',' || list_text.front() == ','))
        throw WorkloadError("--zookeeper: an empty HOST:PORT in '" + list_text + "'");
    return list_text;
}

std::vector<Endpoint> parse_etcd_list(const std::string& list_text) {
    std::vector<Endpoint> endpoints;
    if (list_text.empty())
        return endpoints;
    if (list_text.back() == ',' || list_text.front() == ',')
        throw WorkloadError("--etcd: an empty HOST:PORT in '" + list_text + "'");
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        try {
            endpoints.push_back(Endpoint::parse(item));
        } catch (const std::invalid_argument& e) {
            throw WorkloadError(std::string("--etcd: ") + e.what());
        }
    }
    return endpoints;
}

void add_server_options(CLI::App& command, ServerFlags& flags, ServerOptionSet which) {
    command.add_option("--connections", flags.connections,
                       "Share N Redis connections per server among the clients, auto-pipelined "
                       "(commands issued in the same event-loop turn go out in one write), as "
                       "Redisson's and ioredis's clients do; default: one per client. Refuses "
                       "faults that act on one client's own connection");
    command.add_option("--redis", flags.redis,
                       "Use existing Redis server(s) HOST[:PORT][,HOST[:PORT]...] (port 6379 "
                       "when none is given; also [redis[s]://][USER:PASSWORD@]HOST[:PORT] with "
                       "rediss:// for TLS, unix:/PATH for a unix socket)");
    command.add_option("--password", flags.access.password,
                       "AUTH password for --redis (seen by every local user in ps: prefer "
                       "--password-file or LOCKBENCH_REDIS_PASSWORD)");
    command
        .add_option("--password-file", flags.access.password_file,
                    "Read the AUTH password for --redis from the first line of this file")
        ->excludes("--password");
    add_redis_access_options(command, flags.access);
    if (which.inventory) {
        command
            .add_option(
                "--inventory", flags.inventory,
                "Your deployment node by node (a JSON file: docs/deployments.md, 'Testing your own "
                "deployment'): its masters are the lock nodes, and "
                "pause-server/kill-server act on the hosts it gives a control for (ssh "
                "or local)")
            ->check(CLI::ExistingFile)
            ->excludes("--redis");
    }
    command.add_option("--zookeeper", flags.zookeeper,
                       "ZooKeeper strategies (zk_mutex, zk_rwlock): use an existing ensemble "
                       "HOST:PORT[,HOST:PORT...] instead of starting one");
    if (which.etcd) {
        command.add_option("--etcd", flags.etcd,
                           "etcd strategies: use an existing etcd, every member's client port "
                           "HOST:PORT[,HOST:PORT...], instead of starting one (the run's keys, "
                           "under its prefix, are deleted afterwards)");
    }
    command.add_option("--out", flags.out, "Results folder")->capture_default_str();
}

std::optional<int> connections_flag(const ServerFlags& flags) {
    if (flags.connections && (*flags.connections < 1 || *flags.connections > 100'000))
        throw WorkloadError("--connections: must be 1..100000, not " +
                            std::to_string(*flags.connections));
    return flags.connections;
}

RedisServers redis_servers(const ServerFlags& flags) {
    return open_redis_servers(flags.redis, flags.access);
}

RedisServers apply_server_flags(const ServerFlags& flags, RunOptions& options) {
    // The other flags first: a mistake there is refused before any tunnel starts.
    options.inventory = load_inventory(flags.inventory);
    options.zookeeper = parse_zookeeper_list(flags.zookeeper);
    options.etcd = parse_etcd_list(flags.etcd);
    options.connections = connections_flag(flags);
    RedisServers redis = redis_servers(flags);
    options.redis = redis.endpoints;
    return redis;
}

}  // namespace lockbench::cli
