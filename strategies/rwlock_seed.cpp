#include "strategies/rwlock_seed.hpp"

namespace lockbench {

namespace {
const char* seed_mode(LockMode mode) {
    return mode == LockMode::Shared ? "READ" : "WRITE";
}
}  // namespace

Task<AcquireResult> RwlockSeed::acquire(Session& session, const AcquireRequest& request) {
    co_return co_await poll_for_grant(
        session, request.wait_budget, std::chrono::milliseconds(100),
        [&]() -> Task<std::optional<Grant>> {
            Reply reply =
                co_await run_script(session.redis(), acquire_,
                                    strings(writer_key(request.key), reader_key(request.key)),
                                    strings(seed_mode(request.mode)));
            if (reply.as_string() != "SUCCESS")
                co_return std::nullopt;
            // No lease: the lock never expires. The token only names this grant in the history.
            co_return Grant{
                .key = request.key, .mode = request.mode, .token = session.next_token()};
        });
}

Task<ReleaseOutcome> RwlockSeed::release(Session& session, const Grant& grant) {
    co_await session.checkpoint(kBeforeReleaseDelete);
    co_await run_script(session.redis(), release_,
                        strings(writer_key(grant.key), reader_key(grant.key)),
                        strings(seed_mode(grant.mode)));
    co_return ReleaseOutcome::Released;
}

}  // namespace lockbench
