#pragma once

// Faults of the network between hosts in network namespaces (topology 'sentinel', or 'cluster'
// with isolated clients), and of the Sentinel deployment running on them. Each runs on the nemesis
// thread; a workload that names one on another topology is refused before anything starts.

#include <set>
#include <vector>

#include "fault.hpp"

namespace lockbench {

// A partition in Jepsen's shapes, played by iptables in the hosts' own namespaces for
// `duration_ms`, then healed. `shape`: `isolate` cuts `hosts` (e.g. ["master", "clients"]: the
// split-brain case) from everyone else, the root namespace where the other clients run included;
// `halves`, `majorities-ring` and `bridge` act on the data nodes. Host names: `master` (the one
// the sentinels name when the fault fires), `master-of:KEY` (a cluster's master of the key's slot
// when it fires), `clients` (the isolated clients' host), `node:N`, `root`.
class PartitionHosts final : public Fault {
  public:
    explicit PartitionHosts(ObjectReader& r);
    std::string_view name() const override { return "partition"; }
    bool needs_network_lab() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    std::string shape_;
    std::vector<std::string> hosts_;
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
