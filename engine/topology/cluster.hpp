#pragma once

// Redis Cluster, for real: a cluster of masters and their replicas started from Debian's
// redis-server (cluster-enabled) and joined by redis-cli --cluster create, on loopback; or the
// user's cluster named with --redis (any of its nodes). What the nemesis and the run ask of it:
// who owns a key's slot, who replicates whom.

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "strategies/client/redis_connection.hpp"

namespace lockbench {

struct Deployment;
struct Workload;

// Starts the cluster into `d` (servers and endpoints: every node, masters first) and waits until
// every node says cluster_state:ok and every replica streams from its master; throws
// EnvironmentError (a server or redis-cli that fails, a cluster that never comes together).
void start_cluster_deployment(Deployment& d, const Workload& w);
// Throws EnvironmentError naming the node unless every endpoint answers and is a node of a
// cluster whose state is ok (--redis with topology 'cluster').
void check_cluster(const std::vector<Endpoint>& nodes);

// True when `node` answers that it runs in cluster mode (INFO cluster: cluster_enabled:1); false
// when it answers otherwise; throws EnvironmentError when it cannot be reached.
bool is_cluster_node(const Endpoint& node);

// One line of CLUSTER NODES.
struct ClusterNode {
    std::string id;
    Endpoint endpoint;
    bool master = false;
    bool failed = false;                     // flagged fail (not only pfail)
    std::string master_id;                   // a replica's master
    std::vector<std::pair<int, int>> slots;  // ranges, inclusive
    bool owns(int slot) const;
};

// The cluster as the first node of `nodes` that answers sees it; nothing when none answers.
std::optional<std::vector<ClusterNode>> read_cluster_nodes(const std::vector<Endpoint>& nodes,
                                                           std::chrono::milliseconds timeout);
// The master serving `slot` (not failed) in `view`, and its replicas.
const ClusterNode* master_of_slot(const std::vector<ClusterNode>& view, int slot);
std::vector<const ClusterNode*> replicas_of(const std::vector<ClusterNode>& view,
                                            const ClusterNode& master);

// A cluster's shards: the masters that serve slots, ordered by their lowest slot (redis-cli
// --cluster create gives shard 0 slots 0-5460 of three). A shard keeps its number through a
// failover: its slots move to the promoted replica.
std::vector<const ClusterNode*> shards_of(const std::vector<ClusterNode>& view);
// The slot a fault's selector names: "shard:N" (shard N's lowest slot) or a workload key ("k0",
// its hash-tagged slot); nothing when the cluster has no shard N.
std::optional<int> selected_slot(const std::string& selector, const std::vector<ClusterNode>& view);
// One hash tag per shard whose slot that shard serves ("s0", "s7", ...): Redlock over a cluster's
// masters takes one key per shard, as RedissonRedLock takes N locks with different names.
std::vector<std::string> shard_hash_tags(const std::vector<ClusterNode>& view);

// The key a client locks for workload key `name` ("k0") in a cluster: hash-tagged, so that every
// key a strategy derives from it (its fence counter, its resource) lives in the same slot.
std::string cluster_key(const std::string& name);

}  // namespace lockbench
