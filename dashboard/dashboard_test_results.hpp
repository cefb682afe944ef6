#pragma once

// Real results for the view tests, made by the real `lockbench run` (the dashboard never runs a
// workload itself; only its tests do, to have something true to draw):
//   calm / set_nx_px, calm / set_nx_px_del: a lease far longer than the hold — no overlaps;
//   short-lease / set_nx_px: a 2 ms lease under a 5 ms hold — leases expire mid-hold, so
//   exclusive holds on the single key overlap (timeline T1's effect without a pause).

#include <filesystem>

namespace lockbench::dashboard::testing {

// Makes DIR/results from scratch; throws std::runtime_error if `lockbench` fails.
void make_test_results(const std::filesystem::path& dir);

// DIR/results, made first if an earlier make did not complete.
std::filesystem::path test_results();

}  // namespace lockbench::dashboard::testing
