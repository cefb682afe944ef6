#pragma once

// What lockbench does with a workload file a user hands it (`run --workload`, a scenario of
// `suite`), shared by the libFuzzer program (clang, LOCKBENCH_BUILD_FUZZERS) and the regression
// test that replays every input it found in every build. The contract: a text is either a
// workload or rejected with a WorkloadError (exit 2); any other exception escapes, and a crash, a
// sanitizer report or a hang is a bug too.

#include <string_view>

namespace lockbench::fuzz {

// Parsed, resolved and validated as a run does before it starts anything, then written back as
// its workload.json. True when it is a workload, false when rejected.
bool load_workload(std::string_view text);

}  // namespace lockbench::fuzz
