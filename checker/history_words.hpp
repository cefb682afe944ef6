#pragma once

// The words a history's `error` field uses for the failure conditions the checker gives meaning
// to (checker/HISTORY.md): a `fail` with one of the first three is an observation the models
// must explain; any other `fail` did not happen. The engine writes them, the checker reads them:
// one spelling, here.

#include <string_view>

namespace lockbench::history {

// An acquire refused because someone held the lock.
inline constexpr std::string_view kHeld = "held";
// A release refused because the caller did not hold the lock (any more).
inline constexpr std::string_view kNotHeld = "not-held";
// A cas refused because the register did not hold `from`.
inline constexpr std::string_view kMismatch = "mismatch";
// A fenced resource refused a write whose fencing number was stale: a save.
inline constexpr std::string_view kStaleFence = "stale-fence";

}  // namespace lockbench::history
