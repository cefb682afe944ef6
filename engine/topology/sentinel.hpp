#pragma once

// Redis Sentinel, for real: a deployment of one master, its replicas and a sentinel beside each
// node, every node a host in a network namespace of its own (network_lab.hpp), started from
// Debian's redis-server (in sentinel mode: the same binary as Debian's redis-sentinel); and the
// clients' side - each client thread finds the master through the sentinels it can reach and
// follows a switch, as Redisson's sentinel manager does by asking them at an interval.

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "strategies/client/event_loop.hpp"
#include "strategies/client/redis_connection.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

struct Deployment;
struct Workload;
class SimulatedClient;
struct ClientEnvironment;

// The name the sentinels monitor the master under.
inline constexpr std::string_view kSentinelMasterName = "lockbench";

// Starts the deployment into `d` (its lab, servers, sentinels and endpoints) and waits until the
// replicas stream from the master and every sentinel knows every other and every replica; throws
// EnvironmentError (not root, a server that does not start, sentinels that never agree).
void start_sentinel_deployment(Deployment& d, const Workload& w);

// The master the first sentinel that answers names, or nothing when none answers. Synchronous
// (the nemesis thread, the run's start); `timeout` per sentinel.
std::optional<Endpoint> ask_sentinels_for_master(const std::vector<Endpoint>& sentinels,
                                                 std::chrono::milliseconds timeout);

// One client thread's view of the master: asks every sentinel it can reach every `interval` and
// believes the one with the newest configuration (config epoch); when that names another master,
// it moves every client of the thread there and records it in the history (a `switch-master`
// event; `where` names the thread's host). Ends when env.stop is set.
Task<void> follow_sentinel_master(EventLoop& loop, ClientEnvironment& env,
                                  std::vector<Endpoint> sentinels, Endpoint master,
                                  std::vector<SimulatedClient*> clients, std::string where,
                                  std::chrono::milliseconds interval);

}  // namespace lockbench
