#include "strategies/set_nx_px.hpp"

namespace lockbench {

Task<AcquireResult> SetNxPx::acquire(Session& session, const AcquireRequest& request) {
    const std::string token = session.next_token();
    const std::string lease = std::to_string(request.lease.count());
    co_return co_await poll_for_grant(
        session, request.wait_budget, options_.retry_delay, [&]() -> Task<std::optional<Grant>> {
            Reply reply =
                co_await session.redis().command("SET", request.key, token, "NX", "PX", lease);
            if (!reply.is_ok())
                co_return std::nullopt;
            co_return Grant{.key = request.key,
                            .token = token,
                            .lease = request.lease,
                            .validity = request.lease};
        });
}

Task<ReleaseOutcome> SetNxPx::release(Session& session, const Grant& grant) {
    co_await session.checkpoint(kBeforeReleaseDelete);
    Reply reply = co_await run_script(session.redis(), compare_and_delete_, strings(grant.key),
                                      strings(grant.token));
    co_return reply.as_integer() == 1 ? ReleaseOutcome::Released : ReleaseOutcome::NotHeld;
}

Task<bool> SetNxPx::renew(Session& session, const Grant& grant) {
    Reply reply = co_await run_script(session.redis(), compare_and_pexpire_, strings(grant.key),
                                      strings(grant.token, std::to_string(grant.lease.count())));
    co_return reply.as_integer() == 1;
}

}  // namespace lockbench
