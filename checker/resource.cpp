#include "checker/resource.hpp"

namespace lockbench::checker {

using nlohmann::json;

ResourceCheck::ResourceCheck(std::size_t max_violations) : StreamingCheck(max_violations) {}

void ResourceCheck::on_event(const Event& event) {
    switch (op_of(event)) {
        case Op::Acquire:
            lock_ops_seen_ = true;
            if (event.type == EventType::Ok)
                nesting_.grant(event.process, event.key, event.token);
            return;
        case Op::Release:
            if (event.type == EventType::Invoke)
                nesting_.release(event.process, event.key, event.token);
            return;
        case Op::Crash:
            nesting_.drop(*event.target);
            in_flight_.erase(*event.target);
            return;
        case Op::Read:
            if (event.type == EventType::Ok)
                ++reads_;
            return;
        case Op::Write:
            on_write(event);
            return;
        default:
            return;
    }
}

void ResourceCheck::on_write(const Event& event) {
    if (event.type == EventType::Invoke) {
        if (!nesting_.holds(event.process, event.key)) {
            ++unguarded_writes_;
            return;
        }
        auto latest = latest_.find(event.key);
        auto highest = highest_.find(event.key);
        in_flight_.set(event.process) = WriteInFlight{
            latest == latest_.end() ? std::nullopt : std::optional<Write>(latest->second),
            highest == highest_.end() ? std::nullopt : std::optional<Write>(highest->second)};
        return;
    }
    WriteInFlight* in_flight = in_flight_.find(event.process);
    if (!in_flight)
        return;  // not judged
    const WriteInFlight sent = *in_flight;
    in_flight_.erase(event.process);
    if (event.type != EventType::Ok || !event.number)
        return;
    ++writes_;
    const Write write{event.process, *event.number, event.time, event.index};
    latest_.insert_or_assign(event.key, write);
    const bool lost = sent.highest_before && write.value <= sent.highest_before->value;
    // After a loss the counter goes on from what this write left: the reference starts again.
    if (auto highest = highest_.find(event.key);
        lost || highest == highest_.end() || write.value > highest->second.value)
        highest_.insert_or_assign(event.key, write);
    if (!lost)
        return;
    // Directly over the last write (T1), or over a value a late write had set back (T13).
    const bool direct =
        sent.written_before && sent.written_before->index == sent.highest_before->index;
    const Write& overwritten = *sent.highest_before;
    count_violation({write.process, overwritten.process});
    if (on_lost_update_)
        on_lost_update_(event);
    // The write that set the counter back (delivered late, T13) is the one that lost the update.
    const Write* late = !direct && sent.written_before ? &*sent.written_before : nullptr;
    if (late)
        processes_.add(late->process);
    if (!witness_wanted())
        return;
    LostUpdateEvidence evidence{.key = event.key, .overwritten = overwritten, .write = write};
    if (late)
        evidence.late = *late;
    list_witness(json{
        {"kind", "resource"},
        {"key", event.key},
        {"message", key_prefix(event.key) + "process " + std::to_string(write.process) + " wrote " +
                        std::to_string(write.value) + " at " + format_seconds(write.time_ns) +
                        (direct ? " over " : ", below ") + std::to_string(overwritten.value) +
                        " written by process " + std::to_string(overwritten.process) + " at " +
                        format_seconds(overwritten.time_ns) +
                        (late ? " before it was sent: process " + std::to_string(late->process) +
                                    "'s write of " + std::to_string(late->value) +
                                    ", delivered at " + format_seconds(late->time_ns) +
                                    ", had set the counter back - an update was lost"
                              : ": an update was lost")},
        {"witness", evidence.to_json()}});
}

json ResourceCheck::result() const {
    if (writes_ == 0 && violation_count() == 0) {
        return not_applicable(lock_ops_seen_ ? "no write completed while its writer held the lock"
                                             : "the history has no lock operations");
    }
    return json{{"valid", violation_count() == 0},
                {"violations", violation_count()},
                {"processes", processes_.sorted()},
                {"reads", reads_},
                {"writes", writes_},
                {"unguarded_writes", unguarded_writes_},
                {"keys", latest_.size()}};
}

}  // namespace lockbench::checker
