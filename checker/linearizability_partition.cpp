#include "checker/linearizability_partition.hpp"

#include <algorithm>

#include "checker/history_words.hpp"

namespace lockbench::checker::lin {

using wgl::WglSearch;

std::optional<OpKind> op_kind(Model model, std::string_view f) {
    if (model == Model::Mutex || model == Model::RwLock || model == Model::UnownedMutex) {
        if (f == "acquire") {
            return OpKind::Acquire;
        }
        if (f == "release") {
            return OpKind::Release;
        }
    } else if (model == Model::Register) {
        if (f == "read") {
            return OpKind::Read;
        }
        if (f == "write") {
            return OpKind::Write;
        }
        if (f == "cas") {
            return OpKind::Cas;
        }
    }
    return std::nullopt;
}

std::string_view op_name(OpKind kind) {
    switch (kind) {
        case OpKind::Acquire:
            return "acquire";
        case OpKind::Release:
            return "release";
        case OpKind::Read:
            return "read";
        case OpKind::Write:
            return "write";
        case OpKind::Cas:
            return "cas";
    }
    return "";
}

namespace {

// The op the model sees, or nullopt for one that cannot constrain any linearization: a fail the
// model gives no meaning to did not happen (HISTORY.md), and a read of unknown outcome observes
// nothing.
std::optional<ModelOp> to_model_op(const RecordedOp& recorded, std::int32_t dense_process,
                                   bool every_fail_observes) {
    ModelOp op;
    op.kind = recorded.kind;
    op.process = dense_process;
    op.mode = recorded.mode;
    switch (recorded.status) {
        case Status::Ok:
            op.outcome = OpOutcome::Ok;
            break;
        case Status::Info:
            op.outcome = OpOutcome::Info;
            break;
        case Status::Fail: {
            // A fail is an observation only when its error names the model's failure condition;
            // any other fail did not happen and constrains nothing (Jepsen's meaning).
            const bool conditional = recorded.kind == OpKind::Cas ||
                                     recorded.kind == OpKind::Acquire ||
                                     recorded.kind == OpKind::Release;
            const bool observation =
                (every_fail_observes && conditional) ||
                (recorded.kind == OpKind::Cas && recorded.error == history::kMismatch) ||
                (recorded.kind == OpKind::Acquire && recorded.error == history::kHeld) ||
                (recorded.kind == OpKind::Release && recorded.error == history::kNotHeld);
            if (!observation) {
                return std::nullopt;
            }
            op.outcome = OpOutcome::Observation;
            break;
        }
    }
    switch (recorded.kind) {
        case OpKind::Read:
            if (op.outcome != OpOutcome::Ok) {
                return std::nullopt;
            }
            op.read_nil = !recorded.output.has_value();
            op.value = recorded.output.value_or(0);
            break;
        case OpKind::Write:
            if (!recorded.input) {
                return std::nullopt;  // a write of null is outside the register model
            }
            op.value = *recorded.input;
            break;
        case OpKind::Cas:
            if (!recorded.cas) {
                return std::nullopt;
            }
            op.value = recorded.cas->first;
            op.cas_to = recorded.cas->second;
            break;
        case OpKind::Acquire:
            if (recorded.lease_ms) {
                op.lease_ns = *recorded.lease_ms * 1'000'000;
            }
            break;
        case OpKind::Release:
            op.repeat = recorded.repeat;
            break;
    }
    op.earliest_ns = recorded.invoke_ns;
    if (op.outcome != OpOutcome::Info) {
        op.latest_ns = recorded.return_ns;
    }
    return op;
}

template <class M>
SearchResult search_with(const Partition& partition, SearchBudget& budget, bool prune,
                         typename M::State initial = M::initial()) {
    WglSearch<M> search(partition.ops, partition.required_ops, budget, std::move(initial), prune);
    return search.run();
}

}  // namespace

Partition make_partition(const std::string& key, const KeyHistory& history,
                         bool every_fail_observes) {
    Partition partition;
    partition.key = &key;
    partition.history = &history;
    std::unordered_map<std::int64_t, std::int32_t> dense;
    std::vector<SearchOp> infos;
    for (std::uint32_t i = 0; i < history.ops.size(); ++i) {
        const RecordedOp& recorded = history.ops[i];
        const std::int32_t process =
            dense.try_emplace(recorded.process, static_cast<std::int32_t>(dense.size()))
                .first->second;
        auto op = to_model_op(recorded, process, every_fail_observes);
        if (!op) {
            continue;
        }
        SearchOp search_op{*op, recorded.call_seq, recorded.return_seq, i,
                           op->outcome == OpOutcome::Info};
        (search_op.info ? infos : partition.ops).push_back(search_op);
    }
    // The search and the passes before it take each group in call order. History order is call
    // order, except for the release an abandoned acquire adds (it may have run from that
    // acquire's call on, and is recorded later).
    const auto by_call = [](const SearchOp& a, const SearchOp& b) {
        return a.call_seq < b.call_seq;
    };
    std::stable_sort(partition.ops.begin(), partition.ops.end(), by_call);
    std::stable_sort(infos.begin(), infos.end(), by_call);
    partition.required_ops = partition.ops.size();
    partition.ops.insert(partition.ops.end(), infos.begin(), infos.end());
    return partition;
}

SearchResult search_partition(Model model, const Partition& partition, SearchBudget& budget,
                              const LinearizabilityOptions& options) {
    const bool prune = options.prune;
    const auto& initial_value = options.initial_value;
    switch (model) {
        case Model::Mutex:
            return search_with<MutexModel>(partition, budget, prune);
        case Model::RwLock:
            return search_with<RwLockModel>(partition, budget, prune);
        case Model::UnownedMutex:
            return search_with<UnownedMutexModel>(partition, budget, prune);
        case Model::Register:
            return search_with<RegisterModel>(partition, budget, prune,
                                              initial_value
                                                  ? RegisterModel::State{*initial_value, false}
                                                  : RegisterModel::initial());
        case Model::None:
            break;
    }
    return {};
}

}  // namespace lockbench::checker::lin
