#include "strategies/rwlock.hpp"

namespace lockbench {

Rwlock::Rwlock(StrategyOptions options)
    : options_(options),
      watchdog_([this](Session& session, const std::string& key, std::chrono::milliseconds lease) {
          return renew_owner(session, key, lease);
      }) {}

Task<AcquireAttempt> Rwlock::try_acquire(Session& session, const AcquireRequest& request) {
    const std::string& owner = session.client_id();
    const std::string lease = std::to_string(request.lease.count());
    Reply reply;
    if (request.mode == LockMode::Shared) {
        reply = co_await run_script(session.redis(), read_acquire_,
                                    strings(request.key, reader_timeout_prefix(request.key, owner)),
                                    strings(lease, owner, writer_field(owner)));
    } else {
        reply = co_await run_script(session.redis(), write_acquire_, strings(request.key),
                                    strings(lease, writer_field(owner)));
    }
    const ScriptVerdict verdict = parse_acquire_reply(reply);
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

Task<AcquireResult> Rwlock::acquire(Session& session, const AcquireRequest& request) {
    co_return co_await acquire_with_wake_up(
        session, request, channel(request.key),
        [this, &session, &request] { return try_acquire(session, request); }, options_.retry_delay,
        subscriber_in_use_);
}

Task<ReleaseOutcome> Rwlock::release(Session& session, const Grant& grant) {
    // Renewals stop before the unlock is sent, never after it (Redisson #7272); the key's loop
    // goes on while the client still holds other grants there (a downgrade's read hold).
    watchdog_.released(grant.key, grant.token);
    co_await session.checkpoint(kBeforeReleaseDelete);
    const std::string& owner = session.client_id();
    const std::string request_id = grant.token.empty() ? session.next_token() : grant.token;
    const std::string latch_ttl = std::to_string(unlock_latch_ttl(session, options_).count());
    const std::string latch = unlock_latch_key(grant.key, request_id);
    Reply reply;
    if (grant.mode == LockMode::Shared) {
        reply = co_await release_with_retry(
            session, read_release_,
            strings(grant.key, channel(grant.key), latch, reader_timeout_prefix(grant.key, owner),
                    hash_tagged(grant.key)),
            strings(owner, latch_ttl), options_);
    } else {
        reply = co_await release_with_retry(
            session, write_release_, strings(grant.key, channel(grant.key), latch),
            strings(writer_field(owner), std::to_string(grant.lease.count()), latch_ttl), options_);
    }
    switch (reply.as_integer()) {
        case 1:
            co_return ReleaseOutcome::Released;
        case 0:
            co_return ReleaseOutcome::StillHeld;
        default:
            co_return ReleaseOutcome::NotHeld;
    }
}

Task<bool> Rwlock::renew_owner(Session& session, std::string key, std::chrono::milliseconds lease) {
    const std::string& owner = session.client_id();
    Reply reply = co_await run_script(
        session.redis(), renew_, strings(key, reader_timeout_prefix(key, owner)),
        strings(std::to_string(lease.count()), owner, writer_field(owner)));
    co_return reply.as_integer() == 1;
}

Task<bool> Rwlock::renew(Session& session, const Grant& grant) {
    co_return co_await renew_owner(session, grant.key, grant.lease);
}

Task<void> Rwlock::shutdown(Session& session) {
    co_await watchdog_.shutdown(session);
}

}  // namespace lockbench
