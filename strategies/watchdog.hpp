#pragma once

// What Redisson's locks add around their scripts, shared by reentrant_hash and rwlock:
// - Watchdog: renews every held lock every lease/3 ("on its own thread" in Redisson: here its own
//   coroutine on the session's loop, independent of the worker);
// - acquire_with_wake_up(): a waiter SUBSCRIBEs to the lock's channel and sleeps until an unlock
//   message or the holder's PTTL, instead of polling;
// - release_with_retry(): a release whose outcome is unknown is sent again with the same request
//   id, which the release scripts' unlock latch makes safe (T7).

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/lua_scripts.hpp"
#include "strategies/strategy.hpp"

namespace lockbench {

// "{key}", so that every key of one lock shares its cluster slot (Redisson's prefixName); a key
// that already has a hash tag is left as it is.
std::string hash_tagged(std::string_view key);
// Where a release script keeps its answer for request `request_id` (Redisson's unlock latch).
std::string unlock_latch_key(std::string_view key, std::string_view request_id);

// Renews held locks in the background, one renewal loop per held key. A loop renews every
// lease/3 of the client's clock until the key's last grant is released, a renewal says the lock
// is gone, or shutdown(). It waits out a whole-client pause (Session::pause_until, T10: a stopped
// process renews nothing) but ignores the worker's checkpoints, so a worker-only pause (T1) does
// not stop it. A renewal that fails with an error is retried at the next tick: a watchdog that
// gives up after one error lets a live lock expire (Redisson #775, #2515, #3194).
class Watchdog {
  public:
    // Extends what this client holds on `key` to `lease`; false if it holds nothing there.
    using Renew = std::function<Task<bool>(Session&, const std::string& key,
                                           std::chrono::milliseconds lease)>;

    explicit Watchdog(Renew renew);
    // Tells every loop to stop; a loop still suspended ends at its next wake-up without touching
    // the session. Call shutdown() before, so that none is left suspended.
    ~Watchdog();
    Watchdog(const Watchdog&) = delete;
    Watchdog& operator=(const Watchdog&) = delete;

    // Grant `token` on `key` was issued: renew the key with `lease` (the newest grant's lease)
    // from now on, starting a loop unless one already runs for the key.
    void held(Session& session, const std::string& key, const std::string& token,
              std::chrono::milliseconds lease);
    // Grant `token` is being released: when it was the key's last one the loop stops at once,
    // before the release reaches Redis, so no renewal can follow the unlock (Redisson #7272).
    void released(const std::string& key, const std::string& token);
    // Stops every loop and waits until all have ended (at most one renewal in flight each).
    Task<void> shutdown(Session& session);

    // Renewal loops still running (for tests).
    std::size_t running() const;

  private:
    struct KeyLoop;
    struct State;
    static DetachedTask renew_loop(std::shared_ptr<State> state, std::shared_ptr<KeyLoop> loop,
                                   Session& session, std::string key);
    std::shared_ptr<State> state_;
};

// One attempt of a lock's acquire script: a grant, or how long the holder's lease still runs.
struct AcquireAttempt {
    std::optional<Grant> grant;
    std::chrono::milliseconds holder_ttl{0};
};

// Redisson's waiter: try; if held and the request has a wait budget, SUBSCRIBE to `channel` and
// try again (the holder may have released before the subscription), then sleep until an unlock
// message, the holder's PTTL or the end of the budget, whichever comes first, and try again. A
// lost message costs at most one PTTL (T11). When the subscriber connection fails or is in use by
// another acquire of the same client (`subscriber_in_use`), it polls every `retry_delay` instead.
Task<AcquireResult> acquire_with_wake_up(Session& session, const AcquireRequest& request,
                                         std::string channel,
                                         std::function<Task<AcquireAttempt>()> attempt,
                                         std::chrono::milliseconds retry_delay,
                                         bool& subscriber_in_use);

// Parses an acquire script's reply: {1, count, ...} granted, {0, pttl} held.
struct ScriptVerdict {
    bool granted = false;
    long long value = 0;  // the count when granted, the holder's PTTL otherwise
    bool reentry_flag = false;
};
ScriptVerdict parse_acquire_reply(const Reply& reply);

// How long a release's answer is kept: long enough for every retry of it to arrive
// (attempts x (connect + command timeout + delay), as Redisson sizes its latch).
std::chrono::milliseconds unlock_latch_ttl(Session& session, const StrategyOptions& options);

// Runs a release script, sending it again (same keys, same request id) after an IoError, up to
// options.unlock_attempts times; rethrows the last error.
Task<Reply> release_with_retry(Session& session, const Script& script,
                               std::vector<std::string> keys, std::vector<std::string> args,
                               const StrategyOptions& options);

}  // namespace lockbench
