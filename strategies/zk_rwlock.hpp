#pragma once

#include <string>

#include "strategies/strategy.hpp"
#include "strategies/zk_lock_internals.hpp"

namespace lockbench {

// ZooKeeper's read-write lock as Apache Curator's InterProcessReadWriteLock writes it, on the same
// internals as zk_mutex (zk_lock_internals.hpp): readers and writers queue in one lock node, as
// ephemeral sequential nodes _c_<guid>-__READ__<seq> and _c_<guid>-__WRIT__<seq>.
//
// A writer holds the lock when its node is the lowest, and otherwise waits for the node just
// before it, whatever its kind. A reader waits only for earlier writers: it holds the lock when
// no write node precedes it, and otherwise waits for the first of them - so a writer that asked
// first is never overtaken by later readers (no writer starvation, t12), and readers that asked
// together share the lock. The holder of the write lock may take the read lock too (Curator's
// downgrade); a reader asking for the write lock waits like anyone else. Reentrant per client and
// mode, as zk_mutex; the session timeout is the lease, the node's sequence number the fence.
class ZkRwlock final : public Strategy {
  public:
    explicit ZkRwlock(StrategyOptions options) : options_(options) {}
    std::string_view name() const override { return "zk_rwlock"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{
            .reentrant = true, .shared_mode = true, .fencing = true, .zookeeper = true};
    }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
    // The session timeout the server negotiated: the lock lives as long as the session.
    Task<std::optional<std::chrono::milliseconds>> applied_lease(
        Session& session, std::chrono::milliseconds requested) override;

    // Curator's node names for the two modes.
    static constexpr std::string_view kReadName = "__READ__";
    static constexpr std::string_view kWriteName = "__WRIT__";

  private:
    StrategyOptions options_;
    ZkLockInternals internals_;
};

}  // namespace lockbench
