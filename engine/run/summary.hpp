#pragma once

// summary.json (the fields docs/results.md lists) and report.txt of one run.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/json_object.hpp"
#include "checker/report.hpp"
#include "engine/clients/client.hpp"
#include "engine/run/workload.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

struct SummaryInputs {
    const Workload& workload;
    const ClientStats& stats;
    double elapsed_s = 0;
    double engine_cpu_s = 0;
    std::uint64_t history_events = 0;
    bool interrupted = false;
    bool deployment_embedded = true;
    std::vector<Endpoint> endpoints;
    std::string key_prefix;                            // on servers that are not ours
    nlohmann::json faults = nlohmann::json::array();   // fault windows
    nlohmann::json nemesis = nlohmann::json::array();  // Nemesis::report: did each fault fire
    // What else the run knows makes a "valid" unsupported (most clients' adapters broke).
    std::vector<std::string> unknown_reasons;
    // A lock library's strategy: its library, version and adapter processes; null otherwise.
    nlohmann::json adapter;
    // Lines for summary.json's `notes` beyond the workload's own (a process fault that hit
    // every client packed into the process).
    std::vector<std::string> notes;
};

// Builds the summary, judging the history at `history_path` with the checker. The verdict is
// the checker's, made `unknown` (with `verdict.unknown_reasons`) when the run cannot support a
// "valid": a fault that never took effect, no completed cycle, most clients never answered.
// A summary.json whose outcome cannot be read: a field of the wrong type, named by its JSON path.
class SummaryError : public WorkloadError {
  public:
    using WorkloadError::WorkloadError;
};

// A `valid` field read strictly: checker::to_json's encodings (true, false, "unknown",
// "not-applicable"), decoded by checker::verdict_of; anything else is an Error at `path`, where
// verdict_of alone would read a typo as "unknown".
template <class Error>
checker::Verdict verdict_at(const json_input::JsonObject<Error>& reader, const nlohmann::json& v,
                            const std::string& path) {
    const bool known = v.is_boolean() || v == "unknown" || v == "not-applicable";
    if (!known) {
        reader.fail(path,
                    "must be true, false, \"unknown\" or \"not-applicable\", not " + v.dump());
    }
    return checker::verdict_of(v);
}

// What a run's summary.json says of its outcome: the checker's verdict and, where the scenario
// expects something of the strategy, whether the run met it. The one reader of `verdict.valid`,
// `expected` and `as_expected` for the exit code, the report and the suite.
struct RunJudgement {
    checker::Verdict verdict = checker::Verdict::Unknown;
    std::optional<std::string> expected;  // nullopt: the scenario expects nothing of it
    // nullopt: nothing expected, or the run could not tell (a check said unknown; rates only).
    std::optional<bool> as_expected;

    // Throws SummaryError naming `origin` and the JSON path of a mistyped field.
    static RunJudgement of(const nlohmann::json& summary,
                           const std::string& origin = "summary.json");
};

nlohmann::json make_summary(const SummaryInputs& in, const std::filesystem::path& history_path);
std::string make_report(const nlohmann::json& summary);
// report.txt's `machine` lines from a `yardstick` entry (measured, or `not_measured` and why), with
// the run's throughput beside it when given; "" when there is none.
std::string format_machine(const nlohmann::json& yardstick,
                           std::optional<double> run_cycles_per_s = std::nullopt);

}  // namespace lockbench
