#include "strategies/rwlock.hpp"

namespace lockbench {

// Releases are announced on lockbench_rwlock:{key} (Redisson: redisson_rwlock:{name}).
Rwlock::Rwlock(StrategyOptions options) : RedissonLock(options, "lockbench_rwlock:") {}

Task<Reply> Rwlock::run_acquire_script(Session& session, const AcquireRequest& request) {
    const std::string& owner = session.client_id();
    const std::string lease = std::to_string(request.lease.count());
    if (request.mode == LockMode::Shared)
        co_return co_await run_script(
            session.redis(), read_acquire_,
            strings(request.key, reader_timeout_prefix(request.key, owner)),
            strings(lease, owner, writer_field(owner)));
    co_return co_await run_script(session.redis(), write_acquire_, strings(request.key),
                                  strings(lease, writer_field(owner)));
}

Task<Reply> Rwlock::run_release_script(Session& session, const Grant& grant,
                                       const std::string& latch, const std::string& latch_ttl) {
    const std::string& owner = session.client_id();
    if (grant.mode == LockMode::Shared)
        co_return co_await release_with_retry(
            session, read_release_,
            strings(grant.key, release_channel(grant.key), latch,
                    reader_timeout_prefix(grant.key, owner), hash_tagged(grant.key)),
            strings(owner, latch_ttl), options());
    co_return co_await release_with_retry(
        session, write_release_, strings(grant.key, release_channel(grant.key), latch),
        strings(writer_field(owner), std::to_string(grant.lease.count()), latch_ttl), options());
}

Task<bool> Rwlock::renew_owner(Session& session, std::string key, std::chrono::milliseconds lease) {
    const std::string& owner = session.client_id();
    Reply reply = co_await run_script(
        session.redis(), renew_, strings(key, reader_timeout_prefix(key, owner)),
        strings(std::to_string(lease.count()), owner, writer_field(owner)));
    co_return reply.as_integer() == 1;
}

}  // namespace lockbench
