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

FaultEvidence FaultEvidence::from_nemesis_report(const std::vector<FaultFiring>& nemesis) {
    FaultEvidence e;
    for (const auto& f : nemesis) {
        if (f.missed)
            e.conclusive = false;
        if (f.aimed_at_holder()) {
            e.aimed_at_holders = true;
            if (f.processes) {
                e.holder_processes.insert(e.holder_processes.end(), f.processes->begin(),
                                          f.processes->end());
            }
        }
    }
    return e;
}

namespace {

int rate_number(const std::string& word, const std::string& term) {
    const bool digits =
        !word.empty() && word.size() <= 6 &&
        std::all_of(word.begin(), word.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits)
        throw std::invalid_argument("'" + term + "': '" + word +
                                    "' is not a whole number (a rate reads `in >= K of N`)");
    return std::stoi(word);
}

// " in >= K of N" after a term: the rate, or throws naming the whole term.
Expectation::Term::Rate parse_rate(const std::string& words, const std::string& term) {
    std::stringstream in(words);
    std::vector<std::string> w;
    for (std::string word; in >> word;)
        w.push_back(word);
    if (w.size() != 4 || (w[0] != ">=" && w[0] != "<=") || w[2] != "of")
        throw std::invalid_argument(
            "'" + term + "': a rate reads `<term> in >= K of N` or `<term> in <= K of N`");
    Expectation::Term::Rate rate{w[0] == ">=", rate_number(w[1], term), rate_number(w[3], term)};
    if (rate.n < 1 || rate.k > rate.n)
        throw std::invalid_argument("'" + term + "': a rate needs 0 <= K <= N and N >= 1");
    return rate;
}

}  // namespace

Expectation Expectation::parse(const std::string& text) {
    Expectation e;
    std::stringstream in(text);
    for (std::string written; std::getline(in, written, ',');) {
        std::string term = written;
        std::optional<Term::Rate> rate;
        if (const auto at = written.find(" in "); at != std::string::npos) {
            term = written.substr(0, at);
            rate = parse_rate(written.substr(at + 4), written);
        }
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
                    "violates:<check>[|<check>...], with `in >= K of N` after it for a rate "
                    "(checks: mutual_exclusion, fencing, resource, liveness, linearizability, "
                    "starvation)");
            }
            e.terms.push_back({head == "safe" ? Kind::SafeCheck : Kind::Violates, checks.front(),
                               std::vector<std::string>(checks.begin() + 1, checks.end())});
        }
        e.terms.back().rate = rate;
        e.terms.back().text = written;
    }
    if (e.terms.empty())
        throw std::invalid_argument("an expectation cannot be empty");
    return e;
}

bool Expectation::has_rates() const {
    return std::any_of(terms.begin(), terms.end(),
                       [](const Term& t) { return t.rate.has_value(); });
}

bool Expectation::only_rates() const {
    return !terms.empty() && std::all_of(terms.begin(), terms.end(),
                                         [](const Term& t) { return t.rate.has_value(); });
}

std::vector<std::string> Expectation::term_texts() const {
    std::vector<std::string> texts;
    for (const auto& t : terms)
        texts.push_back(t.text);
    return texts;
}

std::string Expectation::rate_texts() const {
    std::string texts;
    for (const auto& t : terms) {
        if (t.rate)
            texts += (texts.empty() ? "" : ", ") + t.text;
    }
    return texts;
}

std::vector<std::optional<bool>> Expectation::terms_met_by(const Report& report,
                                                           const FaultEvidence& evidence) const {
    std::vector<std::optional<bool>> outcomes;
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
        // A fault that never took effect leaves both safety and its absence unexplained, and a
        // run that did not do what it scheduled explains no success either: only a violation
        // found anyway (a claim of safety missed) is a definite answer.
        const bool claims_safety = t.kind == Kind::Safe || t.kind == Kind::SafeCheck;
        if (ok && !evidence.conclusive && !(claims_safety && !*ok))
            ok.reset();
        outcomes.push_back(ok);
    }
    return outcomes;
}

