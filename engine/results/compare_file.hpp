#pragma once

// compare.json (`lockbench compare`, `run --repeat`), typed: the compare room builds a CompareFile
// and writes it in one place (CompareFile::to_json), and every reader - compare.txt and
// compare.html, the dashboard - reads it back through the one strict reader
// (CompareFile::from_json), so no reader decodes a setting's counts or a run's row its own way.
// The format is engine/compare/README.md's.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/report.hpp"
#include "engine/results/rate_term_outcome.hpp"

namespace lockbench {

// compare.json's `format` and `version`: a reader refuses a version it does not know.
inline constexpr const char* kCompareFormat = "lockbench-compare";
inline constexpr int kCompareVersion = 1;

// A compare.json that cannot be read: a field missing or of the wrong type, named by its JSON
// path, or a format or version this build does not know.
class CompareError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// One axis of a sweep (`--sweep FIELD=v1,v2,…`).
struct CompareAxis {
    std::string field;  // as the user typed it: "duration_ms"
    std::string path;   // as it was found: "faults[0].duration_ms"
    std::vector<double> values;
};

// How many runs a check (or the run's verdict) violated, of how many: COUNTS in the README.
struct CompareCounts {
    int violated = 0;
    int valid = 0;
    int unknown = 0;
    int not_applicable = 0;
    int runs = 0;
    std::optional<double> violation_rate;  // violated / runs; nullopt: no run
    std::pair<double, double> wilson_95;   // the rate's Wilson 95 % interval
};

// A measure over the runs: all three nullopt when no run measured it.
struct CompareSpread {
    std::optional<double> median;
    std::optional<double> min;
    std::optional<double> max;
};

// What one strategy did at one setting over its runs (settings[i].strategies.<strategy>).
struct CompareStrategyStats {
    int runs = 0;  // finished here
    CompareCounts verdict;
    std::map<std::string, CompareCounts> checks;
    std::optional<std::string> expected;      // the scenario's expectation; nullopt: none
    std::optional<int> as_expected;           // runs that met it (nullopt without an expectation)
    std::optional<bool> expectation_met;      // over the runs; nullopt: undecided
    std::vector<RateTermOutcome> rate_terms;  // the expectation's rate terms; none: []
    CompareSpread cycles_per_s;
    CompareSpread acquire_p99_ms;
    std::optional<CompareSpread> server_us_per_cycle;  // nullopt: the servers were not measured
    std::vector<std::string> run_folders;
    std::string reading;
};

// One point of the grid: where it is, and every strategy there.
struct CompareSetting {
    std::map<std::string, double> at;  // readable path -> value; empty without a sweep
    std::map<std::string, CompareStrategyStats> strategies;
};

// One finished run (runs[]), from its summary.json.
struct CompareRun {
    int round = 0;  // from 1
    std::size_t setting = 0;
    std::string strategy;
    std::string run;  // its folder, inside the comparison's
    checker::Verdict verdict = checker::Verdict::Unknown;
    std::map<std::string, checker::Verdict> checks;
    std::vector<std::string> unknown_reasons;
    std::optional<std::string> expected;
    std::optional<bool> as_expected;
    double cycles_per_s = 0;
    double acquire_p99_ms = 0;
    std::optional<double> server_us_per_cycle;                // nullopt: not measured
    nlohmann::json expected_terms = nlohmann::json::array();  // summary.json's, as written
    int exit_code = 0;
};

// A run that could not be done (failed[]): its error (docs/cli.md's exit codes).
struct CompareFailure {
    int round = 0;
    std::size_t setting = 0;
    std::string strategy;
    std::string error;
    int exit_code = 0;
};

struct CompareFile {
    std::string kind = "compare";  // or "repeat": `run --repeat`
    std::string scenario;
    std::vector<std::string> strategies;  // in the order given
    int repeat = 0;
    double duration_s = 0;  // of each run
    std::uint64_t seed = 0;
    double confidence = 0.95;
    std::vector<CompareAxis> sweep;        // empty without a sweep
    std::vector<CompareSetting> settings;  // one without a sweep; the first axis varies fastest
    std::size_t runs_planned = 0;
    std::vector<CompareRun> runs;
    std::vector<CompareFailure> failed;
    std::size_t runs_done = 0;
    bool interrupted = false;
    bool complete = false;                       // every planned run judged
    std::optional<std::string> interrupted_run;  // the run Ctrl-C stopped: kept, not counted
    // yardstick.hpp's measurement of the machine, or {"not_measured": why}; nullopt: absent.
    std::optional<nlohmann::json> yardstick;
    std::string reading;

    // The stats of `strategy` at the setting (column along the first axis, row along the
    // second); nullptr when there is none.
    const CompareStrategyStats* stats_at(const std::string& strategy, std::size_t column,
                                         std::size_t row) const;

    // Exactly compare.json's object.
    nlohmann::json to_json() const;
    // The one reader of a compare.json: every field to_json writes is required, but those
    // compare.json did not write before (runs' `server_us_per_cycle` and `expected_terms`,
    // strategies' `expectation_met`, `rate_terms` and `server_us_per_cycle`: absent reads as
    // null or []) and `interrupted_run` and `yardstick`. A `format` or `version` it does not
    // know, or a field missing or of the wrong type, is a CompareError naming `origin` and the
    // JSON path ("compare.json: /settings/0/strategies/fenced/runs: missing").
    static CompareFile from_json(const nlohmann::json& j, const std::string& origin);
};

}  // namespace lockbench
