#pragma once

// Check 4, liveness:
//  (a) deadlock: a lock held by nobody alive past its bound while others wait for it. A hold is
//      orphaned whenever it ends without the server freeing it: its holder crashed; its release
//      failed (a `fail` other than `not-held` did not happen: the lock is still there) or is in
//      doubt (`info`, or the holder crashed with it in flight); or an acquire got no answer while
//      nobody held the key of record (T6: it may have been granted to a process that retired).
//      The orphan lasts until a release names its grant's token (any process id), the key is
//      granted again, or its bound: the lease of the acquire invoke (`lease_ms`; ZooKeeper's
//      session timeout), counted from the orphaning - the latest a watchdog or a live session
//      may have extended it - and forever for a lock without a lease. It is a deadlock when a
//      waiter still wanted the key past the bound plus a grace for late expiry, with no grant
//      in between: an acquire refused `held`, or, for a lock that certainly stays (a crashed or
//      failed-release holder, no lease), any acquire still waiting. A lock without a lease is
//      given liveness_bound_ms from the orphaning instead - the time its client has to clean up.
//      A service that renews every lease when a new leader takes over (etcd extends each to its
//      full TTL plus an election timeout) says so with a nemesis event `leases-renewed`
//      (HISTORY.md): a lease that may still have been alive at the fault before it then runs
//      until that event's time plus the lease plus its `by_ms`, not less;
//      A library's late grant (HISTORY.md, `late-grant`) of an acquire answered in doubt makes
//      that acquire's orphan certain: the library kept the acquire going until `granted`, so its
//      bound counts from then (a lease from the grant; a lock without one stays, and any waiter
//      past the liveness bound proves it stuck). Its adapter's `released` with ok true frees it
//      at that time - a refusal past that plus the expiry grace, with nobody holding it, proves
//      the lock stuck - and a failed or missing `released` leaves it to its bound. A late grant
//      that matches no in-doubt acquire is passed over (linearizability names it);
//      Acquires in flight that may yet turn out granted keep the verdict open until they end;
//  (b) wait: one acquire, from its invoke to the grant, or to the client giving up (a refusal,
//      an `info`, a crash); think time between attempts is not waiting. max_wait_ms is the
//      longest; with a starvation bound, a longer wait is starvation (one violation per process
//      at most);
//  (c) handoff: per key, from the release invoke that ends a hold, while an acquire of that key is
//      in flight, to the next grant of that key.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"
#include "checker/latency_histogram.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

struct LivenessOptions {
    // How long a lock without a lease may stay orphaned while others wait before it is a deadlock.
    std::int64_t liveness_bound_ms = 10000;
    std::optional<std::int64_t> starvation_bound_ms;
    std::size_t max_violations = 100;
    // --fail-means observation: a failed release observed `not-held`, so it orphans nothing.
    bool every_fail_observes = false;
};

// How long past its lease's bound a lock may still be seen held without that proving anything.
// Redis frees an expired key on the first access after its deadline (to the millisecond, on the
// server's clock, from a lease that started no earlier than the bound assumes); lockbench's own
// ZooKeeper checks sessions every 50 ms tick. What is left is the waiter's side: a poll interval
// (5-10 ms) and a refusal's reply in flight on a loaded machine. A quarter second covers them with
// room to spare, yet finds a lock stuck for half a second.
inline constexpr std::int64_t kExpiryGraceMs = 250;

class LivenessCheck {
  public:
    explicit LivenessCheck(LivenessOptions options = {});

    void on_event(const Event& event);
    // Judges what is still open (orphans, waits) at the last event's time.
    void finish(std::int64_t end_time_ns);

    // checks.liveness: {"valid", "violations" (deadlocks + starved), "processes",
    // "deadlocks", "deadlock_processes" (the orphaning holders), "starved", "starved_processes",
    // "orphaned" (holds left to their bound, by cause in "orphaned_by"), "waits", "max_wait_ms",
    // "handoff_ms": {"count", "p50", "p99", "max"}, "liveness_bound_ms", "expiry_grace_ms",
    // "starvation_bound_ms" (null: not judged)}.
    nlohmann::json result() const;
    // Up to max_violations entries of kind "deadlock" and as many of kind "starvation".
    nlohmann::json violations() const;
    std::uint64_t violation_count() const { return deadlocks_ + starved_; }

  private:
    // How a hold came to be left to its bound.
    enum class Cause : std::uint8_t { Crash, FailedRelease, InDoubtRelease, LostAcquire };
    static constexpr std::size_t kCauses = 4;
    // How an orphan ended; judged then.
    enum class Ending : std::uint8_t { Grant, Release, Superseded, EndOfHistory };

