#include "linearizability.hpp"

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

#include "history_words.hpp"
#include "models.hpp"
#include "report.hpp"
#include "wgl_search.hpp"

namespace lockbench::checker {
namespace {

using wgl::Clock;
using wgl::kNeverReturned;
using wgl::SearchBudget;
using wgl::SearchOp;
using wgl::SearchOutcome;
using wgl::SearchResult;
using wgl::WglSearch;
constexpr std::size_t kPrefixShown = 50;
constexpr std::size_t kConcurrentShown = 10;

enum class Status : std::uint8_t { Ok, Fail, Info };

// One op as the history showed it, kept for the witness; `call_seq`/`return_seq` are positions in
// the stream, which orders events exactly as they happened (times may tie, positions never do).
struct RecordedOp {
    std::int64_t process = 0;
    OpKind kind = OpKind::Read;
    LockMode mode = LockMode::Exclusive;
    std::optional<std::int64_t> input;
    std::optional<std::pair<std::int64_t, std::int64_t>> cas;
    std::optional<std::int64_t> output;
    std::uint64_t invoke_index = 0;
    std::optional<std::uint64_t> complete_index;
    std::uint64_t call_seq = 0;
    std::uint64_t return_seq = kNeverReturned;
    Status status = Status::Info;
    std::string error;
    std::int64_t invoke_ns = 0;
    std::int64_t return_ns = kNever;
    std::optional<std::int64_t> lease_ms;  // acquire: the lease its invoke asked for
    bool repeat = false;                   // release: its token was released before
};

struct KeyHistory {
    std::vector<RecordedOp> ops;  // in invoke order
    // Who was granted each token: a release names its grant by token.
    std::unordered_map<std::string, std::int64_t> owner_of_token;
    std::unordered_set<std::string> released_tokens;
};

std::optional<OpKind> op_kind(Model model, std::string_view f) {
    if (model == Model::Mutex || model == Model::RwLock) {
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

// The op the model sees, or nullopt for one that cannot constrain any linearization: a fail the
// model gives no meaning to did not happen (HISTORY.md), and a read of unknown outcome observes
// nothing.
std::optional<ModelOp> to_model_op(const RecordedOp& recorded, std::int32_t dense_process) {
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
            const bool observation =
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

struct Partition {
    const std::string* key = nullptr;
    const KeyHistory* history = nullptr;
    std::vector<SearchOp> ops;  // required ops first (call order), then infos (call order)
    std::size_t required_ops = 0;
    SearchResult result;
};

Partition make_partition(const std::string& key, const KeyHistory& history) {
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
        auto op = to_model_op(recorded, process);
        if (!op) {
            continue;
        }
        SearchOp search_op{*op, recorded.call_seq, recorded.return_seq, i,
                           op->outcome == OpOutcome::Info};
        (search_op.info ? infos : partition.ops).push_back(search_op);
    }
    partition.required_ops = partition.ops.size();
    partition.ops.insert(partition.ops.end(), infos.begin(), infos.end());
    return partition;
}

template <class M>
SearchResult search_partition(const Partition& partition, SearchBudget& budget) {
    WglSearch<M> search(partition.ops, partition.required_ops, budget);
    return search.run();
}

SearchResult search_partition(Model model, const Partition& partition, SearchBudget& budget) {
    switch (model) {
        case Model::Mutex:
            return search_partition<MutexModel>(partition, budget);
        case Model::RwLock:
            return search_partition<RwLockModel>(partition, budget);
        case Model::Register:
            return search_partition<RegisterModel>(partition, budget);
        case Model::None:
            break;
    }
    return {};
}

nlohmann::json op_json(const RecordedOp& op) {
    nlohmann::json value = nullptr;
    nlohmann::json output = nullptr;
    switch (op.kind) {
        case OpKind::Acquire:
            value = op.mode == LockMode::Shared ? "shared" : "exclusive";
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

std::int64_t process_of(const Partition& partition, std::uint32_t op) {
    return partition.history->ops[partition.ops[op].source].process;
}

nlohmann::json violation_json(Model model, const Partition& partition) {
    const auto& recorded = partition.history->ops;
    const auto& prefix = partition.result.longest_prefix;
    const std::size_t omitted = prefix.size() > kPrefixShown ? prefix.size() - kPrefixShown : 0;
    nlohmann::json shown = nlohmann::json::array();
    for (std::size_t i = omitted; i < prefix.size(); ++i) {
        shown.push_back(op_json(recorded[partition.ops[prefix[i]].source]));
    }
    std::string message =
        *partition.key + ": not linearizable against " + std::string(to_string(model));
    nlohmann::json unplaceable = nullptr;
    if (partition.result.unplaceable) {
        const RecordedOp& op = recorded[partition.ops[*partition.result.unplaceable].source];
        unplaceable = op_json(op);
        message += ": process " + std::to_string(op.process) + "'s " +
                   std::string(op_name(op.kind)) +
                   (op.status == Status::Fail ? " (failed, " + op.error + ")" : "") + " (index " +
                   std::to_string(op.invoke_index) + ") cannot be placed after " +
                   std::to_string(prefix.size()) + " ops";
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
              {"concurrent", std::move(concurrent)}}}};
}

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
    std::uint64_t seq = 0;
    std::size_t ops = 0;

    void on_event(const Event& event) {
        ++seq;
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
            const auto kind = op_kind(model, event.f);
            if (!kind) {
                return;
            }
            KeyHistory& history = keys[event.key];
            RecordedOp op;
            op.process = event.process;
            if (*kind == OpKind::Release && !event.token.empty()) {
                // A release acts for whoever was granted its token: after an `info` the cleanup
                // runs under a new process id (HISTORY.md), but it is still that grant's release.
                if (auto owner = history.owner_of_token.find(event.token);
                    owner != history.owner_of_token.end()) {
                    op.process = owner->second;
                }
                op.repeat = !history.released_tokens.insert(event.token).second;
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
            ++ops;
            return;
        }
        const auto it = open.find(event.process);
        if (it == open.end()) {
            return;
        }
        RecordedOp& op = it->second.history->ops[it->second.op];
        KeyHistory& history = *it->second.history;
        open.erase(it);
        op.complete_index = event.index;
        op.error = event.error;
        switch (event.type) {
            case EventType::Ok:
                op.status = Status::Ok;
                op.return_seq = seq;
                op.return_ns = event.time;
                if (op.kind == OpKind::Acquire && !event.token.empty()) {
                    history.owner_of_token[event.token] = op.process;
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

    nlohmann::json check(const LinearizabilityOptions& options) {
        const auto started = Clock::now();
        SearchBudget budget;
        budget.deadline = started + std::chrono::duration_cast<Clock::duration>(options.time_limit);
        budget.memory_limit_bytes = options.memory_limit_bytes;

        std::vector<Partition> partitions;
        if (model != Model::None) {
            for (const auto& [key, history] : keys) {
                partitions.push_back(make_partition(key, history));
            }
        }
        // Largest first, so one long key does not start last and set the wall time alone.
        std::vector<std::size_t> order(partitions.size());
        for (std::size_t i = 0; i < order.size(); ++i) {
            order[i] = i;
        }
        std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
            return partitions[a].ops.size() > partitions[b].ops.size();
        });
        std::atomic<std::size_t> next{0};
        auto work = [&] {
            for (std::size_t i; (i = next.fetch_add(1)) < order.size();) {
                Partition& partition = partitions[order[i]];
                if (budget.stop.load()) {
                    partition.result.verdict = SearchOutcome::Stopped;
                    continue;
                }
                partition.result = search_partition(model, partition, budget);
                if (partition.result.verdict == SearchOutcome::NotLinearizable) {
                    budget.stop.store(true);  // the answer is false whatever the others say
                }
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

        nlohmann::json violations = nlohmann::json::array();
        std::vector<std::int64_t> processes;
        bool time_limit = false;
        bool memory_limit = false;
        for (const Partition& partition : partitions) {
            switch (partition.result.verdict) {
                case SearchOutcome::NotLinearizable:
                    violations.push_back(violation_json(model, partition));
                    if (partition.result.unplaceable) {
                        processes.push_back(process_of(partition, *partition.result.unplaceable));
                    }
                    for (const auto op : partition.result.concurrent) {
                        processes.push_back(process_of(partition, op));
                    }
                    break;
                case SearchOutcome::TimeLimit:
                    time_limit = true;
                    break;
                case SearchOutcome::MemoryLimit:
                    memory_limit = true;
                    break;
                case SearchOutcome::Linearizable:
                case SearchOutcome::Stopped:
                    break;
            }
        }
        std::sort(processes.begin(), processes.end());
        processes.erase(std::unique(processes.begin(), processes.end()), processes.end());
        nlohmann::json report = {
            {"valid", true},
            {"model", std::string(to_string(model))},
            {"keys", partitions.size()},
            {"ops", ops},
            {"processes", processes},
        };
        if (ops == 0) {
            report["valid"] = to_json(Verdict::NotApplicable);
            report["reason"] = model == Model::Register
                                   ? "the history has no read, write or cas operations"
                                   : "the history has no acquire or release operations";
        } else if (!violations.empty()) {
            report["valid"] = to_json(Verdict::Invalid);
        } else if (time_limit || memory_limit) {
            report["valid"] = to_json(Verdict::Unknown);
            report["reason"] = memory_limit ? "memory limit" : "time limit";
        }
        report["elapsed_s"] = std::chrono::duration<double>(Clock::now() - started).count();
        report["violations"] = std::move(violations);
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
