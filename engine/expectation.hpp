#pragma once

// What a scenario expects of a strategy, and whether a run's checker report meets it.
// Grammar: a comma-separated list of `safe` (no violation at all), `safe:<check>`,
// `violates:<check>` and `deadlocks`, where <check> is one of the checker's checks
// (mutual_exclusion, fencing, resource, liveness, linearizability) or `starvation`.

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench {

struct Expectation {
    enum class Kind { Safe, SafeCheck, Violates, Deadlocks };
    struct Term {
        Kind kind;
        std::string check;  // SafeCheck, Violates
    };
    std::vector<Term> terms;

    // Throws std::invalid_argument naming the bad term.
    static Expectation parse(const std::string& text);
    // True/false when the report decides every term; nullopt when some term depends on a check
    // that answered `unknown` or did not run.
    std::optional<bool> met_by(const nlohmann::json& report) const;
};

}  // namespace lockbench
