#include "strategies/fenced.hpp"

namespace lockbench {

Task<AcquireResult> Fenced::acquire(Session& session, const AcquireRequest& request) {
    const std::string token = session.next_token();
    const std::string lease = std::to_string(request.lease.count());
    WaitBudget budget(session, request.wait_budget);
    for (;;) {
        Reply reply = co_await run_script(session.redis(), fenced_acquire_,
                                          strings(request.key, fence_key(request.key)),
                                          strings(token, lease));
        if (std::int64_t fence = reply.as_integer(); fence > 0) {
            co_return Grant{.key = request.key,
                            .token = token,
                            .fence = fence,
                            .lease = request.lease,
                            .validity = request.lease};
        }
        if (budget.expired())
            co_return Denied{Denied::Why::Held};
        co_await budget.backoff(options_.retry_delay);
    }
}

}  // namespace lockbench
