#pragma once

// summary.json (DESIGN.md's fields) and report.txt of one run.

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "client.hpp"
#include "redis_connection.hpp"
#include "workload.hpp"

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
    nlohmann::json faults = nlohmann::json::array();  // fault windows
};

// Builds the summary, judging the history at `history_path` with the checker.
nlohmann::json make_summary(const SummaryInputs& in, const std::filesystem::path& history_path);
std::string make_report(const nlohmann::json& summary);

}  // namespace lockbench
