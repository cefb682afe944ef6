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
// Where a race makes one run unreliable, a term can be stated as a rate over repeated runs:
// `<term> in >= K of N` (the term holds in at least K/N of the runs) or `<term> in <= K of N` (in
// at most K/N of them), e.g. `violates:mutual_exclusion in >= 1 of 5`. A rate is judged only over
// runs (`run --repeat`, `suite --repeat`, `compare`): with n runs, `>= K of N` holds when
// k/n >= K/N, where k counts the runs in which the term held (runs that could not decide it count
// for it only if that would change nothing). A single run leaves its rate terms unjudged and says
// so; its other terms are judged as before, and one with only rate terms is unknown (needs
// --repeat). Over repeated runs, a term without a rate must hold in every run.
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
#include "engine/results/fault_records.hpp"
#include "engine/results/rate_term_outcome.hpp"  // RateTermOutcome

namespace lockbench {

// What the engine knows beside the history: did the run exercise what it scheduled (every fault
// took effect, clients got answers), and which processes did the faults aimed at a holder hit.
struct FaultEvidence {
    bool conclusive = true;  // every fault took effect and the run measured something
    bool aimed_at_holders = false;
    std::vector<std::int64_t> holder_processes;

    // From summary.json's `nemesis` list (Nemesis::report).
    static FaultEvidence from_nemesis_report(const std::vector<FaultFiring>& nemesis);
};

struct Expectation {
    enum class Kind { Safe, SafeCheck, Violates, Saves, Deadlocks };
    struct Term {
        Kind kind;
        std::string check;  // SafeCheck, Violates, Saves
        // Violates: further checks any of which may show the violation instead of `check`.
        std::vector<std::string> alternatives = {};
        // `in >= K of N` / `in <= K of N`: judged over repeated runs only.
        struct Rate {
            bool at_least = true;
            int k = 0;
            int n = 1;
        };
        std::optional<Rate> rate = std::nullopt;
        std::string text = {};  // as written, rate included
    };
    std::vector<Term> terms;

    bool has_rates() const;
    // Every term has a rate: no single run decides it (each run's as_expected is null).
    bool only_rates() const;
    // The terms as written ("violates:mutual_exclusion in >= 1 of 5"), in order.
    std::vector<std::string> term_texts() const;
    // The rate terms as written, joined by ", ": what a single run leaves unjudged.
    std::string rate_texts() const;

    // Throws std::invalid_argument naming the bad term.
    static Expectation parse(const std::string& text);
    // True/false when the report decides every term; nullopt when some term depends on a check
    // that answered `unknown`, did not run or does not apply, or on a fault that never fired.
    // Rate terms take no part: with only rate terms, nullopt (a rate needs repeated runs).
    std::optional<bool> met_by(const checker::Report& report,
                               const FaultEvidence& evidence = {}) const;
    // Each term's outcome in one run, rates ignored (summary.json's `expected_terms`).
    std::vector<std::optional<bool>> terms_met_by(const checker::Report& report,
                                                  const FaultEvidence& evidence = {}) const;
    // Over repeated runs, from each run's terms_met_by: a term without a rate must hold in every
    // run, a rate term at its rate. nullopt when no run is given or the runs cannot decide.
    std::optional<bool> met_across(const std::vector<std::vector<std::optional<bool>>>& runs) const;
    // One rate term over the runs: true, false, or nullopt when the undecided runs could tip it.
    static std::optional<bool> rate_met(const Term::Rate& rate, int held, int undecided, int runs);
};

// An expectation over repeated runs (Expectation::met_across). Without an expectation, or one this
// build cannot read, `expectation_met` is nullopt and `rate_terms` empty.
struct RepeatedJudgement {
    std::optional<bool> expectation_met;
    std::vector<RateTermOutcome> rate_terms;

    // {"expectation_met": true | false | null, "rate_terms": [RateTermOutcome::to_json, ...]}
    nlohmann::json to_json() const;
};

// From each run's summary.json `expected_terms`.
RepeatedJudgement judge_repeated(const nlohmann::json& expected,
                                 const std::vector<nlohmann::json>& expected_terms_per_run);

}  // namespace lockbench
