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
    if (name == "unowned-mutex") {
        return Model::UnownedMutex;
    }
    // Knossos's two register models: ours is the cas register, which on a history of reads and
    // writes only is Knossos's plain register.
    if (name == "register" || name == "cas-register") {
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
        case Model::UnownedMutex:
            return "unowned-mutex";
        case Model::Register:
            return "register";
    }
    return "none";
}

std::optional<MutexModel::State> MutexModel::step(const State& state, const ModelOp& op) {
    const bool held_by_op_process = state.holder == op.process;
    // A holder whose lease may have run out by this op holds nothing anyone must respect.
    const bool lapsed = state.holder != kFree && may_have_expired(state.expires_ns, op);
    if (op.kind == OpKind::Acquire && op.outcome == OpOutcome::Observation) {
        // "held": someone (HISTORY.md does not say who) held the lock. It changes nothing, not
        // even now_ns (a lower bound may stay lower), so the search may place it first.
        return state.holder != kFree ? std::optional{state} : std::nullopt;
    }
    State next = state;
    next.now_ns = std::max(state.now_ns, op.earliest_ns);
    if (op.kind == OpKind::Acquire) {
        const std::int64_t expires = lease_end(next.now_ns, op.lease_ns);
        if (held_by_op_process) {
            ++next.depth;
            next.expires_ns = std::max(state.expires_ns, expires);
            return next;
        }
        if (state.holder == kFree || lapsed) {
            next.holder = op.process;
            next.depth = 1;
            next.expires_ns = expires;
            return next;
        }
        return std::nullopt;
    }
    if (op.kind == OpKind::Release) {
        const auto freed = [&] {
            next.holder = kFree;
            next.depth = 0;
            next.expires_ns = kNever;
            return next;
        };
        if (op.outcome == OpOutcome::Observation) {
            // "not-held": the lock was no longer this process's - its lease ran out first.
            if (!held_by_op_process) {
                return next;
            }
            return lapsed ? std::optional{freed()} : std::nullopt;
        }
        if (!held_by_op_process) {
            // A retried unlock acknowledges the release before it (T7); any other release of
            // a lock one does not hold is not what an owner-aware lock does.
            return op.repeat ? std::optional{next} : std::nullopt;
        }
        if (state.depth > 1) {
            --next.depth;
            return next;
        }
        return freed();
    }
    return std::nullopt;
}

std::optional<UnownedMutexModel::State> UnownedMutexModel::step(const State& state,
                                                                const ModelOp& op) {
    const bool observation = op.outcome == OpOutcome::Observation;
    if (op.kind == OpKind::Acquire) {
        if (observation)
            return state.held ? std::optional{state} : std::nullopt;
        return state.held ? std::nullopt : std::optional{State{true}};
    }
    if (op.kind == OpKind::Release) {
        if (observation)
            return state.held ? std::nullopt : std::optional{state};
        return state.held ? std::optional{State{false}} : std::nullopt;
    }
    return std::nullopt;
}

namespace {

using Reader = RwLockModel::Reader;
using Readers = std::vector<Reader>;

Readers::const_iterator find_reader(const Readers& readers, std::int32_t process) {
    auto it = std::lower_bound(readers.begin(), readers.end(), process,
                               [](const Reader& r, std::int32_t p) { return r.process < p; });
    return it != readers.end() && it->process == process ? it : readers.end();
}

}  // namespace

std::optional<RwLockModel::State> RwLockModel::step(const State& state, const ModelOp& op) {
    const std::int32_t p = op.process;
    const bool writer_lapsed =
        state.writer != kNoWriter && may_have_expired(state.writer_expires_ns, op);
    const std::int64_t now = std::max(state.now_ns, op.earliest_ns);
    const std::int64_t expires = lease_end(now, op.lease_ns);
    if (op.kind == OpKind::Acquire) {
        const bool exclusive = op.mode == LockMode::Exclusive;
        if (op.outcome == OpOutcome::Observation) {
            // As MutexModel's: changes nothing, now_ns included.
            const bool conflicting_holder =
                state.writer != kNoWriter || (exclusive && !state.readers.empty());
            return conflicting_holder ? std::optional{state} : std::nullopt;
        }
        State next = state;
        next.now_ns = now;
        if (state.writer != kNoWriter && state.writer != p) {
            if (!writer_lapsed) {
                return std::nullopt;
            }
            next.writer = kNoWriter;
            next.writer_depth = 0;
            next.writer_expires_ns = kNever;
        }
        if (exclusive) {
            if (next.writer == p) {
                ++next.writer_depth;
                next.writer_expires_ns = std::max(next.writer_expires_ns, expires);
                return next;
            }
            // Readers exclude a writer (the writer's own shared holds too: no upgrade) until
            // their leases may have run out.
            for (const Reader& r : next.readers) {
                if (!may_have_expired(r.expires_ns, op)) {
                    return std::nullopt;
                }
            }
            next.readers.clear();
            next.writer = p;
            next.writer_depth = 1;
            next.writer_expires_ns = expires;
            return next;
        }
        auto it = std::lower_bound(next.readers.begin(), next.readers.end(), p,
                                   [](const Reader& r, std::int32_t q) { return r.process < q; });
        if (it != next.readers.end() && it->process == p) {
            ++it->depth;
            it->expires_ns = std::max(it->expires_ns, expires);
        } else {
            next.readers.insert(it, Reader{p, 1U, expires});
        }
        return next;
    }
    if (op.kind == OpKind::Release) {
        const auto reader = find_reader(state.readers, p);
        const bool holds_anything = reader != state.readers.end() || state.writer == p;
        State next = state;
        next.now_ns = now;
        if (op.outcome == OpOutcome::Observation) {
            if (!holds_anything) {
                return next;
            }
            // "not-held" while it holds: the hold it gives back must have lapsed; it ends now.
            if (reader != state.readers.end()) {
                if (!may_have_expired(reader->expires_ns, op)) {
                    return std::nullopt;
                }
                next.readers.erase(next.readers.begin() + (reader - state.readers.begin()));
            } else {
                if (!writer_lapsed) {
                    return std::nullopt;
                }
                next.writer = kNoWriter;
                next.writer_depth = 0;
                next.writer_expires_ns = kNever;
            }
            return next;
        }
        if (!holds_anything) {
            // A retried unlock acknowledges the release before it (T7).
            return op.repeat ? std::optional{next} : std::nullopt;
        }
        if (reader != state.readers.end()) {
            auto it = next.readers.begin() + (reader - state.readers.begin());
            if (--it->depth == 0) {
                next.readers.erase(it);
            }
        } else if (--next.writer_depth == 0) {
            next.writer = kNoWriter;
            next.writer_expires_ns = kNever;
        }
        return next;
    }
    return std::nullopt;
}

std::uint64_t RwLockModel::hash(const State& state) {
    std::uint64_t h = mix_hash((std::uint64_t{static_cast<std::uint32_t>(state.writer)} << 32) |
                               state.writer_depth);
    h = mix_hash(h ^ static_cast<std::uint64_t>(state.writer_expires_ns));
    for (const Reader& r : state.readers) {
        h = mix_hash(h ^ ((std::uint64_t{static_cast<std::uint32_t>(r.process)} << 32) | r.depth));
        h = mix_hash(h ^ static_cast<std::uint64_t>(r.expires_ns));
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
