#include "checker/linearizability.hpp"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <limits>
#include <map>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "checker/history_words.hpp"
#include "checker/linearizability_partition.hpp"
#include "checker/lock_refutation.hpp"
#include "checker/lock_tokens.hpp"
#include "checker/models.hpp"
#include "checker/register_refutation.hpp"
#include "checker/report.hpp"
#include "checker/rwlock_tokens.hpp"
#include "checker/unique_values.hpp"
#include "checker/wgl_search.hpp"

namespace lockbench::checker {
namespace {

using wgl::Clock;
using wgl::kNeverReturned;
using wgl::SearchBudget;
using wgl::SearchOp;
using wgl::SearchOutcome;
using wgl::SearchResult;

using lin::KeyHistory;
using lin::make_partition;
using lin::op_kind;
using lin::Partition;
using lin::RecordedOp;
using lin::search_partition;
using lin::Status;
using lin::violation_json;

}  // namespace

struct LinearizabilityChecker::Impl {
    Model model;
    std::map<std::string, KeyHistory> keys;
    struct Open {
        KeyHistory* history;
        std::size_t op;
    };
    std::unordered_map<std::int64_t, Open> open;
    std::unordered_set<std::int64_t> crashed;
    // The position of the event read last; events are two apart, so that an op the history
    // records later can still be called between two events (an abandoned acquire's release).
    std::uint64_t seq = 0;
    std::size_t ops = 0;
    // Each process's last acquire: the one a library's late grant of that process names.
    std::unordered_map<std::int64_t, Open> last_acquire;
    // The adapter's release of a late grant, by (process, key), until its `released`.
    std::map<std::pair<std::int64_t, std::string>, Open> late_releases;
    std::size_t late_grants_placed = 0;
    std::size_t abandoned_acquires_placed = 0;
    // Keys with a late grant this check could not place, and why: such a key is never `invalid`
    // (the missing hold may be what explains it), only `unknown`.
    std::map<std::string, std::string> unplaced_late_grants;

    void on_event(const Event& event) {
        seq += 2;
        if (event.is_library() && event.f == "late-grant") {
            on_late_grant(event);
            return;
        }
        if (event.is_nemesis()) {
            // A crashed process's op in flight stays open: it ends the history as an info.
            if (event.f == "crash" && event.target) {
                crashed.insert(*event.target);
                open.erase(*event.target);
            }
            return;
        }
        if (crashed.contains(event.process)) {
            return;
        }
        if (event.type == EventType::Invoke) {
            on_invoke(event);
        } else {
            on_completion(event);
        }
    }

    void on_invoke(const Event& event) {
        const auto kind = op_kind(model, event.f);
        if (!kind) {
            return;
        }
        KeyHistory& history = keys[event.key];
        RecordedOp op;
        op.process = event.process;
        if (*kind == OpKind::Release && !event.token.empty()) {
            act_for_token_holder(history, event.token, op);
        }
        op.kind = *kind;
        op.mode = event.mode;
        op.input = event.number;
        op.cas = event.cas;
        op.invoke_index = event.index;
        op.call_seq = seq;
        op.invoke_ns = event.time;
        op.lease_ms = event.lease_ms;
        history.ops.push_back(std::move(op));
        open[event.process] = {&history, history.ops.size() - 1};
        if (*kind == OpKind::Acquire) {
            last_acquire[event.process] = open[event.process];
        }
        ++ops;
    }

    // A release acts for whoever was granted its token: after an `info` the cleanup runs under a
    // new process id (HISTORY.md), but it is still that grant's release.
    static void act_for_token_holder(KeyHistory& history, const std::string& token,
                                     RecordedOp& release) {
        if (auto owner = history.owner_of_token.find(token);
            owner != history.owner_of_token.end()) {
            release.process = owner->second;
        }
        if (auto grant = history.grant_of_token.find(token);
            grant != history.grant_of_token.end()) {
            release.grant = grant->second;
        }
        release.repeat = !history.released_tokens.insert(token).second;
    }

