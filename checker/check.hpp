#pragma once

// `lockbench check`: every check of a history in one streaming pass, composed into one report.
// Jepsen's rule composes the verdicts: false beats unknown beats true.

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "linearizability.hpp"

namespace lockbench::checker {

struct CheckOptions {
    Model model = Model::None;  // linearizability model; None skips check 5
    LinearizabilityOptions linearizability;
    // A key orphaned (holder crashed) longer than this while others wait is a deadlock.
    std::int64_t liveness_bound_ms = 10000;
    // A process that waits longer than this for a grant is starved; nullopt: not judged.
    std::optional<std::int64_t> starvation_bound_ms;
    std::size_t max_violations = 100;  // witnesses kept per check; counts stay exact
    // Only these checks (mutual_exclusion, fencing, resource, liveness, linearizability);
    // nullopt: all of them (linearizability only with a model).
    std::optional<std::vector<std::string>> only;
};

// The checks `only` may name, in report order.
const std::vector<std::string>& check_names();

// The report:
// {"valid": true|false|"unknown", "events": N, "violation_count": N (exact, every check),
//  "unknown_reasons": [...] (when no check applies),
//  "checks": {"mutual_exclusion": {"valid": bool, "violations": n, "holds": n, ...},
//             "fencing": {"valid": bool, "violations": n, "saves": n, ...},
//             "resource": {"valid": bool, "violations": n, ...},
//             "liveness": {"valid": bool, "deadlocks": n, "starved": n, "max_wait_ms": x,
//                          "handoff_ms": {"count", "p50", "p99", "max"}, ...},
//             "linearizability": {...}   (only when a model was asked for)},
//  where a check that has nothing to judge in this history (no lock operations, no fencing
//  numbers, no write under a lock) says {"valid": "not-applicable", "reason": "..."} and takes
//  no part in the verdict; every check lists "processes" that took part in its violations,
//  "violations": [{"kind": "mutual_exclusion"|"fencing"|"resource"|"deadlock"|"starvation"|
//                  "linearizability", "key": "...", "message": "one readable line",
//                  "witness": {...}}, ...]}
// Throws HistoryError for a malformed history, std::runtime_error when it cannot be read.
nlohmann::json check_history(std::istream& in, const CheckOptions& options);
nlohmann::json check_history(const std::filesystem::path& path, const CheckOptions& options);

// The exact number of violations a report found: the sum of its checks' counts (its witness
// list keeps at most max_violations per check), or the list's length for a report without them.
std::uint64_t violation_count(const nlohmann::json& report);

// The readable form of a report, for `lockbench check` without --json and for report.txt.
std::string format_report(const nlohmann::json& report);

}  // namespace lockbench::checker
