#include "checker/report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "checker/incident.hpp"

namespace lockbench::checker {

using nlohmann::json;

Verdict combine(Verdict a, Verdict b) {
    return std::max(a, b);
}

Verdict verdict_of(const json& valid) {
    if (valid.is_boolean())
        return valid.get<bool>() ? Verdict::Valid : Verdict::Invalid;
    if (valid.is_string() && valid.get_ref<const std::string&>() == "not-applicable")
        return Verdict::NotApplicable;
    return Verdict::Unknown;
}

void VerdictCounts::add(Verdict verdict) {
    switch (verdict) {
        case Verdict::Invalid:
            ++violated;
            break;
        case Verdict::Valid:
            ++valid;
            break;
        case Verdict::Unknown:
            ++unknown;
            break;
        case Verdict::NotApplicable:
            ++not_applicable;
            break;
    }
}

json to_json(Verdict verdict) {
    switch (verdict) {
        case Verdict::Valid:
            return true;
        case Verdict::Invalid:
            return false;
        case Verdict::NotApplicable:
            return "not-applicable";
        case Verdict::Unknown:
            break;
    }
    return "unknown";
}

std::string_view verdict_word(Verdict verdict) {
    switch (verdict) {
        case Verdict::Valid:
            return "VALID";
        case Verdict::Invalid:
            return "INVALID";
        case Verdict::NotApplicable:
            return "N/A";
        case Verdict::Unknown:
            break;
    }
    return "UNKNOWN";
}

int exit_code(Verdict verdict) {
    switch (verdict) {
        case Verdict::Valid:
            return 0;
        case Verdict::Invalid:
            return 1;
        case Verdict::NotApplicable:
        case Verdict::Unknown:
            break;
    }
    return 3;
}

// ---- CheckResult

namespace {

const json* field_of(const json& object, std::string_view name) {
    if (!object.is_object())
        return nullptr;
    auto it = object.find(name);
    return it == object.end() ? nullptr : &*it;
}

std::uint64_t count_in(const json& object, std::string_view name) {
    const json* v = field_of(object, name);
    if (!v || !v->is_number())
        return 0;
    if (v->is_number_unsigned())
        return v->get<std::uint64_t>();
    if (v->is_number_integer())
        return static_cast<std::uint64_t>(std::max<std::int64_t>(0, v->get<std::int64_t>()));
    return static_cast<std::uint64_t>(std::max(0.0, v->get<double>()));
}

double number_in(const json& object, std::string_view name) {
    const json* v = field_of(object, name);
    return v && v->is_number() ? v->get<double>() : 0.0;
}

}  // namespace

std::uint64_t CheckResult::count(std::string_view field) const {
    return count_in(fields, field);
}

double CheckResult::number(std::string_view field) const {
    return number_in(fields, field);
}

std::vector<std::int64_t> CheckResult::processes(std::string_view field) const {
    std::vector<std::int64_t> out;
    if (const json* list = field_of(fields, field); list && list->is_array()) {
        for (const auto& p : *list) {
            if (p.is_number_integer())
                out.push_back(p.get<std::int64_t>());
        }
    }
    return out;
}

// ---- Report

const std::vector<std::string>& Report::check_order() {
    // The cheap checks first, in the order they are described, then the search.
    static const std::vector<std::string> order{"mutual_exclusion", "fencing", "resource",
                                                "liveness", "linearizability"};
    return order;
}

std::vector<std::string> Report::in_check_order(const std::set<std::string>& names) {
    std::vector<std::string> out;
    for (const auto& name : check_order()) {
        if (names.count(name))
            out.push_back(name);
    }
    for (const auto& name : names) {
        if (std::find(out.begin(), out.end(), name) == out.end())
            out.push_back(name);
    }
    return out;
}

const CheckResult* Report::check(std::string_view name) const {
    for (const auto& c : checks) {
        if (c.name == name)
            return &c;
    }
    return nullptr;
}

std::uint64_t Report::violation_count() const {
    std::uint64_t total = 0;
    for (const auto& c : checks)
        total += c.violations();
    // A report from a checker that listed violations without counting them still has them.
    return std::max<std::uint64_t>(total, witnesses.size());
}

void Report::compose() {
    Verdict overall = Verdict::NotApplicable;
    for (const auto& c : checks)
        overall = combine(overall, c.verdict());
    // Nothing judged, or a reason not to trust "valid": unknown.
    if (overall == Verdict::NotApplicable ||
        (overall == Verdict::Valid && !unknown_reasons.empty()))
        overall = Verdict::Unknown;
    if (error && overall == Verdict::Valid)
        overall = Verdict::Unknown;
    verdict = overall;
}

void Report::add_unknown_reason(std::string why) {
    unknown_reasons.push_back(std::move(why));
    if (verdict == Verdict::Valid || verdict == Verdict::NotApplicable)
        verdict = Verdict::Unknown;
}

json Witness::to_json() const {
    return json{{"kind", kind}, {"key", key}, {"message", message}, {"witness", evidence}};
}

Witness Witness::from_json(const json& j) {
    Witness w;
    const auto text = [&](std::string_view name) {
        const json* v = field_of(j, name);
        return v && v->is_string() ? v->get<std::string>() : std::string();
    };
    w.kind = text("kind");
    w.key = text("key");
    w.message = text("message");
    if (const json* e = field_of(j, "witness"))
        w.evidence = *e;
    return w;
}

json Report::to_json() const {
    json checks_json = json::object();
    for (const auto& c : checks)
        checks_json[c.name] = c.fields;
    json witnesses_json = json::array();
    for (const auto& w : witnesses)
        witnesses_json.push_back(w.to_json());
    json out{{"valid", checker::to_json(verdict)},
             {"events", events},
             {"violation_count", violation_count()},
             {"checks", std::move(checks_json)},
             {"violations", std::move(witnesses_json)}};
    if (!unknown_reasons.empty())
        out["unknown_reasons"] = unknown_reasons;
    if (error)
        out["error"] = *error;
    if (!ignored_ops.empty()) {
        json ignored = json::array();
        for (const auto& i : ignored_ops)
            ignored.push_back({{"f", i.f}, {"count", i.count}, {"first", i.first}});
        out["ignored_ops"] = std::move(ignored);
    }
    return out;
}

Report Report::from_json(const json& j) {
    Report r;
    if (!j.is_object()) {
        r.error = "the report is not a JSON object";
        return r;
    }
    r.verdict = verdict_of(j.value("valid", json()));
    r.events = count_in(j, "events");
    if (const json* checks = field_of(j, "checks"); checks && checks->is_object()) {
        std::set<std::string> names;
        for (const auto& [name, c] : checks->items())
            names.insert(name);
        for (const auto& name : in_check_order(names))
            r.checks.push_back(CheckResult{name, (*checks)[name]});
    }
    if (const json* w = field_of(j, "violations"); w && w->is_array()) {
        for (const auto& v : *w)
            r.witnesses.push_back(Witness::from_json(v));
    }
    if (const json* reasons = field_of(j, "unknown_reasons"); reasons && reasons->is_array()) {
        for (const auto& reason : *reasons) {
            if (reason.is_string())
                r.unknown_reasons.push_back(reason.get<std::string>());
        }
    }
    if (const json* e = field_of(j, "error"); e && e->is_string())
        r.error = e->get<std::string>();
    if (const json* ignored = field_of(j, "ignored_ops"); ignored && ignored->is_array()) {
        const auto text = [](const json& object, std::string_view name) {
            const json* v = field_of(object, name);
            return v && v->is_string() ? v->get<std::string>() : std::string();
        };
        for (const auto& i : *ignored)
            r.ignored_ops.push_back({text(i, "f"), count_in(i, "count"), 0, text(i, "first")});
    }
    return r;
}

// ---- the readable form

namespace {

// 12345678 -> "12,345,678"
std::string with_commas(std::uint64_t n) {
    std::string digits = std::to_string(n);
    std::string out;
    const std::size_t first = digits.size() % 3 == 0 ? 3 : digits.size() % 3;
    out.append(digits, 0, first);
    for (std::size_t i = first; i < digits.size(); i += 3) {
        out.push_back(',');
        out.append(digits, i, 3);
    }
    return out;
}

// "1 deadlock", "2 deadlocks"
std::string count_text(std::uint64_t n, const std::string& noun) {
    return with_commas(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string ms_text(double ms) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
    return buf;
}

// The numbers that matter for one check, in words.
std::string summary_of(const CheckResult& check) {
    if (check.verdict() == Verdict::NotApplicable) {
        const std::string why = check.reason();
        return why.empty() ? "does not apply" : why;
    }
    const std::string& name = check.name;
    if (name == "mutual_exclusion") {
        std::string s = count_text(check.count("holds"), "hold") + ", " +
                        count_text(check.violations(), "overlapping pair");
        if (check.violations() > 0)
            s += " in " + count_text(check.count("incidents"), "incident");
        return s;
    }
    if (name == "fencing") {
        return count_text(check.count("grants_with_fence"), "fenced grant") + ", " +
               count_text(check.count("repeated_fences"), "repeated fence") + ", " +
               count_text(check.count("stale_writes_accepted"), "stale write") + " accepted, " +
               count_text(check.count("saves"), "save");
    }
    if (name == "resource") {
        return count_text(check.count("writes"), "write") + " under a lock, " +
               count_text(check.violations(), "lost update");
    }
    if (name == "liveness") {
        std::string s = count_text(check.count("deadlocks"), "deadlock") + ", " +
                        with_commas(check.count("starved")) + " starved, max wait " +
                        ms_text(check.number("max_wait_ms"));
        const json handoff = check.fields.value("handoff_ms", json::object());
        if (count_in(handoff, "count") > 0) {
            s += ", handoff p50 " + ms_text(number_in(handoff, "p50")) + " p99 " +
                 ms_text(number_in(handoff, "p99")) + " max " + ms_text(number_in(handoff, "max")) +
                 " (" + count_text(count_in(handoff, "count"), "handoff") + ")";
        }
        return s;
    }
    if (name == "linearizability") {
        std::string s = check.fields.value("model", std::string("?"));
        s += ", " + count_text(check.count("ops"), "op") + " on " +
             count_text(check.count("keys"), "key");
        char buf[32];
        std::snprintf(buf, sizeof buf, ", %.2f s", check.number("elapsed_s"));
        s += buf;
        // An adapter's late grants (HISTORY.md), placed rather than left to the in-doubt acquires.
        if (check.count("late_grants_placed") > 0)
            s += ", " + count_text(check.count("late_grants_placed"), "late grant") + " placed";
        if (check.count("abandoned_acquires_placed") > 0)
            s += ", " + count_text(check.count("abandoned_acquires_placed"), "abandoned acquire") +
                 " placed";
        if (const std::string why = check.reason(); !why.empty())
            s += " (" + why + ")";
        // An unknown says how far the search got: "decided up to op N of M (...)".
        for (const auto& key : check.fields.value("partial", json::array())) {
            if (key.is_object())
                s += "; " + key.value("summary", std::string());
        }
        return s;
    }
    return "";
}

}  // namespace

std::string format_report(const Report& report) {
    constexpr std::size_t kShownViolations = 10;
    std::ostringstream out;
    out << "history: " << with_commas(report.events) << " events \u2014 "
        << verdict_word(report.verdict) << "\n";
    for (const auto& check : report.checks) {
        char head[64];
        std::snprintf(head, sizeof head, "  %-17s %-8s ", check.name.c_str(),
                      std::string(verdict_word(check.verdict())).c_str());
        out << head << summary_of(check) << "\n";
    }
    if (report.error)
        out << "  error: " << *report.error << "\n";
    for (const auto& reason : report.unknown_reasons)
        out << "  unknown: " << reason << "\n";
    for (const auto& ignored : report.ignored_ops) {
        out << "  ignored: " << count_text(ignored.count, "op") << " with f \"" << ignored.f
            << "\", which no check reads (the first at " << ignored.first << ")\n";
    }
    // Incidents first: one hold and everything that overlapped it reads as one story, where the
    // pairs would repeat it a hundred times.
    {
        const std::vector<Incident> list = listed_incidents(report);
        const std::uint64_t incidents = incident_count(report);
        if (incidents > 0) {
            out << "incidents (" << with_commas(incidents);
            if (list.size() < incidents)
                out << "; the first " << with_commas(list.size()) << " listed";
            out << "):\n";
            std::size_t shown = 0;
            for (const auto& incident : list) {
                if (shown++ == kShownViolations)
                    break;
                out << "  " << incident.message << "\n";
            }
            if (incidents > kShownViolations)
                out << "  ... and " << with_commas(incidents - kShownViolations) << " more\n";
        }
    }
    const std::uint64_t total = report.violation_count();
    if (total > 0) {
        const std::size_t listed = report.witnesses.size();
        out << "violations (" << with_commas(total);
        if (listed < total)
            out << "; the first " << with_commas(listed) << " listed, " << kShownViolations
                << " shown";
        out << "):\n";
        std::size_t shown = 0;
        for (const auto& v : report.witnesses) {
            if (shown == kShownViolations)
                break;
            out << "  [" << (v.kind.empty() ? "?" : v.kind) << "] " << v.message << "\n";
            ++shown;
        }
        if (total > shown)
            out << "  ... and " << with_commas(total - shown) << " more\n";
    }
    return out.str();
}

}  // namespace lockbench::checker
