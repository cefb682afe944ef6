#pragma once

// The one interface every lock strategy implements. Small on purpose, and honest about what a
// strategy can do (capabilities), so the engine and the suite can tell which scenarios apply.
//
// Outcomes: acquire() returns a Grant or a Denied; errors are exceptions from
// redis_connection.hpp. An IoError (timeout, reset) means the outcome is unknown and is recorded
// as `info`; a ReplyError means the server refused the command and nothing changed (`fail`).

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "strategies/client/session.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

enum class LockMode { Exclusive, Shared };
std::string_view to_string(LockMode mode);

struct AcquireRequest {
    std::string key;
    LockMode mode = LockMode::Exclusive;
    std::chrono::milliseconds lease{30'000};
    // How long acquire() may keep trying while the lock is held; 0 = one attempt.
    std::chrono::milliseconds wait_budget{0};
};

struct Grant {
    std::string key;
    LockMode mode = LockMode::Exclusive;
    std::string token;                  // identifies this holder to release()/renew()
    std::optional<std::int64_t> fence;  // strategies with fencing numbers only
    std::chrono::milliseconds lease{0};
    // Redlock: lease minus acquisition time minus drift allowance. Others: the lease.
    std::chrono::milliseconds validity{0};
    // The lease the lock service really gave this grant, when it says and it can differ per
    // acquire (an adapter's acquire_ok lease_ms: etcd rounds a TTL up to whole seconds). The
    // history's acquire ok records it, and the checks expire the grant by it, not by `lease`.
    std::optional<std::chrono::milliseconds> applied_lease;
    bool reentry = false;  // true if the client already held this lock (count went up)
};

// A refused acquire, and why: the engine turns Held into the history's observation that someone
// held the lock; NoQuorum (Redlock) observes nothing - it cannot tell a holder from a failed
// competing attempt.
struct Denied {
    enum class Why { Held, NoQuorum };
    Why why = Why::Held;
};
std::string_view to_string(Denied::Why why);

using AcquireResult = std::variant<Grant, Denied>;

enum class ReleaseOutcome {
    Released,   // the lock is free now (for this holder)
    StillHeld,  // a re-entrant lock's count went down but is not zero
    NotHeld,    // this holder did not hold it any more (expired, or someone else's)
};
std::string_view to_string(ReleaseOutcome outcome);

struct Capabilities {
    bool reentrant = false;
    bool shared_mode = false;
    bool fencing = false;
    bool auto_renewal = false;        // a watchdog extends the lease while held
    bool renew = false;               // renew() extends the lease on request
    bool needs_client_clock = false;  // safety depends on clients' clocks agreeing
    bool multi_node = false;          // uses N independent masters
    bool expires = true;              // a crashed holder's lock is freed by a lease
    bool owner_bound_release = true;  // release() cannot free another client's lock
    bool pubsub_wakeup = false;       // waiters subscribe: a second connection per client
    // The lock lives on ZooKeeper (the run starts one, or --zookeeper names it); Redis keeps only
    // the protected resource. "Expires" then means the session does.
    bool zookeeper = false;
    // The lock lives on etcd (the run starts one or a cluster, or --etcd names it): each client's
    // Session is given its endpoints.
    bool etcd = false;
    // A grant counts only once replicas acknowledged it (Redis WAIT): needs a master with
    // replicas (topology 'replicated', or --redis naming one that has them).
    bool needs_replicas = false;
};
// "reentrant,shared,fencing,..." for `lockbench strategies`.
std::string describe(const Capabilities& caps);

struct StrategyOptions {
    // Poll interval while waiting for a held lock (strategies without pub/sub wake-up).
    std::chrono::milliseconds retry_delay{5};
    // reentrant_hash, rwlock: renew every lease/3 while held (Redisson's watchdog).
    bool watchdog = true;
    // reentrant_hash, rwlock: how often a release whose outcome is unknown (timeout, reset) is
    // sent; the retries carry the same request id, so the unlock latch answers them with the first
    // result instead of decrementing twice (T7, Redisson #4871).
    int unlock_attempts = 3;
    // redlock: drift allowance = lease x factor + 2 ms (redis.io; node-redlock, redis-plus-plus).
    double drift_factor = 0.01;
    // redlock: per-node reply timeout of its lock commands, small against the lease ("~5-50 ms"
    // for a 10 s lease). The protected resource's commands keep the connection's own timeout.
    std::chrono::milliseconds node_timeout{50};
    // set_nx_px_wait: how many replicas must acknowledge a grant, and how long WAIT waits.
    int wait_replicas = 1;
    std::chrono::milliseconds wait_timeout{100};
};

// The operation may have taken effect, but the strategy could not confirm it the way it promises
// (set_nx_px_wait: fewer replicas acknowledged the lock than required, and it was given back).
// An IoError, so the history records `info`: the lock existed on the master for a moment and may
// live on a replica - never `fail`, which would claim nothing changed.
class UnconfirmedError : public IoError {
  public:
    using IoError::IoError;
};

// A checkpoint every strategy that deletes its key on release passes just before the delete
// reaches Redis: a fault that stalls a client here is a late unlock (T8), after its hold ended.
inline constexpr std::string_view kBeforeReleaseDelete = "release.before_delete";

class Strategy {
  public:
    virtual ~Strategy() = default;
    virtual std::string_view name() const = 0;
    virtual Capabilities capabilities() const = 0;