    // An open hold of record, for what its orphan has to say about it.
    struct Hold {
        std::string key;
        std::string token;
        std::int64_t granted_ns = 0;  // the latest grant of it (a re-entry renews the lease)
        std::optional<std::int64_t> lease_ms;
    };
    // A waiter that still wanted an orphaned key past its deadline.
    struct Evidence {
        std::int64_t waiter = 0;
        std::int64_t wait_start_ns = 0;
        // The moment the waiter is known to have wanted the key: a grant whose acquire began
        // earlier may have been made before it, and then nothing was stuck.
        std::int64_t at_ns = 0;
        bool refused = false;                  // answered `held` (else: still waiting)
        std::optional<std::int64_t> until_ns;  // when its wait ended
        // Acquires of the key that began before at_ns and are still in flight: each may yet
        // turn out granted (or, for a lock that may have freed, taken by a lost acquire).
        std::uint32_t unresolved = 0;
    };
    struct Orphan {
        Cause cause = Cause::Crash;
        // Nothing but a release frees it: no lease, and its holder certainly had it.
        bool stays = false;
        std::int64_t holder = 0;
        std::string token;
        std::optional<std::int64_t> granted_ns;  // none for a lost acquire
        std::int64_t orphaned_ns = 0;
        std::uint64_t orphaned_index = 0;
        std::string error;  // the failed or in-doubt release's
        std::optional<std::int64_t> lease_ms;
        std::optional<std::int64_t> bound_ns;  // when its lease frees it; none: never
        std::int64_t deadline_ns = 0;          // a waiter past this makes it a deadlock
        std::optional<Evidence> evidence;
        Ending ending = Ending::EndOfHistory;
        std::int64_t ended_ns = 0;
        std::int64_t ended_by = 0;  // the process that was granted it or released it
        // A lost acquire the library granted late (`late-grant` granted), and what its adapter's
        // release of it did: freed it (released), or failed.
        std::optional<std::int64_t> late_granted_ns;
        std::optional<std::int64_t> late_released_ns;
        std::optional<std::int64_t> late_release_failed_ns;
    };
    struct KeyState {
        std::uint32_t acquires_in_flight = 0;
        std::uint32_t open_holds = 0;  // holds of record: granted, not yet released or crashed
        std::uint64_t grants = 0;
        std::optional<std::int64_t> handoff_from_ns;
        std::optional<Orphan> orphan;
        // Ended with a waiter past the deadline, but with acquires in flight that may still
        // explain it: judged when they end.
        std::vector<Orphan> settling;
    };
    struct Wait {
        std::string key;
        std::int64_t start_ns = 0;
        std::uint64_t start_index = 0;
    };
    struct Acquiring {
        const std::string* name = nullptr;
        KeyState* key = nullptr;
        std::optional<std::int64_t> lease_ms;  // from the invoke, where the strategy has leases
        std::int64_t invoke_ns = 0;
        // A late grant recorded before this acquire's `info` (it can overtake the answer).
        std::optional<std::int64_t> late_granted_ns;
        std::string late_token;
    };
    // An acquire answered in doubt, which a library's late grant may name; then its grant.
    struct InDoubtAcquire {
        const std::string* name = nullptr;
        std::optional<std::int64_t> lease_ms;
        std::int64_t answered_ns = 0;
        std::uint64_t answered_index = 0;
        bool orphaned = false;  // counted as a lost acquire's orphan at its answer
    };
    struct Releasing {
        const std::string* name = nullptr;
        KeyState* key = nullptr;
        std::int64_t owner = 0;
        Hold hold;
        std::uint64_t grants_at_invoke = 0;
    };
    // How an acquire that began before a waiter's moment ended.
    enum class Outcome : std::uint8_t { Granted, Unknown, RefusedHeld, Failed };

    // A nemesis's `leases-renewed`: a new leader took over after a fault at fault_ns and before
    // at_ns, renewing every lease alive then by its lease plus by_ms.
    struct Renewal {
        std::int64_t fault_ns = 0;
        std::int64_t at_ns = 0;
        std::int64_t by_ms = 0;
    };

    static const char* name_of(Cause cause);

