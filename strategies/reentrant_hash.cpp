#include "strategies/reentrant_hash.hpp"

namespace lockbench {

// Releases are announced on lockbench_lock__channel:{key} (Redisson:
// redisson_lock__channel:{name}).
ReentrantHash::ReentrantHash(StrategyOptions options)
    : RedissonLock(options, "lockbench_lock__channel:") {}

Task<Reply> ReentrantHash::run_acquire_script(Session& session, const AcquireRequest& request) {
    co_return co_await run_script(
        session.redis(), acquire_, strings(request.key),
        strings(std::to_string(request.lease.count()), session.client_id()));
}

Task<Reply> ReentrantHash::run_release_script(Session& session, const Grant& grant,
                                              const std::string& latch,
                                              const std::string& latch_ttl) {
    co_return co_await release_with_retry(
        session, release_, strings(grant.key, release_channel(grant.key), latch),
        strings(session.client_id(), std::to_string(grant.lease.count()), latch_ttl), options());
}

Task<bool> ReentrantHash::renew_owner(Session& session, std::string key,
                                      std::chrono::milliseconds lease) {
    Reply reply = co_await run_script(session.redis(), renew_, strings(key),
                                      strings(session.client_id(), std::to_string(lease.count())));
    co_return reply.as_integer() == 1;
}

}  // namespace lockbench
