#pragma once

// The results folder as the dashboard sees it: one Run per `results/<UTC time>-<scenario>/`
// (and per hidden `.tmp-…` folder of a run still in progress), with its summary.json read by the
// engine's one strict reader (lockbench::RunSummary, engine/results) and the incidents by the
// checker's; ramp.json and compare.json by theirs (RampFile, CompareFile). Qt-free, so it is
// tested without a display. A file its reader rejects (not JSON, a field missing or of the wrong
// type) is an error naming the file and the field's path.

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/incident.hpp"
#include "checker/report.hpp"
#include "engine/results/compare_file.hpp"
#include "engine/results/ramp_file.hpp"
#include "engine/results/run_summary.hpp"

namespace lockbench::dashboard {

// A fault window (summary.json's `faults`) for a person, from the fault's fields: "pause client 1
// (process 1)", "kill etcd node 0 (leader)", never the raw JSON of the target.
std::string fault_label(const FaultWindow& window);
// Where a window ends on a chart: a fault never healed is drawn as the instant it began.
double fault_end_s(const FaultWindow& window);

struct TimePoint {
    double t = 0;
    double cycles = 0;
    double errors = 0;
};

enum class Validity { valid, invalid, unknown };

// The checker's own witness type: kind, key, its sentence (time, key, processes, tokens) and the
// evidence, read with witness_window().
using Violation = checker::Witness;

// One hold and every grant that overlapped it: the checker's own incident type.
using Incident = checker::Incident;

// What the timeline shows of an incident: from the hold's start to its last overlap (or its end).
std::pair<std::int64_t, std::int64_t> incident_window(const Incident& incident);

// A run's summary as the views draw it: summary.json as lockbench::RunSummary read it, and what
// the dashboard derives from it once - the verdict's colour, the checks that broke, the
// checker's incidents, the fault windows in words.
struct SummaryView : lockbench::RunSummary {
    Validity validity = Validity::unknown;
    // The checker's exact count (checker::Report::violation_count): never the length of the
    // witness list (verdict.witnesses, capped per check).
    std::size_t violation_count = 0;
    std::vector<Incident> incidents;           // the checker's, first ones first
    std::size_t incident_count = 0;            // all of them
    std::vector<std::string> violated_checks;  // the checks that found something

    // Cycles per second of each timeseries bucket. The last bucket of a run is partial
    // (a 2.08 s run has a 0.08 s bucket at t=2); dividing by its real length keeps the line
    // from dropping to zero at the end of every run.
    std::vector<TimePoint> rate_series() const;

    // What the run showed, in the vocabulary of `expected`: "safe", "violates:<check>,…",
    // "unknown".
    std::string outcome() const;
    // The same for a person: "safe", "mutual exclusion, resource", "unknown".
    std::string short_outcome() const;
    // Only liveness broke (deadlock or starvation): no data was at risk, the lock stopped.
    bool only_liveness_violated() const;

    // summary.json's `as_expected`: judged by the engine, never again here (null: unknown).
    std::optional<bool> met_expectation() const;
};

// The view of a typed summary (of a run still going, too: see MainWindow::updateLiveSummary).
// Throws SummaryError naming `origin` and the JSON path of an incident the checker cannot read.
SummaryView view_of(lockbench::RunSummary summary, const std::string& origin);

// summary.json through RunSummary::from_json: a SummaryError names `origin` ("<folder>/
// summary.json") and the path ("/latency_ms/acquire/p50: must be a number, not a string").
SummaryView read_summary(const nlohmann::json& j, const std::string& origin);

struct Run {
    std::filesystem::path dir;
    std::string name;          // folder name
    bool in_progress = false;  // a `.tmp-…` folder: only history.jsonl, growing
    std::optional<SummaryView> summary;
    nlohmann::json workload;          // workload.json, or null
    std::vector<std::string> errors;  // "<folder>/summary.json: …"

    std::string strategy() const;  // summary, else workload.json, else "?"
    std::string scenario() const;  // summary, else workload.json, else from the folder name
    std::filesystem::path history_path() const { return dir / "history.jsonl"; }
};

// A `lockbench run --clients-ramp` folder: its ramp.json as lockbench::RampFile read it.
struct Ramp : lockbench::RampFile {
    std::filesystem::path dir;
    std::string name;  // folder name
};

// A comparison's folder (`lockbench compare`, `run --repeat`): its compare.json as
// lockbench::CompareFile read it.
struct Comparison : lockbench::CompareFile {
    std::filesystem::path dir;
    std::string name;  // folder name
};

struct ResultsScan {
    std::filesystem::path dir;
    std::vector<Run> runs;                // sorted by folder name, i.e. by start time
    std::vector<Ramp> ramps;              // finished ramps (their runs are not in `runs`), by time
    std::vector<Comparison> comparisons;  // finished comparisons (their runs are in `runs`)
    std::vector<std::string> errors;      // problems with the folder itself or with any run
};

// Never throws: every problem becomes a message in ResultsScan::errors / Run::errors. A ramp's
// own folder (one holding ramp.json) scans as that ramp, its point runs kept out of `runs`; a
// comparison's folder (compare.json) as that comparison, its runs in `runs`.
ResultsScan scan_results(const std::filesystem::path& dir);

// Reads one run folder (finished or `.tmp-…`).
Run load_run(const std::filesystem::path& dir);

// The time range a violation's witness covers, in ns since run start: the smallest and largest
// integer found under any key naming a time ("start", "end", "time", "*_ns"). The checker's exact
// witness shape is not fixed yet, so this reads whatever it finds.
std::optional<std::pair<std::int64_t, std::int64_t>> witness_window(const nlohmann::json& witness);

// Process ids named in a witness (any integer under a key "process"), for highlighting rows.
std::vector<std::int64_t> witness_processes(const nlohmann::json& witness);

}  // namespace lockbench::dashboard
