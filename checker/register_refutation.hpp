#pragma once

// Refutations of a register history that need no search (issue 32): each names the op whose
// observation no linearization can explain and the ops that prove it, in O(n log n) time whatever
// the number of ops in doubt. The search then need not run for that key: on a history with one
// impossible read and a few lost replies it would otherwise exhaust its budget first.
// Why each is sound: register_refutation.cpp.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "checker/linearizability_partition.hpp"

namespace lockbench::checker::lin {

// "unwritten-value", "stale-read" (and the lock rules', lock_refutation.hpp): the witness's
// `refuted_by`.
std::string_view rule_name(RefutationRule rule);

// The first refutable op in invoke order, or nullopt: the search has to decide.
// `initial_value`: LinearizabilityOptions::initial_value (nullopt: the register starts nil).
std::optional<Refutation> refute_register(const Partition& partition,
                                          std::optional<std::int64_t> initial_value);

}  // namespace lockbench::checker::lin
