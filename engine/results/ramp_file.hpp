#pragma once

// ramp.json (`lockbench run --clients-ramp`), typed: the run room builds a RampFile point by
// point and writes it in one place (RampFile::to_json), ramp.txt and --csv are drawn from it, and
// the dashboard reads ramp.json back through the one reader (RampFile::from_json), so no reader
// decodes a point's throughput, fairness or verdict its own way.

#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/report.hpp"
#include "engine/results/run_summary.hpp"

namespace lockbench {

// A ramp.json that cannot be read: a field missing or of the wrong type, named by its JSON path.
class RampError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// One point of a curve: one run of the workload at one client count.
struct RampPoint {
    int clients = 0;
    double cycles_per_s = 0;
    double acquire_p50_ms = 0;
    double acquire_p99_ms = 0;
    FairnessSummary fairness;
    double engine_cpu_share = 0;
    checker::Verdict verdict = checker::Verdict::Valid;
    std::string run;  // its run folder, inside the ramp's
};

// A point that could not be run: that point's error (docs/cli.md's exit codes).
struct RampFailure {
    std::string strategy;
    int clients = 0;
    std::string error;
    int exit_code = 0;
};

// The point an interrupt cut short: its run folder is there, off the curve.
struct RampCutShort {
    std::string strategy;
    int clients = 0;
    std::string run;
};

struct RampFile {
    std::string scenario;
    std::vector<int> clients;  // every curve's client counts, as asked for
    double duration_s = 0;     // of each point
    std::map<std::string, std::vector<RampPoint>> curves;  // strategy -> points, by clients
    std::vector<RampFailure> failed;
    std::optional<RampCutShort> interrupted_point;
    bool interrupted = false;
    // yardstick.hpp's measurement of the machine, or {"not_measured": why}; nullopt: absent.
    std::optional<nlohmann::json> yardstick;

    std::size_t point_count() const;

    // Exactly ramp.json's object.
    nlohmann::json to_json() const;
    // The one reader of a ramp.json: every field to_json writes is required but `failed` (absent
    // before failed points were kept: none), `interrupted_point` and `yardstick`; one missing or
    // of the wrong type is a RampError naming `origin` and its JSON path
    // ("ramp.json: /curves/fenced/0/cycles_per_s: missing").
    static RampFile from_json(const nlohmann::json& j, const std::string& origin);
};

}  // namespace lockbench
