#pragma once

// A mutex key whose every grant carries a token no other grant carries, and whose every release
// names the grant it belongs to (lockbench's own histories), tells which hold each op is about.
// Two passes use that before (instead of) the search. How and why: lock_tokens.cpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "checker/linearizability_partition.hpp"

namespace lockbench::checker::lin {

// An acquire that took the lock (answered ok, or in doubt), and one refused (`held`): what the
// token passes and the refutations tell apart.
inline bool is_grant(const SearchOp& op) {
    return op.op.kind == OpKind::Acquire && op.op.outcome != OpOutcome::Observation;
}
inline bool is_refusal(const SearchOp& op) {
    return op.op.kind == OpKind::Acquire && op.op.outcome == OpOutcome::Observation;
}

// For each op of `partition` (a lock key), the partition index of the grant its release names
// (-1: none, or not a release); nullopt when the tokens do not name the grants: an ok acquire
// without a token, a token granted twice, or a release naming no grant of the key.
std::optional<std::vector<std::int64_t>> grants_named(const Partition& partition);

// Whether grant `g`, placed at model time `now_ns` for a refusal returning at `seq`, is over
// before the next of `grant_returns` (indices into `ops`, ordered by return) returns, so that grant
// does not find it held (and take an ok grant over, which its release could then never end): an
// ok grant when its first release is called by then (`first_release_call`, that call's seq;
// kNeverReturned when it has none), one in doubt when its lease may have run out. Both token
// passes ask it of a refusal's grant.
bool gone_before_next_grant(const std::vector<SearchOp>& ops,
                            const std::vector<std::uint32_t>& grant_returns, std::uint32_t g,
                            std::uint64_t seq, std::int64_t now_ns,
                            std::uint64_t first_release_call);

// The grants called and not placed yet, as both token passes try them: the ok ones by return,
// the ones in doubt by lease (the shortest first).
struct GrantsInFlight {
    std::set<std::pair<std::uint64_t, std::uint32_t>> ok;
    std::set<std::pair<std::int64_t, std::uint32_t>> in_doubt;

    // Grant ops[i] was called / was placed.
    void add(const SearchOp& op, std::uint32_t i) {
        if (op.info) {
            in_doubt.insert({op.op.lease_ns, i});
        } else {
            ok.insert({op.return_seq, i});
        }
    }
    void remove(const SearchOp& op, std::uint32_t i) {
        ok.erase({op.return_seq, i});
        in_doubt.erase({op.op.lease_ns, i});
    }
};

// How many grants in flight (of each kind) a refusal with the lock free tries before a token pass
// gives up: each try that fails costs a model step, and with hundreds of waiters in flight trying
// them all would make the pass quadratic.
inline constexpr int kGrantsTried = 8;
// How many grants in flight that must come first a grant tries to place before itself (each costs
// two model steps).
inline constexpr std::size_t kEarlyGrantsTried = 8;

// The order both token passes sweep a key's ops in, and the returns they bound each step by.
class TokenSweep {
  public:
    struct Point {
        std::uint64_t seq;
        std::uint32_t op;
        bool call;  // false: the op's return
    };
    // Every op's call, and the return of each of the first `required` ops.
    TokenSweep(const std::vector<SearchOp>& ops, std::size_t required);

    const std::vector<Point>& points() const { return points_; }  // by time
    // The required grants, by return.
    const std::vector<std::uint32_t>& grant_returns() const { return grant_returns_; }
    // The latest time the first required op (by return) not `placed` yet may take effect at;
    // kNever when every one is placed. `placed` only grows between calls.
    std::int64_t bound_ns(const std::vector<bool>& placed);

  private:
    const std::vector<SearchOp>& ops_;
    std::vector<Point> points_;
    std::vector<std::uint32_t> by_return_;  // required ops, by return
    std::vector<std::uint32_t> grant_returns_;
    std::size_t next_return_ = 0;
};

// True: `partition` (a mutex key) is linearizable, and the pass built a linearization of it.
// False: the tokens do not name the grants, or the pass found none; the search has to decide.
bool linearize_lock_tokens(const Partition& partition);

// Removes from `partition` (a mutex key) the in-doubt acquires no linearization needs: it stays
// linearizable exactly when it was. Returns how many it removed. Call before the search, after
// linearize_lock_tokens (which needs no such help).
std::size_t drop_unneeded_acquires(Partition& partition);

}  // namespace lockbench::checker::lin
