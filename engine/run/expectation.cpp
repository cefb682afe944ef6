#include "engine/run/expectation.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace lockbench {

using nlohmann::json;

namespace {

const std::vector<std::string>& check_names() {
    static const std::vector<std::string> names{
        "mutual_exclusion", "fencing", "resource", "liveness", "linearizability", "starvation"};
    return names;
}

using checker::CheckResult;
using checker::Report;
using checker::Verdict;

const CheckResult* check_of(const Report& report, const std::string& check) {
    return report.check(check == "starvation" ? "liveness" : check);
}

// The verdict of one check: true valid, false violated, nullopt unknown, not run or not
// applicable. Starvation is the liveness check's count of starved processes.
std::optional<bool> check_valid(const Report& report, const std::string& check) {
    const CheckResult* c = check_of(report, check);
    if (!c)
        return std::nullopt;
    if (check == "starvation") {
        if (c->count("starved") > 0)
            return false;
        const bool judged = c->fields.contains("starvation_bound_ms") &&
                            !c->fields["starvation_bound_ms"].is_null();
        return judged && c->verdict() != Verdict::Unknown && c->verdict() != Verdict::NotApplicable
                   ? std::optional(true)
                   : std::nullopt;
    }
    switch (c->verdict()) {
        case Verdict::Valid:
            return true;
        case Verdict::Invalid:
            return false;
        case Verdict::Unknown:
        case Verdict::NotApplicable:
            break;
    }
    return std::nullopt;
}

bool involves(const std::vector<std::int64_t>& processes, const FaultEvidence& evidence) {
    if (!evidence.aimed_at_holders)
        return true;
    return std::any_of(processes.begin(), processes.end(), [&](std::int64_t p) {
        return std::find(evidence.holder_processes.begin(), evidence.holder_processes.end(), p) !=
               evidence.holder_processes.end();
    });
}

// A check found a violation, and (for a fault aimed at a holder) one that involves it.
std::optional<bool> violated_by_fault(const Report& report, const std::string& check,
                                      const FaultEvidence& evidence) {
    const auto valid = check_valid(report, check);
    if (!valid)
        return std::nullopt;
    if (*valid)
        return false;
    return involves(check_of(report, check)
                        ->processes(check == "starvation" ? "starved_processes" : "processes"),
                    evidence);
}

}  // namespace

FaultEvidence FaultEvidence::from_nemesis_report(const json& nemesis) {
    FaultEvidence e;
    if (!nemesis.is_array())
        return e;
    for (const auto& f : nemesis) {
        if (!f.value("missed", json()).is_null())
            e.conclusive = false;
        const json target = f.value("target", json());
        if (target.is_object() && target.contains("holder")) {
            e.aimed_at_holders = true;
            for (const auto& p : f.value("processes", json::array()))
                e.holder_processes.push_back(p.get<std::int64_t>());
        }
    }
    return e;
}

Expectation Expectation::parse(const std::string& text) {
    Expectation e;
    std::stringstream in(text);
    for (std::string term; std::getline(in, term, ',');) {
        if (term == "safe") {
            e.terms.push_back({Kind::Safe, ""});
        } else if (term == "deadlocks") {
            e.terms.push_back({Kind::Deadlocks, ""});
        } else if (term == "saves:fencing") {
            e.terms.push_back({Kind::Saves, "fencing"});
        } else {
            auto colon = term.find(':');
            std::string head = term.substr(0, colon);
            std::vector<std::string> checks;
            std::stringstream alternatives(colon == std::string::npos ? ""
                                                                      : term.substr(colon + 1));
            for (std::string check; std::getline(alternatives, check, '|');)
                checks.push_back(check);
            const bool known =
                !checks.empty() && std::all_of(checks.begin(), checks.end(), [](const auto& c) {
                    return std::find(check_names().begin(), check_names().end(), c) !=
                           check_names().end();
                });
            if ((head != "safe" && head != "violates") || !known ||
                (head == "safe" && checks.size() > 1) || term.ends_with('|')) {
                throw std::invalid_argument(
                    "'" + term +
                    "' is not safe, deadlocks, saves:fencing, safe:<check> or "
                    "violates:<check>[|<check>...] "
                    "(checks: mutual_exclusion, fencing, resource, liveness, linearizability, "
                    "starvation)");
            }
            e.terms.push_back({head == "safe" ? Kind::SafeCheck : Kind::Violates, checks.front(),
                               std::vector<std::string>(checks.begin() + 1, checks.end())});
        }
    }
    if (e.terms.empty())
        throw std::invalid_argument("an expectation cannot be empty");
    return e;
}

std::optional<bool> Expectation::met_by(const Report& report, const FaultEvidence& evidence) const {
    bool all = true;
    bool unknown = false;
    for (const auto& t : terms) {
        std::optional<bool> ok;
        switch (t.kind) {
            case Kind::Safe:
                if (report.verdict == Verdict::Valid || report.verdict == Verdict::Invalid)
                    ok = report.verdict == Verdict::Valid;
                break;
            case Kind::SafeCheck:
                ok = check_valid(report, t.check);
                break;
            case Kind::Violates: {
                // One check that shows it decides; it is missed only if every check was valid.
                bool shown = false;
                bool undecided = false;
                std::vector<std::string> checks{t.check};
                checks.insert(checks.end(), t.alternatives.begin(), t.alternatives.end());
                for (const auto& check : checks) {
                    const auto violated = violated_by_fault(report, check, evidence);
                    shown = shown || violated.value_or(false);
                    undecided = undecided || !violated.has_value();
                }
                if (shown || !undecided)
                    ok = shown;
                break;
            }
            case Kind::Saves: {
                const CheckResult* c = check_of(report, "fencing");
                if (c && check_valid(report, "fencing").has_value())
                    ok = c->count("saves") > 0 &&
                         involves(c->processes("saved_processes"), evidence);
                break;
            }
            case Kind::Deadlocks: {
                const CheckResult* c = check_of(report, "liveness");
                if (c && check_valid(report, "liveness").has_value())
                    ok = c->count("deadlocks") > 0 &&
                         involves(c->processes("deadlock_processes"), evidence);
                break;
            }
        }
        // A fault that never took effect leaves both safety and its absence unexplained; only a
        // violation that was found anyway is a definite answer.
        const bool claims_safety = t.kind == Kind::Safe || t.kind == Kind::SafeCheck;
        if (ok && !evidence.conclusive && (claims_safety ? *ok : !*ok))
            ok.reset();
        if (!ok) {
            unknown = true;
        } else if (!*ok) {
            all = false;
        }
    }
    if (!all)
        return false;  // one definite miss decides, whatever else is unknown
    if (unknown || !evidence.conclusive)
        return std::nullopt;
    return true;
}

}  // namespace lockbench
