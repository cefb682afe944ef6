#include "models.hpp"

#include <algorithm>

#include "linearizability.hpp"

namespace lockbench::checker {

std::optional<Model> parse_model(std::string_view name) {
    if (name == "none") {
        return Model::None;
    }
    if (name == "mutex") {
        return Model::Mutex;
    }
    if (name == "rwlock") {
        return Model::RwLock;
    }
    if (name == "register") {
        return Model::Register;
    }
    return std::nullopt;
}

std::string_view to_string(Model model) {
    switch (model) {
        case Model::None:
            return "none";
        case Model::Mutex:
            return "mutex";
        case Model::RwLock:
            return "rwlock";
        case Model::Register:
            return "register";
    }
    return "none";
}

std::optional<MutexModel::State> MutexModel::step(const State& state, const ModelOp& op) {
    const bool held_by_op_process = state.holder == op.process;
    if (op.kind == OpKind::Acquire) {
        if (op.outcome == OpOutcome::Observation) {
            // "held": someone (HISTORY.md does not say who) held the lock.
            return state.holder != kFree ? std::optional{state} : std::nullopt;
        }
        if (state.holder == kFree) {
            return State{op.process, 1};
        }
        if (held_by_op_process) {
            return State{op.process, state.depth + 1};
        }
        return std::nullopt;
    }
    if (op.kind == OpKind::Release) {
        if (op.outcome == OpOutcome::Observation) {
            // "not-held": the lock was no longer this process's.
            return held_by_op_process ? std::nullopt : std::optional{state};
        }
        if (!held_by_op_process) {
            return std::nullopt;
        }
        return state.depth > 1 ? State{state.holder, state.depth - 1} : State{};
    }
    return std::nullopt;
}

namespace {

using Readers = std::vector<std::pair<std::int32_t, std::uint32_t>>;

Readers::const_iterator find_reader(const Readers& readers, std::int32_t process) {
    auto it = std::lower_bound(readers.begin(), readers.end(), std::pair{process, 0U});
    return it != readers.end() && it->first == process ? it : readers.end();
}

}  // namespace

std::optional<RwLockModel::State> RwLockModel::step(const State& state, const ModelOp& op) {
    const std::int32_t p = op.process;
    if (op.kind == OpKind::Acquire) {
        const bool exclusive = op.mode == LockMode::Exclusive;
        if (op.outcome == OpOutcome::Observation) {
            const bool conflicting_holder =
                state.writer != kNoWriter || (exclusive && !state.readers.empty());
            return conflicting_holder ? std::optional{state} : std::nullopt;
        }
        if (exclusive) {
            if (state.writer == p) {
                State next = state;
                ++next.writer_depth;
                return next;
            }
            if (state.writer != kNoWriter || !state.readers.empty()) {
                return std::nullopt;
            }
            State next = state;
            next.writer = p;
            next.writer_depth = 1;
            return next;
        }
        if (state.writer != kNoWriter && state.writer != p) {
            return std::nullopt;
        }
        State next = state;
        auto it = std::lower_bound(next.readers.begin(), next.readers.end(), std::pair{p, 0U});
        if (it != next.readers.end() && it->first == p) {
            ++it->second;
        } else {
            next.readers.insert(it, {p, 1U});
        }
        return next;
    }
    if (op.kind == OpKind::Release) {
        const auto reader = find_reader(state.readers, p);
        const bool holds_anything = reader != state.readers.end() || state.writer == p;
        if (op.outcome == OpOutcome::Observation) {
            return holds_anything ? std::nullopt : std::optional{state};
        }
        if (!holds_anything) {
            return std::nullopt;
        }
        State next = state;
        if (reader != state.readers.end()) {
            auto it = next.readers.begin() + (reader - state.readers.begin());
            if (--it->second == 0) {
                next.readers.erase(it);
            }
        } else if (--next.writer_depth == 0) {
            next.writer = kNoWriter;
        }
        return next;
    }
    return std::nullopt;
}

std::uint64_t RwLockModel::hash(const State& state) {
    std::uint64_t h = mix_hash((std::uint64_t{static_cast<std::uint32_t>(state.writer)} << 32) |
                               state.writer_depth);
    for (const auto& [process, depth] : state.readers) {
        h = mix_hash(h ^ ((std::uint64_t{static_cast<std::uint32_t>(process)} << 32) | depth));
    }
    return h;
}

std::optional<RegisterModel::State> RegisterModel::step(const State& state, const ModelOp& op) {
    switch (op.kind) {
        case OpKind::Read:
            if (op.outcome == OpOutcome::Info) {
                return state;
            }
            if (op.outcome == OpOutcome::Ok && state.nil == op.read_nil &&
                (state.nil || state.value == op.value)) {
                return state;
            }
            return std::nullopt;
        case OpKind::Write:
            if (op.outcome == OpOutcome::Observation) {
                return std::nullopt;
            }
            return State{op.value, false};
        case OpKind::Cas: {
            const bool holds_from = !state.nil && state.value == op.value;
            if (op.outcome == OpOutcome::Observation) {
                return holds_from ? std::nullopt : std::optional{state};
            }
            return holds_from ? std::optional{State{op.cas_to, false}} : std::nullopt;
        }
        case OpKind::Acquire:
        case OpKind::Release:
            break;
    }
    return std::nullopt;
}

}  // namespace lockbench::checker
