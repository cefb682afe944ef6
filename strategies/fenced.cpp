#include "strategies/fenced.hpp"

namespace lockbench {

Task<AcquireResult> Fenced::acquire(Session& session, const AcquireRequest& request) {
    const std::string token = session.next_token();
    const std::string lease = std::to_string(request.lease.count());
    co_return co_await poll_for_grant(
        session, request.wait_budget, options_.retry_delay, [&]() -> Task<std::optional<Grant>> {
            Reply reply = co_await run_script(session.redis(), fenced_acquire_,
                                              strings(request.key, fence_key(request.key)),
                                              strings(token, lease));
            const std::int64_t fence = reply.as_integer();
            if (fence <= 0)
                co_return std::nullopt;
            co_return Grant{.key = request.key,
                            .token = token,
                            .fence = fence,
                            .lease = request.lease,
                            .validity = request.lease};
        });
}

}  // namespace lockbench
