#pragma once

// Faults of the network between hosts in network namespaces (topology 'sentinel', or 'cluster'
// with isolated clients), and of the Sentinel deployment running on them. Each runs on the nemesis
// thread; a workload that names one on another topology is refused before anything starts.

#include <optional>
#include <set>
#include <vector>

#include "engine/nemesis/fault.hpp"

namespace lockbench {

// A partition in Jepsen's shapes, played by iptables in the hosts' own namespaces for
// `duration_ms`, then healed. `shape`: `isolate` cuts `hosts` (e.g. ["master", "clients"]: the
// split-brain case) from everyone else, the root namespace where the other clients run included,
// or only from the hosts named in `from` (["master-of:k0"] from ["replicas-of:k0"]: a replica
// falls behind while clients and the other masters still reach its master); `halves`,
// `majorities-ring` and `bridge` act on the data nodes. Host names: `master` (the one the
// sentinels name when the fault fires), `master-of:KEY` and `replicas-of:KEY` (a cluster's master
// of the key's slot when it fires, and its replicas; KEY may be `shard:N`), `clients` (the
// isolated clients' host), `node:N`, `root`. Partitions that overlap in time add up.
class PartitionHosts final : public Fault {
  public:
    explicit PartitionHosts(ObjectReader& r);
    std::string_view name() const override { return "partition"; }
    bool needs_network_lab() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    // The lab hosts `names` stand for now; nothing (and missed() says why) when one is not there.
    std::optional<std::set<int>> resolve(const std::vector<std::string>& names, Deployment& d);

    std::string shape_;
    std::vector<std::string> hosts_;
    std::vector<std::string> from_;
    std::chrono::milliseconds duration_;
};

// A clean failover: SENTINEL FAILOVER to a sentinel, without any fault. Takes effect when the
// sentinels name another master (it is waited for, up to the failover timeout and 5 s more).
class SentinelFailover final : public Fault {
  public:
    explicit SentinelFailover(ObjectReader&) {}
    std::string_view name() const override { return "failover"; }
    bool needs_network_lab() const override { return true; }
    bool needs_sentinels() const override { return true; }
    void apply(NemesisContext& ctx) override;
};

}  // namespace lockbench
