#include "expectation.hpp"

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

bool has_violation_kind(const json& report, const std::string& kind) {
    if (!report.contains("violations"))
        return false;
    for (const auto& v : report["violations"]) {
        if (v.value("kind", "") == kind)
            return true;
    }
    return false;
}

// The verdict of one check: true valid, false violated, nullopt unknown or not run.
std::optional<bool> check_valid(const json& report, const std::string& check) {
    if (check == "starvation") {
        if (has_violation_kind(report, "starvation"))
            return false;
        return report.contains("checks") && report["checks"].contains("liveness")
                   ? std::optional(true)
                   : std::nullopt;
    }
    if (!report.contains("checks") || !report["checks"].contains(check))
        return std::nullopt;
    const auto& valid = report["checks"][check]["valid"];
    if (!valid.is_boolean())
        return std::nullopt;
    return valid.get<bool>();
}

}  // namespace

Expectation Expectation::parse(const std::string& text) {
    Expectation e;
    std::stringstream in(text);
    for (std::string term; std::getline(in, term, ',');) {
        if (term == "safe") {
            e.terms.push_back({Kind::Safe, ""});
        } else if (term == "deadlocks") {
            e.terms.push_back({Kind::Deadlocks, ""});
        } else {
            auto colon = term.find(':');
            std::string head = term.substr(0, colon);
            std::string check = colon == std::string::npos ? "" : term.substr(colon + 1);
            bool known = false;
            for (const auto& n : check_names())
                known = known || n == check;
            if ((head != "safe" && head != "violates") || !known) {
                throw std::invalid_argument(
                    "'" + term +
                    "' is not safe, deadlocks, safe:<check> or violates:<check> "
                    "(checks: mutual_exclusion|fencing|resource|liveness|"
                    "linearizability|starvation)");
            }
            e.terms.push_back({head == "safe" ? Kind::SafeCheck : Kind::Violates, check});
        }
    }
    if (e.terms.empty())
        throw std::invalid_argument("an expectation cannot be empty");
    return e;
}

std::optional<bool> Expectation::met_by(const json& report) const {
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
                if (auto v = check_valid(report, t.check))
                    ok = !*v;
                break;
            case Kind::Deadlocks:
                ok = has_violation_kind(report, "deadlock");
                if (!*ok && check_valid(report, "liveness") == std::nullopt)
                    ok.reset();
                break;
        }
        if (!ok) {
            unknown = true;
        } else if (!*ok) {
            all = false;
        }
    }
    if (!all)
        return false;  // one definite miss decides, whatever else is unknown
    if (unknown)
        return std::nullopt;
    return true;
}

}  // namespace lockbench
