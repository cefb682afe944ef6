#pragma once

// An rwlock key whose every grant carries a token no other grant carries, and whose every release
// names the grant it belongs to (lockbench's own histories), linearized without the search where
// the tokens pin the order. How and why: rwlock_tokens.cpp.

#include "checker/linearizability_partition.hpp"

namespace lockbench::checker::lin {

// True: `partition` (an rwlock key) is linearizable, and the pass built a linearization of it.
// False: the tokens do not name the grants, or the pass found none; the search has to decide (a
// false is never a verdict: the pass proves only linearizability).
bool linearize_rwlock_tokens(const Partition& partition);

}  // namespace lockbench::checker::lin
