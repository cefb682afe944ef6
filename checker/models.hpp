#pragma once

// The sequential specifications the linearizability search checks a history against. Each model
// is a value type: `step(state, op)` is the state after `op`, or nullopt when `op` cannot take
// effect (or, for an observation, cannot be observed) in `state`. One model instance checks one
// key, so a state describes one lock or one register, never a map: that is what keeps states
// small enough to memoise cheaply (Porcupine's P-compositionality).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "history.hpp"

namespace lockbench::checker {

enum class OpKind : std::uint8_t { Acquire, Release, Read, Write, Cas };

// ok: took effect with its output. Observation: a `fail` the model defines (a cas that found
// another value, an acquire refused as "held", a release refused as "not-held"): it changed
// nothing, but what it saw must hold at its linearization point. Info: may take effect, with any
// output, or never.
enum class OpOutcome : std::uint8_t { Ok, Observation, Info };

struct ModelOp {
    OpKind kind = OpKind::Read;
    OpOutcome outcome = OpOutcome::Ok;
    LockMode mode = LockMode::Exclusive;
    std::int32_t process = 0;  // dense per key, so lock states fit in a few bytes
    std::int64_t value = 0;    // write: the value; cas: from; read ok: the value read
    std::int64_t cas_to = 0;
    bool read_nil = false;  // read ok: the register was absent
};

// Observations: in every state where the model accepts them, they leave it unchanged.
inline bool never_changes_state(const ModelOp& op) {
    return op.outcome == OpOutcome::Observation ||
           (op.kind == OpKind::Read && op.outcome == OpOutcome::Ok);
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

// A re-entrant, owner-aware mutex without leases: a lease that expires server-side is a state
// change no op shows, so a grant to another process before the holder released is exactly what
// this model rejects (T1).
struct MutexModel {
    static constexpr bool kProcessMatters = true;
    static constexpr std::int32_t kFree = -1;
    struct State {
        std::int32_t holder = kFree;
        std::uint32_t depth = 0;
        friend bool operator==(const State&, const State&) = default;
    };

    static State initial() { return {}; }
    static std::optional<State> step(const State& state, const ModelOp& op);
    static std::uint64_t hash(const State& state) {
        return mix_hash((std::uint64_t{static_cast<std::uint32_t>(state.holder)} << 32) |
                        state.depth);
    }
    static std::size_t heap_bytes(const State&) { return 0; }
};

// A re-entrant reader-writer lock: shared holds coexist, an exclusive hold excludes all others;
// the writer may also take shared holds (a downgrade). A release gives back the process's most
// recent kind of hold: a shared one if it has any, else the exclusive one.
struct RwLockModel {
    static constexpr bool kProcessMatters = true;
    static constexpr std::int32_t kNoWriter = -1;
    struct State {
        std::int32_t writer = kNoWriter;
        std::uint32_t writer_depth = 0;
        std::vector<std::pair<std::int32_t, std::uint32_t>> readers;  // sorted by process
        friend bool operator==(const State&, const State&) = default;
    };

    static State initial() { return {}; }
    static std::optional<State> step(const State& state, const ModelOp& op);
    static std::uint64_t hash(const State& state);
    static std::size_t heap_bytes(const State& state) {
        return state.readers.capacity() * sizeof(state.readers[0]);
    }
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
