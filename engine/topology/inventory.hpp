#pragma once

// The user's own deployment, node by node: where each Redis node answers, what it is, and how
// lockbench may reach its host for faults - through OpenSSH, as Jepsen's control node does, or on
// this machine. `lockbench run/suite/demo --inventory FILE` drives the scenarios against it; the
// process faults (pause-server, kill-server) then act on its hosts, and undo themselves there
// even when lockbench dies (controlled_server.hpp).
//
//   {"name": "staging",
//    "nodes": [
//      {"name": "r1", "role": "master", "host": "10.0.0.5", "port": 6379, "password": "…",
//       "control": {"ssh": "admin@10.0.0.5", "port": 22, "identity": "~/.ssh/id_ed25519",
//                   "options": ["StrictHostKeyChecking=accept-new"], "sudo": true},
//       "restart": "systemctl start redis-server"},
//      {"name": "r2", "role": "replica", "host": "10.0.0.6", "port": 6379}]}
//
// Read strictly, like a workload: an unknown field or a wrong type is an error naming the file
// and the JSON path.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strategies/client/redis_connection.hpp"

namespace lockbench {

// How to run a command on a node's host.
struct HostControl {
    enum class Kind { Local, Ssh };
    Kind kind = Kind::Local;
    std::string ssh_target;                // user@host (Ssh)
    int ssh_port = 22;                     // Ssh
    std::string identity;                  // ssh -i FILE, or "" for the agent's and defaults
    std::vector<std::string> ssh_options;  // each passed as -o OPTION
    bool sudo = false;                     // prefix commands with `sudo -n`
    // Local: a network namespace to run in (a path such as /var/run/netns/NAME), or "".
    std::string netns;

    // "ssh admin@10.0.0.5" or "this machine".
    std::string describe() const;
};

struct InventoryNode {
    std::string name;
    std::string role;  // master | replica
    Endpoint endpoint;
    std::optional<HostControl> control;
    // The shell command that starts the node again after kill-server; "" when it cannot be
    // restarted (then kill-server needs restart_after_ms null).
    std::string restart;
};

struct Inventory {
    std::string name;
    std::string origin;  // the file it came from
    std::vector<InventoryNode> nodes;

    // Throws WorkloadError naming the file and the JSON path.
    static Inventory from_json(const nlohmann::json& j, const std::string& origin);
    static Inventory load(const std::filesystem::path& path);

    // The masters in order: a run's lock nodes (node:N in a fault means masters()[N]).
    std::vector<const InventoryNode*> masters() const;
    std::vector<Endpoint> master_endpoints() const;
};

}  // namespace lockbench
