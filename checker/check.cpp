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

// The checks `options` selects, fed each event in turn; one reading of the history serves all.
class SelectedChecks {
  public:
    explicit SelectedChecks(const CheckOptions& options) {
        const auto selected = [&](const char* name) {
            return !options.only || std::find(options.only->begin(), options.only->end(), name) !=
                                        options.only->end();
        };
        if (selected("mutual_exclusion"))
            mutual_exclusion_.emplace(options.max_violations);
        if (selected("fencing"))
            fencing_.emplace(options.max_violations);
        if (selected("resource"))
            resource_.emplace(options.max_violations);
        if (selected("liveness")) {
            liveness_.emplace(LivenessOptions{options.liveness_bound_ms,
                                              options.starvation_bound_ms, options.max_violations,
                                              options.linearizability.every_fail_observes});
        }
        if (options.model != Model::None && selected("linearizability"))
            linearizability_.emplace(options.model);
        tell_incidents_their_aftermath();
    }
    // The callbacks point into this object.
    SelectedChecks(const SelectedChecks&) = delete;
    SelectedChecks& operator=(const SelectedChecks&) = delete;

    void on_event(const Event& event) {
        if (mutual_exclusion_)
            mutual_exclusion_->on_event(event);
        if (fencing_)
            fencing_->on_event(event);
        if (resource_)
            resource_->on_event(event);
        if (liveness_)
            liveness_->on_event(event);
        if (linearizability_)
            linearizability_->on_event(event);
    }

    // Each check's result and witnesses, in report order.
    void finish_into(Report& report, std::int64_t end_time_ns,
                     const LinearizabilityOptions& linearizability_options) {
        const auto add = [&](const char* name, auto& check) {
            if (!check)
                return;
            check->finish(end_time_ns);
            report.checks.push_back(CheckResult{name, check->result()});
            append_all(report.witnesses, check->violations());
        };
        add("mutual_exclusion", mutual_exclusion_);
        add("fencing", fencing_);
        add("resource", resource_);
        add("liveness", liveness_);
        if (linearizability_) {
            json result = linearizability_->check(linearizability_options);
            json found = json::array();
            if (auto it = result.find("violations"); it != result.end() && it->is_array())
                found = std::move(*it);
            // Like every other check: the count here, the entries in the report's list.
            result["violations"] = found.size();
            append_all(report.witnesses, found);
            report.checks.push_back(CheckResult{"linearizability", std::move(result)});
        }
    }

  private:
    // An incident says what it led to: the lost updates and fencing saves of its holders.
    void tell_incidents_their_aftermath() {
        if (!mutual_exclusion_)
            return;
        using Aftermath = MutualExclusionCheck::Aftermath;
        if (resource_) {
            resource_->on_lost_update([this](const Event& e) {
                mutual_exclusion_->attribute(Aftermath::LostUpdate, e.key, e.process);
            });
        }
        if (fencing_) {
            fencing_->on_save([this](const Event& e) {
                mutual_exclusion_->attribute(Aftermath::FencingSave, e.key, e.process);
            });
        }
    }

    std::optional<MutualExclusionCheck> mutual_exclusion_;
    std::optional<FencingCheck> fencing_;
    std::optional<ResourceCheck> resource_;
    std::optional<LivenessCheck> liveness_;
    std::optional<LinearizabilityChecker> linearizability_;
};

struct OperationCounts {
    std::uint64_t lock_ops = 0;
    std::uint64_t register_ops = 0;
};

// Said, not silently passed over: `lock` for `acquire` would otherwise read as a history in
// which nothing happened. Past kIgnoredNamesListed names, one entry counts the rest: memory stays
// bounded whatever the history holds.
void note_ignored_op(std::vector<IgnoredOps>& list, const Event& event) {
    constexpr std::size_t kIgnoredNamesListed = 100;
    const auto named = [&](std::string_view f) {
        return std::find_if(list.begin(), list.end(),
                            [&](const IgnoredOps& i) { return i.f == f; });
    };
    auto ignored = named(event.f);
    if (ignored == list.end() && list.size() >= kIgnoredNamesListed)
        ignored = named(kOtherIgnoredNames);
    if (ignored == list.end()) {
        const std::string f =
            list.size() < kIgnoredNamesListed ? event.f : std::string(kOtherIgnoredNames);
        ignored = list.insert(list.end(),
                              IgnoredOps{f, 0, event.line, "line " + std::to_string(event.line)});
    }
    ++ignored->count;
}

void count_client_op(const Event& event, OperationCounts& counts,
                     std::vector<IgnoredOps>& ignored_ops) {
    if (is_lock_op(event.f))
        ++counts.lock_ops;
    else if (is_register_op(event.f))
        ++counts.register_ops;
    else
        note_ignored_op(ignored_ops, event);
}

// Nothing was judged, so nothing can be called valid: the reason the verdict is unknown.
std::string why_nothing_was_judged(std::uint64_t events, const OperationCounts& counts,
                                   Model model) {
    if (events == 0)
        return "the history is empty: it has no events";
    if (counts.lock_ops + counts.register_ops == 0)
        return "the history has no operation a check reads (acquire, release, renew, read, "
               "write, cas)";
    if (counts.lock_ops == 0 && model == Model::None)
        return "no check applies to this history (a register history needs --model register)";
    return "no check applies to this history";
}

Report run_checks(HistoryReader& reader, const CheckOptions& options) {
    SelectedChecks checks(options);
    Event event;
    Report report;
    std::int64_t end_time_ns = 0;
    OperationCounts counts;
    while (reader.next(event)) {
        ++report.events;
        end_time_ns = std::max(end_time_ns, event.time);
        if (!event.is_nemesis())
            count_client_op(event, counts, report.ignored_ops);
        checks.on_event(event);
    }
    checks.finish_into(report, end_time_ns, options.linearizability);
    report.compose();
    const bool judged = std::any_of(report.checks.begin(), report.checks.end(), [](const auto& c) {
        return c.verdict() != Verdict::NotApplicable;
    });
    if (!judged)
        report.add_unknown_reason(why_nothing_was_judged(report.events, counts, options.model));
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
