#pragma once

#include "strategies/strategy.hpp"

namespace lockbench {

// The legacy pattern of seeds 000 and 003 (redis.io's "Locking with SETNX"), as written:
// the value is the holder's expiry time on *its own clock*; a waiter that judges it past takes
// the lock with GETSET; unlock is GET, compare with now, DEL - not atomic and not owner-bound.
// Flaws it keeps on purpose: client clocks decide expiry (T9), a late unlock deletes someone
// else's lock (T8), and the key has no server-side TTL.
class SetnxGetset final : public Strategy {
  public:
    explicit SetnxGetset(StrategyOptions options) : options_(options) {}
    std::string_view name() const override { return "setnx_getset"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.needs_client_clock = true, .owner_bound_release = false};
    }

    // The grant's token is "<client_id>@<expiry ms>": the expiry is what this client wrote (and
    // all its unlock looks at); the client id only tells grants of the same millisecond apart.
    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;

    // Its kBeforeReleaseDelete checkpoint sits between the unlock's GET and its DEL (T8's
    // TOCTOU window).
    static constexpr std::string_view kBetweenGetAndDel = kBeforeReleaseDelete;

  private:
    Task<std::optional<std::int64_t>> try_once(Session& session, const AcquireRequest& request);
    StrategyOptions options_;
};

}  // namespace lockbench
