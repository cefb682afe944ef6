#pragma once

// One run's summary (run_summary.hpp), made from what the run measured and the checker's
// verdict, and its report.txt.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/clients/client.hpp"
#include "engine/results/run_summary.hpp"
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
    std::string key_prefix;            // on servers that are not ours
    std::vector<FaultWindow> faults;   // fault windows
    std::vector<FaultFiring> nemesis;  // Nemesis::report: did each fault fire
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
RunSummary make_summary(const SummaryInputs& in, const std::filesystem::path& history_path);
// report.txt.
std::string make_report(const RunSummary& summary);
// report.txt's verdict line ("verdict     INVALID, 3 violation(s) (2 listed)") and, with an
// expectation, its line saying whether the run met it ("" without one): what `demo` shows under
// the story.
std::string verdict_line(const RunSummary& summary);
std::string expected_line(const RunSummary& summary);
// report.txt's `machine` lines from a `yardstick` entry (measured, or `not_measured` and why), with
// the run's throughput beside it when given; "" when there is none.
std::string format_machine(const nlohmann::json& yardstick,
                           std::optional<double> run_cycles_per_s = std::nullopt);

}  // namespace lockbench
