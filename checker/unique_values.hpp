#pragma once

// A register key whose every write and cas writes a value written nowhere else (lockbench's own
// resource writes; Jepsen's unique-value workloads) tells, by each read, which write it observed.
// This pass builds a linearization of such a key directly, without search - and answers valid
// only with one in hand; when it cannot, the search decides. How and why: unique_values.cpp.

#include <cstdint>
#include <optional>

#include "checker/linearizability_partition.hpp"

namespace lockbench::checker::lin {

// True: `partition` (a register key) is linearizable, and the pass built a linearization of it.
// False: the values are not unique, or the pass found none; the search has to decide.
bool linearize_unique_values(const Partition& partition, std::optional<std::int64_t> initial_value);

}  // namespace lockbench::checker::lin