    void on_completion(const Event& event) {
        const auto it = open.find(event.process);
        if (it == open.end()) {
            return;
        }
        const auto op_index = static_cast<std::uint32_t>(it->second.op);
        RecordedOp& op = it->second.history->ops[op_index];
        KeyHistory& history = *it->second.history;
        open.erase(it);
        op.complete_index = event.index;
        op.error = event.error;
        switch (event.type) {
            case EventType::Ok:
                op.status = Status::Ok;
                op.return_seq = seq;
                op.return_ns = event.time;
                // The lease the service applied to this grant (an etcd TTL rounded up to whole
                // seconds) is the one it expires by, not the one asked for (HISTORY.md).
                if (op.kind == OpKind::Acquire && event.lease_ms) {
                    op.lease_ms = event.lease_ms;
                }
                if (op.kind == OpKind::Acquire && !event.token.empty()) {
                    history.owner_of_token[event.token] = op.process;
                    op.token_granted = true;
                    history.token_granted_twice |=
                        !history.grant_of_token.emplace(event.token, op_index).second;
                }
                break;
            case EventType::Fail:
                op.status = Status::Fail;
                op.return_seq = seq;
                op.return_ns = event.time;
                break;
            case EventType::Info:
            case EventType::Invoke:
                return;  // stays an info, returning at +infinity
        }
        // Knossos fills an invocation's value from its completion when the invoke had none.
        if (op.kind == OpKind::Read) {
            op.output = event.number;
        } else if (op.kind == OpKind::Write && !op.input) {
            op.input = event.number;
        } else if (op.kind == OpKind::Cas && !op.cas) {
            op.cas = event.cas;
        }
    }

    // A library granted an acquire its adapter had answered in doubt, and the adapter released
    // that grant itself (HISTORY.md, "A library's signals"). `granted`: the in-doubt acquire of
    // value.process took effect by now (it returns ok here) and a release on its behalf starts;
    // `released`: that release returned (ok), or stays in doubt (failed). The process retired at
    // its `info`, so the two ops are its last and its sequence stays one op at a time.
    void on_late_grant(const Event& event) {
        if (!op_kind(model, "acquire")) {
            return;
        }
        const nlohmann::json value = nlohmann::json::parse(event.value_json, nullptr, false);
        const auto process = value.is_object() ? value.find("process") : value.end();
        const auto phase = value.is_object() ? value.find("phase") : value.end();
        if (!value.is_object() || process == value.end() || !process->is_number_integer() ||
            phase == value.end() || !phase->is_string()) {
            unplaced_late_grants.emplace(event.key, "a late grant (event " +
                                                        std::to_string(event.index) +
                                                        ") names no process or phase");
            return;
        }
        const std::int64_t p = process->get<std::int64_t>();
        if (*phase == "granted") {
            on_late_granted(event, p, value);
            return;
        }
        if (*phase == "released") {
            on_late_released(event, p, value);
            return;
        }
        if (*phase == "abandoned") {
            on_abandoned(event, p);
            return;
        }
        unplaced_late_grant(event, p, "has the unknown phase " + phase->dump());
    }

    void unplaced_late_grant(const Event& event, std::int64_t p, const std::string& why) {
        unplaced_late_grants.emplace(event.key, "the adapter's late grant of process " +
                                                    std::to_string(p) + " (event " +
                                                    std::to_string(event.index) + ") " + why);
    }

    // Process p's last acquire, when it is of `key` and still in doubt: the one a library's late
    // grant or abandonment of p names; nullptr when there is none.
    const Open* in_doubt_acquire_of(std::int64_t p, const std::string& key) const {
        const auto last = last_acquire.find(p);
        const auto history = keys.find(key);
        if (last == last_acquire.end() || history == keys.end() ||
            last->second.history != &history->second ||
            last->second.history->ops[last->second.op].status != Status::Info) {
            return nullptr;
        }
        return &last->second;
    }

    // The release a library ran itself, on process p's behalf, of `acquire`'s hold, invoked at
    // `event`. It ends the hold if the lease has not already: when the lease freed the lock first
    // (another may hold it by now), or the acquire never took effect, the release changes
    // nothing, as a retried unlock does.
    static RecordedOp library_release(const RecordedOp& acquire, std::int64_t p,
                                      const Event& event) {
        RecordedOp release;
        release.process = p;
        release.kind = OpKind::Release;
        release.repeat = true;
        release.mode = acquire.mode;
        release.invoke_index = event.index;
        return release;
    }

