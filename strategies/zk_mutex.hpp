#pragma once

#include <string>

#include "strategies/strategy.hpp"
#include "strategies/zk_lock_internals.hpp"

namespace lockbench {

// ZooKeeper's lock as Apache Curator's InterProcessMutex writes it, on a real ZooKeeper through
// the C client (zk_client.hpp: the session's calls are bridged to the client's event loop).
//
// Acquire creates an ephemeral sequential node /lockbench/locks/<key>/_c_<guid>-lock-<seq> (the
// lock's parents are created on demand, as persistent nodes; zk_lock_internals.hpp). The node with
// the lowest sequence holds the lock; every other waits for its predecessor's deletion (a watch on
// that one node: a fair FIFO queue, no thundering herd), then looks again. A wait budget that runs
// out deletes the waiter's node and the acquire is denied. Release deletes the node. Reentrant per
// client (one client is one Curator InterProcessMutex shared by its threads): a re-entry only
// counts.
//
// Protection mode: a create whose reply is lost (connection loss) may have created the node. The
// guid in its name finds it again in the lock's children before the create is retried, so no
// orphan node blocks the queue. Likewise a release whose delete was lost or could not be sent (the
// server is restarting) while the session lives on: the node still holds the lock, until the
// client deletes it before its next attempt, so the release is in doubt (`info`), never `fail`.
//
// The lock has no lease for the client to renew: it lasts as long as the client's session. The
// session asks for the request's lease as its timeout, and the server clamps it to its limits: the
// timeout it negotiated is the lease (applied_lease, the history's lease_ms); a session it expired
// has lost its nodes, and so the lock. Grant: token = the node's path, fence = its sequence
// number (increasing per lock, as a fencing token must).
class ZkMutex final : public Strategy {
  public:
    explicit ZkMutex(StrategyOptions options) : options_(options) {}
    std::string_view name() const override { return "zk_mutex"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.reentrant = true, .fencing = true, .zookeeper = true};
    }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
    // The session timeout the server negotiated: the lock lives as long as the session.
    Task<std::optional<std::chrono::milliseconds>> applied_lease(
        Session& session, std::chrono::milliseconds requested) override;

  private:
    StrategyOptions options_;
    ZkLockInternals internals_;
};

}  // namespace lockbench
