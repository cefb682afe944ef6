#include <algorithm>
#include <cstdio>
#include <vector>

#include "checker/linearizability_partition.hpp"
#include "checker/register_refutation.hpp"

namespace lockbench::checker::lin {

namespace {

constexpr std::size_t kPrefixShown = 50;
constexpr std::size_t kConcurrentShown = 10;
constexpr std::size_t kPathShown = 10;

nlohmann::json op_json(const RecordedOp& op) {
    nlohmann::json value = nullptr;
    nlohmann::json output = nullptr;
    switch (op.kind) {
        case OpKind::Acquire:
            value = lock_mode_word(op.mode);
            break;
        case OpKind::Write:
            if (op.input) {
                value = *op.input;
            }
            break;
        case OpKind::Cas:
            if (op.cas) {
                value = nlohmann::json::array({op.cas->first, op.cas->second});
            }
            break;
        case OpKind::Read:
            if (op.output && op.status == Status::Ok) {
                output = *op.output;
            }
            break;
        case OpKind::Release:
            break;
    }
    const char* status = op.status == Status::Ok     ? "ok"
                         : op.status == Status::Fail ? "fail"
                                                     : "info";
    return {{"process", op.process},
            {"f", std::string(op_name(op.kind))},
            {"value", std::move(value)},
            {"output", std::move(output)},
            {"invoke_index", op.invoke_index},
            {"complete_index",
             op.complete_index ? nlohmann::json(*op.complete_index) : nlohmann::json(nullptr)},
            {"status", status}};
}

// The real process of each dense id the search used.
std::vector<std::int64_t> processes_by_dense_id(const Partition& partition) {
    std::vector<std::int64_t> real;
    for (const SearchOp& op : partition.ops) {
        const auto dense = static_cast<std::size_t>(op.op.process);
        if (dense >= real.size())
            real.resize(dense + 1, -1);
        real[dense] = partition.history->ops[op.source].process;
    }
    return real;
}

using Processes = std::vector<std::int64_t>;

nlohmann::json process_json(std::int32_t dense, const Processes& real) {
    return dense >= 0 && static_cast<std::size_t>(dense) < real.size()
               ? nlohmann::json(real[static_cast<std::size_t>(dense)])
               : nlohmann::json(nullptr);
}

// What each model's state looks like to a person reading a witness.
nlohmann::json describe(const MutexModel::Hold& h, const Processes& real) {
    if (h.holder == MutexModel::kFree)
        return {{"holder", nullptr}};
    return {{"holder", process_json(h.holder, real)}, {"depth", h.depth}};
}
nlohmann::json describe(const RwLockModel::Holds& h, const Processes& real) {
    nlohmann::json readers = nlohmann::json::array();
    for (const auto& r : h.readers)
        readers.push_back(process_json(r.process, real));
    return {{"writer", h.writer == RwLockModel::kNoWriter ? nlohmann::json(nullptr)
                                                          : process_json(h.writer, real)},
            {"readers", std::move(readers)}};
}
// A lock state the ops left open to more than one reading shows them all.
template <class Reading>
nlohmann::json describe(const Readings<Reading>& readings, const Processes& real) {
    if (readings.rest.empty())
        return describe(readings.first, real);
    nlohmann::json all = nlohmann::json::array();
    readings.for_each([&](const Reading& r) { all.push_back(describe(r, real)); });
    return {{"one_of", std::move(all)}};
}
nlohmann::json describe(const MutexModel::State& s, const Processes& real) {
    return describe(s.holds, real);
}
nlohmann::json describe(const RwLockModel::State& s, const Processes& real) {
    return describe(s.holds, real);
}
nlohmann::json describe(const UnownedMutexModel::State& s, const Processes&) {
    return {{"locked", s.held}};
}
nlohmann::json describe(const RegisterModel::State& s, const Processes&) {
    return {{"value", s.nil ? nlohmann::json(nullptr) : nlohmann::json(s.value)}};
}

// Replays the longest linearizable prefix as the search stepped it (each op bounded by the first
// return still to be placed), calling visit(prefix position, the state before, the state after).
template <class M, class Visit>
void replay_prefix(const Partition& partition, typename M::State state, Visit visit) {
    const auto& prefix = partition.result.longest_prefix;
    std::vector<std::uint32_t> by_return(partition.required_ops);
    for (std::uint32_t op = 0; op < by_return.size(); ++op) {
        by_return[op] = op;
    }
    std::sort(by_return.begin(), by_return.end(), [&](std::uint32_t a, std::uint32_t b) {
        return partition.ops[a].return_seq < partition.ops[b].return_seq;
    });
    std::vector<bool> placed(partition.ops.size(), false);
    std::size_t first_unplaced = 0;
    for (std::size_t i = 0; i < prefix.size(); ++i) {
        while (first_unplaced < by_return.size() && placed[by_return[first_unplaced]]) {
            ++first_unplaced;
        }
        ModelOp op = partition.ops[prefix[i]].op;
        op.latest_ns = linearized_no_later_than(
            op.latest_ns, first_unplaced < by_return.size()
                              ? partition.ops[by_return[first_unplaced]].op.latest_ns
                              : kNever);
        placed[prefix[i]] = true;
        const auto next = M::step(state, op);
        if (!next)
            break;  // cannot happen: the prefix is a linearization
        visit(i, state, *next);
        state = *next;
    }
}

// Knossos's final path: the last ops of the longest linearizable prefix, each with the model
// state it left, then the op no state could take.
template <class M>
nlohmann::json final_path(const Partition& partition, typename M::State state) {
    const auto& recorded = partition.history->ops;
    const auto& prefix = partition.result.longest_prefix;
    const Processes real = processes_by_dense_id(partition);
    nlohmann::json path = nlohmann::json::array();
    replay_prefix<M>(
        partition, state,
        [&](std::size_t i, const typename M::State&, const typename M::State& after) {
            if (i + kPathShown >= prefix.size()) {
                path.push_back({{"op", op_json(recorded[partition.ops[prefix[i]].source])},
                                {"model", describe(after, real)}});
            }
        });
    if (partition.result.unplaceable) {
        path.push_back(
            {{"op", op_json(recorded[partition.ops[*partition.result.unplaceable].source])},
             {"model", "inconsistent"}});
    }
    return path;
}

// The prefix op that left the state the unplaceable op met: the last that changed it.
template <class M>
std::optional<std::uint32_t> last_state_change(const Partition& partition,
                                               typename M::State state) {
    std::optional<std::uint32_t> last;
    replay_prefix<M>(
        partition, state,
        [&](std::size_t i, const typename M::State& before, const typename M::State& after) {
            if (!(before == after)) {
                last = partition.result.longest_prefix[i];
            }
        });
    return last;
}

nlohmann::json final_path(Model model, const Partition& partition,
                          std::optional<std::int64_t> initial_value) {
    switch (model) {
        case Model::Mutex:
            return final_path<MutexModel>(partition, MutexModel::initial());
        case Model::RwLock:
            return final_path<RwLockModel>(partition, RwLockModel::initial());
        case Model::UnownedMutex:
            return final_path<UnownedMutexModel>(partition, UnownedMutexModel::initial());
        case Model::Register:
            return final_path<RegisterModel>(
                partition, initial_value ? RegisterModel::State{*initial_value, false}
                                         : RegisterModel::initial());
        case Model::None:
            break;
    }
    return nlohmann::json::array();
}

std::optional<std::uint32_t> last_state_change(Model model, const Partition& partition,
                                               std::optional<std::int64_t> initial_value) {
    switch (model) {
        case Model::Mutex:
            return last_state_change<MutexModel>(partition, MutexModel::initial());
        case Model::RwLock:
            return last_state_change<RwLockModel>(partition, RwLockModel::initial());
        case Model::UnownedMutex:
            return last_state_change<UnownedMutexModel>(partition, UnownedMutexModel::initial());
        case Model::Register:
            return last_state_change<RegisterModel>(
                partition, initial_value ? RegisterModel::State{*initial_value, false}
                                         : RegisterModel::initial());
        case Model::None:
            break;
    }
    return std::nullopt;
}

}  // namespace

nlohmann::json partial_json(const Partition& partition) {
    const auto& recorded = partition.history->ops;
    const auto& ops = partition.ops;
    const std::string key = partition.key->empty() ? "" : *partition.key + ": ";
    if (!partition.result.undecided) {
        return {{"key", *partition.key}, {"summary", key + "no op decided"}};
    }
    const SearchOp& first = ops[*partition.result.undecided];
    const RecordedOp& cut = recorded[first.source];
    std::size_t decided_ops = 0;
    std::size_t in_doubt = 0;
    nlohmann::json in_doubt_ops = nlohmann::json::array();
    for (const SearchOp& op : ops) {
        if (op.call_seq >= first.call_seq) {
            continue;
        }
        ++decided_ops;
        if (op.return_seq > first.call_seq) {
            ++in_doubt;
            if (in_doubt_ops.size() < kConcurrentShown) {
                in_doubt_ops.push_back(op_json(recorded[op.source]));
            }
        }
    }
    char time[32];
    std::snprintf(time, sizeof time, "%.3f s", static_cast<double>(cut.invoke_ns) / 1e9);
    return {
        {"key", *partition.key},
        {"decided_ops", decided_ops},
        {"ops", ops.size()},
        {"index", cut.invoke_index},
        {"time_ns", cut.invoke_ns},
        {"in_doubt", in_doubt},
        {"in_doubt_ops", std::move(in_doubt_ops)},
        {"summary", key + "decided up to op " + std::to_string(decided_ops) + " of " +
                        std::to_string(ops.size()) + " (event " + std::to_string(cut.invoke_index) +
                        ", t=" + time + "), " + std::to_string(in_doubt) + " operation" +
                        (in_doubt == 1 ? "" : "s") + " in doubt there"}};
}

std::int64_t process_of(const Partition& partition, std::uint32_t op) {
    return partition.history->ops[partition.ops[op].source].process;
}

ViolationProcesses violation_processes(Model model, const Partition& partition,
                                       std::optional<std::int64_t> initial_value) {
    ViolationProcesses out;
    std::vector<std::uint32_t> refuting_ops = partition.result.concurrent;
    if (partition.result.unplaceable) {
        refuting_ops.push_back(*partition.result.unplaceable);
    }
    if (refuting_ops.empty()) {
        return out;
    }
    for (const auto op : refuting_ops) {
        out.refuting.push_back(process_of(partition, op));
    }
    // The search names no proof, only the op it could not place and those concurrent with it;
    // the state that op met is part of the argument, so the window reaches back to the op that
    // left it (a refutation without the search names that op among its proof already).
    if (!partition.refutation) {
        if (const auto maker = last_state_change(model, partition, initial_value)) {
            refuting_ops.push_back(*maker);
        }
    }
    std::uint64_t window_start = kNeverReturned;
    std::uint64_t window_end = 0;
    for (const auto op : refuting_ops) {
        const SearchOp& o = partition.ops[op];
        window_start = std::min(window_start, o.call_seq);
        window_end =
            std::max(window_end, o.return_seq == kNeverReturned ? o.call_seq : o.return_seq);
    }
    // Only an op that may have changed the state can have caused the contradiction: a `fail`
    // took no effect or only observed, and a read changes nothing. Without that, every waiter
    // polling a held lock (a refusal in flight at any moment) would be named, and a judgment
    // like "the paused holder took part" would hold of every violation.
    out.in_flight = out.refuting;
    for (const RecordedOp& op : partition.history->ops) {
        const bool may_change_state = op.status != Status::Fail && op.kind != OpKind::Read;
        if (may_change_state && op.call_seq <= window_end && op.return_seq >= window_start) {
            out.in_flight.push_back(op.process);
        }
    }
    for (auto* list : {&out.refuting, &out.in_flight}) {
        std::sort(list->begin(), list->end());
        list->erase(std::unique(list->begin(), list->end()), list->end());
    }
    return out;
}

namespace {

// A key refuted without a search: the op no linearization can place, and the ops that prove it.
nlohmann::json refutation_json(Model model, const Partition& partition) {
    const Refutation& refutation = *partition.refutation;
    const auto& recorded = partition.history->ops;
    const nlohmann::json unplaceable = op_json(recorded[partition.ops[refutation.op].source]);
    nlohmann::json proof = nlohmann::json::array();
    for (const auto& p : refutation.proof) {
        proof.push_back({{"role", p.role}, {"op", op_json(recorded[partition.ops[p.op].source])}});
    }
    const SearchOp& x = partition.ops[refutation.op];
    nlohmann::json concurrent = nlohmann::json::array();
    for (const SearchOp& other : partition.ops) {
        if (concurrent.size() == kConcurrentShown) {
            break;
        }
        if (&other != &x && other.call_seq < x.return_seq && other.return_seq > x.call_seq) {
            concurrent.push_back(op_json(recorded[other.source]));
        }
    }
    return {{"kind", "linearizability"},
            {"key", *partition.key},
            {"message", (partition.key->empty() ? "" : *partition.key + ": ") +
                            "not linearizable against " + std::string(to_string(model)) + ": " +
                            refutation.why},
            {"witness",
             {{"refuted_by", std::string(rule_name(refutation.rule))},
              {"longest_prefix", nlohmann::json::array()},
              {"longest_prefix_omitted", 0},
              {"unplaceable", unplaceable},
              {"proof", std::move(proof)},
              {"concurrent", std::move(concurrent)},
              {"final_path",
               nlohmann::json::array({{{"op", unplaceable}, {"model", "inconsistent"}}})}}}};
}

// The model's state before the first op, as final_path describes states.
nlohmann::json initial_state_json(Model model, std::optional<std::int64_t> initial_value) {
    switch (model) {
        case Model::Mutex:
            return {{"holder", nullptr}};
        case Model::RwLock:
            return {{"writer", nullptr}, {"readers", nlohmann::json::array()}};
        case Model::UnownedMutex:
            return {{"locked", false}};
        case Model::Register:
            return {{"value", initial_value ? nlohmann::json(*initial_value) : nullptr}};
        case Model::None:
            break;
    }
    return nullptr;
}

std::string processes_words(const nlohmann::json& list) {
    std::string out;
    for (const auto& p : list)
        out += (out.empty() ? "" : ", ") + p.dump();
    return (list.size() == 1 ? "process " : "processes ") + out;
}

// A state of final_path's in words: what the model expected when the next op could not be placed
// ("the register at 4", "the lock held by process 0").
std::string state_words(const nlohmann::json& m) {
    if (!m.is_object())
        return "";
    if (const auto one_of = m.find("one_of"); one_of != m.end() && one_of->is_array()) {
        std::string out;
        for (const auto& reading : *one_of)
            out += (out.empty() ? "" : " or ") + state_words(reading);
        return out;
    }
    if (const auto value = m.find("value"); value != m.end())
        return value->is_null() ? "the register nil" : "the register at " + value->dump();
    if (const auto locked = m.find("locked"); locked != m.end())
        return *locked == true ? "the lock held" : "the lock free";
    if (const auto writer = m.find("writer"); writer != m.end()) {
        if (!writer->is_null())
            return "the lock held exclusively by process " + writer->dump();
        const nlohmann::json readers = m.value("readers", nlohmann::json::array());
        return readers.empty() ? "the lock free" : "the lock shared by " + processes_words(readers);
    }
    if (const auto holder = m.find("holder"); holder != m.end()) {
        if (holder->is_null())
            return "the lock free";
        const std::int64_t depth = m.value("depth", std::int64_t{1});
        return "the lock held by process " + holder->dump() +
               (depth > 1 ? " (" + std::to_string(depth) + " levels deep)" : "");
    }
    return "";
}

}  // namespace

nlohmann::json violation_json(Model model, const Partition& partition,
                              std::optional<std::int64_t> initial_value) {
    if (partition.refutation) {
        return refutation_json(model, partition);
    }
    const auto& recorded = partition.history->ops;
    const auto& prefix = partition.result.longest_prefix;
    const std::size_t omitted = prefix.size() > kPrefixShown ? prefix.size() - kPrefixShown : 0;
    nlohmann::json shown = nlohmann::json::array();
    for (std::size_t i = omitted; i < prefix.size(); ++i) {
        shown.push_back(op_json(recorded[partition.ops[prefix[i]].source]));
    }
    std::string message = (partition.key->empty() ? "" : *partition.key + ": ") +
                          "not linearizable against " + std::string(to_string(model));
    nlohmann::json path = final_path(model, partition, initial_value);
    nlohmann::json unplaceable = nullptr;
    if (partition.result.unplaceable) {
        const RecordedOp& op = recorded[partition.ops[*partition.result.unplaceable].source];
        unplaceable = op_json(op);
        message += ": process " + std::to_string(op.process) + "'s " +
                   std::string(op_name(op.kind)) +
                   (op.status != Status::Fail ? ""
                    : op.error.empty()        ? " (failed)"
                                              : " (failed, " + op.error + ")") +
                   " (index " + std::to_string(op.invoke_index) + ") cannot be placed after " +
                   std::to_string(prefix.size()) + (prefix.size() == 1 ? " op" : " ops");
        // The state the op met, as --json's final_path shows it: a reader of the text report
        // should not need the JSON to see what the model expected.
        const std::string state =
            state_words(path.size() >= 2 ? path[path.size() - 2]["model"]
                                         : initial_state_json(model, initial_value));
        if (!state.empty())
            message += "; by then the model had " + state;
    }
    nlohmann::json concurrent = nlohmann::json::array();
    for (const auto op : partition.result.concurrent) {
        if (concurrent.size() == kConcurrentShown) {
            break;
        }
        concurrent.push_back(op_json(recorded[partition.ops[op].source]));
    }
    return {{"kind", "linearizability"},
            {"key", *partition.key},
            {"message", std::move(message)},
            {"witness",
             {{"longest_prefix", std::move(shown)},
              {"longest_prefix_omitted", omitted},
              {"unplaceable", std::move(unplaceable)},
              {"concurrent", std::move(concurrent)},
              {"final_path", std::move(path)}}}};
}

}  // namespace lockbench::checker::lin