namespace {

// Terms composed: one definite miss decides, whatever else is unknown.
std::optional<bool> all_of(const std::vector<std::optional<bool>>& outcomes) {
    bool unknown = false;
    for (const auto& ok : outcomes) {
        if (ok && !*ok)
            return false;
        unknown = unknown || !ok;
    }
    if (unknown)
        return std::nullopt;
    return true;
}

}  // namespace

std::optional<bool> Expectation::met_by(const Report& report, const FaultEvidence& evidence) const {
    const auto outcomes = terms_met_by(report, evidence);
    std::vector<std::optional<bool>> judged;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        if (!terms[i].rate)
            judged.push_back(outcomes[i]);
    }
    if (judged.empty())
        return std::nullopt;  // only rates: they need repeated runs
    return all_of(judged);
}

std::optional<bool> Expectation::rate_met(const Term::Rate& rate, int held, int undecided,
                                          int runs) {
    if (runs <= 0)
        return std::nullopt;
    // k/runs against K/N, in integers: k * N against K * runs.
    const auto at_least = [&](int k) {
        return std::int64_t{k} * rate.n >= std::int64_t{rate.k} * runs;
    };
    const auto at_most = [&](int k) {
        return std::int64_t{k} * rate.n <= std::int64_t{rate.k} * runs;
    };
    const int low = held, high = held + undecided;
    if (rate.at_least) {
        if (at_least(low))
            return true;
        if (!at_least(high))
            return false;
    } else {
        if (at_most(high))
            return true;
        if (!at_most(low))
            return false;
    }
    return std::nullopt;
}

std::optional<bool> Expectation::met_across(
    const std::vector<std::vector<std::optional<bool>>>& runs) const {
    if (runs.empty())
        return std::nullopt;
    std::vector<std::optional<bool>> per_term;
    for (std::size_t i = 0; i < terms.size(); ++i) {
        int held = 0, undecided = 0;
        std::vector<std::optional<bool>> in_each;
        for (const auto& run : runs) {
            const std::optional<bool> ok = i < run.size() ? run[i] : std::nullopt;
            in_each.push_back(ok);
            held += ok.value_or(false);
            undecided += !ok.has_value();
        }
        per_term.push_back(
            terms[i].rate ? rate_met(*terms[i].rate, held, undecided, static_cast<int>(runs.size()))
                          : all_of(in_each));
    }
    return all_of(per_term);
}

json RepeatedJudgement::to_json() const {
    json terms = json::array();
    for (const auto& t : rate_terms)
        terms.push_back(t.to_json());
    return {{"expectation_met", expectation_met ? json(*expectation_met) : json(nullptr)},
            {"rate_terms", terms}};
}

RepeatedJudgement judge_repeated(const json& expected,
                                 const std::vector<json>& expected_terms_per_run) {
    RepeatedJudgement out;
    if (!expected.is_string())
        return out;
    Expectation e;
    try {
        e = Expectation::parse(expected.get<std::string>());
    } catch (const std::invalid_argument&) {
        return out;  // a grammar this build does not know: each run still says as_expected
    }
    std::vector<std::vector<std::optional<bool>>> outcomes;
    for (const json& terms : expected_terms_per_run) {
        std::vector<std::optional<bool>> run;
        for (const json& t : terms.is_array() ? terms : json::array()) {
            const json met = t.is_object() ? t.value("met", json()) : json();
            run.push_back(met.is_boolean() ? std::optional(met.get<bool>()) : std::nullopt);
        }
        outcomes.push_back(std::move(run));
    }
    out.expectation_met = e.met_across(outcomes);
    const int n = static_cast<int>(outcomes.size());
    for (std::size_t i = 0; i < e.terms.size(); ++i) {
        if (!e.terms[i].rate)
            continue;
        int held = 0, undecided = 0;
        for (const auto& run : outcomes) {
            const std::optional<bool> ok = i < run.size() ? run[i] : std::nullopt;
            held += ok.value_or(false);
            undecided += !ok.has_value();
        }
        out.rate_terms.push_back(
            {.term = e.terms[i].text,
             .held = held,
             .undecided = undecided,
             .runs = n,
             .met = Expectation::rate_met(*e.terms[i].rate, held, undecided, n)});
    }
    return out;
}

}  // namespace lockbench
