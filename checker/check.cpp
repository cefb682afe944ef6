#include "checker/check.hpp"

#include <algorithm>
#include <string>
#include <string_view>

#include "checker/fencing.hpp"
#include "checker/history.hpp"
#include "checker/liveness.hpp"
#include "checker/mutual_exclusion.hpp"
#include "checker/resource.hpp"

namespace lockbench::checker {

using nlohmann::json;

namespace {

constexpr std::string_view kOtherIgnoredNames = "(any other name)";

// The client operations HISTORY.md defines; any other f is read by no check.
bool is_lock_op(const std::string& f) {
    return f == "acquire" || f == "release" || f == "renew";
}
bool is_register_op(const std::string& f) {
    return f == "read" || f == "write" || f == "cas";
}

void append_all(std::vector<Witness>& into, const json& violations) {
    for (const auto& v : violations)
        into.push_back(Witness::from_json(v));
}

Report run_checks(HistoryReader& reader, const CheckOptions& options) {
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
                                         options.max_violations,
                                         options.linearizability.every_fail_observes});
    }
    if (options.model != Model::None && selected("linearizability"))
        linearizability.emplace(options.model);

    if (mutual_exclusion) {
        // An incident says what it led to: the lost updates and fencing saves of its holders.
        using Aftermath = MutualExclusionCheck::Aftermath;
        if (resource) {
            resource->on_lost_update([&](const Event& e) {
                mutual_exclusion->attribute(Aftermath::LostUpdate, e.key, e.process);
            });
        }
        if (fencing) {
            fencing->on_save([&](const Event& e) {
                mutual_exclusion->attribute(Aftermath::FencingSave, e.key, e.process);
            });
        }
    }

    Event event;
    Report report;
    std::int64_t end_time_ns = 0;
    std::uint64_t lock_ops = 0, register_ops = 0;
    while (reader.next(event)) {
        ++report.events;
        end_time_ns = std::max(end_time_ns, event.time);
        if (!event.is_nemesis()) {
            if (is_lock_op(event.f)) {
                ++lock_ops;
            } else if (is_register_op(event.f)) {
                ++register_ops;
            } else {
                // Said, not silently passed over: `lock` for `acquire` would otherwise read as a
                // history in which nothing happened.
                // Past kIgnoredNamesListed names, one entry counts the rest: memory stays
                // bounded whatever the history holds.
                constexpr std::size_t kIgnoredNamesListed = 100;
                auto& list = report.ignored_ops;
                const auto named = [&](std::string_view f) {
                    return std::find_if(list.begin(), list.end(),
                                        [&](const IgnoredOps& i) { return i.f == f; });
                };
                auto ignored = named(event.f);
                if (ignored == list.end() && list.size() >= kIgnoredNamesListed)
                    ignored = named(kOtherIgnoredNames);
                if (ignored == list.end()) {
                    const std::string f = list.size() < kIgnoredNamesListed
                                              ? event.f
                                              : std::string(kOtherIgnoredNames);
                    ignored = list.insert(
                        list.end(),
                        IgnoredOps{f, 0, event.line, "line " + std::to_string(event.line)});
                }
                ++ignored->count;
            }
        }
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

    const auto add = [&](const char* name, auto& check) {
        if (!check)
            return;
        check->finish(end_time_ns);
        report.checks.push_back(CheckResult{name, check->result()});
        append_all(report.witnesses, check->violations());
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
        append_all(report.witnesses, found);
        report.checks.push_back(CheckResult{"linearizability", std::move(result)});
    }

    report.compose();
    const bool judged = std::any_of(report.checks.begin(), report.checks.end(), [](const auto& c) {
        return c.verdict() != Verdict::NotApplicable;
    });
    if (!judged) {
        // Nothing was judged, so nothing can be called valid.
        if (report.events == 0)
            report.add_unknown_reason("the history is empty: it has no events");
        else if (lock_ops + register_ops == 0)
            report.add_unknown_reason(
                "the history has no operation a check reads (acquire, release, renew, read, "
                "write, cas)");
        else if (lock_ops == 0 && options.model == Model::None)
            report.add_unknown_reason(
                "no check applies to this history (a register history needs --model register)");
        else
            report.add_unknown_reason("no check applies to this history");
    }
    return report;
}

}  // namespace

Report check_history(std::istream& in, const CheckOptions& options) {
    HistoryReader reader(in);
    return run_checks(reader, options);
}

Report check_history(const std::filesystem::path& path, const CheckOptions& options) {
    HistoryReader reader(path);
    return run_checks(reader, options);
}

const std::vector<std::string>& check_names() {
    return Report::check_order();
}

}  // namespace lockbench::checker
