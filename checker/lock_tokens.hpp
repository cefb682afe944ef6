#pragma once

// A mutex key whose every grant carries a token no other grant carries, and whose every release
// names the grant it belongs to (lockbench's own histories), tells which hold each op is about.
// Two passes use that before (instead of) the search. How and why: lock_tokens.cpp.

#include <cstddef>
#include <cstdint>
#include <optional>
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

// The first of `grant_returns` (indices into `ops`, ordered by return) to return after `seq`,
// other than `except`; nullptr when none does. Both token passes ask it of a refusal's grant.
const SearchOp* next_grant_return(const std::vector<SearchOp>& ops,
                                  const std::vector<std::uint32_t>& grant_returns,
                                  std::uint64_t seq, std::uint32_t except);

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
