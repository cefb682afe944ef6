#include "checker/liveness.hpp"

#include <algorithm>

#include "checker/history_words.hpp"

namespace lockbench::checker {

using nlohmann::json;

namespace {

constexpr std::int64_t kNsPerMs = 1'000'000;

}  // namespace

LivenessCheck::LivenessCheck(LivenessOptions options) : options_(options) {}

const char* LivenessCheck::name_of(Cause cause) {
    switch (cause) {
        case Cause::Crash:
            return "crash";
        case Cause::FailedRelease:
            return "failed-release";
        case Cause::InDoubtRelease:
            return "in-doubt-release";
        case Cause::LostAcquire:
            return "lost-acquire";
    }
    return "?";
}

void LivenessCheck::on_event(const Event& event) {
    const Op op = op_of(event);
    if (op == Op::Crash) {
        on_crash(event);
        return;
    }
    if (event.is_nemesis()) {
        if (event.f == "leases-renewed" && !event.is_library())
            on_leases_renewed(event);
        else if (event.f == "late-grant" && event.is_library())
            on_late_grant(event);
        return;
    }
    if (op == Op::Acquire) {
        lock_ops_seen_ = true;
        on_acquire(event);
    } else if (op == Op::Release) {
        on_release(event);
    }
    // An `info` retires the process id (its successor gets a new one), so a wait it was in ends.
    if (event.type == EventType::Info)
        end_wait(event.process, event.time, false);
}

void LivenessCheck::on_acquire(const Event& event) {
    if (event.type == EventType::Invoke) {
        begin_acquire(event);
        return;
    }
    Acquiring* in_flight = acquiring_.find(event.process);
    if (!in_flight) {
        end_wait(event.process, event.time, event.type == EventType::Ok);
        return;
    }
    const Acquiring acquiring = *in_flight;
    KeyState& key = *acquiring.key;
    const std::string& name = *acquiring.name;
    notice_waiting(key, event.time);  // while this acquire still counts as waiting
    --key.acquires_in_flight;
    acquiring_.erase(event.process);
    // A wait is one acquire: it ends with the grant, or when the client gives up (a refusal)
    // or its process retires (`info`). Think time between attempts is not waiting.
    end_wait(event.process, event.time, event.type == EventType::Ok);

    const bool refused_held = event.type == EventType::Fail &&
                              (event.error == history::kHeld || options_.every_fail_observes);
    const Outcome outcome = event.type == EventType::Ok     ? Outcome::Granted
                            : event.type == EventType::Info ? Outcome::Unknown
                            : refused_held                  ? Outcome::RefusedHeld
                                                            : Outcome::Failed;
    settle(name, key, event.process, acquiring.invoke_ns, outcome, event.time);

    if (event.type == EventType::Info) {
        acquire_in_doubt(event, acquiring);
        return;
    }
    if (event.type == EventType::Fail) {
        if (refused_held)
            note_refusal(key, event.process, acquiring.invoke_ns, event.time);
        return;
    }
    acquire_granted(event, acquiring);
}

void LivenessCheck::begin_acquire(const Event& event) {
    auto [entry, created] = keys_.try_emplace(event.key);
    KeyState& key = entry->second;
    ++key.acquires_in_flight;
    acquiring_.set(event.process) = Acquiring{&entry->first, &key, event.lease_ms, event.time};
    // A process that asks again is not waiting on a late grant of an earlier acquire.
    in_doubt_.erase(event.process);
    Wait& wait = waits_.set(event.process);
    wait.key = event.key;
    wait.start_ns = event.time;
    wait.start_index = event.index;
    notice_waiting(key, event.time);
}

void LivenessCheck::acquire_in_doubt(const Event& event, const Acquiring& acquiring) {
    KeyState& key = *acquiring.key;
    const std::string& name = *acquiring.name;
    const InDoubtAcquire doubt{&name, acquiring.lease_ms, event.time, event.index};
    if (acquiring.late_granted_ns) {
        late_grant(event.process, doubt, *acquiring.late_granted_ns, acquiring.late_token,
                   event.time);
        return;
    }
    InDoubtAcquire& in_doubt = in_doubt_.set(event.process) = doubt;
    if (key.open_holds == 0 && !nesting_.holds(event.process, name)) {
        in_doubt.orphaned = true;
        // The lock it may have been granted is held by nobody alive, until its lease runs
        // out (on a strategy whose locks expire; seed 001's never do: T6).
        offer_orphan(name, key,
                     lost_acquire(event.process, event.time, event.index, acquiring.lease_ms),
                     event.time);
    }
}

void LivenessCheck::acquire_granted(const Event& event, const Acquiring& acquiring) {
    KeyState& key = *acquiring.key;
    const std::string& name = *acquiring.name;
    ++key.grants;
    // The lease the service applied to this grant, when it says (HISTORY.md): a crashed holder's
    // lock is due back after it, not after the one asked for.
    const std::optional<std::int64_t> lease_ms =
        event.lease_ms ? event.lease_ms : acquiring.lease_ms;
    if (nesting_.grant(event.process, name, event.token) > 1) {
        renew_reentered_holds(event, name);
        return;
    }
    holds_.set(event.process).push_back(Hold{name, event.token, event.time, lease_ms});
    ++key.open_holds;
    if (key.orphan)
        end_orphan(name, key, Ending::Grant, event.time, event.process);
    if (key.handoff_from_ns) {
        handoffs_.record(std::chrono::nanoseconds(event.time - *key.handoff_from_ns));
        key.handoff_from_ns.reset();
    }
}

void LivenessCheck::renew_reentered_holds(const Event& event, const std::string& name) {
    // A re-entry sets the lease afresh (Redisson's PEXPIRE): the hold lasts from here.
    if (std::vector<Hold>* held = holds_.find(event.process)) {
        for (Hold& hold : *held) {
            if (hold.key == name) {
                hold.granted_ns = event.time;
                if (event.lease_ms)
                    hold.lease_ms = event.lease_ms;
            }
        }
    }
}

void LivenessCheck::on_release(const Event& event) {
    if (event.type == EventType::Invoke) {
        auto [entry, created] = keys_.try_emplace(event.key);
        const std::string& name = entry->first;
        KeyState& key = entry->second;
        const HoldNesting::Released released = nesting_.release(event.process, name, event.token);
        // A release that names the orphaned grant's token frees it, whoever sends it; one
        // without a token that ends no hold of record may free whatever lock is there (seed
        // 001's unlock after a failed acquire).
        if (key.orphan &&
            ((!event.token.empty() && event.token == key.orphan->token) ||
             (event.token.empty() && released.kind == HoldNesting::Release::NotHeld))) {
            notice_waiting(key, event.time);
            end_orphan(name, key, Ending::Release, event.time, event.process);
        }
        if (released.kind != HoldNesting::Release::Ended)
            return;
        if (key.open_holds > 0)
            --key.open_holds;
        if (key.acquires_in_flight > 0)
            key.handoff_from_ns = event.time;
        // The client stops relying on the lock as it asks to give it back; whether the server
        // freed it, its completion says.
        if (std::optional<Hold> hold = take_hold(released.owner, name)) {
            releasing_.set(event.process) =
                Releasing{&name, &key, released.owner, std::move(*hold), key.grants};
        }
        return;
    }
    Releasing* in_flight = releasing_.find(event.process);
    if (!in_flight)
        return;
    Releasing releasing = std::move(*in_flight);
    releasing_.erase(event.process);
    const bool freed = event.type == EventType::Ok ||
                       (event.type == EventType::Fail &&
                        (event.error == history::kNotHeld || options_.every_fail_observes));
    KeyState& key = *releasing.key;
    // A grant of the key since the release began: the lock was free then, whatever it did.
    if (freed || key.open_holds > 0 || key.grants != releasing.grants_at_invoke)
        return;
    // A `fail` did not happen: the lock is still there. An `info` may not have happened.
    const bool failed = event.type == EventType::Fail;
    offer_orphan(*releasing.name, key,
                 orphan_of(failed ? Cause::FailedRelease : Cause::InDoubtRelease, failed,
                           releasing.owner, releasing.hold, event.time, event.index, event.error),
                 event.time);
}

void LivenessCheck::on_crash(const Event& event) {
    const std::int64_t process = *event.target;
    if (Acquiring* in_flight = acquiring_.find(process)) {
        const Acquiring acquiring = *in_flight;
        KeyState& key = *acquiring.key;
        notice_waiting(key, event.time);
        --key.acquires_in_flight;
        acquiring_.erase(process);
        // Its acquire stays in flight forever: it may have been granted, to nobody alive.
        settle(*acquiring.name, key, process, acquiring.invoke_ns, Outcome::Unknown, event.time);
        if (acquiring.late_granted_ns) {
            late_grant(process, {acquiring.name, acquiring.lease_ms, event.time, event.index},
                       *acquiring.late_granted_ns, acquiring.late_token, event.time);
        } else if (key.open_holds == 0 && !nesting_.holds(process, *acquiring.name)) {
            offer_orphan(*acquiring.name, key,
                         lost_acquire(process, event.time, event.index, acquiring.lease_ms),
                         event.time);
        }
    }
    end_wait(process, event.time, false);
    if (Releasing* in_flight = releasing_.find(process)) {
        // It died releasing: the release may or may not have reached the server.
        Releasing releasing = std::move(*in_flight);
        releasing_.erase(process);
        KeyState& key = *releasing.key;
        if (key.open_holds == 0 && key.grants == releasing.grants_at_invoke) {
            offer_orphan(*releasing.name, key,
                         orphan_of(Cause::Crash, false, releasing.owner, releasing.hold, event.time,
                                   event.index, {}),
                         event.time);
        }
    }
    for (const auto& name : nesting_.drop(process)) {
        auto entry = keys_.find(name);
        if (entry == keys_.end())
            continue;
        KeyState& key = entry->second;
        if (key.open_holds > 0)
            --key.open_holds;
        const Hold hold = take_hold(process, name).value_or(Hold{name, {}, event.time, {}});
        offer_orphan(entry->first, key,
                     orphan_of(Cause::Crash, true, process, hold, event.time, event.index, {}),
                     event.time);
    }
    if (std::vector<Hold>* held = holds_.find(process)) {
        held->clear();
        holds_.erase(process);
    }
}

std::optional<LivenessCheck::Hold> LivenessCheck::take_hold(std::int64_t owner,
                                                            const std::string& key) {
    std::vector<Hold>* held = holds_.find(owner);
    if (!held)
        return std::nullopt;
    for (auto it = held->begin(); it != held->end(); ++it) {
        if (it->key != key)
            continue;
        Hold hold = std::move(*it);
        held->erase(it);
        if (held->empty())
            holds_.erase(owner);  // empty, so a recycled slot starts empty
        return hold;
    }
    return std::nullopt;
}

void LivenessCheck::on_leases_renewed(const Event& event) {
    // Read here, where it matters, and passed over when it is not as HISTORY.md writes it, as any
    // other nemesis event is.
    const nlohmann::json value = nlohmann::json::parse(event.value_json, nullptr, false);
    if (!value.is_object() || !value.contains("fault_time") || !value.contains("by_ms") ||
        !value["fault_time"].is_number_integer() || !value["by_ms"].is_number_integer() ||
        value["by_ms"].get<std::int64_t>() < 0)
        return;
    renewals_.push_back(
        {value["fault_time"].get<std::int64_t>(), event.time, value["by_ms"].get<std::int64_t>()});
    // An orphan whose lease the renewal reaches waits for its new bound; a waiter seen past the
    // old one proves nothing any more.
    auto renewed_out = [this](Orphan& orphan) {
        apply_renewals(orphan);
        return orphan.evidence && orphan.evidence->at_ns <= orphan.deadline_ns;
    };
    for (auto& [name, key] : keys_) {
        if (key.orphan && renewed_out(*key.orphan))
            key.orphan->evidence.reset();
        std::erase_if(key.settling, renewed_out);
    }
}

void LivenessCheck::on_late_grant(const Event& event) {
    // Read here, where it matters; one that names no process or phase, or no in-doubt acquire,
    // is passed over (the linearizability check names it).
    const nlohmann::json value = nlohmann::json::parse(event.value_json, nullptr, false);
    if (!value.is_object() || !value.contains("process") || !value.contains("phase") ||
        !value["process"].is_number_integer() || !value["phase"].is_string())
        return;
    const auto process = value["process"].get<std::int64_t>();
    const std::string phase = value["phase"].get<std::string>();
    std::string token;
    if (value.contains("token") && value["token"].is_string())
        token = value["token"].get<std::string>();
    if (phase == "granted") {
        if (Acquiring* in_flight = acquiring_.find(process)) {
            // The grant overtook the acquire's `info`: applied when that comes.
            if (*in_flight->name == event.key) {
                in_flight->late_granted_ns = event.time;
                in_flight->late_token = token;
            }
            return;
        }
        const InDoubtAcquire* found = in_doubt_.find(process);
        if (!found || *found->name != event.key)
            return;
        const InDoubtAcquire doubt = *found;
        in_doubt_.erase(process);
        late_grant(process, doubt, event.time, token, event.time);
        return;
    }
    if (phase == "abandoned") {
        // Whatever that acquire may have held is gone: it no longer excuses a refusal after
        // another's late release. Its orphan, if any, keeps its bound (a lease, generously).
        if (const InDoubtAcquire* found = in_doubt_.find(process);
            found && *found->name == event.key)
            in_doubt_.erase(process);
        return;
    }
    if (phase != "released")
        return;
    const std::string* const* held = late_held_.find(process);
    if (!held || **held != event.key)
        return;
    const std::string& name = **held;
    late_held_.erase(process);
    KeyState& key = keys_.find(name)->second;
    // Granted again since, or superseded: the orphan is no longer this grant's.
    if (!key.orphan || key.orphan->holder != process || !key.orphan->late_granted_ns ||
        key.orphan->late_released_ns)
        return;
    Orphan& orphan = *key.orphan;
    const bool freed = value.contains("ok") && value["ok"].is_boolean() && value["ok"].get<bool>();
    if (!freed) {
        // The lock may still be there: it stays until its bound, as a failed release's does.
        orphan.late_release_failed_ns = event.time;
        return;
    }
    notice_waiting(key, event.time);  // while the lock certainly stayed
    if (orphan.evidence) {
        // Stuck past its bound already: that ends with this release.
        end_orphan(name, key, Ending::Release, event.time, process);
        return;
    }
    // Another acquire of the key answered in doubt may hold the lock now (a ZooKeeper node its
    // client has not deleted yet, which reached the front of the queue when this one went): a
    // refusal after this release proves nothing stuck.
    if (another_acquire_in_doubt(name, process)) {
        end_orphan(name, key, Ending::Release, event.time, process);
        return;
    }
    // Free from here: a waiter refused past the release (and the grace a refusal's reply in
    // flight needs), with nobody holding it, proves the lock stuck, as past a lease.
    orphan.late_released_ns = event.time;
    orphan.stays = false;
    orphan.bound_ns = event.time;
    orphan.deadline_ns = event.time + kExpiryGraceMs * kNsPerMs;
}

void LivenessCheck::late_grant(std::int64_t process, const InDoubtAcquire& doubt,
                               std::int64_t granted_ns, const std::string& token,
                               std::int64_t now_ns) {
    const std::string& name = *doubt.name;
    KeyState& key = keys_.find(name)->second;
    late_held_.set(process) = doubt.name;
    // A re-entry of a lock the process holds of record: that hold is judged as it is.
    if (nesting_.holds(process, name))
        return;
    // The library kept the acquire going until it granted it: its lease may have started any
    // time until then, and then it certainly holds the lock - nobody alive uses it.
    auto make_certain = [&](Orphan& orphan) {
        orphan.late_granted_ns = granted_ns;
        orphan.granted_ns = granted_ns;
        orphan.token = token;
        orphan.stays = !orphan.lease_ms;
        if (orphan.lease_ms)
            orphan.bound_ns = counted_from(orphan) + *orphan.lease_ms * kNsPerMs;
        set_deadline(orphan);
        apply_renewals(orphan);
    };
    if (key.orphan && key.orphan->holder == process && key.orphan->cause == Cause::LostAcquire &&
        !key.orphan->late_granted_ns) {
        Orphan& orphan = *key.orphan;
        make_certain(orphan);
        // A waiter seen past the bound counted from the answer proves nothing any more: the
        // lock may have been granted since, to this acquire.
        if (orphan.evidence && orphan.evidence->at_ns <= orphan.deadline_ns)
            orphan.evidence.reset();
        return;
    }
    if (key.orphan) {
        // A grant: the lock was free for it, whoever's orphan held it before.
        notice_waiting(key, now_ns);
        end_orphan(name, key, Ending::Grant, now_ns, process);
    }
    Orphan orphan = lost_acquire(process, doubt.answered_ns, doubt.answered_index, doubt.lease_ms);
    make_certain(orphan);
    offer_orphan(name, key, std::move(orphan), now_ns, doubt.orphaned);
}

bool LivenessCheck::another_acquire_in_doubt(const std::string& name, std::int64_t process) const {
    for (const auto& [other, doubt] : in_doubt_) {
        if (other != process && *doubt.name == name)
            return true;
    }
    return false;
}

std::int64_t LivenessCheck::counted_from(const Orphan& orphan) {
    return std::max(orphan.orphaned_ns, orphan.late_granted_ns.value_or(orphan.orphaned_ns));
}

void LivenessCheck::apply_renewals(Orphan& orphan) const {
    // A lock its adapter released is gone, whatever a new leader renews.
    if (!orphan.bound_ns || !orphan.lease_ms || orphan.late_released_ns)
        return;
    bool moved = false;
    for (const Renewal& r : renewals_) {
        // Alive at the new leader's start, which came after the fault: renewed from then on.
        if (*orphan.bound_ns <= r.fault_ns)
            continue;
        const std::int64_t renewed = r.at_ns + (*orphan.lease_ms + r.by_ms) * kNsPerMs;
        if (renewed > *orphan.bound_ns) {
            orphan.bound_ns = renewed;
            moved = true;
        }
    }
    if (moved)
        set_deadline(orphan);
}

void LivenessCheck::set_deadline(Orphan& orphan) const {
    if (!orphan.bound_ns) {
        // Nothing frees it by itself: its client has the liveness bound to clean up.
        orphan.deadline_ns = counted_from(orphan) + options_.liveness_bound_ms * kNsPerMs;
        return;
    }
    std::int64_t grace_ns = kExpiryGraceMs * kNsPerMs;
    // A holder that is gone (crashed, or never learnt of its grant) leaves its lock to expiry
    // alone, and ZooKeeper expires a session up to one tick late - a tick is at most half the
    // session timeout (sessions are clamped to 2-20 ticks), and a user's ensemble may tick
    // slowly. A live holder's session does not expire at all, so there only the client's own
    // cleanup frees the node, and the lease stands as the bound for that.
    if (orphan.cause == Cause::Crash || orphan.cause == Cause::LostAcquire)
        grace_ns += *orphan.lease_ms * kNsPerMs / 2;
    orphan.deadline_ns = *orphan.bound_ns + grace_ns;
}

LivenessCheck::Orphan LivenessCheck::lost_acquire(std::int64_t process, std::int64_t now_ns,
                                                  std::uint64_t index,
                                                  std::optional<std::int64_t> lease_ms) const {
    Orphan orphan;
    orphan.cause = Cause::LostAcquire;
    orphan.holder = process;
    orphan.orphaned_ns = now_ns;
    orphan.orphaned_index = index;
    orphan.lease_ms = lease_ms;
    if (lease_ms)
        orphan.bound_ns = now_ns + *lease_ms * kNsPerMs;
    set_deadline(orphan);
    apply_renewals(orphan);
    return orphan;
}

LivenessCheck::Orphan LivenessCheck::orphan_of(Cause cause, bool certain, std::int64_t holder,
                                               const Hold& hold, std::int64_t now_ns,
                                               std::uint64_t index, std::string error) const {
    Orphan orphan;
    orphan.cause = cause;
    orphan.stays = certain && !hold.lease_ms;
    orphan.holder = holder;
    orphan.token = hold.token;
    orphan.granted_ns = hold.granted_ns;
    orphan.orphaned_ns = now_ns;
    orphan.orphaned_index = index;
    orphan.error = std::move(error);
    orphan.lease_ms = hold.lease_ms;
    // Counted from the orphaning, not the grant: a watchdog renews its lock until the release
    // begins (or the crash), and a ZooKeeper session lives as long as its client speaks.
    if (hold.lease_ms)
        orphan.bound_ns = now_ns + *hold.lease_ms * kNsPerMs;
    set_deadline(orphan);
    apply_renewals(orphan);
    return orphan;
}

void LivenessCheck::offer_orphan(const std::string& name, KeyState& key, Orphan orphan,
                                 std::int64_t now_ns, bool counted) {
    if (!counted) {
        ++orphaned_;
        ++orphaned_by_[static_cast<std::size_t>(orphan.cause)];
    }
    if (key.orphan) {
        // One lock per key: whichever orphan may hold it longest is the one to wait out. A lock
        // that never frees outranks any lease; of two such, the older is the lock.
        const std::optional<std::int64_t>& held_until = key.orphan->bound_ns;
        const bool later = held_until && (!orphan.bound_ns || *orphan.bound_ns > *held_until);
        if (!later)
            return;
        notice_waiting(key, now_ns);
        end_orphan(name, key, Ending::Superseded, now_ns, orphan.holder);
    }
    key.orphan = std::move(orphan);
}

void LivenessCheck::notice_waiting(KeyState& key, std::int64_t now_ns) {
    if (!key.orphan || key.orphan->evidence || !key.orphan->stays || key.open_holds > 0 ||
        key.acquires_in_flight == 0 || now_ns <= key.orphan->deadline_ns)
        return;
    // The lock certainly stays, so anyone waiting past the deadline waits in vain: the one that
    // has waited longest.
    const Acquiring* longest = nullptr;
    std::int64_t waiter = 0;
    for (const auto& [process, acquiring] : acquiring_) {
        if (acquiring.key == &key &&
            (!longest || acquiring.invoke_ns < longest->invoke_ns ||
             (acquiring.invoke_ns == longest->invoke_ns && process < waiter))) {
            longest = &acquiring;
            waiter = process;
        }
    }
    if (!longest)
        return;
    Evidence evidence;
    evidence.waiter = waiter;
    evidence.wait_start_ns = longest->invoke_ns;
    evidence.at_ns = std::max(key.orphan->deadline_ns, longest->invoke_ns);
    evidence.unresolved = unresolved_before(key, evidence.at_ns, waiter);
    key.orphan->evidence = evidence;
}

void LivenessCheck::note_refusal(KeyState& key, std::int64_t waiter, std::int64_t invoke_ns,
                                 std::int64_t now_ns) {
    if (!key.orphan || key.orphan->evidence || key.open_holds > 0 ||
        now_ns <= key.orphan->deadline_ns)
        return;
    Evidence evidence;
    evidence.waiter = waiter;
    evidence.wait_start_ns = invoke_ns;
    // The refusal may have been decided anywhere in its wait: only its end is surely past the
    // deadline, and a grant whose acquire began before that end may have come first.
    evidence.at_ns = now_ns;
    evidence.refused = true;
    evidence.until_ns = now_ns;
    evidence.unresolved = unresolved_before(key, now_ns, waiter);
    key.orphan->evidence = evidence;
}

std::uint32_t LivenessCheck::unresolved_before(const KeyState& key, std::int64_t at_ns,
                                               std::int64_t waiter) const {
    if (key.acquires_in_flight == 0)
        return 0;
    std::uint32_t unresolved = 0;
    for (const auto& [process, acquiring] : acquiring_) {
        if (acquiring.key == &key && process != waiter && acquiring.invoke_ns < at_ns)
            ++unresolved;
    }
    return unresolved;
}

void LivenessCheck::settle(const std::string& name, KeyState& key, std::int64_t process,
                           std::int64_t invoke_ns, Outcome outcome, std::int64_t now_ns) {
    // True when this acquire's end explains the waiter: the lock may have been granted (or,
    // where it may have freed, taken by an acquire that got no answer) before the waiter's
    // moment, so nothing proves it stuck.
    auto explains = [&](Orphan& orphan) {
        Evidence& evidence = *orphan.evidence;
        if (process == evidence.waiter) {
            if (outcome == Outcome::Granted && invoke_ns <= evidence.at_ns)
                return true;
            if (!evidence.until_ns)
                evidence.until_ns = now_ns;
            evidence.refused = evidence.refused || outcome == Outcome::RefusedHeld;
            return false;
        }
        if (invoke_ns >= evidence.at_ns)
            return false;
        if (outcome == Outcome::Granted || (outcome == Outcome::Unknown && !orphan.stays))
            return true;
        if (evidence.unresolved > 0)
            --evidence.unresolved;
        return false;
    };
    if (key.orphan && key.orphan->evidence && explains(*key.orphan))
        key.orphan->evidence.reset();
    for (auto it = key.settling.begin(); it != key.settling.end();) {
        if (explains(*it)) {
            it = key.settling.erase(it);
        } else if (it->evidence->unresolved == 0) {
            report_deadlock(name, *it);
            it = key.settling.erase(it);
        } else {
            ++it;
        }
    }
}

void LivenessCheck::end_orphan(const std::string& name, KeyState& key, Ending ending,
                               std::int64_t now_ns, std::int64_t by) {
    Orphan orphan = std::move(*key.orphan);
    key.orphan.reset();
    if (!orphan.evidence)
        return;
    orphan.ending = ending;
    orphan.ended_ns = now_ns;
    orphan.ended_by = by;
    if (orphan.evidence->unresolved == 0)
        report_deadlock(name, orphan);
    else
        key.settling.push_back(std::move(orphan));
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
                                  format_seconds(waited) + " for " + lock_name(wait.key) +
                                  " (from " + format_seconds(wait.start_ns) + ") ";
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

void LivenessCheck::report_deadlock(const std::string& key, const Orphan& orphan) {
    ++deadlocks_;
    violating_.add(orphan.holder);
    deadlock_processes_.add(orphan.holder);
    if (deadlock_violations_.size() >= options_.max_violations)
        return;
    const Evidence& evidence = *orphan.evidence;
    const std::int64_t bound_ns = orphan.bound_ns.value_or(counted_from(orphan));
    const std::int64_t until_ns =
        std::max(evidence.until_ns.value_or(orphan.ended_ns), evidence.at_ns);
    const std::int64_t past_bound_ns = until_ns - bound_ns;

    std::string message =
        key_prefix(key) + how_orphaned(orphan) + how_it_should_have_freed(orphan, bound_ns) +
        how_the_waiter_was_stuck(orphan, until_ns, past_bound_ns) + how_the_orphan_ended(orphan);
    deadlock_violations_.push_back(
        json{{"kind", "deadlock"},
             {"key", key},
             {"message", std::move(message)},
             {"witness", deadlock_witness(key, orphan, until_ns, past_bound_ns)}});
}

std::string LivenessCheck::how_orphaned(const Orphan& orphan) {
    std::string text;
    if (orphan.late_granted_ns) {
        text += "process " + std::to_string(orphan.holder) + "'s acquire, answered in doubt at " +
                format_seconds(orphan.orphaned_ns) + ", was granted by the library at " +
                format_seconds(*orphan.late_granted_ns);
        if (!orphan.token.empty())
            text += " (token " + orphan.token + ")";
        if (orphan.late_release_failed_ns) {
            text += ", and its adapter failed to release it at " +
                    format_seconds(*orphan.late_release_failed_ns);
        }
    } else if (orphan.cause == Cause::LostAcquire) {
        text += "process " + std::to_string(orphan.holder) +
                "'s acquire got no answer (it may hold the lock) at " +
                format_seconds(orphan.orphaned_ns);
    } else {
        text += who(orphan.holder, orphan.token);
        if (orphan.granted_ns)
            text += ", granted it at " + format_seconds(*orphan.granted_ns) + ",";
        text += orphan.cause == Cause::Crash           ? " crashed holding it at "
                : orphan.cause == Cause::FailedRelease ? " failed to release it at "
                                                       : " got no answer to its release at ";
        text += format_seconds(orphan.orphaned_ns);
        if (!orphan.error.empty())
            text += " (" + orphan.error + ")";
    }
    return text;
}

std::string LivenessCheck::how_it_should_have_freed(const Orphan& orphan, std::int64_t bound_ns) {
    if (orphan.late_released_ns) {
        return " and released by its adapter at " + format_seconds(*orphan.late_released_ns) +
               ", yet process ";
    }
    if (orphan.bound_ns) {
        return "; its lease of " + std::to_string(*orphan.lease_ms) + " ms ran out by " +
               format_seconds(bound_ns) + ", yet process ";
    }
    return "; it has no lease, so only a release frees it, and process ";
}

std::string LivenessCheck::how_the_waiter_was_stuck(const Orphan& orphan, std::int64_t until_ns,
                                                    std::int64_t past_bound_ns) {
    const Evidence& evidence = *orphan.evidence;
    return std::to_string(evidence.waiter) +
           (evidence.refused ? " was refused it at " : " was still waiting for it at ") +
           format_seconds(until_ns) + " (waiting since " + format_seconds(evidence.wait_start_ns) +
           "), " + format_seconds(past_bound_ns) +
           (orphan.late_released_ns ? " after the release"
            : orphan.bound_ns       ? " past the lease"
                                    : " after that");
}

std::string LivenessCheck::how_the_orphan_ended(const Orphan& orphan) {
    std::string text = "; nobody was granted it ";
    switch (orphan.ending) {
        case Ending::Grant:
            text += "until process " + std::to_string(orphan.ended_by) + " got it at " +
                    format_seconds(orphan.ended_ns);
            break;
        case Ending::Release:
            text += "until process " + std::to_string(orphan.ended_by) + " released it at " +
                    format_seconds(orphan.ended_ns);
            break;
        case Ending::Superseded:
            text += "until process " + std::to_string(orphan.ended_by) +
                    "'s unanswered acquire may have taken it at " + format_seconds(orphan.ended_ns);
            break;
        case Ending::EndOfHistory:
            text += "until the end of the history";
            break;
    }
    return text;
}

json LivenessCheck::deadlock_witness(const std::string& key, const Orphan& orphan,
                                     std::int64_t until_ns, std::int64_t past_bound_ns) {
    static constexpr const char* kEndings[] = {"grant", "release", "superseded", "end"};
    const Evidence& evidence = *orphan.evidence;
    return json{
        {"key", key},
        {"cause", name_of(orphan.cause)},
        {"holder", orphan.holder},
        {"token", orphan.token},
        {"granted_ns", orphan.granted_ns ? json(*orphan.granted_ns) : json(nullptr)},
        // crash_ns and crash_index name the orphaning event, whatever its cause (the story's
        // fields since crashes were the only cause).
        {"crash_ns", orphan.orphaned_ns},
        {"crash_index", orphan.orphaned_index},
        {"orphaned_ns", orphan.orphaned_ns},
        {"orphaned_index", orphan.orphaned_index},
        {"error", orphan.error},
        {"lease_ms", orphan.lease_ms ? json(*orphan.lease_ms) : json(nullptr)},
        {"bound_ns", orphan.bound_ns ? json(*orphan.bound_ns) : json(nullptr)},
        {"deadline_ns", orphan.deadline_ns},
        {"first_waiter", evidence.waiter},
        {"first_wait_ns", evidence.wait_start_ns},
        {"waiter_refused", evidence.refused},
        {"waited_until_ns", until_ns},
        {"waited_past_bound_ms", ns_to_ms(past_bound_ns)},
        {"orphaned_ms", ns_to_ms(orphan.ended_ns - orphan.orphaned_ns)},
        {"ended_by", kEndings[static_cast<std::size_t>(orphan.ending)]},
        {"regranted_ns", orphan.ending == Ending::Grant ? json(orphan.ended_ns) : json(nullptr)},
        // A lost acquire the library granted late, and its adapter's release of it (HISTORY.md).
        {"late_granted_ns", orphan.late_granted_ns ? json(*orphan.late_granted_ns) : json(nullptr)},
        {"late_released_ns",
         orphan.late_released_ns ? json(*orphan.late_released_ns) : json(nullptr)},
        {"late_release_failed_ns",
         orphan.late_release_failed_ns ? json(*orphan.late_release_failed_ns) : json(nullptr)}};
}

void LivenessCheck::finish(std::int64_t end_time_ns) {
    // Deterministic order for the report, whatever the hash maps' order.
    std::vector<std::string> orphaned;
    for (const auto& [name, key] : keys_) {
        if (key.orphan || !key.settling.empty())
            orphaned.push_back(name);
    }
    std::sort(orphaned.begin(), orphaned.end());
    for (const auto& name : orphaned)
        notice_waiting(keys_.find(name)->second, end_time_ns);

    std::vector<std::int64_t> waiting;
    waiting.reserve(waits_.size());
    for (const auto& [process, wait] : waits_)
        waiting.push_back(process);
    std::sort(waiting.begin(), waiting.end());
    for (std::int64_t process : waiting)
        end_wait(process, end_time_ns, false);

    for (const auto& name : orphaned) {
        KeyState& key = keys_.find(name)->second;
        if (key.orphan)
            end_orphan(name, key, Ending::EndOfHistory, end_time_ns, -1);
        // An acquire still in flight at the end may have been granted - except a lock that
        // certainly stays.
        for (const Orphan& orphan : key.settling) {
            if (orphan.stays)
                report_deadlock(name, orphan);
        }
        key.settling.clear();
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
        {"orphaned_by",
         {{name_of(Cause::Crash), orphaned_by_[0]},
          {name_of(Cause::FailedRelease), orphaned_by_[1]},
          {name_of(Cause::InDoubtRelease), orphaned_by_[2]},
          {name_of(Cause::LostAcquire), orphaned_by_[3]}}},
        {"waits", waits_completed_},
        {"max_wait_ms", ns_to_ms(max_wait_ns_)},
        {"handoff_ms",
         {{"count", handoffs_.count()},
          {"p50", ns_to_ms(handoffs_.quantile(0.5).count())},
          {"p99", ns_to_ms(handoffs_.quantile(0.99).count())},
          {"max", ns_to_ms(handoffs_.max().count())}}},
        {"liveness_bound_ms", options_.liveness_bound_ms},
        {"expiry_grace_ms", kExpiryGraceMs},
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
