#include "expectation.hpp"

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

const json* check_of(const json& report, const std::string& check) {
    const std::string name = check == "starvation" ? "liveness" : check;
    if (!report.contains("checks") || !report["checks"].contains(name))
        return nullptr;
    return &report["checks"][name];
}

// The verdict of one check: true valid, false violated, nullopt unknown, not run or not
// applicable. Starvation is the liveness check's count of starved processes.
std::optional<bool> check_valid(const json& report, const std::string& check) {
    const json* c = check_of(report, check);
    if (!c)
        return std::nullopt;
    if (check == "starvation") {
        if (c->value("starved", 0) > 0)
            return false;
        if (!c->contains("starvation_bound_ms") || (*c)["starvation_bound_ms"].is_null())
            return std::nullopt;  // not judged
        return c->contains("valid") && (*c)["valid"].is_boolean() ? std::optional(true)
                                                                  : std::nullopt;
    }
    const json valid = c->value("valid", json());
    if (!valid.is_boolean())
        return std::nullopt;
    return valid.get<bool>();
}

bool involves(const json& processes, const FaultEvidence& evidence) {
    if (!evidence.aimed_at_holders)
        return true;
    if (!processes.is_array())
        return false;
    for (const auto& p : processes) {
        if (p.is_number_integer() &&
            std::find(evidence.holder_processes.begin(), evidence.holder_processes.end(),
                      p.get<std::int64_t>()) != evidence.holder_processes.end()) {
            return true;
        }
    }
    return false;
}

// A check found a violation, and (for a fault aimed at a holder) one that involves it.
std::optional<bool> violated_by_fault(const json& report, const std::string& check,
                                      const FaultEvidence& evidence) {
    const auto valid = check_valid(report, check);
    if (!valid)
        return std::nullopt;
    if (*valid)
        return false;
    const json* c = check_of(report, check);
    return involves(c->value(check == "starvation" ? "starved_processes" : "processes", json()),
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
            std::string check = colon == std::string::npos ? "" : term.substr(colon + 1);
            const bool known =
                std::find(check_names().begin(), check_names().end(), check) != check_names().end();
            if ((head != "safe" && head != "violates") || !known) {
                throw std::invalid_argument(
                    "'" + term +
                    "' is not safe, deadlocks, saves:fencing, safe:<check> or violates:<check> "
                    "(checks: mutual_exclusion|fencing|resource|liveness|linearizability|"
                    "starvation)");
            }
            e.terms.push_back({head == "safe" ? Kind::SafeCheck : Kind::Violates, check});
        }
    }
    if (e.terms.empty())
        throw std::invalid_argument("an expectation cannot be empty");
    return e;
}

std::optional<bool> Expectation::met_by(const json& report, const FaultEvidence& evidence) const {
    bool all = true;
    bool unknown = false;
    for (const auto& t : terms) {
        std::optional<bool> ok;
        switch (t.kind) {
            case Kind::Safe: {
                const auto& valid = report.contains("valid") ? report["valid"] : json();
                if (valid.is_boolean())
                    ok = valid.get<bool>();
                break;
            }
            case Kind::SafeCheck:
                ok = check_valid(report, t.check);
                break;
            case Kind::Violates:
                ok = violated_by_fault(report, t.check, evidence);
                break;
            case Kind::Saves: {
                const json* c = check_of(report, "fencing");
                if (c && check_valid(report, "fencing").has_value())
                    ok = c->value("saves", 0) > 0 &&
                         involves(c->value("saved_processes", json()), evidence);
                break;
            }
            case Kind::Deadlocks: {
                const json* c = check_of(report, "liveness");
                if (c && check_valid(report, "liveness").has_value())
                    ok = c->value("deadlocks", 0) > 0 &&
                         involves(c->value("deadlock_processes", json()), evidence);
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
