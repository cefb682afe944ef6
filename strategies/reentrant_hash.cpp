#include "strategies/reentrant_hash.hpp"

namespace lockbench {

ReentrantHash::ReentrantHash(StrategyOptions options)
    : options_(options),
      watchdog_([this](Session& session, const std::string& key, std::chrono::milliseconds lease) {
          return renew_owner(session, key, lease);
      }) {}

Task<AcquireAttempt> ReentrantHash::try_acquire(Session& session, const AcquireRequest& request) {
    Reply reply =
        co_await run_script(session.redis(), acquire_, strings(request.key),
                            strings(std::to_string(request.lease.count()), session.client_id()));
    const ScriptVerdict verdict = parse_acquire_reply(reply);
    if (!verdict.granted)
        co_return AcquireAttempt{.holder_ttl = std::chrono::milliseconds(verdict.value)};
    Grant grant{.key = request.key,
                .token = session.next_token(),
                .lease = request.lease,
                .validity = request.lease,
                .reentry = verdict.value > 1};
    if (options_.watchdog)
        watchdog_.held(session, grant.key, grant.token, grant.lease);
    co_return AcquireAttempt{.grant = std::move(grant)};
}

Task<AcquireResult> ReentrantHash::acquire(Session& session, const AcquireRequest& request) {
    co_return co_await acquire_with_wake_up(
        session, request, channel(request.key),
        [this, &session, &request] { return try_acquire(session, request); }, options_.retry_delay,
        subscriber_in_use_);
}

Task<ReleaseOutcome> ReentrantHash::release(Session& session, const Grant& grant) {
    // Renewals stop before the unlock is sent, never after it (Redisson #7272).
    watchdog_.released(grant.key, grant.token);
    co_await session.checkpoint(kBeforeReleaseDelete);
    // A grant's token is its release's request id; an unlock without a grant (seed 001's
    // `finally`) gets a fresh one.
    const std::string request_id = grant.token.empty() ? session.next_token() : grant.token;
    const auto latch_ttl = unlock_latch_ttl(session, options_);
    Reply reply = co_await release_with_retry(
        session, release_,
        strings(grant.key, channel(grant.key), unlock_latch_key(grant.key, request_id)),
        strings(session.client_id(), std::to_string(grant.lease.count()),
                std::to_string(latch_ttl.count())),
        options_);
    switch (reply.as_integer()) {
        case 1:
            co_return ReleaseOutcome::Released;
        case 0:
            co_return ReleaseOutcome::StillHeld;
        default:
            co_return ReleaseOutcome::NotHeld;
    }
}

Task<bool> ReentrantHash::renew_owner(Session& session, std::string key,
                                      std::chrono::milliseconds lease) {
    Reply reply = co_await run_script(session.redis(), renew_, strings(key),
                                      strings(session.client_id(), std::to_string(lease.count())));
    co_return reply.as_integer() == 1;
}

Task<bool> ReentrantHash::renew(Session& session, const Grant& grant) {
    co_return co_await renew_owner(session, grant.key, grant.lease);
}

Task<void> ReentrantHash::shutdown(Session& session) {
    co_await watchdog_.shutdown(session);
}

}  // namespace lockbench
