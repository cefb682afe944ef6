#include "strategies/setnx_getset.hpp"

#include <charconv>

namespace lockbench {

namespace {
// A missing or unparsable value counts as expired, as StringUtils.isBlank does in seed 000.
std::int64_t parse_expiry(const Reply& reply) {
    if (!reply.is_string())
        return 0;
    std::int64_t value = 0;
    auto [end, ec] = std::from_chars(reply.str.data(), reply.str.data() + reply.str.size(), value);
    return ec == std::errc() ? value : 0;
}
}  // namespace

Task<std::optional<std::int64_t>> SetnxGetset::try_once(Session& session,
                                                        const AcquireRequest& request) {
    auto& redis = session.redis();
    std::int64_t expire_at = session.clock().wall_ms() + request.lease.count() + 1;
    Reply set = co_await redis.command("SETNX", request.key, std::to_string(expire_at));
    if (set.as_integer() == 1)
        co_return expire_at;

    std::int64_t current = parse_expiry(co_await redis.command("GET", request.key));
    if (current >= session.clock().wall_ms())
        co_return std::nullopt;  // not expired yet

    // Looks expired: race for it with GETSET; only the client that reads back an expired value
    // wins. The losers have still moved the deadline (the doc calls this "not a problem").
    expire_at = session.clock().wall_ms() + request.lease.count() + 1;
    std::int64_t previous =
        parse_expiry(co_await redis.command("GETSET", request.key, std::to_string(expire_at)));
    if (previous < session.clock().wall_ms())
        co_return expire_at;
    co_return std::nullopt;
}

Task<AcquireResult> SetnxGetset::acquire(Session& session, const AcquireRequest& request) {
    co_return co_await poll_for_grant(
        session, request.wait_budget, options_.retry_delay, [&]() -> Task<std::optional<Grant>> {
            const auto expire_at = co_await try_once(session, request);
            if (!expire_at)
                co_return std::nullopt;
            co_return Grant{.key = request.key,
                            .token = session.client_id() + "@" + std::to_string(*expire_at),
                            .lease = request.lease,
                            .validity = request.lease};
        });
}

Task<ReleaseOutcome> SetnxGetset::release(Session& session, const Grant& grant) {
    std::int64_t own_expiry = 0;
    auto at = grant.token.rfind('@');
    auto expiry_text = std::string_view(grant.token).substr(at == std::string::npos ? 0 : at + 1);
    std::from_chars(expiry_text.data(), expiry_text.data() + expiry_text.size(), own_expiry);
    // Seed 000: "if my own time is up, do not unlock" - judged on this client's clock.
    if (session.clock().wall_ms() > own_expiry)
        co_return ReleaseOutcome::NotHeld;

    auto& redis = session.redis();
    std::int64_t current = parse_expiry(co_await redis.command("GET", grant.key));
    if (current <= session.clock().wall_ms())
        co_return ReleaseOutcome::NotHeld;
    co_await session.checkpoint(kBeforeReleaseDelete);
    // Compares with the clock, not with its own value: whoever holds an unexpired lock now loses
    // it.
    co_await redis.command("DEL", grant.key);
    co_return ReleaseOutcome::Released;
}

}  // namespace lockbench
