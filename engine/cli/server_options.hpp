#pragma once

// The servers a run uses instead of starting its own: --redis (with --password or
// --password-file), --inventory, --zookeeper and --etcd, as run, suite, demo and compare take
// them. Each flag is parsed here, once; bad input throws WorkloadError naming the flag.

#include <optional>
#include <string>
#include <vector>

#include "engine/servers/redis_server.hpp"
#include "engine/topology/inventory.hpp"

namespace lockbench::cli {

constexpr const char* kPasswordHelp =
    "AUTH password for --redis (seen by every local user in ps: prefer --password-file or "
    "LOCKBENCH_REDIS_PASSWORD)";
constexpr const char* kPasswordFileHelp =
    "Read the AUTH password for --redis from the first line of this file";

// --inventory FILE: the user's deployment, node by node (engine/topology/inventory.hpp).
std::optional<Inventory> load_inventory(const std::string& file);

// --zookeeper HOST:PORT[,HOST:PORT...]: the user's own ensemble ("" for none), as the C client
// takes it.
std::string parse_zookeeper_list(const std::string& list_text);

// --etcd HOST:PORT[,HOST:PORT...]: the user's own etcd, every member's client port (none for
// an empty list).
std::vector<Endpoint> parse_etcd_list(const std::string& list_text);

// --redis HOST[:PORT][,HOST[:PORT]...] with its password: the user's own servers ("" for none).
std::vector<Endpoint> parse_redis_list(const std::string& list_text, const std::string& password);

}  // namespace lockbench::cli
