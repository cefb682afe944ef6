#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <string_view>

#include "strategies/lua_scripts.hpp"
#include "strategies/strategy.hpp"
#include "strategies/watchdog.hpp"

namespace lockbench {

// What Redisson's RLock and RReadWriteLock do alike around their own scripts: a grant per
// acquire with its own token, the watchdog started on a grant and stopped before its unlock is
// sent (Redisson #7272), waiters woken by the release channel, releases retried under the unlock
// latch (T7). A lock of this family says only which script runs for each step.
class RedissonLock : public Strategy {
  public:
    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) final;
    // Released when the grant's hold is gone, StillHeld while re-entries of it remain.
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) final;
    Task<bool> renew(Session& session, const Grant& grant) final;
    Task<void> shutdown(Session& session) final;

    // Watchdog renewal loops still running (for tests: none after the last release).
    std::size_t watchdogs_running() const { return watchdog_.running(); }
    // Where releases of `key` are announced: the lock's channel prefix, then the key's hash tag
    // (Redisson: redisson_lock__channel:{name}, redisson_rwlock:{name}).
    std::string release_channel(std::string_view key) const;

  protected:
    RedissonLock(StrategyOptions options, std::string channel_prefix);

    // The acquire script's reply: {1, count, ...} granted, {0, pttl} held.
    virtual Task<Reply> run_acquire_script(Session& session, const AcquireRequest& request) = 0;
    // The release script's reply for `grant` (1 released, 0 still held, else not held); `latch`
    // is where the script keeps its answer for `latch_ttl` ms, so a resent release is harmless.
    virtual Task<Reply> run_release_script(Session& session, const Grant& grant,
                                           const std::string& latch,
                                           const std::string& latch_ttl) = 0;
    // Extends what this client holds on `key` to `lease`; false if it holds nothing there.
    virtual Task<bool> renew_owner(Session& session, std::string key,
                                   std::chrono::milliseconds lease) = 0;

    const StrategyOptions& options() const { return options_; }

  private:
    Task<AcquireAttempt> try_acquire(Session& session, const AcquireRequest& request);

    StrategyOptions options_;
    std::string channel_prefix_;
    bool subscriber_in_use_ = false;
    Watchdog watchdog_;
};

}  // namespace lockbench