    // The in-doubt acquire of process p returns ok at the late grant, and the adapter's release
    // of it begins.
    void on_late_granted(const Event& event, std::int64_t p, const nlohmann::json& value) {
        const Open* last = in_doubt_acquire_of(p, event.key);
        if (!last) {
            unplaced_late_grant(event, p, "matches no in-doubt acquire of the key");
            return;
        }
        KeyHistory& history = *last->history;
        const auto acquire_index = static_cast<std::uint32_t>(last->op);
        if (auto in_flight = open.find(p); in_flight != open.end() &&
                                           in_flight->second.history == &history &&
                                           in_flight->second.op == acquire_index) {
            open.erase(in_flight);  // granted before its `info` was recorded
        }
        RecordedOp& acquire = history.ops[acquire_index];
        acquire.status = Status::Ok;
        acquire.return_seq = seq;
        acquire.return_ns = event.time;
        acquire.complete_index = event.index;
        acquire.error.clear();
        const auto token = value.find("token");
        std::string token_text =
            token != value.end() && token->is_string() ? token->get<std::string>() : "";
        if (!token_text.empty()) {
            history.owner_of_token[token_text] = p;
            acquire.token_granted = true;
            history.token_granted_twice |=
                !history.grant_of_token.emplace(token_text, acquire_index).second;
            history.released_tokens.insert(token_text);
        }
        RecordedOp release = library_release(acquire, p, event);
        release.call_seq = seq + 1;  // after the acquire's return, never concurrent with it
        release.invoke_ns = event.time;
        release.grant = acquire_index;
        history.ops.push_back(std::move(release));
        late_releases[{p, event.key}] = {&history, history.ops.size() - 1};
        last_acquire.erase(p);
        ++ops;
        ++late_grants_placed;
    }

    // The library gave up process p's in-doubt acquire and whatever it may have held by now (a
    // Curator call that failed after its lock node reached the front of the queue deletes the
    // node). Whether the acquire took effect stays unknown; if it did, its hold ended by now: a
    // release on p's behalf that may have run any time since the acquire's invoke, and changes
    // nothing if the acquire never took effect (or its lease had already freed the lock). One
    // that matches no in-doubt acquire claims nothing and is passed over.
    void on_abandoned(const Event& event, std::int64_t p) {
        const Open* last = in_doubt_acquire_of(p, event.key);
        if (!last)
            return;
        KeyHistory& history = *last->history;
        const RecordedOp& acquire = history.ops[last->op];
        RecordedOp release = library_release(acquire, p, event);
        release.complete_index = event.index;
        release.call_seq = acquire.call_seq + 1;  // any time after the acquire's call
        release.invoke_ns = acquire.invoke_ns;
        release.status = Status::Ok;
        release.return_seq = seq;
        release.return_ns = event.time;
        history.ops.push_back(std::move(release));
        last_acquire.erase(p);
        ++ops;
        ++abandoned_acquires_placed;
    }

    // The adapter's release of process p's late grant returned.
    void on_late_released(const Event& event, std::int64_t p, const nlohmann::json& value) {
        const auto found = late_releases.find({p, event.key});
        if (found == late_releases.end()) {
            unplaced_late_grant(event, p, "was released without being granted");
            return;
        }
        RecordedOp& release = found->second.history->ops[found->second.op];
        late_releases.erase(found);
        const auto ok = value.find("ok");
        // A release that failed, or does not say, may still have run: it stays in doubt.
        if (ok != value.end() && ok->is_boolean() && ok->get<bool>()) {
            release.status = Status::Ok;
            release.return_seq = seq;
            release.return_ns = event.time;
            release.complete_index = event.index;
        }
    }

