#pragma once

// A suite's row of a run or of a repeated pair (suite.json's `runs`, suite --csv's rows): one
// typed struct, written to JSON in one place (SuiteRow::to_json) and read back in one place
// (SuiteRow::from_json), so the table, JUnit, the CSV and the counting of repeated runs read
// typed fields instead of decoding `valid` and `as_expected` each their own way.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/report.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/workload.hpp"

namespace lockbench {

// A suite.json (or a row of one) that cannot be read: bad input, exit 2, naming the JSON path.
class SuiteInputError : public WorkloadError {
  public:
    using WorkloadError::WorkloadError;
};

// One check over a repeated pair's runs: how often each verdict came out.
struct CheckCounts {
    checker::VerdictCounts counts;
    int runs = 0;
};

// What a row of a pair run N times adds to a single run's fields.
struct RepeatedRuns {
    int repeat = 0;  // the suite's --repeat
    int runs = 0;    // the runs that finished
    std::vector<std::string> dirs;
    int violated_runs = 0;
    int as_expected_runs = 0;
    std::map<std::string, CheckCounts> checks;  // suite.json's object: by name
    std::vector<RateTermOutcome> rate_terms;
};

struct SuiteRow {
    std::string scenario;
    std::string strategy;
    std::string dir;  // relative to the suite's folder; a repeated pair's first run
    double cycles_per_s = 0;
    std::vector<std::uint64_t> cycles_per_second;  // the whole seconds' cycles
    double duration_s = 0;
    bool faults = false;
    double acquire_p50_ms = 0;
    double acquire_p99_ms = 0;
    std::optional<double> server_us_per_cycle;  // not measured
    std::optional<std::string> bottleneck;      // "engine", "server", "both", "neither"
    checker::Verdict valid = checker::Verdict::Unknown;
    std::uint64_t violations = 0;
    std::vector<std::string> violation_kinds;
    std::optional<checker::Verdict> linearizability;  // nullopt: "not-run"
    std::vector<std::string> unknown_reasons;
    std::optional<std::string> expected;
    // The pair's outcome, what the gate and JUnit read: nullopt when the run could not tell.
    std::optional<bool> as_expected;
    int attempts = 1;
    std::optional<double> wall_s;  // absent in older tables
    // A single run of a repeated suite (suite --csv): its round, written as "repeat".
    std::optional<int> round;
    std::optional<RepeatedRuns> repeated;

    bool ok() const { return as_expected == true; }

    nlohmann::json to_json() const;
    // The one reader of a row: a field absent in older tables takes its default, a field of the
    // wrong type is a SuiteInputError naming `origin` and the JSON path ("/runs/0/as_expected").
    static SuiteRow from_json(const nlohmann::json& j, const std::string& origin,
                              const std::string& path);
};

}  // namespace lockbench
