#pragma once

// Refutations of a mutex or rwlock key that need no search (issue 32): a definite contradiction
// the token passes (lock_tokens.hpp, rwlock_tokens.hpp) get stuck on - a grant made while another
// process certainly held the lock, a `not-held` answer while its process certainly held it, an ok
// release by a process that cannot hold the lock, a `held` refusal while nobody can have held it.
// Each names the op no linearization can place and the grant that proves it, in O(n log n) time
// whatever the ops in doubt. Why each is sound: lock_refutation.cpp.

#include <optional>

#include "checker/linearizability_partition.hpp"

namespace lockbench::checker::lin {

// The refutable op whose contradiction comes first (by return), or nullopt: the search has to
// decide. `model`: Model::Mutex or Model::RwLock (any other answers nullopt).
std::optional<Refutation> refute_lock(Model model, const Partition& partition);

}  // namespace lockbench::checker::lin
