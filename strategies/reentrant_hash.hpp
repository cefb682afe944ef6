#pragma once

#include "strategies/lua_scripts.hpp"
#include "strategies/strategy.hpp"
#include "strategies/watchdog.hpp"

namespace lockbench {

// Redisson's RLock (seed 002). The lock is a hash `key` whose one field is the owner (the client
// id: one client is one Redisson thread) and whose value counts the owner's re-entries, with a
// PEXPIRE lease. Acquire, release and renew are Lua scripts; while held, a watchdog renews the
// lease every lease/3 (StrategyOptions::watchdog); a release publishes on the key's channel and
// waiters SUBSCRIBE to it instead of polling; a release is keyed by its grant's token (the request
// id) and the script keeps its answer under an unlock latch, so a retried release never
// decrements twice (T7). Each acquire gets its own token, so each re-entry is released by its own
// grant.
class ReentrantHash final : public Strategy {
  public:
    explicit ReentrantHash(StrategyOptions options);
    std::string_view name() const override { return "reentrant_hash"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{
            .reentrant = true, .auto_renewal = true, .renew = true, .pubsub_wakeup = true};
    }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    // Released when the owner's count reached 0, StillHeld while re-entries remain.
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
    Task<bool> renew(Session& session, const Grant& grant) override;
    Task<void> shutdown(Session& session) override;

    // Where a release of `key` is announced (Redisson: redisson_lock__channel:{name}).
    static std::string channel(std::string_view key) {
        return "lockbench_lock__channel:" + hash_tagged(key);
    }
    // Watchdog renewal loops still running (for tests: none after the last release).
    std::size_t watchdogs_running() const { return watchdog_.running(); }

  private:
    Task<AcquireAttempt> try_acquire(Session& session, const AcquireRequest& request);
    Task<bool> renew_owner(Session& session, std::string key, std::chrono::milliseconds lease);

    StrategyOptions options_;
    Script acquire_{"reentrant_hash_acquire"};
    Script release_{"reentrant_hash_release"};
    Script renew_{"reentrant_hash_renew"};
    bool subscriber_in_use_ = false;
    Watchdog watchdog_;  // last: its loops call renew_owner()
};

}  // namespace lockbench
