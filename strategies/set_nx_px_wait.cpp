#include "strategies/set_nx_px_wait.hpp"

namespace lockbench {

Task<AcquireResult> SetNxPxWait::acquire(Session& session, const AcquireRequest& request) {
    AcquireResult result = co_await SetNxPx::acquire(session, request);
    const Grant* grant = std::get_if<Grant>(&result);
    if (!grant)
        co_return result;
    Reply acks = co_await session.redis().command("WAIT", std::to_string(options_.wait_replicas),
                                                  std::to_string(options_.wait_timeout.count()));
    if (acks.as_integer() >= options_.wait_replicas)
        co_return result;
    // Not replicated: give it back rather than hold a lock a failover may forget. The give-back
    // itself may fail (the master is going away); the error below says the acquire is in doubt
    // either way.
    const std::string what = "only " + std::to_string(acks.as_integer()) + " of " +
                             std::to_string(options_.wait_replicas) +
                             " replica(s) acknowledged the lock within " +
                             std::to_string(options_.wait_timeout.count()) + " ms";
    try {
        co_await run_script(session.redis(), compare_and_delete_, strings(grant->key),
                            strings(grant->token));
    } catch (const RedisError&) {
    }
    throw UnconfirmedError(what);
}

}  // namespace lockbench
