#include "strategies/rwlock_seed.hpp"

namespace lockbench {

namespace {
const char* seed_mode(LockMode mode) {
    return mode == LockMode::Shared ? "READ" : "WRITE";
}
}  // namespace

Task<AcquireResult> RwlockSeed::acquire(Session& session, const AcquireRequest& request) {
    WaitBudget budget(session, request.wait_budget);
    for (;;) {
        Reply reply = co_await run_script(session.redis(), acquire_,
                                          strings(writer_key(request.key), reader_key(request.key)),
                                          strings(seed_mode(request.mode)));
        if (reply.as_string() == "SUCCESS") {
            // No lease: the lock never expires. The token only names this grant in the history.
            co_return Grant{
                .key = request.key, .mode = request.mode, .token = session.next_token()};
        }
        if (budget.expired())
            co_return Denied{Denied::Why::Held};
        co_await budget.backoff(std::chrono::milliseconds(100));
    }
}

Task<ReleaseOutcome> RwlockSeed::release(Session& session, const Grant& grant) {
    co_await session.checkpoint(kBeforeReleaseDelete);
    co_await run_script(session.redis(), release_,
                        strings(writer_key(grant.key), reader_key(grant.key)),
                        strings(seed_mode(grant.mode)));
    co_return ReleaseOutcome::Released;
}

}  // namespace lockbench
