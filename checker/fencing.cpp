#include "checker/fencing.hpp"

#include "checker/history_words.hpp"

namespace lockbench::checker {

using nlohmann::json;

FencingCheck::FencingCheck(std::size_t max_violations) : StreamingCheck(max_violations) {}

void FencingCheck::on_event(const Event& event) {
    switch (op_of(event)) {
        case Op::Acquire:
            if (event.type == EventType::Invoke) {
                // Only a grant that completed before this acquire began is certainly older: a
                // reply can be delayed past a later grant's, and then its smaller number is
                // no sign of a counter that went back.
                auto key = keys_.find(event.key);
                if (key != keys_.end() && key->second.highest_grant)
                    granted_before_.set(event.process) = *key->second.highest_grant;
                else
                    granted_before_.erase(event.process);
            } else if (event.type == EventType::Ok) {
                on_grant(event);
            } else {
                granted_before_.erase(event.process);
            }
            return;
        case Op::Release:
            if (event.type == EventType::Invoke)
                nesting_.release(event.process, event.key, event.token);
            return;
        case Op::Write:
            on_write(event);
            return;
        case Op::Crash:
            nesting_.drop(*event.target);
            return;
        default:
            return;
    }
}

void FencingCheck::on_grant(const Event& event) {
    std::optional<Stamp> before;
    if (Stamp* stamp = granted_before_.find(event.process)) {
        before = *stamp;
        granted_before_.erase(event.process);
    }
    // A nested grant is the same hold again; its fence (often the same number) is not a new grant.
    if (nesting_.grant(event.process, event.key, event.token) > 1)
        return;
    if (!event.fence) {
        ++grants_without_fence_;
        return;
    }
    ++grants_with_fence_;
    KeyFences& key = keys_[event.key];
    Stamp grant{event.process, event.token, *event.fence, event.time, event.index};
    if (before && grant.fence <= before->fence) {
        ++repeated_fences_;
        count_violation({grant.process, before->process});
        const Stamp& earlier = *before;
        add_violation(
            event.key, "grant", earlier, grant,
            key_prefix(event.key) + who(grant.process, grant.token) + " was granted fence " +
                std::to_string(grant.fence) + " at " + format_seconds(grant.time_ns) +
                ", not above fence " + std::to_string(earlier.fence) + " granted to " +
                who(earlier.process, earlier.token) + " at " + format_seconds(earlier.time_ns));
    }
    if (!key.highest_grant || grant.fence > key.highest_grant->fence)
        key.highest_grant = std::move(grant);
}

void FencingCheck::on_write(const Event& event) {
    if (event.type == EventType::Invoke) {
        WriteInFlight& w = writes_.set(event.process);
        w.key = event.key;
        w.fence = event.fence;
        auto key = keys_.find(event.key);
        if (key != keys_.end())
            w.accepted_before = key->second.highest_accepted_write;
        else
            w.accepted_before.reset();
        return;
    }
    WriteInFlight* in_flight = writes_.find(event.process);
    if (!in_flight)
        return;
    const WriteInFlight w = *in_flight;
    writes_.erase(event.process);
    if (event.type == EventType::Fail) {
        if (event.error == history::kStaleFence) {
            ++saves_;
            saved_processes_.add(event.process);
            if (on_save_)
                on_save_(event);
        }
        return;
    }
    if (event.type != EventType::Ok)
        return;  // info: whether the resource took it is unknown
    const std::optional<std::int64_t> fence = event.fence ? event.fence : w.fence;
    if (!fence)
        return;
    ++writes_with_fence_;
    Stamp write{event.process, "", *fence, event.time, event.index};
    // Judged against what was accepted before this write was sent, not before its reply came:
    // replies of concurrent writes can be recorded in the opposite order of their execution.
    if (w.accepted_before && write.fence < w.accepted_before->fence) {
        ++stale_writes_accepted_;
        count_violation({write.process, w.accepted_before->process});
        const Stamp& earlier = *w.accepted_before;
        add_violation(event.key, "write", earlier, write,
                      key_prefix(event.key) + "the resource accepted a write with fence " +
                          std::to_string(write.fence) + " by process " +
                          std::to_string(write.process) + " at " + format_seconds(write.time_ns) +
                          " after it had accepted fence " + std::to_string(earlier.fence) +
                          " from process " + std::to_string(earlier.process) + " at " +
                          format_seconds(earlier.time_ns));
    }
    KeyFences& key = keys_[event.key];
    if (!key.highest_accepted_write || write.fence > key.highest_accepted_write->fence)
        key.highest_accepted_write = std::move(write);
}

void FencingCheck::add_violation(const std::string& key, const char* what, const Stamp& earlier,
                                 const Stamp& later, std::string message) {
    if (!witness_wanted())
        return;
    const auto stamp_json = [](const Stamp& s) {
        return json{{"process", s.process},
                    {"token", s.token},
                    {"fence", s.fence},
                    {"time_ns", s.time_ns},
                    {"index", s.index}};
    };
    list_witness(json{{"kind", "fencing"},
                      {"key", key},
                      {"message", std::move(message)},
                      {"witness",
                       {{"key", key},
                        {"what", what},
                        {"earlier", stamp_json(earlier)},
                        {"later", stamp_json(later)}}}});
}

json FencingCheck::result() const {
    if (grants_with_fence_ == 0 && writes_with_fence_ == 0 && saves_ == 0)
        return not_applicable("no fencing numbers were issued");
    return json{{"valid", violation_count() == 0},
                {"violations", violation_count()},
                {"processes", processes_.sorted()},
                {"saves", saves_},
                {"saved_processes", saved_processes_.sorted()},
                {"grants_with_fence", grants_with_fence_},
                {"grants_without_fence", grants_without_fence_},
                {"repeated_fences", repeated_fences_},
                {"writes_with_fence", writes_with_fence_},
                {"stale_writes_accepted", stale_writes_accepted_}};
}

}  // namespace lockbench::checker
