#include "liveness.hpp"

#include <algorithm>

namespace lockbench::checker {

using nlohmann::json;

LivenessCheck::LivenessCheck(LivenessOptions options) : options_(options) {}

void LivenessCheck::on_event(const Event& event) {
    const Op op = op_of(event);
    if (op == Op::Crash) {
        on_crash(event);
        return;
    }
    if (event.is_nemesis())
        return;
    if (op == Op::Acquire) {
        lock_ops_seen_ = true;
        on_acquire(event);
    } else if (op == Op::Release && event.type == EventType::Invoke) {
        if (nesting_.release(event.process, event.key, event.token).kind ==
            HoldNesting::Release::Ended) {
            KeyState& key = keys_[event.key];
            if (key.open_holds > 0)
                --key.open_holds;
            if (key.acquires_in_flight > 0)
                key.handoff_from_ns = event.time;
        }
    }
    // An `info` retires the process id (its successor gets a new one), so a wait it was in ends.
    if (event.type == EventType::Info)
        end_wait(event.process, event.time, false);
}

void LivenessCheck::on_acquire(const Event& event) {
    if (event.type == EventType::Invoke) {
        KeyState& key = keys_[event.key];
        expire_orphan(event.key, key, event.time);
        ++key.acquires_in_flight;
        acquiring_.set(event.process) = Acquiring{&key, event.lease_ms};
        Wait& wait = waits_.set(event.process);
        wait.key = event.key;
        wait.start_ns = event.time;
        wait.start_index = event.index;
        if (key.orphan && !key.orphan->first_waiter) {
            key.orphan->first_waiter = event.process;
            key.orphan->first_wait_ns = event.time;
        }
        return;
    }
    std::optional<std::int64_t> lease_ms;
    if (Acquiring* in_flight = acquiring_.find(event.process)) {
        --in_flight->key->acquires_in_flight;
        lease_ms = in_flight->lease_ms;
        acquiring_.erase(event.process);
    }
    // A wait is one acquire: it ends with the grant, or when the client gives up (a refusal)
    // or its process retires (`info`). Think time between attempts is not waiting.
    end_wait(event.process, event.time, event.type == EventType::Ok);
    if (event.type == EventType::Info) {
        KeyState& key = keys_[event.key];
        expire_orphan(event.key, key, event.time);
        if (key.open_holds == 0 && !key.orphan && !nesting_.holds(event.process, event.key)) {
            ++orphaned_;
            // The lock it may have been granted is held by nobody alive, until its lease runs
            // out (on a strategy whose locks expire; seed 001's never do: T6).
            std::optional<std::int64_t> expires_ns;
            if (lease_ms)
                expires_ns = event.time + *lease_ms * 1'000'000;
            key.orphan = Orphan{Orphan::Cause::LostAcquire,
                                event.process,
                                event.time,
                                event.index,
                                std::nullopt,
                                0,
                                expires_ns};
            note_waiters(key);
        }
        return;
    }
    if (event.type != EventType::Ok)
        return;
    if (nesting_.grant(event.process, event.key, event.token) > 1)
        return;
    KeyState& key = keys_[event.key];
    expire_orphan(event.key, key, event.time);
    ++key.open_holds;
    if (key.orphan) {
        judge_orphan(event.key, *key.orphan, event.time, &event);
        key.orphan.reset();
    }
    if (key.handoff_from_ns) {
        handoffs_.record(std::chrono::nanoseconds(event.time - *key.handoff_from_ns));
        key.handoff_from_ns.reset();
    }
}

void LivenessCheck::on_crash(const Event& event) {
    const std::int64_t process = *event.target;
    // The crashed process's acquire stays in flight forever, but nobody is waiting on it.
    if (Acquiring* in_flight = acquiring_.find(process)) {
        --in_flight->key->acquires_in_flight;
        acquiring_.erase(process);
    }
    end_wait(process, event.time, false);
    for (const auto& name : nesting_.drop(process)) {
        KeyState& key = keys_[name];
        expire_orphan(name, key, event.time);
        if (key.open_holds > 0)
            --key.open_holds;
        if (key.orphan)
            continue;  // already orphaned by an earlier crash: that one is older
        ++orphaned_;
        key.orphan =
            Orphan{Orphan::Cause::Crash, process, event.time, event.index, std::nullopt, 0};
        note_waiters(key);
    }
}

void LivenessCheck::note_waiters(KeyState& key) {
    // An acquire already waiting when the key was orphaned is trying to acquire it too.
    if (key.acquires_in_flight == 0)
        return;
    for (const auto& [waiter, wanted] : acquiring_) {
        if (wanted.key == &key && (!key.orphan->first_waiter || waiter < *key.orphan->first_waiter))
            key.orphan->first_waiter = waiter;
    }
    key.orphan->first_wait_ns = key.orphan->crash_ns;
}

void LivenessCheck::expire_orphan(const std::string& name, KeyState& key, std::int64_t now_ns) {
    if (key.orphan && key.orphan->expires_ns && *key.orphan->expires_ns <= now_ns) {
        judge_orphan(name, *key.orphan, *key.orphan->expires_ns, nullptr);
        key.orphan.reset();
    }
}

void LivenessCheck::end_wait(std::int64_t process, std::int64_t end_ns, bool granted) {
    const Wait* found = waits_.find(process);
    if (!found)
        return;
    const Wait& wait = *found;
    const std::int64_t waited = end_ns - wait.start_ns;
    max_wait_ns_ = std::max(max_wait_ns_, waited);
    ++waits_completed_;
    if (options_.starvation_bound_ms && waited > *options_.starvation_bound_ms * 1'000'000 &&
        starved_processes_.insert(process).second) {
        ++starved_;
        violating_.add(process);
        if (starvation_violations_.size() < options_.max_violations) {
            std::string message = "process " + std::to_string(process) + " waited " +
                                  format_seconds(waited) + " for " + wait.key + " (from " +
                                  format_seconds(wait.start_ns) + ") ";
            message += granted ? "until it was granted at " + format_seconds(end_ns)
                               : "and was never granted it";
            message += ", over the starvation bound of " +
                       std::to_string(*options_.starvation_bound_ms) + " ms";
            starvation_violations_.push_back(json{{"kind", "starvation"},
                                                  {"key", wait.key},
                                                  {"message", std::move(message)},
                                                  {"witness",
                                                   {{"key", wait.key},
                                                    {"process", process},
                                                    {"start_ns", wait.start_ns},
                                                    {"start_index", wait.start_index},
                                                    {"end_ns", end_ns},
                                                    {"granted", granted},
                                                    {"waited_ms", ns_to_ms(waited)}}}});
        }
    }
    waits_.erase(process);
}

void LivenessCheck::judge_orphan(const std::string& key, const Orphan& orphan,
                                 std::int64_t until_ns, const Event* regrant) {
    if (orphan.expires_ns && *orphan.expires_ns < until_ns) {
        until_ns = *orphan.expires_ns;  // the lease freed it before anyone was granted it
        regrant = nullptr;
    }
    const std::int64_t orphaned_ns = until_ns - orphan.crash_ns;
    if (!orphan.first_waiter || orphaned_ns <= options_.liveness_bound_ms * 1'000'000)
        return;
    ++deadlocks_;
    violating_.add(orphan.holder);
    deadlock_processes_.add(orphan.holder);
    if (deadlock_violations_.size() >= options_.max_violations)
        return;
    const bool crashed = orphan.cause == Orphan::Cause::Crash;
    std::string message = key + ": process " + std::to_string(orphan.holder) +
                          (crashed ? " crashed holding it at "
                                   : "'s acquire got no answer (it may hold the lock) at ") +
                          format_seconds(orphan.crash_ns) + "; nobody was granted it for " +
                          format_seconds(orphaned_ns);
    message += regrant ? " (until process " + std::to_string(regrant->process) + " got it at " +
                             format_seconds(until_ns) + ")"
                       : " (until the end of the history)";
    message += " while process " + std::to_string(*orphan.first_waiter) +
               " was trying to acquire it (from " + format_seconds(orphan.first_wait_ns) + ")";
    json witness{{"key", key},
                 {"cause", crashed ? "crash" : "lost-acquire"},
                 {"holder", orphan.holder},
                 {"crash_ns", orphan.crash_ns},
                 {"crash_index", orphan.crash_index},
                 {"first_waiter", *orphan.first_waiter},
                 {"first_wait_ns", orphan.first_wait_ns},
                 {"orphaned_ms", ns_to_ms(orphaned_ns)},
                 {"regranted_ns", regrant ? json(until_ns) : json(nullptr)}};
    deadlock_violations_.push_back(json{{"kind", "deadlock"},
                                        {"key", key},
                                        {"message", std::move(message)},
                                        {"witness", std::move(witness)}});
}

void LivenessCheck::finish(std::int64_t end_time_ns) {
    // Deterministic order for the report, whatever the hash maps' order.
    std::vector<std::int64_t> waiting;
    waiting.reserve(waits_.size());
    for (const auto& [process, wait] : waits_)
        waiting.push_back(process);
    std::sort(waiting.begin(), waiting.end());
    for (std::int64_t process : waiting)
        end_wait(process, end_time_ns, false);

    std::vector<std::string> orphaned;
    for (const auto& [name, key] : keys_) {
        if (key.orphan)
            orphaned.push_back(name);
    }
    std::sort(orphaned.begin(), orphaned.end());
    for (const auto& name : orphaned) {
        KeyState& key = keys_[name];
        judge_orphan(name, *key.orphan, end_time_ns, nullptr);
        key.orphan.reset();
    }
}

json LivenessCheck::result() const {
    if (!lock_ops_seen_)
        return not_applicable("the history has no lock operations");
    std::vector<std::int64_t> starved(starved_processes_.begin(), starved_processes_.end());
    std::sort(starved.begin(), starved.end());
    return json{
        {"valid", violation_count() == 0},
        {"violations", violation_count()},
        {"processes", violating_.sorted()},
        {"deadlocks", deadlocks_},
        {"deadlock_processes", deadlock_processes_.sorted()},
        {"starved", starved_},
        {"starved_processes", starved},
        {"orphaned", orphaned_},
        {"waits", waits_completed_},
        {"max_wait_ms", ns_to_ms(max_wait_ns_)},
        {"handoff_ms",
         {{"count", handoffs_.count()},
          {"p50", ns_to_ms(handoffs_.quantile(0.5).count())},
          {"p99", ns_to_ms(handoffs_.quantile(0.99).count())},
          {"max", ns_to_ms(handoffs_.max().count())}}},
        {"liveness_bound_ms", options_.liveness_bound_ms},
        {"starvation_bound_ms",
         options_.starvation_bound_ms ? json(*options_.starvation_bound_ms) : json(nullptr)}};
}

json LivenessCheck::violations() const {
    json out = deadlock_violations_;
    for (const auto& v : starvation_violations_)
        out.push_back(v);
    return out;
}

}  // namespace lockbench::checker
