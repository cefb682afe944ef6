#pragma once

// What a scenario expects of a strategy, and whether a run's checker report meets it.
// Grammar: a comma-separated list of `safe` (no violation at all), `safe:<check>`,
// `violates:<check>[|<check>...]`, `saves:fencing` (the fence rejected a stale write) and
// `deadlocks`, where <check> is one of the checker's checks (mutual_exclusion, fencing, resource,
// liveness, linearizability) or `starvation`. `violates:a|b` is met when either check found the
// violation: one mechanism can surface in whichever check sees it first (T8's foreign release
// overlaps the next holder's work, or - when it lands as that holder finishes - shows only as a
// release the lock service could not have answered).
//
// An expectation judges the mechanism, not only the verdict: `safe` means nothing if a fault
// never fired, and when a fault was aimed at a holder, a violation (or a save) counts only if
// the process that fault hit appears in it.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/report.hpp"

namespace lockbench {

// What the engine knows beside the history: did the run exercise what it scheduled (every fault
// took effect, clients got answers), and which processes did the faults aimed at a holder hit.
struct FaultEvidence {
    bool conclusive = true;  // every fault took effect and the run measured something
    bool aimed_at_holders = false;
    std::vector<std::int64_t> holder_processes;

    // From summary.json's `nemesis` list (Nemesis::report).
    static FaultEvidence from_nemesis_report(const nlohmann::json& nemesis);
};

struct Expectation {
    enum class Kind { Safe, SafeCheck, Violates, Saves, Deadlocks };
    struct Term {
        Kind kind;
        std::string check;  // SafeCheck, Violates, Saves
        // Violates: further checks any of which may show the violation instead of `check`.
        std::vector<std::string> alternatives = {};
    };
    std::vector<Term> terms;

    // Throws std::invalid_argument naming the bad term.
    static Expectation parse(const std::string& text);
    // True/false when the report decides every term; nullopt when some term depends on a check
    // that answered `unknown`, did not run or does not apply, or on a fault that never fired.
    std::optional<bool> met_by(const checker::Report& report,
                               const FaultEvidence& evidence = {}) const;
};

}  // namespace lockbench
