#include "check.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "fencing.hpp"
#include "history.hpp"
#include "liveness.hpp"
#include "mutual_exclusion.hpp"
#include "resource.hpp"
#include "streaming.hpp"

namespace lockbench::checker {

using nlohmann::json;

namespace {

enum class Verdict { NotApplicable, Valid, Unknown, Invalid };

// Jepsen's composition: false beats unknown beats true; a check that does not apply takes no
// part.
Verdict combine(Verdict a, Verdict b) {
    return std::max(a, b);
}

Verdict verdict_of(const json& valid) {
    if (valid.is_boolean())
        return valid.get<bool>() ? Verdict::Valid : Verdict::Invalid;
    if (valid.is_string() && valid.get<std::string>() == kNotApplicable)
        return Verdict::NotApplicable;
    return Verdict::Unknown;
}

json to_json(Verdict v) {
    switch (v) {
        case Verdict::Valid:
            return true;
        case Verdict::Invalid:
            return false;
        case Verdict::NotApplicable:
        case Verdict::Unknown:
            break;
    }
    return "unknown";
}

void append_all(json& into, const json& violations) {
    for (const auto& v : violations)
        into.push_back(v);
}

json run_checks(HistoryReader& reader, const CheckOptions& options) {
    const auto selected = [&](const char* name) {
        return !options.only ||
               std::find(options.only->begin(), options.only->end(), name) != options.only->end();
    };
    std::optional<MutualExclusionCheck> mutual_exclusion;
    std::optional<FencingCheck> fencing;
    std::optional<ResourceCheck> resource;
    std::optional<LivenessCheck> liveness;
    std::optional<LinearizabilityChecker> linearizability;
    if (selected("mutual_exclusion"))
        mutual_exclusion.emplace(options.max_violations);
    if (selected("fencing"))
        fencing.emplace(options.max_violations);
    if (selected("resource"))
        resource.emplace(options.max_violations);
    if (selected("liveness")) {
        liveness.emplace(LivenessOptions{options.liveness_bound_ms, options.starvation_bound_ms,
                                         options.max_violations});
    }
    if (options.model != Model::None && selected("linearizability"))
        linearizability.emplace(options.model);

    Event event;
    std::uint64_t events = 0;
    std::int64_t end_time_ns = 0;
    while (reader.next(event)) {
        ++events;
        end_time_ns = std::max(end_time_ns, event.time);
        if (mutual_exclusion)
            mutual_exclusion->on_event(event);
        if (fencing)
            fencing->on_event(event);
        if (resource)
            resource->on_event(event);
        if (liveness)
            liveness->on_event(event);
        if (linearizability)
            linearizability->on_event(event);
    }

    json checks = json::object();
    json violations = json::array();
    const auto add = [&](const char* name, auto& check) {
        if (!check)
            return;
        check->finish(end_time_ns);
        checks[name] = check->result();
        append_all(violations, check->violations());
    };
    add("mutual_exclusion", mutual_exclusion);
    add("fencing", fencing);
    add("resource", resource);
    add("liveness", liveness);
    if (linearizability) {
        json result = linearizability->check(options.linearizability);
        json found = json::array();
        if (auto it = result.find("violations"); it != result.end() && it->is_array())
            found = std::move(*it);
        // Like every other check: the count here, the entries in the report's list.
        result["violations"] = found.size();
        append_all(violations, found);
        checks["linearizability"] = std::move(result);
    }

    Verdict overall = Verdict::NotApplicable;
    for (const auto& [name, check] : checks.items())
        overall = combine(overall, verdict_of(check.contains("valid") ? check["valid"] : json()));
    json report{{"valid", to_json(overall)},
                {"events", events},
                {"checks", std::move(checks)},
                {"violations", std::move(violations)}};
    report["violation_count"] = violation_count(report);
    if (overall == Verdict::NotApplicable) {
        // Nothing was judged, so nothing can be called valid.
        report["unknown_reasons"] = json::array(
            {options.model == Model::None
                 ? "no check applies to this history (a register history needs --model register)"
                 : "no check applies to this history"});
    }
    return report;
}

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

std::uint64_t count_of(const json& check, const char* field) {
    if (!check.is_object())
        return 0;
    auto it = check.find(field);
    if (it == check.end() || !it->is_number())
        return 0;
    return it->is_number_unsigned() || it->get<double>() >= 0 ? it->get<std::uint64_t>() : 0;
}

double number_of(const json& check, const char* field) {
    if (!check.is_object())
        return 0;
    auto it = check.find(field);
    return it != check.end() && it->is_number() ? it->get<double>() : 0.0;
}

std::string verdict_word(const json& valid) {
    switch (verdict_of(valid)) {
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

std::string ms_text(double ms) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f ms", ms);
    return buf;
}

// The numbers that matter for one check, in words.
std::string summary_of(const std::string& name, const json& check) {
    if (check.is_object() && verdict_of(check.value("valid", json())) == Verdict::NotApplicable)
        return check.value("reason", std::string("does not apply"));
    if (name == "mutual_exclusion") {
        return count_text(count_of(check, "holds"), "hold") + ", " +
               count_text(count_of(check, "violations"), "overlapping pair");
    }
    if (name == "fencing") {
        return count_text(count_of(check, "grants_with_fence"), "fenced grant") + ", " +
               count_text(count_of(check, "repeated_fences"), "repeated fence") + ", " +
               count_text(count_of(check, "stale_writes_accepted"), "stale write") + " accepted, " +
               count_text(count_of(check, "saves"), "save");
    }
    if (name == "resource") {
        return count_text(count_of(check, "writes"), "write") + " under a lock, " +
               count_text(count_of(check, "violations"), "lost update");
    }
    if (name == "liveness") {
        std::string s = count_text(count_of(check, "deadlocks"), "deadlock") + ", " +
                        with_commas(count_of(check, "starved")) + " starved, max wait " +
                        ms_text(number_of(check, "max_wait_ms"));
        const json handoff =
            check.is_object() ? check.value("handoff_ms", json::object()) : json::object();
        if (count_of(handoff, "count") > 0) {
            s += ", handoff p50 " + ms_text(number_of(handoff, "p50")) + " p99 " +
                 ms_text(number_of(handoff, "p99")) + " max " + ms_text(number_of(handoff, "max")) +
                 " (" + count_text(count_of(handoff, "count"), "handoff") + ")";
        }
        return s;
    }
    if (name == "linearizability") {
        std::string s = check.is_object() ? check.value("model", std::string("?")) : "?";
        s += ", " + count_text(count_of(check, "ops"), "op") + " on " +
             count_text(count_of(check, "keys"), "key");
        char buf[32];
        std::snprintf(buf, sizeof buf, ", %.2f s", number_of(check, "elapsed_s"));
        s += buf;
        if (check.is_object() && check.contains("reason") && check["reason"].is_string())
            s += " (" + check["reason"].get<std::string>() + ")";
        return s;
    }
    return "";
}

}  // namespace

json check_history(std::istream& in, const CheckOptions& options) {
    HistoryReader reader(in);
    return run_checks(reader, options);
}

json check_history(const std::filesystem::path& path, const CheckOptions& options) {
    HistoryReader reader(path);
    return run_checks(reader, options);
}

const std::vector<std::string>& check_names() {
    static const std::vector<std::string> names{"mutual_exclusion", "fencing", "resource",
                                                "liveness", "linearizability"};
    return names;
}

std::uint64_t violation_count(const json& report) {
    const json listed = report.contains("violations") && report["violations"].is_array()
                            ? report["violations"]
                            : json::array();
    std::uint64_t total = 0;
    if (report.contains("checks") && report["checks"].is_object()) {
        for (const auto& [name, check] : report["checks"].items())
            total += count_of(check, "violations");
    }
    return std::max<std::uint64_t>(total, listed.size());
}

std::string format_report(const json& report) {
    constexpr std::size_t kShownViolations = 10;
    std::ostringstream out;
    const json valid = report.contains("valid") ? report["valid"] : json();
    out << "history: " << with_commas(count_of(report, "events")) << " events \u2014 "
        << verdict_word(valid) << "\n";

    if (report.contains("checks") && report["checks"].is_object()) {
        // The cheap checks first, in the order they are described, then the search.
        static const char* const kOrder[] = {"mutual_exclusion", "fencing", "resource", "liveness",
                                             "linearizability"};
        for (const char* name : kOrder) {
            if (!report["checks"].contains(name))
                continue;
            const json& check = report["checks"][name];
            char head[64];
            std::snprintf(
                head, sizeof head, "  %-17s %-8s ", name,
                verdict_word(check.is_object() && check.contains("valid") ? check["valid"] : json())
                    .c_str());
            out << head << summary_of(name, check) << "\n";
        }
    }

    const json listed = report.contains("violations") && report["violations"].is_array()
                            ? report["violations"]
                            : json::array();
    for (const auto& reason : report.value("unknown_reasons", json::array()))
        out << "  unknown: " << reason.get<std::string>() << "\n";
    const std::uint64_t total = violation_count(report);
    if (total > 0) {
        out << "violations (" << with_commas(total);
        if (listed.size() < total)
            out << "; the first " << with_commas(listed.size()) << " listed, " << kShownViolations
                << " shown";
        out << "):\n";
        std::size_t shown = 0;
        for (const auto& v : listed) {
            if (shown == kShownViolations)
                break;
            out << "  [" << v.value("kind", std::string("?")) << "] "
                << v.value("message", std::string()) << "\n";
            ++shown;
        }
        if (total > shown)
            out << "  ... and " << with_commas(total - shown) << " more\n";
    }
    return out.str();
}

}  // namespace lockbench::checker