    nlohmann::json check(const LinearizabilityOptions& options) {
        const auto started = Clock::now();
        SearchBudget budget;
        budget.deadline = started + std::chrono::duration_cast<Clock::duration>(options.time_limit);
        budget.memory_limit_bytes = options.memory_limit_bytes;

        std::vector<Partition> partitions;
        if (model != Model::None) {
            for (const auto& [key, history] : keys) {
                partitions.push_back(make_partition(key, history, options.every_fail_observes));
            }
        }
        const std::vector<std::size_t> order = largest_first(partitions);
        std::atomic<std::size_t> next{0};
        std::atomic<std::size_t> dropped{0};
        auto work = [&] {
            for (std::size_t i; (i = next.fetch_add(1)) < order.size();) {
                judge(partitions[order[i]], budget, options, dropped);
            }
        };
        unsigned threads = options.threads != 0 ? options.threads
                                                : std::max(1U, std::thread::hardware_concurrency());
        threads = static_cast<unsigned>(std::min<std::size_t>(threads, partitions.size()));
        if (threads <= 1) {
            work();
        } else {
            std::vector<std::jthread> pool;
            for (unsigned t = 0; t < threads; ++t) {
                pool.emplace_back(work);
            }
        }
        return report_of(findings_of(partitions, options), partitions.size(), dropped.load(),
                         started);
    }

    // The partitions' indices, largest first, so one long key does not start last and set the
    // wall time alone.
    static std::vector<std::size_t> largest_first(const std::vector<Partition>& partitions) {
        std::vector<std::size_t> order(partitions.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            order[i] = i;
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return partitions[a].ops.size() > partitions[b].ops.size();
        });
        return order;
    }

    // Decides one key: by the passes that need no search where they can, else by the search.
    // A key found not linearizable stops the others' searches, unless it is excused.
    void judge(Partition& partition, SearchBudget& budget, const LinearizabilityOptions& options,
               std::atomic<std::size_t>& dropped) {
        // A key with an unplaced late grant can only be unknown: its violation must not
        // stop the other keys' searches.
        const bool excused = unplaced_late_grants.contains(*partition.key);
        if (budget.stop.load()) {
            partition.result.verdict = SearchOutcome::Stopped;
            return;
        }
        const auto refuted = [&](std::optional<lin::Refutation> refutation) {
            if (!refutation) {
                return false;
            }
            partition.result.verdict = SearchOutcome::NotLinearizable;
            partition.result.unplaceable = refutation->op;
            for (const auto& proof : refutation->proof) {
                partition.result.concurrent.push_back(proof.op);
            }
            partition.refutation = std::move(refutation);
            partition.decided_without_search = true;
            if (!excused) {
                budget.stop.store(true);
            }
            return true;
        };
        const auto linearized = [&] {
            partition.result.verdict = SearchOutcome::Linearizable;
            partition.decided_without_search = true;
        };
        if (model == Model::Register && options.refute) {
            if (refuted(lin::refute_register(partition, options.initial_value))) {
                return;
            }
            if (lin::linearize_unique_values(partition, options.initial_value)) {
                linearized();
                return;
            }
        }
        if ((model == Model::Mutex || model == Model::RwLock) && options.refute) {
            // The token pass first: a valid key, the common case, costs one walk. Where
            // it is stuck, a definite contradiction is refuted before the search runs.
            const bool built = model == Model::Mutex ? lin::linearize_lock_tokens(partition)
                                                     : lin::linearize_rwlock_tokens(partition);
            if (built) {
                linearized();
                return;
            }
            if (refuted(lin::refute_lock(model, partition))) {
                return;
            }
        }
        if (model == Model::Mutex && options.drop_unneeded_acquires) {
            dropped.fetch_add(lin::drop_unneeded_acquires(partition));
        }
        partition.result = search_partition(model, partition, budget, options);
        if (partition.result.verdict == SearchOutcome::NotLinearizable && !excused) {
            budget.stop.store(true);  // the answer is false whatever the others say
        }
    }

    // What the decided keys add up to.
    struct Findings {
        nlohmann::json violations = nlohmann::json::array();
        // `processes`: who may have caused a violation, for a judgment like "the paused holder's
        // violation"; `refuting_processes`: who the minimal refutation names (partition.hpp).
        std::vector<std::int64_t> processes;
        std::vector<std::int64_t> refuting_processes;
        bool time_limit = false;
        bool memory_limit = false;
        nlohmann::json partial = nlohmann::json::array();
        std::vector<std::string> excused_keys;
        std::size_t without_search = 0;
    };

