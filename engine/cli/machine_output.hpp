#pragma once

// `--json` and `--csv`: a result on stdout for a script, as redis-benchmark's and memtier's
// `--csv`/`--json` print theirs; the human text then goes to stderr (docs/cli.md).

#include <filesystem>
#include <string>

#include <nlohmann/json.hpp>

#include "engine/ci/suite.hpp"
#include "engine/results/ramp_file.hpp"
#include "engine/results/run_summary.hpp"

namespace lockbench::cli {

enum class MachineOutput { None, Json, Csv };

// A result file as written (summary.json, suite.json, ramp.json): what --json prints.
std::string file_text(const std::filesystem::path& file);

// One header line and one row: a run's summary.json in the columns a spreadsheet wants.
std::string run_csv(const RunSummary& summary, const std::filesystem::path& dir);
// One header line and one row per run of a suite: its suite.json's runs (repeat 1) or, repeated,
// each of its runs with its round in `repeat` (`each_run`, SuiteOutcome::each_run); then the pairs
// that failed to run (repeated: in the round they failed), then those skipped.
std::string suite_csv(const SuiteTable& table, const std::vector<SuiteRow>& each_run,
                      const std::filesystem::path& dir);
// One header line and one row per point of a ramp's ramp.json.
std::string ramp_csv(const RampFile& ramp, const std::filesystem::path& dir);

}  // namespace lockbench::cli