    void on_acquire(const Event& event);
    void begin_acquire(const Event& event);
    // The acquire in flight `acquiring` was answered `info`, or granted.
    void acquire_in_doubt(const Event& event, const Acquiring& acquiring);
    void acquire_granted(const Event& event, const Acquiring& acquiring);
    void renew_reentered_holds(const Event& event, const std::string& name);
    void on_release(const Event& event);
    void on_crash(const Event& event);
    void on_leases_renewed(const Event& event);
    void on_late_grant(const Event& event);
    // The library granted the in-doubt acquire `doubt` of `process` at `granted_ns` as `token`.
    void late_grant(std::int64_t process, const InDoubtAcquire& doubt, std::int64_t granted_ns,
                    const std::string& token, std::int64_t now_ns);
    // Where a late-granted orphan's bound counts from: the grant, or the answer if that was later.
    // Whether a process other than `process` has an acquire of `name` answered in doubt that no
    // late grant has claimed: it may hold the lock whenever nobody of record does.
    bool another_acquire_in_doubt(const std::string& name, std::int64_t process) const;
    static std::int64_t counted_from(const Orphan& orphan);
    // Moves the orphan's bound (and deadline) past every renewal its lease may have lived to see.
    void apply_renewals(Orphan& orphan) const;
    void end_wait(std::int64_t process, std::int64_t end_ns, bool granted);
    std::optional<Hold> take_hold(std::int64_t owner, const std::string& key);

    Orphan lost_acquire(std::int64_t process, std::int64_t now_ns, std::uint64_t index,
                        std::optional<std::int64_t> lease_ms) const;
    void set_deadline(Orphan& orphan) const;
    Orphan orphan_of(Cause cause, bool certain, std::int64_t holder, const Hold& hold,
                     std::int64_t now_ns, std::uint64_t index, std::string error) const;
    // `counted`: the hold was counted among the orphans before (a lost acquire granted late).
    void offer_orphan(const std::string& name, KeyState& key, Orphan orphan, std::int64_t now_ns,
                      bool counted = false);
    // A waiter in flight past the deadline of an orphan that certainly stays.
    void notice_waiting(KeyState& key, std::int64_t now_ns);
    void note_refusal(KeyState& key, std::int64_t waiter, std::int64_t invoke_ns,
                      std::int64_t now_ns);
    std::uint32_t unresolved_before(const KeyState& key, std::int64_t at_ns,
                                    std::int64_t waiter) const;
    // An acquire of the key that began at `invoke_ns` ended: it may explain a waiter's refusal.
    void settle(const std::string& name, KeyState& key, std::int64_t process,
                std::int64_t invoke_ns, Outcome outcome, std::int64_t now_ns);
    void end_orphan(const std::string& name, KeyState& key, Ending ending, std::int64_t now_ns,
                    std::int64_t by);
    void report_deadlock(const std::string& name, const Orphan& orphan);
    // The deadlock's message, in the order it reads: how the hold was orphaned, what should have
    // freed it, the waiter it kept waiting, and what ended it.
    static std::string how_orphaned(const Orphan& orphan);
    static std::string how_it_should_have_freed(const Orphan& orphan, std::int64_t bound_ns);
    static std::string how_the_waiter_was_stuck(const Orphan& orphan, std::int64_t until_ns,
                                                std::int64_t past_bound_ns);
    static std::string how_the_orphan_ended(const Orphan& orphan);
    static nlohmann::json deadlock_witness(const std::string& key, const Orphan& orphan,
                                           std::int64_t until_ns, std::int64_t past_bound_ns);

    LivenessOptions options_;
    HoldNesting nesting_;
    std::unordered_map<std::string, KeyState> keys_;
    std::vector<Renewal> renewals_;
    PerProcess<std::vector<Hold>> holds_;  // process -> its open holds of record
    PerProcess<Acquiring> acquiring_;      // process -> its acquire in flight
    PerProcess<Releasing> releasing_;      // process -> its release in flight that ended a hold
    PerProcess<Wait> waits_;
    PerProcess<InDoubtAcquire> in_doubt_;       // process -> its acquire answered `info`
    PerProcess<const std::string*> late_held_;  // process -> the key its library granted late
    std::unordered_set<std::int64_t> starved_processes_;
    LatencyHistogram handoffs_;
    nlohmann::json deadlock_violations_ = nlohmann::json::array();
    nlohmann::json starvation_violations_ = nlohmann::json::array();
    std::uint64_t deadlocks_ = 0;
    std::uint64_t starved_ = 0;
    std::uint64_t orphaned_ = 0;
    std::uint64_t orphaned_by_[kCauses] = {};
    std::uint64_t waits_completed_ = 0;
    std::int64_t max_wait_ns_ = 0;
    bool lock_ops_seen_ = false;
    ProcessSet violating_;
    ProcessSet deadlock_processes_;
};

}  // namespace lockbench::checker
