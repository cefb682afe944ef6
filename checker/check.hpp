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

#include "checker/linearizability.hpp"
#include "checker/report.hpp"

namespace lockbench::checker {

struct CheckOptions {
    Model model = Model::None;  // linearizability model; None skips check 5
    LinearizabilityOptions linearizability;
    // A lock without a lease orphaned longer than this while others wait is a deadlock.
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

// Runs every selected check over the history and composes one Report (report.hpp). A check
// that has nothing to judge in this history (no lock operations, no fencing numbers, no write
// under a lock, no op of the model) says "not-applicable" with its reason and takes no part; a
// history on which nothing applies is unknown, with the reason. Every check reports its exact
// violation count and the processes its violations involve; at most max_violations witnesses
// each are listed.
// Throws HistoryError for a malformed history, std::runtime_error when it cannot be read.
Report check_history(std::istream& in, const CheckOptions& options);
Report check_history(const std::filesystem::path& path, const CheckOptions& options);

}  // namespace lockbench::checker
