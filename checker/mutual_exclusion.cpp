#include "checker/mutual_exclusion.hpp"

#include <algorithm>

#include "checker/incident.hpp"

namespace lockbench::checker {

using nlohmann::json;

MutualExclusionCheck::MutualExclusionCheck(std::size_t max_violations)
    : StreamingCheck(max_violations) {}

void MutualExclusionCheck::on_event(const Event& event) {
    switch (op_of(event)) {
        case Op::Acquire:
            lock_ops_seen_ = true;
            if (event.type == EventType::Ok)
                on_grant(event);
            return;
        case Op::Release:
            if (event.type == EventType::Invoke) {
                const auto released = nesting_.release(event.process, event.key, event.token);
                if (released.kind == HoldNesting::Release::Ended)
                    end_hold(event.key, released.owner, event.time, false);
                ReleaseInFlight& r = releasing_.set(event.process);
                r.holds = &keys_[event.key];
                r.token = event.token;
                r.invoked_ns = event.time;
            } else if (ReleaseInFlight* r = releasing_.find(event.process)) {
                if (event.type == EventType::Ok) {
                    // Assigned field by field: the strings keep their buffers.
                    auto& last = r->holds->last_release;
                    if (!last)
                        last = Released{};  // clang 14 rejects emplace() (member initializers)
                    last->process = event.process;
                    last->token = r->token;
                    last->time_ns = event.time;
                    last->index = event.index;
                    last->invoked_ns = r->invoked_ns;
                    blame_suspect(*last);
                }
                if (!suspects_.empty())
                    suspects_.erase(event.process);
                releasing_.erase(event.process);
            }
            return;
        case Op::Crash:
            for (const auto& key : nesting_.drop(*event.target)) {
                end_hold(key, *event.target, event.time, true);
                ++ended_by_crash_;
            }
            return;
        default:
            return;
    }
}

void MutualExclusionCheck::on_grant(const Event& event) {
    KeyHolds& key = keys_[event.key];
    if (nesting_.grant(event.process, event.key, event.token) > 1) {
        ++nested_grants_;
        // Re-entering a shared hold in exclusive mode upgrades it: from now on it conflicts with
        // the other shared holders (exclusive ones already conflicted with it).
        if (event.mode != LockMode::Exclusive)
            return;
        auto self = std::find_if(key.open.begin(), key.open.end(),
                                 [&](const Hold& h) { return h.process == event.process; });
        if (self == key.open.end() || self->mode == LockMode::Exclusive)
            return;
        self->mode = LockMode::Exclusive;
        ++key.exclusive;
        Hold upgraded = *self;
        upgraded.start_ns = event.time;
        upgraded.start_index = event.index;
        for (const Hold& other : key.open) {
            if (other.mode == LockMode::Shared)
                add_violation(event.key, key, other, upgraded);
        }
        return;
    }
    ++holds_;
    Hold hold;
    hold.id = next_hold_id_++;
    hold.process = event.process;
    hold.token = event.token;
    hold.mode = event.mode;
    hold.start_ns = event.time;
    hold.start_index = event.index;
    // Without a conflict (the common case) this is O(1); each conflicting pair counts once.
    const std::size_t conflicts =
        event.mode == LockMode::Exclusive ? key.open.size() : key.exclusive;
    if (conflicts > 0) {
        for (const Hold& other : key.open) {
            if (event.mode == LockMode::Exclusive || other.mode == LockMode::Exclusive)
                add_violation(event.key, key, other, hold);
        }
    }
    if (hold.mode == LockMode::Exclusive)
        ++key.exclusive;
    key.open.push_back(std::move(hold));
}

std::optional<MutualExclusionCheck::Released> MutualExclusionCheck::freed_under(
    const KeyHolds& holds, const Hold& earlier) {
    const auto& r = holds.last_release;
    if (!r || earlier.mode != LockMode::Exclusive || r->time_ns < earlier.start_ns ||
        r->invoked_ns >= earlier.start_ns || r->process == earlier.process ||
        (!r->token.empty() && r->token == earlier.token)) {
        return std::nullopt;
    }
    return r;
}

void MutualExclusionCheck::add_violation(const std::string& key, const KeyHolds& holds,
                                         const Hold& earlier, const Hold& later) {
    count_violation({earlier.process, later.process});
    if (observer_)
        observer_->overlap_found(earlier.id, later.id, later.start_ns);
    count_incident(key, earlier, later);
    const auto released_by = freed_under(holds, earlier);
    if (released_by)
        processes_.add(released_by->process);
    const bool listed = witnesses_.size() < max_violations_;
    const std::size_t index = witnesses_.size();
    if (!released_by && earlier.mode == LockMode::Exclusive) {
        // A late release still in flight may already have run (its reply can come after the
        // grant it made possible): if it turns out to have deleted something, it is the suspect.
        for (const auto& [process, release] : releasing_) {
            if (release.holds == &holds && release.invoked_ns < earlier.start_ns &&
                process != earlier.process &&
                (release.token.empty() || release.token != earlier.token)) {
                auto& suspect = suspects_[process];
                if (listed)
                    suspect.witnesses.push_back(index);
            }
        }
    }
    if (!listed)
        return;
    witnesses_.push_back(Witness{key, earlier, later, released_by});
    witnesses_of_hold_[earlier.id].push_back(index);
    witnesses_of_hold_[later.id].push_back(index);
}

void MutualExclusionCheck::count_incident(const std::string& key, const Hold& earlier,
                                          const Hold& later) {
    auto [it, fresh] = open_incidents_.try_emplace(earlier.id, kUnlisted);
    if (fresh) {
        ++incident_count_;
        if (incidents_.size() < max_violations_) {
            it->second = incidents_.size();
            incidents_.push_back({key, earlier, 0, {}, {}, later.start_ns, later.start_ns});
        }
    }
    if (it->second == kUnlisted)
        return;
    incident_of_later_.try_emplace(later.id, it->second);
    IncidentTally& incident = incidents_[it->second];
    const auto add_sorted = [](std::vector<std::int64_t>& ps, std::int64_t process) {
        if (auto pos = std::lower_bound(ps.begin(), ps.end(), process);
            pos == ps.end() || *pos != process)
            ps.insert(pos, process);
    };
    if (incident.grants > 0)
        add_sorted(incident.later_processes, later.process);
    ++incident.grants;
    incident.first_overlap_ns = std::min(incident.first_overlap_ns, later.start_ns);
    incident.last_overlap_ns = std::max(incident.last_overlap_ns, later.start_ns);
    add_sorted(incident.processes, later.process);
}

void MutualExclusionCheck::attribute(Aftermath what, const std::string& key_name,
                                     std::int64_t process) {
    auto key = keys_.find(key_name);
    if (key == keys_.end())
        return;
    auto hold = std::find_if(key->second.open.begin(), key->second.open.end(),
                             [&](const Hold& h) { return h.process == process; });
    if (hold == key->second.open.end())
        return;
    std::size_t index = kUnlisted;
    if (auto it = open_incidents_.find(hold->id); it != open_incidents_.end())
        index = it->second;
    else if (auto later = incident_of_later_.find(hold->id); later != incident_of_later_.end())
        index = later->second;
    if (index == kUnlisted)
        return;
    ++(what == Aftermath::LostUpdate ? incidents_[index].lost_updates
                                     : incidents_[index].fencing_saves);
}

std::string MutualExclusionCheck::message_of(const IncidentTally& incident) {
    const Hold& h = incident.hold;
    std::string message = key_prefix(incident.key) + who(h.process, h.token) + " held it from " +
                          format_seconds(h.start_ns) +
                          (h.end_ns ? " to " + format_seconds(*h.end_ns) : " to the end");
    std::string processes;
    for (std::size_t i = 0; i < incident.processes.size(); ++i) {
        if (i == 8) {
            processes += ", …";
            break;
        }
        processes += (i ? ", " : "") + std::to_string(incident.processes[i]);
    }
    message += "; " + std::to_string(incident.grants) +
               (incident.grants == 1 ? " grant" : " grants") + " to " +
               (incident.processes.size() == 1 ? "process " : "processes ") + processes +
               " overlapped it";
    message += incident.first_overlap_ns == incident.last_overlap_ns
                   ? " at " + format_seconds(incident.first_overlap_ns)
                   : " from " + format_seconds(incident.first_overlap_ns) + " to " +
                         format_seconds(incident.last_overlap_ns);
    const auto count = [](std::uint64_t n, const char* one, const char* many) {
        return std::to_string(n) + " " + (n == 1 ? one : many);
    };
    if (incident.lost_updates > 0)
        message += "; then " + count(incident.lost_updates, "lost update", "lost updates");
    if (incident.fencing_saves > 0) {
        message += std::string(incident.lost_updates > 0 ? " and " : "; then ") + "the fence " +
                   "rejected " + count(incident.fencing_saves, "stale write", "stale writes");
    }
    return message;
}

void MutualExclusionCheck::blame_suspect(const Released& release) {
    auto it = suspects_.find(release.process);
    if (it == suspects_.end())
        return;
    processes_.add(release.process);
    for (const std::size_t i : it->second.witnesses) {
        if (!witnesses_[i].released_by)
            witnesses_[i].released_by = release;
    }
}

std::string MutualExclusionCheck::message_of(const Witness& w) {
    const Hold& earlier = w.first;
    const Hold& later = w.second;
    std::string message = key_prefix(w.key) + who(later.process, later.token) + " acquired ";
    const bool shared_involved = earlier.mode == LockMode::Shared || later.mode == LockMode::Shared;
    if (shared_involved)
        message += std::string(lock_mode_word(later.mode)) + " ";
    message += "at " + format_seconds(later.start_ns) + " while " +
               who(earlier.process, earlier.token) + " held it ";
    if (shared_involved)
        message += std::string(lock_mode_word(earlier.mode)) + " ";
    message += "since " + format_seconds(earlier.start_ns);
    if (w.released_by) {
        message += " (process " + std::to_string(w.released_by->process) +
                   "'s release of another grant, completed at " +
                   format_seconds(w.released_by->time_ns) + ", may have freed it)";
    }
    return message;
}

void MutualExclusionCheck::end_hold(const std::string& key_name, std::int64_t process,
                                    std::int64_t time_ns, bool crashed) {
    auto key_it = keys_.find(key_name);
    if (key_it == keys_.end())
        return;
    KeyHolds& key = key_it->second;
    auto hold = std::find_if(key.open.begin(), key.open.end(),
                             [&](const Hold& h) { return h.process == process; });
    if (hold == key.open.end())
        return;
    if (observer_) {
        observer_->hold_ended({.id = hold->id,
                               .key = &key_it->first,
                               .process = hold->process,
                               .mode = hold->mode,
                               .start_ns = hold->start_ns,
                               .end_ns = std::max(time_ns, hold->start_ns),
                               .crashed = crashed});
    }
    incident_of_later_.erase(hold->id);
    if (auto incident = open_incidents_.find(hold->id); incident != open_incidents_.end()) {
        if (incident->second != kUnlisted)
            incidents_[incident->second].hold.end_ns = time_ns;
        open_incidents_.erase(incident);
    }
    if (!witnesses_of_hold_.empty()) {
        auto refs = witnesses_of_hold_.find(hold->id);
        if (refs != witnesses_of_hold_.end()) {
            for (std::size_t i : refs->second) {
                Witness& w = witnesses_[i];
                (w.first.id == hold->id ? w.first : w.second).end_ns = time_ns;
            }
            witnesses_of_hold_.erase(refs);
        }
    }
    if (hold->mode == LockMode::Exclusive)
        --key.exclusive;
    // Order among open holds does not matter: swap with the last instead of shifting.
    if (hold != key.open.end() - 1)
        *hold = std::move(key.open.back());
    key.open.pop_back();
}

std::vector<HoldSpan> MutualExclusionCheck::open_holds(std::int64_t now_ns) const {
    std::vector<HoldSpan> spans;
    for (const auto& [name, key] : keys_) {
        for (const Hold& h : key.open) {
            spans.push_back({.id = h.id,
                             .key = &name,
                             .process = h.process,
                             .mode = h.mode,
                             .start_ns = h.start_ns,
                             .end_ns = std::max(now_ns, h.start_ns)});
        }
    }
    return spans;
}

void MutualExclusionCheck::finish(std::int64_t end_time_ns) {
    end_time_ns_ = end_time_ns;
    open_at_end_ = 0;
    for (const auto& [name, key] : keys_)
        open_at_end_ += key.open.size();
}

json MutualExclusionCheck::result() const {
    if (!lock_ops_seen_)
        return not_applicable("the history has no lock operations");
    json incidents = json::array();
    for (const IncidentTally& incident : incidents_) {
        const Hold& h = incident.hold;
        incidents.push_back(Incident{.key = incident.key,
                                     .process = h.process,
                                     .token = h.token,
                                     .mode = h.mode,
                                     .start_ns = h.start_ns,
                                     .end_ns = h.end_ns,
                                     .grants = incident.grants,
                                     .processes = incident.processes,
                                     .later_processes = incident.later_processes,
                                     .first_overlap_ns = incident.first_overlap_ns,
                                     .last_overlap_ns = incident.last_overlap_ns,
                                     .lost_updates = incident.lost_updates,
                                     .fencing_saves = incident.fencing_saves,
                                     .message = message_of(incident)}
                                .to_json());
    }
    return json{{"valid", violation_count() == 0},      {"violations", violation_count()},
                {"processes", processes_.sorted()},     {"holds", holds_},
                {"nested_grants", nested_grants_},      {"ended_by_crash", ended_by_crash_},
                {"open_at_end", open_at_end_},          {"incidents", incident_count_},
                {"incident_list", std::move(incidents)}};
}

json MutualExclusionCheck::violations() const {
    const auto hold_of = [](const Hold& h) {
        return OverlapEvidence::Hold{.process = h.process,
                                     .token = h.token,
                                     .mode = h.mode,
                                     .start_ns = h.start_ns,
                                     .end_ns = h.end_ns,
                                     .start_index = h.start_index};
    };
    json out = json::array();
    for (const Witness& w : witnesses_) {
        // The second hold starts inside the first, so the overlap runs from its start to
        // whichever ends first; an open hold lasts until the end of the history.
        const std::int64_t first_end = w.first.end_ns.value_or(end_time_ns_);
        const std::int64_t second_end = w.second.end_ns.value_or(end_time_ns_);
        const std::int64_t overlap =
            std::max<std::int64_t>(0, std::min(first_end, second_end) - w.second.start_ns);
        OverlapEvidence evidence{.key = w.key,
                                 .first = hold_of(w.first),
                                 .second = hold_of(w.second),
                                 .overlap_ns = overlap};
        if (w.released_by)
            evidence.released_by = OverlapEvidence::Release{.process = w.released_by->process,
                                                            .token = w.released_by->token,
                                                            .time_ns = w.released_by->time_ns,
                                                            .index = w.released_by->index};
        out.push_back(json{{"kind", "mutual_exclusion"},
                           {"key", w.key},
                           {"message", message_of(w)},
                           {"witness", evidence.to_json()}});
    }
    return out;
}

}  // namespace lockbench::checker
