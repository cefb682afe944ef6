#pragma once

// The checker's report: one type that the engine, the suite, the gate and the dashboard share,
// serialised to JSON in one place (Report::to_json) and read back in one place
// (Report::from_json). google/benchmark builds one Run and hands it to its reporters; Porcupine
// returns one CheckResult: so here.

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::checker {

// Jepsen's composition: Invalid beats Unknown beats Valid; a check that does not apply takes no
// part (and a report of nothing but those is Unknown: nothing was judged).
enum class Verdict : std::uint8_t { NotApplicable, Valid, Unknown, Invalid };

Verdict combine(Verdict a, Verdict b);
// The one decoding of a `valid` field: true, false, "unknown", "not-applicable"; anything else
// (missing, malformed) is Unknown.
Verdict verdict_of(const nlohmann::json& valid);
// The encoding: true, false, "unknown", "not-applicable".
nlohmann::json to_json(Verdict verdict);
// For people: "VALID", "INVALID", "UNKNOWN", "N/A".
std::string_view verdict_word(Verdict verdict);
// How often each verdict came out over repeated runs (a repeated suite's cell, compare's table).
struct VerdictCounts {
    int violated = 0, valid = 0, unknown = 0, not_applicable = 0;
    void add(Verdict verdict);
    int runs() const { return violated + valid + unknown + not_applicable; }
};
// What `lockbench check` and a run without an expectation exit with: 0 valid, 1 invalid,
// 3 unknown (or nothing judged).
int exit_code(Verdict verdict);

// One check's result: its verdict and counts, typed where every reader needs them; the rest of
// what the check reported stays in `fields` (as the check wrote it).
struct CheckResult {
    std::string name;
    nlohmann::json fields = nlohmann::json::object();

    Verdict verdict() const { return verdict_of(fields.value("valid", nlohmann::json())); }
    // The exact number of violations the check found (its witnesses may be fewer).
    std::uint64_t violations() const { return count("violations"); }
    // A non-negative integer field, 0 when absent or not one.
    std::uint64_t count(std::string_view field) const;
    double number(std::string_view field) const;
    // The processes its violations involve (or another list of process ids it reports).
    std::vector<std::int64_t> processes(std::string_view field = "processes") const;
    // Why it does not apply, or why it is unknown; empty when neither.
    std::string reason() const { return fields.value("reason", std::string()); }
};

// One listed violation: which check found it, on which key, in one sentence with times, processes
// and tokens, and the check's own evidence (its shape is the check's, documented in its header).
struct Witness {
    std::string kind;  // "mutual_exclusion", "fencing", "resource", "deadlock", …
    std::string key;
    std::string message;
    nlohmann::json evidence = nullptr;  // "witness" in JSON

    // {"kind", "key", "message", "witness"}
    nlohmann::json to_json() const;
    // Lenient: a field missing or of another type reads as empty.
    static Witness from_json(const nlohmann::json& j);
};

// Client ops whose `f` no check reads (`lock` for `acquire`, say): ignored, and said so, one entry
// per distinct f.
struct IgnoredOps {
    std::string f;
    std::uint64_t count = 0;
    std::uint64_t first_line = 0;  // the history.jsonl line of the first (0: not known)
    std::string first;  // where the first was: "line 3" (an EDN history: "line 3, column 2")
};

struct Report {
    Verdict verdict = Verdict::Unknown;
    std::uint64_t events = 0;
    std::vector<CheckResult> checks;           // in the order checks are described
    std::vector<Witness> witnesses;            // listed violations, capped per check
    std::vector<std::string> unknown_reasons;  // why a verdict could not be given
    std::optional<std::string> error;          // the history could not be read
    std::vector<IgnoredOps> ignored_ops;       // in the order each f first appeared

    // The checks in the order the reports describe them.
    static const std::vector<std::string>& check_order();
    // `names` in that order, then any this build does not know (by name): the one order of every
    // table and list of checks (compare's, a repeated suite's).
    static std::vector<std::string> in_check_order(const std::set<std::string>& names);

    const CheckResult* check(std::string_view name) const;
    // Exact: the sum of every check's count (never the length of the capped witness list).
    std::uint64_t violation_count() const;
    // A reason the run cannot support a verdict: a valid verdict becomes unknown; a violation
    // stays a violation (false beats unknown).
    void add_unknown_reason(std::string why);
    // Recomputes `verdict` from the checks (and the reasons).
    void compose();

    // {"valid", "events", "violation_count", "checks": {name: fields}, "violations": [...],
    //  "unknown_reasons": [...] (when any), "error": "..." (when any),
    //  "ignored_ops": [{"f", "count", "first"}] (when any)}
    nlohmann::json to_json() const;
    // Reads what to_json wrote (summary.json's `verdict`); lenient about what it does not know.
    static Report from_json(const nlohmann::json& j);
};

// The readable form, for `lockbench check` and report.txt.
std::string format_report(const Report& report);

}  // namespace lockbench::checker
