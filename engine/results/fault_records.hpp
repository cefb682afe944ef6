#pragma once

// What the nemesis leaves in a run's summary.json, typed: the fault windows (`faults`) and, for
// each scheduled fault, whether it fired (`nemesis`). The nemesis room builds them, RunSummary
// writes and reads them (its one strict reader names the JSON path of a bad field), and
// report.txt, the expectation's evidence and the dashboard read their fields. A fault's target
// stays the JSON its fault class wrote - {"client":1,"process":1}, "leader", {"holder":"k0"} -
// since every class has its own shape; describe_target puts any of them in words.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench {

// A fault's target in words, for report.txt and the dashboard: {"client":1,"process":1} ->
// "client 1 (process 1)", {"holder":"k0"} -> "the holder of k0", {"node":0,"role":"leader"} ->
// "node 0 (leader)", "leader" -> "leader".
std::string describe_target(const nlohmann::json& target);

// When a fault acted: from start_s to end_s, in seconds since the run started.
struct FaultWindow {
    std::string fault;
    nlohmann::json target;
    double start_s = 0;
    std::optional<double> end_s;  // none: not healed before the run ended (written null)

    nlohmann::json to_json() const;
};

// A scheduled fault: how often it was due before the run ended and how often it took effect.
struct FaultFiring {
    std::string fault;
    nlohmann::json target;
    std::optional<std::string> point;  // the checkpoint a holder fault waits for
    double at_s = 0;
    int due = 0;
    int took_effect = 0;
    // Why some firings never took effect; none when all did.
    std::optional<std::string> missed;
    // The processes a fault aimed at clients hit; none for a fault aimed elsewhere.
    std::optional<std::vector<std::int64_t>> processes;

    // Aimed at whoever held a key when it fired: which process that was is only known then.
    bool aimed_at_holder() const;
    nlohmann::json to_json() const;
};

}  // namespace lockbench
