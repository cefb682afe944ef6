#pragma once

// `lockbench compare` (and `run --repeat`): one workload against several strategies, each run N
// times, interleaved - round r runs every strategy once, in an order rotated by r - so a burst of
// machine noise falls on every strategy alike rather than on whichever ran during it. With
// `--sweep`, every setting of a grid of one or two workload fields, for every strategy, N times.
//
// Everything goes into one result folder, `<out>/compare-<UTC time>-<scenario>/` (or `repeat-…`),
// which appears whole or not at all like every result: one run folder per run, exactly as
// `lockbench run` writes it (run.hpp), and beside them compare.json (its format is in
// engine/compare/README.md), compare.txt and compare.html. Interrupted, the runs that finished
// are kept and compare.json says `"complete": false`.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/compare/compare_render.hpp"  // compare.txt and compare.html
#include "engine/compare/sweep.hpp"
#include "engine/results/compare_file.hpp"  // compare.json, typed
#include "engine/run/run.hpp"

namespace lockbench {

struct CompareOptions {
    // The workload (its strategy is replaced by each of `strategies`), the servers to run on, the
    // machine measured before; `out_dir` is where the compare folder goes. `interrupt` stops it.
    RunOptions base;
    std::vector<std::string> strategies;
    int repeat = 5;
    std::vector<SweepAxis> sweep;  // at most kMaxSweepAxes
    // The folder's prefix and compare.json's `kind`: "compare", or "repeat" for `run --repeat`.
    std::string kind = "compare";
};

struct CompareOutcome {
    std::filesystem::path dir;
    CompareFile compare;  // what compare.json holds
    bool interrupted = false;
    // A run that failed (compare.failed) is that run's error, and the others go on: the
    // highest exit code of those errors (docs/cli.md, exit codes: 2, 4 or 5), 0 when none failed.
    int failure_exit_code = 0;
    // The finished runs' exit codes composed as verdicts compose: 1 (a violation or an unexpected
    // outcome) beats 3 (unknown) beats 0. What `run --repeat` exits with.
    int runs_exit_code = 0;
};

// Plans every run first (each strategy at each setting, validated as `lockbench run` would:
// WorkloadError, exit 2, before anything starts), then runs them. Throws EnvironmentError when
// the folder cannot be written; a run that fails is recorded, and the rest go on.
CompareOutcome run_compare(const CompareOptions& options);

// compare.json from its plan and the runs done: fills each setting's `strategies` (per strategy
// the k-of-n counts of every check, their Wilson intervals, throughput and acquire p99 over the
// runs, and a reading in words) and `reading`. Pure: the tests feed it runs they made up.
CompareFile summarise_compare(CompareFile compare);

}  // namespace lockbench
