#include "strategies/set_nx_px_del.hpp"

namespace lockbench {

Task<ReleaseOutcome> SetNxPxDel::release(Session& session, const Grant& grant) {
    co_await session.checkpoint(kBeforeReleaseDelete);
    // Deliberately no ownership check: DEL removes the key whoever holds it.
    Reply reply = co_await session.redis().command("DEL", grant.key);
    co_return reply.as_integer() == 1 ? ReleaseOutcome::Released : ReleaseOutcome::NotHeld;
}

}  // namespace lockbench
