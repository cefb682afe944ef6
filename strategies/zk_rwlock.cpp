#include "strategies/zk_rwlock.hpp"

#include "strategies/client/zk_client.hpp"

namespace lockbench {

namespace {

// Where this client's hold of `key` in `mode` is counted: one slot per lock and mode.
std::string slot(const std::string& key, LockMode mode) {
    return key + (mode == LockMode::Shared ? "\n" + std::string(ZkRwlock::kReadName)
                                           : "\n" + std::string(ZkRwlock::kWriteName));
}

}  // namespace

Task<AcquireResult> ZkRwlock::acquire(Session& session, const AcquireRequest& request) {
    ZkClient& zk = session.zookeeper(request.lease);
    co_await zk.connected();
    const std::chrono::milliseconds lease = zk.session_timeout();
    const std::string ours_slot = slot(request.key, request.mode);
    if (auto again = internals_.reenter(ours_slot, request, zk.session_id(), lease))
        co_return *again;
    const bool shared = request.mode == LockMode::Shared;
    ZkLockInternals::Predicate predicate;
    if (!shared) {
        predicate = [](const std::vector<std::string>& sorted, std::size_t ours) {
            return ours == 0 ? ZkLockInternals::Verdict{.granted = true}
                             : ZkLockInternals::Verdict{.wait_for = sorted[ours - 1]};
        };
    } else {
        const bool holds_write =
            internals_.holds(slot(request.key, LockMode::Exclusive), zk.session_id());
        predicate = [holds_write](const std::vector<std::string>& sorted, std::size_t ours) {
            if (holds_write)
                return ZkLockInternals::Verdict{.granted = true};
            for (std::size_t i = 0; i < ours; ++i) {
                if (sorted[i].find(kWriteName) != std::string::npos)
                    return ZkLockInternals::Verdict{.wait_for = sorted[i]};
            }
            return ZkLockInternals::Verdict{.granted = true};
        };
    }
    const auto ours = co_await internals_.attempt(
        session, zk, request.key, shared ? kReadName : kWriteName, predicate, request.wait_budget);
    if (!ours)
        co_return Denied{Denied::Why::Held};
    co_return internals_.granted(ours_slot, request, *ours, zk.session_id(), lease);
}

Task<ReleaseOutcome> ZkRwlock::release(Session& session, const Grant& grant) {
    co_return co_await internals_.release(session, slot(grant.key, grant.mode), grant);
}

Task<std::optional<std::chrono::milliseconds>> ZkRwlock::applied_lease(
    Session& session, std::chrono::milliseconds requested) {
    co_return co_await ZkLockInternals::session_lease(session, requested);
}

}  // namespace lockbench