    Findings findings_of(const std::vector<Partition>& partitions,
                         const LinearizabilityOptions& options) const {
        Findings found;
        for (const Partition& partition : partitions) {
            found.without_search += partition.decided_without_search ? 1 : 0;
            switch (partition.result.verdict) {
                case SearchOutcome::NotLinearizable:
                    if (const auto why = unplaced_late_grants.find(*partition.key);
                        why != unplaced_late_grants.end()) {
                        found.excused_keys.push_back(
                            "key " + *partition.key + ": " + why->second +
                            ", and the key is not linearizable without it");
                        break;
                    }
                    found.violations.push_back(
                        violation_json(model, partition, options.initial_value));
                    {
                        const auto taking_part =
                            lin::violation_processes(model, partition, options.initial_value);
                        found.processes.insert(found.processes.end(), taking_part.in_flight.begin(),
                                               taking_part.in_flight.end());
                        found.refuting_processes.insert(found.refuting_processes.end(),
                                                        taking_part.refuting.begin(),
                                                        taking_part.refuting.end());
                    }
                    break;
                case SearchOutcome::TimeLimit:
                    found.time_limit = true;
                    found.partial.push_back(lin::partial_json(partition));
                    break;
                case SearchOutcome::MemoryLimit:
                    found.memory_limit = true;
                    found.partial.push_back(lin::partial_json(partition));
                    break;
                case SearchOutcome::Linearizable:
                case SearchOutcome::Stopped:
                    break;
            }
        }
        for (auto* list : {&found.processes, &found.refuting_processes}) {
            std::sort(list->begin(), list->end());
            list->erase(std::unique(list->begin(), list->end()), list->end());
        }
        return found;
    }

    nlohmann::json report_of(Findings found, std::size_t keys_checked, std::size_t dropped,
                             Clock::time_point started) const {
        nlohmann::json report = {
            {"valid", true},
            {"model", std::string(to_string(model))},
            {"keys", keys_checked},
            {"ops", ops},
            {"processes", found.processes},
            {"refuting_processes", found.refuting_processes},
            {"keys_without_search", found.without_search},
        };
        if (model == Model::Mutex) {
            report["acquires_dropped"] = dropped;
        }
        if (abandoned_acquires_placed != 0) {
            report["abandoned_acquires_placed"] = abandoned_acquires_placed;
        }
        if (late_grants_placed != 0) {
            report["late_grants_placed"] = late_grants_placed;
        }
        if (ops == 0) {
            report["valid"] = to_json(Verdict::NotApplicable);
            report["reason"] = model == Model::Register
                                   ? "the history has no read, write or cas operations"
                                   : "the history has no acquire or release operations";
        } else if (!found.violations.empty()) {
            report["valid"] = to_json(Verdict::Invalid);
        } else if (found.time_limit || found.memory_limit) {
            report["valid"] = to_json(Verdict::Unknown);
            report["reason"] = found.memory_limit ? "memory limit" : "time limit";
            report["partial"] = std::move(found.partial);
        } else if (!found.excused_keys.empty()) {
            report["valid"] = to_json(Verdict::Unknown);
            report["reason"] = found.excused_keys.front();
        }
        report["elapsed_s"] = std::chrono::duration<double>(Clock::now() - started).count();
        // Knossos's own fields, for a Jepsen user's tools: the first key's failure.
        report["valid?"] = report["valid"];
        if (!found.violations.empty()) {
            const auto& w = found.violations.front()["witness"];
            const auto& prefix = w["longest_prefix"];
            report["op"] = w["unplaceable"];
            report["previous-ok"] = prefix.empty() ? nlohmann::json(nullptr) : prefix.back();
            report["final-paths"] = nlohmann::json::array({w["final_path"]});
        }
        report["violations"] = std::move(found.violations);
        return report;
    }
};

LinearizabilityChecker::LinearizabilityChecker(Model model) : impl_(std::make_unique<Impl>()) {
    impl_->model = model;
}
LinearizabilityChecker::~LinearizabilityChecker() = default;
LinearizabilityChecker::LinearizabilityChecker(LinearizabilityChecker&&) noexcept = default;
LinearizabilityChecker& LinearizabilityChecker::operator=(LinearizabilityChecker&&) noexcept =
    default;

void LinearizabilityChecker::on_event(const Event& event) {
    impl_->on_event(event);
}

nlohmann::json LinearizabilityChecker::check(const LinearizabilityOptions& options) {
    return impl_->check(options);
}

}  // namespace lockbench::checker
