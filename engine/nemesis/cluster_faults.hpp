#pragma once

// Faults of a Redis Cluster (topology 'cluster'). Each acts on the master that serves a lock
// key's slot when it fires (target "master-of:KEY"), asking the cluster who that is, and each
// counts as fired only once the cluster shows it: a replica promoted in the master's place.

#include "engine/nemesis/fault.hpp"

namespace lockbench {

// CLUSTER FAILOVER sent to a replica of the key's master, under load: by default the graceful
// manual failover (the replica catches up with its master first, clients are paused meanwhile);
// `mode` "force" or "takeover" skip the handshake with the master or with the other masters.
class ClusterFailover final : public Fault {
  public:
    explicit ClusterFailover(ObjectReader& r);
    std::string_view name() const override { return "cluster-failover"; }
    bool needs_cluster() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    std::string mode_;  // graceful | force | takeover
    std::chrono::milliseconds timeout_;
};

// kill -9 of the key's master (an embedded one, or the user's through the inventory's control):
// after cluster-node-timeout the other masters mark it failed and its replica is elected in its
// place; until then its slots answer nothing. `restart_after_ms` brings it back, as a replica of
// the one that replaced it.
class KillClusterMaster final : public Fault {
  public:
    explicit KillClusterMaster(ObjectReader& r);
    std::string_view name() const override { return "kill-cluster-master"; }
    bool needs_cluster() const override { return true; }
    bool needs_embedded_servers() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    std::optional<std::chrono::milliseconds> restart_after_;
    std::chrono::milliseconds timeout_;
};

}  // namespace lockbench
