#include "strategies/redisson_lock.hpp"

#include <utility>

namespace lockbench {

RedissonLock::RedissonLock(StrategyOptions options, std::string channel_prefix)
    : options_(options),
      channel_prefix_(std::move(channel_prefix)),
      watchdog_([this](Session& session, const std::string& key, std::chrono::milliseconds lease) {
          return renew_owner(session, key, lease);
      }) {}

std::string RedissonLock::release_channel(std::string_view key) const {
    return channel_prefix_ + hash_tagged(key);
}

Task<AcquireAttempt> RedissonLock::try_acquire(Session& session, const AcquireRequest& request) {
    const ScriptVerdict verdict =
        parse_acquire_reply(co_await run_acquire_script(session, request));
    if (!verdict.granted)
        co_return AcquireAttempt{.holder_ttl = std::chrono::milliseconds(verdict.value)};
    Grant grant{.key = request.key,
                .mode = request.mode,
                .token = session.next_token(),
                .lease = request.lease,
                .validity = request.lease,
                .reentry = verdict.value > 1 || verdict.reentry_flag};
    if (options_.watchdog)
        watchdog_.held(session, grant.key, grant.token, grant.lease);
    co_return AcquireAttempt{.grant = std::move(grant)};
}

Task<AcquireResult> RedissonLock::acquire(Session& session, const AcquireRequest& request) {
    co_return co_await acquire_with_wake_up(
        session, request, release_channel(request.key),
        [this, &session, &request] { return try_acquire(session, request); }, options_.retry_delay,
        subscriber_in_use_);
}

Task<ReleaseOutcome> RedissonLock::release(Session& session, const Grant& grant) {
    // Renewals stop before the unlock is sent, never after it (Redisson #7272); the key's loop
    // goes on while the client still holds other grants there (a re-entry, a downgrade's read).
    watchdog_.released(grant.key, grant.token);
    co_await session.checkpoint(kBeforeReleaseDelete);
    // A grant's token is its release's request id; an unlock without a grant (seed 001's
    // `finally`) gets a fresh one.
    const std::string request_id = grant.token.empty() ? session.next_token() : grant.token;
    const std::string latch_ttl = std::to_string(unlock_latch_ttl(session, options_).count());
    Reply reply = co_await run_release_script(session, grant,
                                              unlock_latch_key(grant.key, request_id), latch_ttl);
    switch (reply.as_integer()) {
        case 1:
            co_return ReleaseOutcome::Released;
        case 0:
            co_return ReleaseOutcome::StillHeld;
        default:
            co_return ReleaseOutcome::NotHeld;
    }
}

Task<bool> RedissonLock::renew(Session& session, const Grant& grant) {
    co_return co_await renew_owner(session, grant.key, grant.lease);
}

Task<void> RedissonLock::shutdown(Session& session) {
    co_await watchdog_.shutdown(session);
}

}  // namespace lockbench
