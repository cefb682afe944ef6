#pragma once

// `lockbench gate`: compares a suite run (its suite.json) with results/baseline.json and fails CI
// on an outcome that differs from its expectation, a run that went missing or failed (the suite's
// `failed` list: a run that could not be done has no outcome to pass), an interrupted suite,
// or a throughput drop that is both beyond the threshold and beyond the noise the runs measured.
//
// A suite run with --scenario/--strategy (its suite.json's "filter") is compared with the part of
// the baseline that filter selects.
//
// Throughput is compared as ratios, never as absolute numbers: the baseline may come from another
// machine, and CI runs on shared, noisy 2-core hosts. Each fault-free run's throughput (the median
// of its full per-second samples) is divided by that of a reference strategy in the same suite run
// and scenario, so a machine that is uniformly 2x slower changes nothing. A run's noise is the
// relative median absolute deviation of its per-second samples.

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/run/workload.hpp"

namespace lockbench {

// A baseline or suite.json of the wrong shape, or no suite to compare; the message names the file
// and the JSON path ("results/baseline.json: /runs/3/noise: must be a number, not a string").
// Derives from WorkloadError so the CLI maps it to exit code 2.
class GateInputError : public WorkloadError {
  public:
    using WorkloadError::WorkloadError;
};

struct GateOptions {
    // A fault-free run fails when its normalised throughput falls below baseline x (1 -
    // this/100)...
    double max_drop_pct = 20;
    // ...and the drop is also larger than this many times the combined measured noise (the noise
    // of baseline and current, each including its reference's, added in quadrature).
    double noise_factor = 3;
    // A fault-free run also fails when its acquire p99 - in machine time (p99 x the yardstick's
    // cycles/s) or as a ratio to the reference strategy's - rose by more than this: a tail has no
    // noise estimate, so only a gross rise counts, and never one of a p99 under kP99FloorMs.
    double max_p99_rise_pct = 200;
    // The strategy each scenario's throughput is normalised by; where a scenario lacks it (in the
    // baseline or the current run), the median over the fault-free strategies both runs share.
    std::string reference_strategy = "set_nx_px";
    // The report lists every cell as a table, not only those that changed or failed.
    bool verbose = false;
    // Names used in error messages and the report header (typically the file paths).
    std::string baseline_name = "baseline.json";
    std::string current_name = "suite.json";
};

struct GateResult {
    bool pass = false;
    // "gate PASS: 147 cells, 0 problems, ..." first, then each cell that changed or failed in
    // words and a legend of the numbers (verbose: a table of every cell).
    std::string report;
    nlohmann::json json;  // the same as data: {"pass", "problems", "rows": [...], ...}
};

// baseline: what make_baseline wrote; current: a suite.json. Throws GateInputError.
GateResult run_gate(const nlohmann::json& baseline, const nlohmann::json& current,
                    const GateOptions& options = {});

// What `lockbench gate --write-baseline FILE` stores, from a suite.json: per (scenario, strategy)
// the expectation, whether it injects faults, the median per-second throughput, its noise, the
// normalised throughput and the reference used; plus when, from a quick suite or not, and the
// command that refreshes it. Refuses (GateInputError) an interrupted suite or one with an outcome
// other than expected: a baseline is a known-good run, and a gate measured against a broken one
// would pass what it should fail.
nlohmann::json make_baseline(const nlohmann::json& suite_table, const GateOptions& options = {});

// The newest `suite-YYYYMMDDTHHMMSSZ` folder directly under results_dir (the names sort by time).
// The newest is taken even if it holds no suite.json (a suite that crashed): silently gating an
// older suite would pass a build that never produced results. Throws GateInputError if none.
std::filesystem::path latest_suite_dir(const std::filesystem::path& results_dir);

// Reads and parses a JSON file; a missing file or invalid JSON throws GateInputError naming it.
nlohmann::json load_gate_json(const std::filesystem::path& path);

}  // namespace lockbench
