#pragma once

#include "strategies/redisson_lock.hpp"

namespace lockbench {

// Redisson's RLock (seed 002). The lock is a hash `key` whose one field is the owner (the client
// id: one client is one Redisson thread) and whose value counts the owner's re-entries, with a
// PEXPIRE lease. Acquire, release and renew are Lua scripts; while held, a watchdog renews the
// lease every lease/3 (StrategyOptions::watchdog); a release publishes on the key's channel and
// waiters SUBSCRIBE to it instead of polling; a release is keyed by its grant's token (the request
// id) and the script keeps its answer under an unlock latch, so a retried release never
// decrements twice (T7). Each acquire gets its own token, so each re-entry is released by its own
// grant.
class ReentrantHash final : public RedissonLock {
  public:
    explicit ReentrantHash(StrategyOptions options);
    std::string_view name() const override { return "reentrant_hash"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{
            .reentrant = true, .auto_renewal = true, .renew = true, .pubsub_wakeup = true};
    }

  private:
    Task<Reply> run_acquire_script(Session& session, const AcquireRequest& request) override;
    // The owner's count goes down by one; the hash goes when it reaches 0.
    Task<Reply> run_release_script(Session& session, const Grant& grant, const std::string& latch,
                                   const std::string& latch_ttl) override;
    Task<bool> renew_owner(Session& session, std::string key,
                           std::chrono::milliseconds lease) override;

    Script acquire_{"reentrant_hash_acquire"};
    Script release_{"reentrant_hash_release"};
    Script renew_{"reentrant_hash_renew"};
};

}  // namespace lockbench
