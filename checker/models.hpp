#pragma once

// The sequential specifications the linearizability search checks a history against. Each model
// is a value type: `step(state, op)` is the state after `op`, or nullopt when `op` cannot take
// effect (or, for an observation, cannot be observed) in `state`. One model instance checks one
// key, so a state describes one lock or one register, never a map: that is what keeps states
// small enough to memoise cheaply (Porcupine's P-compositionality).

#include <algorithm>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "checker/history.hpp"

namespace lockbench::checker {

enum class OpKind : std::uint8_t { Acquire, Release, Read, Write, Cas };

// ok: took effect with its output. Observation: a `fail` the model defines (a cas that found
// another value, an acquire refused as "held", a release refused as "not-held"): it changed
// nothing, but what it saw must hold at its linearization point. Info: may take effect, with any
// output, or never.
enum class OpOutcome : std::uint8_t { Ok, Observation, Info };

inline constexpr std::int64_t kNever = std::numeric_limits<std::int64_t>::max();

struct ModelOp {
    OpKind kind = OpKind::Read;
    OpOutcome outcome = OpOutcome::Ok;
    LockMode mode = LockMode::Exclusive;
    std::int32_t process = 0;  // dense per key, so lock states fit in a few bytes
    std::int64_t value = 0;    // write: the value; cas: from; read ok: the value read
    std::int64_t cas_to = 0;
    bool read_nil = false;  // read ok: the register was absent
    // Time, for leases (HISTORY.md): the op took effect no earlier than `earliest_ns` (its
    // invoke) and no later than `latest_ns` (its return; never, for an info). An acquire asked for
    // a lease of `lease_ns` (never: none).
    std::int64_t earliest_ns = 0;
    std::int64_t latest_ns = kNever;
    std::int64_t lease_ns = kNever;
    // A release of a grant an earlier release already named (a retried unlock, T7): if that one
    // took effect, this one only acknowledges it.
    bool repeat = false;
};

// A lease that starts at `start_ns` and lasts `lease_ns` (kNever: forever) ends then.
inline std::int64_t lease_end(std::int64_t start_ns, std::int64_t lease_ns) {
    return lease_ns == kNever ? kNever : start_ns + lease_ns;
}

// Ops that leave every reading of a state that accepts them unchanged (they may drop readings
// that do not: see Readings). A `not-held` release is not one: it may end a grant whose lease
// ran out.
inline bool never_changes_state(const ModelOp& op) {
    return (op.outcome == OpOutcome::Observation && op.kind != OpKind::Release) ||
           (op.kind == OpKind::Read && op.outcome == OpOutcome::Ok);
}

// Whether a grant whose lease runs out no earlier than `expires_ns` may have ended by the time
// `op` took effect: `op` takes effect at the latest at its return. A lock model's state keeps
// `now_ns`, the earliest time the ops linearized so far can all have taken effect (ops take
// effect in linearization order, each no earlier than its invoke), and a grant's lease starts
// no earlier than that. The bounds are each the most generous, so the models accept every
// history some timing makes legal; what they reject no timing explains.
inline bool may_have_expired(std::int64_t expires_ns, const ModelOp& op) {
    return expires_ns != kNever && op.latest_ns >= expires_ns;
}

// The latest an op can take effect, given that `first_unplaced_return_ns` is the earliest return
// among the ops a search has still to place (the op among them). Ops take effect in
// linearization order, so an op takes effect no later than any op placed after it returns.
// Why it matters: bounded by its own return alone, an acquire that waited past a holder's lease
// could take the lock from that holder even while the holder's release - which returned
// milliseconds after the grant - was still to be placed after it: a timing no run can have. Every
// such acquire is dead (the release can never follow it), but with hundreds of acquires waiting
// on one key, each could take the lock from the one before, and the search explored every chain
// of them before backtracking: the memo filled and the answer was unknown. Sound: every real run
// has its ops take effect in order within their intervals, so the bound rejects only histories
// no timing explains; the brute-force oracle states the same rule.
// When a grant's lease starts, if it could only be granted once the lease of a hold it displaces
// (`expires_ns`) had run out: no earlier than that. Why it matters: the lower bound `now_ns` knows
// only invokes, so a waiter that took the lock when the lease before it ran out would otherwise
// get a lease starting up to a wait earlier (its invoke), which can run out before the grant's
// own release returned - and then every other waiter in flight could take the lock from it, and
// from each other, in any order: the search explored those chains until the memo filled (issue
// 26). Sound: the grant took effect after it saw that lease end, and a lease starts where its
// grant takes effect; the brute-force oracle states the same rule.
inline std::int64_t after_lapse(std::int64_t start_ns, std::int64_t expires_ns) {
    return std::max(start_ns, expires_ns);
}

inline std::int64_t linearized_no_later_than(std::int64_t latest_ns,
                                             std::int64_t first_unplaced_return_ns) {
    return std::min(latest_ns, first_unplaced_return_ns);
}

inline std::uint64_t mix_hash(std::uint64_t x) {
    // splitmix64's finaliser: cheap, and every input bit reaches every output bit.
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

// What a lock model knows of its lock after the ops linearized so far: every reading of it they
// leave open, sorted and distinct. Nearly always one (kept inline, so a state needs no heap). A
// holder that acquires again once its lease may have run out makes two: a re-entry if it had
// not, a new grant if it had (a release that never reached the server left the old grant to its
// lease). Only later ops can tell which, so the search keeps both rather than guess: guessing
// either way turns some histories a real lock can produce into violations.
template <class Reading>
struct Readings {
    Reading first{};
    std::vector<Reading> rest;  // each after `first`
    friend bool operator==(const Readings&, const Readings&) = default;

    template <class F>
    void for_each(F&& f) const {
        f(first);
        for (const Reading& r : rest) {
            f(r);
        }
    }
};

// A re-entrant, owner-aware lease lock. A grant lasts until its release or until its lease runs
// out, whichever comes first (HISTORY.md): another process may be granted the lock once the
// holder's lease may have run out (T1 is linearizable: the service behaved; the paused client
// broke mutual exclusion), but not while it certainly runs (T3, T4, T5 are not). A `not-held`
// release by the holder says its lease ran out first, which must be possible by then. Without a
// lease it is the classic owner-aware mutex. A nested grant to the holder counts one level
// deeper and renews its lease.
struct MutexModel {
    static constexpr bool kProcessMatters = true;
    static constexpr std::int32_t kFree = -1;
    struct Hold {
        std::int32_t holder = kFree;
        std::uint32_t depth = 0;
        std::int64_t expires_ns = kNever;
        friend auto operator<=>(const Hold&, const Hold&) = default;
    };
    struct State {
        Readings<Hold> holds;
        // Not part of what the lock is: a function of the ops linearized so far, kept here
        // because the step needs it (so it adds no memo entries).
        std::int64_t now_ns = 0;
        friend bool operator==(const State&, const State&) = default;
    };

    static State initial() { return {}; }
    static std::optional<State> step(const State& state, const ModelOp& op);
    static std::uint64_t hash(const State& state);
    static std::size_t heap_bytes(const State& state) {
        return state.holds.rest.capacity() * sizeof(Hold);
    }
};

// A re-entrant reader-writer lease lock: shared holds coexist, an exclusive hold excludes all
// others; the writer may also take shared holds (a downgrade). A release gives back the
// process's most recent kind of hold: a shared one if it has any, else the exclusive one. Each
// hold has its own lease, as MutexModel's.
struct RwLockModel {
    static constexpr bool kProcessMatters = true;
    static constexpr std::int32_t kNoWriter = -1;
    struct Reader {
        std::int32_t process = 0;
        std::uint32_t depth = 0;
        std::int64_t expires_ns = kNever;
        friend auto operator<=>(const Reader&, const Reader&) = default;
    };
    struct Holds {
        std::int32_t writer = kNoWriter;
        std::uint32_t writer_depth = 0;
        std::int64_t writer_expires_ns = kNever;
        std::vector<Reader> readers;  // sorted by process
        friend auto operator<=>(const Holds&, const Holds&) = default;
    };
    struct State {
        Readings<Holds> holds;
        std::int64_t now_ns = 0;  // as MutexModel's
        friend bool operator==(const State&, const State&) = default;
    };

    static State initial() { return {}; }
    static std::optional<State> step(const State& state, const ModelOp& op);
    static std::uint64_t hash(const State& state);
    static std::size_t heap_bytes(const State& state) {
        std::size_t bytes = state.holds.rest.capacity() * sizeof(Holds);
        state.holds.for_each(
            [&](const Holds& h) { bytes += h.readers.capacity() * sizeof(Reader); });
        return bytes;
    }
};

// Knossos's mutex: one lock, no owner and no lease. An acquire takes it when free; a release frees
// it whoever calls it, and a release of a free lock cannot happen. (An acquire refused as "held"
// observed it held; a release refused as "not-held" observed it free.)
struct UnownedMutexModel {
    static constexpr bool kProcessMatters = false;
    struct State {
        bool held = false;
        friend bool operator==(const State&, const State&) = default;
    };

    static State initial() { return {}; }
    static std::optional<State> step(const State& state, const ModelOp& op);
    static std::uint64_t hash(const State& state) {
        return state.held ? 0x68656c64ULL : 0x66726565ULL;
    }
    static std::size_t heap_bytes(const State&) { return 0; }
};

// A compare-and-set register; it starts absent ("nil"), which a read reports as null.
struct RegisterModel {
    static constexpr bool kProcessMatters = false;
    struct State {
        std::int64_t value = 0;
        bool nil = true;
        friend bool operator==(const State&, const State&) = default;
    };

    static State initial() { return {}; }
    static std::optional<State> step(const State& state, const ModelOp& op);
    static std::uint64_t hash(const State& state) {
        return state.nil ? 0x6e696cULL : mix_hash(static_cast<std::uint64_t>(state.value) + 1);
    }
    static std::size_t heap_bytes(const State&) { return 0; }
};

}  // namespace lockbench::checker
