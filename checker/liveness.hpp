#pragma once

// Check 4, liveness:
//  (a) deadlock: a key whose holder crashed while holding it - or whose acquire got no answer
//      while nobody held it (T6) - not granted again for longer than the bound while someone
//      tried to acquire it (judged at the re-grant, or at the end). A lost acquire's lock lasts
//      at most the lease its invoke carried: then it frees itself, and the orphan ends;
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

#include "history.hpp"
#include "latency_histogram.hpp"
#include "streaming.hpp"

namespace lockbench::checker {

struct LivenessOptions {
    std::int64_t liveness_bound_ms = 10000;
    std::optional<std::int64_t> starvation_bound_ms;
    std::size_t max_violations = 100;
};

class LivenessCheck {
  public:
    explicit LivenessCheck(LivenessOptions options = {});

    void on_event(const Event& event);
    // Judges what is still open (orphans, waits) at the last event's time.
    void finish(std::int64_t end_time_ns);

    // checks.liveness: {"valid", "violations" (deadlocks + starved), "processes",
    // "deadlocks", "deadlock_processes" (the orphaning holders), "starved", "starved_processes",
    // "orphaned", "waits", "max_wait_ms", "handoff_ms": {"count", "p50", "p99", "max"},
    // "liveness_bound_ms", "starvation_bound_ms" (null: not judged)}.
    nlohmann::json result() const;
    // Up to max_violations entries of kind "deadlock" and as many of kind "starvation".
    nlohmann::json violations() const;
    std::uint64_t violation_count() const { return deadlocks_ + starved_; }

  private:
    struct Orphan {
        // Crash: the holder died holding the lock. LostAcquire: an acquire went `info` while
        // nobody held the key of record, so it may have been granted to a process that never
        // learnt it and has retired (T6) - the lock is held by nobody alive either way.
        enum class Cause { Crash, LostAcquire };
        Cause cause = Cause::Crash;
        std::int64_t holder = 0;
        std::int64_t crash_ns = 0;
        std::uint64_t crash_index = 0;
        std::optional<std::int64_t> first_waiter;  // who tried to acquire it after the crash
        std::int64_t first_wait_ns = 0;
        // LostAcquire with a lease: the lock frees itself then, whoever holds it.
        std::optional<std::int64_t> expires_ns;
    };
    struct KeyState {
        std::uint32_t acquires_in_flight = 0;
        std::uint32_t open_holds = 0;  // holds of record: granted, not yet released or crashed
        std::optional<std::int64_t> handoff_from_ns;
        std::optional<Orphan> orphan;
    };
    struct Wait {
        std::string key;
        std::int64_t start_ns = 0;
        std::uint64_t start_index = 0;
    };
    struct Acquiring {
        KeyState* key = nullptr;
        std::optional<std::int64_t> lease_ms;  // from the invoke, where the strategy has leases
    };

    void on_acquire(const Event& event);
    void on_crash(const Event& event);
    void note_waiters(KeyState& key);
    void end_wait(std::int64_t process, std::int64_t end_ns, bool granted);
    void judge_orphan(const std::string& key, const Orphan& orphan, std::int64_t until_ns,
                      const Event* regrant);
    // Judges and clears an orphan whose lease ran out by `now_ns`.
    void expire_orphan(const std::string& name, KeyState& key, std::int64_t now_ns);

    LivenessOptions options_;
    HoldNesting nesting_;
    std::unordered_map<std::string, KeyState> keys_;
    PerProcess<Acquiring> acquiring_;  // process -> its acquire in flight
    PerProcess<Wait> waits_;
    std::unordered_set<std::int64_t> starved_processes_;
    LatencyHistogram handoffs_;
    nlohmann::json deadlock_violations_ = nlohmann::json::array();
    nlohmann::json starvation_violations_ = nlohmann::json::array();
    std::uint64_t deadlocks_ = 0;
    std::uint64_t starved_ = 0;
    std::uint64_t orphaned_ = 0;
    std::uint64_t waits_completed_ = 0;
    std::int64_t max_wait_ns_ = 0;
    bool lock_ops_seen_ = false;
    ProcessSet violating_;
    ProcessSet deadlock_processes_;
};

}  // namespace lockbench::checker
