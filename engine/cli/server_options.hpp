#pragma once

// The servers a run uses instead of starting its own - --redis (with --password or
// --password-file), --inventory, --zookeeper, --etcd - and the results folder: one option group,
// declared and worded once for run, suite, demo and compare (a new way to reach a server, such
// as a user or TLS for --redis, is added here for all of them). Each flag is parsed here, once;
// bad input throws WorkloadError naming the flag.

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/cli/user_input.hpp"
#include "engine/run/run.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/inventory.hpp"

namespace lockbench::cli {

// The flags as given, before parsing.
struct ServerFlags {
    std::string redis;
    RedisAccessFlags access;  // --user, --password, --password-file, --tls-*
    std::string inventory;
    std::string zookeeper;
    std::string etcd;
    std::string out = "results";
    std::optional<int> connections;  // --connections
};

// Which of the group a subcommand takes beside --redis, --password, --password-file,
// --zookeeper and --out.
struct ServerOptionSet {
    bool inventory = true;
    bool etcd = true;
};

// Adds the group to `command`, bound to `flags`.
void add_server_options(CLI::App& command, ServerFlags& flags, ServerOptionSet which = {});

// The flags' servers into `options` (redis, inventory, zookeeper, etcd, connections; a flag not
// given leaves its field empty). The result keeps --redis's TLS tunnels up: keep it while the run
// lasts. Throws WorkloadError naming the first bad flag, EnvironmentError when a tunnel cannot
// start.
[[nodiscard]] RedisServers apply_server_flags(const ServerFlags& flags, RunOptions& options);

// --redis with its user and password (--password, --password-file or $LOCKBENCH_REDIS_PASSWORD),
// its TLS servers behind their tunnels (which live as long as the result).
RedisServers redis_servers(const ServerFlags& flags);

// --connections N (none when not given); throws WorkloadError outside 1..100000.
std::optional<int> connections_flag(const ServerFlags& flags);

// --inventory FILE: the user's deployment, node by node (engine/topology/inventory.hpp).
std::optional<Inventory> load_inventory(const std::string& file);

// --zookeeper HOST:PORT[,HOST:PORT...]: the user's own ensemble ("" for none), as the C client
// takes it.
std::string parse_zookeeper_list(const std::string& list_text);

// --etcd HOST:PORT[,HOST:PORT...]: the user's own etcd, every member's client port (none for
// an empty list).
std::vector<Endpoint> parse_etcd_list(const std::string& list_text);

}  // namespace lockbench::cli