    virtual Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) = 0;
    virtual Task<ReleaseOutcome> release(Session& session, const Grant& grant) = 0;
    // Extends the lease; false if the holder no longer holds the lock. Throws std::logic_error
    // where capabilities().renew is false.
    virtual Task<bool> renew(Session& session, const Grant& grant);
    // Stops background work (watchdogs) and waits for it to end. Call before the session goes.
    virtual Task<void> shutdown(Session& session);
    // The lease the lock service applies to this client's locks when it can differ from the
    // `requested` one, learned by connecting (ZooKeeper: the session timeout the server
    // negotiated, clamped to its limits); nothing when the requested lease is the one applied.
    // The engine asks once, before the run starts, and records the answer as the history's
    // lease_ms: a lease the lock does not live by makes the checker wrong in both directions.
    // Throws as acquire() does when the server cannot be reached.
    virtual Task<std::optional<std::chrono::milliseconds>> applied_lease(
        Session& session, std::chrono::milliseconds requested);
};

}  // namespace lockbench

namespace lockbench {

// The wait budget of one acquire(), measured on the client's own clock (a skewed client waits
// a skewed amount, as its real counterpart would).
class WaitBudget {
  public:
    WaitBudget(Session& session, std::chrono::milliseconds budget)
        : session_(session), deadline_(session.clock().steady() + budget) {}
    bool expired() const { return session_.clock().steady() >= deadline_; }
    Clock::Duration remaining() const {
        auto left = deadline_ - session_.clock().steady();
        return left.count() > 0 ? left : Clock::Duration(0);
    }
    // Sleeps `delay`, or what is left of the budget if that is shorter.
    Clock::SleepAwaiter backoff(Clock::Duration delay) {
        return session_.sleep_for(std::min<Clock::Duration>(delay, remaining()));
    }

  private:
    Session& session_;
    Clock::Duration deadline_;
};

// The acquire of a strategy that polls (no wake-up when the lock is freed): `try_once()` (a
// Task<std::optional<Grant>>, nothing when the lock is held) until it grants, sleeping
// `retry_delay` between tries; Held once the wait budget has run out. `try_once` may refer to
// the caller's locals: it runs only while the caller awaits this.
template <class TryOnce>
Task<AcquireResult> poll_for_grant(Session& session, std::chrono::milliseconds wait_budget,
                                   Clock::Duration retry_delay, TryOnce try_once) {
    WaitBudget budget(session, wait_budget);
    for (;;) {
        if (std::optional<Grant> grant = co_await try_once())
            co_return std::move(*grant);
        if (budget.expired())
            co_return Denied{Denied::Why::Held};
        co_await budget.backoff(retry_delay);
    }
}

}  // namespace lockbench
