#include "strategies/zk_mutex.hpp"

#include "strategies/client/zk_client.hpp"

namespace lockbench {

Task<AcquireResult> ZkMutex::acquire(Session& session, const AcquireRequest& request) {
    ZkClient& zk = session.zookeeper(request.lease);
    co_await zk.connected();
    const std::chrono::milliseconds lease = zk.session_timeout();
    if (auto again = internals_.reenter(request.key, request, zk.session_id(), lease))
        co_return *again;
    // Curator's mutex: the lowest node holds the lock; every other waits for its predecessor.
    const auto first_holds = [](const std::vector<std::string>& sorted, std::size_t ours) {
        return ours == 0 ? ZkLockInternals::Verdict{.granted = true}
                         : ZkLockInternals::Verdict{.wait_for = sorted[ours - 1]};
    };
    const auto ours = co_await internals_.attempt(session, zk, request.key, "lock-", first_holds,
                                                  request.wait_budget);
    if (!ours)
        co_return Denied{Denied::Why::Held};
    co_return internals_.granted(request.key, request, *ours, zk.session_id(), lease);
}

Task<ReleaseOutcome> ZkMutex::release(Session& session, const Grant& grant) {
    co_return co_await internals_.release(session, grant.key, grant);
}

Task<std::optional<std::chrono::milliseconds>> ZkMutex::applied_lease(
    Session& session, std::chrono::milliseconds requested) {
    co_return co_await ZkLockInternals::session_lease(session, requested);
}

}  // namespace lockbench
