#include "checker/models.hpp"

#include <algorithm>
#include <array>
#include <iterator>

#include "checker/linearizability.hpp"

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

namespace {

// What one reading of a lock may become after an op: nothing (the op cannot happen there), one
// reading, or two (MutexModel's re-entry or new grant).
template <class Reading>
struct Successors {
    std::array<Reading, 2> items{};
    std::size_t count = 0;
    void add(Reading r) { items[count++] = std::move(r); }
};

// Steps every reading with `step_one(reading, successors)` and keeps what survives, sorted and
// distinct; nullopt when no reading survives. One reading in and one out, the common case,
// allocates nothing.
template <class Reading, class StepOne>
std::optional<Readings<Reading>> step_readings(const Readings<Reading>& in, StepOne&& step_one) {
    std::vector<Reading> all;
    if (in.rest.empty()) {
        Successors<Reading> out;
        step_one(in.first, out);
        if (out.count == 0) {
            return std::nullopt;
        }
        if (out.count == 1) {
            return Readings<Reading>{std::move(out.items[0]), {}};
        }
        all.assign(
            std::make_move_iterator(out.items.begin()),
            std::make_move_iterator(out.items.begin() + static_cast<std::ptrdiff_t>(out.count)));
    } else {
        in.for_each([&](const Reading& r) {
            Successors<Reading> out;
            step_one(r, out);
            for (std::size_t i = 0; i < out.count; ++i) {
                all.push_back(std::move(out.items[i]));
            }
        });
        if (all.empty()) {
            return std::nullopt;
        }
    }
    std::sort(all.begin(), all.end());
    all.erase(std::unique(all.begin(), all.end()), all.end());
    Readings<Reading> next{std::move(all.front()), {}};
    next.rest.assign(std::make_move_iterator(all.begin() + 1), std::make_move_iterator(all.end()));
    return next;
}

// A lock model's step: every reading stepped at the op's time (a "held" observation changes
// nothing, not even now_ns - a lower bound may stay lower - so the search may place it first).
template <class State, class StepOne>
std::optional<State> step_lock(const State& state, const ModelOp& op, StepOne&& step_one) {
    const bool observes_held = op.kind == OpKind::Acquire && op.outcome == OpOutcome::Observation;
    const std::int64_t now = observes_held ? state.now_ns : std::max(state.now_ns, op.earliest_ns);
    auto holds = step_readings(
        state.holds, [&](const auto& reading, auto& out) { step_one(reading, now, out); });
    if (!holds) {
        return std::nullopt;
    }
    return State{std::move(*holds), now};
}

using Hold = MutexModel::Hold;

void mutex_step(const Hold& hold, const ModelOp& op, std::int64_t now, Successors<Hold>& out) {
    const bool held_by_op_process = hold.holder == op.process;
    // A holder whose lease may have run out by this op holds nothing anyone must respect.
    const bool lapsed = hold.holder != MutexModel::kFree && may_have_expired(hold.expires_ns, op);
    if (op.kind == OpKind::Acquire && op.outcome == OpOutcome::Observation) {
        // "held": someone (HISTORY.md does not say who) held the lock.
        if (hold.holder != MutexModel::kFree) {
            out.add(hold);
        }
        return;
    }
    if (op.kind == OpKind::Acquire) {
        const std::int64_t expires = lease_end(now, op.lease_ns);
        // A grant that needs the lease before it to have run out takes effect after that.
        const Hold new_grant{
            op.process, 1U,
            lapsed ? lease_end(after_lapse(now, hold.expires_ns), op.lease_ns) : expires};
        if (held_by_op_process) {
            out.add(Hold{op.process, hold.depth + 1, std::max(hold.expires_ns, expires)});
            if (lapsed) {
                out.add(new_grant);
            }
        } else if (hold.holder == MutexModel::kFree || lapsed) {
            out.add(new_grant);
        }
        return;
    }
    if (op.kind != OpKind::Release) {
        return;
    }
    if (op.outcome == OpOutcome::Observation) {
        // "not-held": the lock was no longer this process's - its lease ran out first.
        if (!held_by_op_process) {
            out.add(hold);
        } else if (lapsed) {
            out.add(Hold{});
        }
        return;
    }
    if (!held_by_op_process) {
        // A retried unlock acknowledges the release before it (T7); any other release of a lock
        // one does not hold is not what an owner-aware lock does.
        if (op.repeat) {
            out.add(hold);
        }
        return;
    }
    out.add(hold.depth > 1 ? Hold{hold.holder, hold.depth - 1, hold.expires_ns} : Hold{});
}

}  // namespace

std::optional<MutexModel::State> MutexModel::step(const State& state, const ModelOp& op) {
    return step_lock(state, op, [&](const Hold& hold, std::int64_t now, Successors<Hold>& out) {
        mutex_step(hold, op, now, out);
    });
}

std::uint64_t MutexModel::hash(const State& state) {
    std::uint64_t h = 0;
    state.holds.for_each([&](const Hold& hold) {
        h = mix_hash(h ^
                     ((std::uint64_t{static_cast<std::uint32_t>(hold.holder)} << 32) | hold.depth));
        h = mix_hash(h ^ static_cast<std::uint64_t>(hold.expires_ns));
    });
    return h;
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
using Holds = RwLockModel::Holds;

Readers::const_iterator find_reader(const Readers& readers, std::int32_t process) {
    auto it = std::lower_bound(readers.begin(), readers.end(), process,
                               [](const Reader& r, std::int32_t p) { return r.process < p; });
    return it != readers.end() && it->process == process ? it : readers.end();
}

void drop_writer(Holds& holds) {
    holds.writer = RwLockModel::kNoWriter;
    holds.writer_depth = 0;
    holds.writer_expires_ns = kNever;
}

void rwlock_acquire(const Holds& holds, const ModelOp& op, std::int64_t now,
                    Successors<Holds>& out) {
    const std::int32_t p = op.process;
    const bool exclusive = op.mode == LockMode::Exclusive;
    if (op.outcome == OpOutcome::Observation) {
        // As MutexModel's: changes nothing.
        const bool conflicting_holder =
            holds.writer != RwLockModel::kNoWriter || (exclusive && !holds.readers.empty());
        if (conflicting_holder) {
            out.add(holds);
        }
        return;
    }
    const bool writer_lapsed =
        holds.writer != RwLockModel::kNoWriter && may_have_expired(holds.writer_expires_ns, op);
    const std::int64_t expires = lease_end(now, op.lease_ns);
    // As MutexModel's: a grant that displaces holds whose leases ran out starts after them.
    std::int64_t start = now;
    Holds next = holds;
    if (holds.writer != RwLockModel::kNoWriter && holds.writer != p) {
        if (!writer_lapsed) {
            return;
        }
        start = after_lapse(start, holds.writer_expires_ns);
        drop_writer(next);
    }
    if (exclusive) {
        if (next.writer == p) {
            Holds again = next;
            ++again.writer_depth;
            again.writer_expires_ns = std::max(again.writer_expires_ns, expires);
            out.add(std::move(again));
            if (!writer_lapsed) {
                return;
            }
            start = after_lapse(start, next.writer_expires_ns);
            drop_writer(next);  // and, below, a new grant
        }
        // Readers exclude a writer (the writer's own shared holds too: no upgrade) until their
        // leases may have run out.
        for (const Reader& r : next.readers) {
            if (!may_have_expired(r.expires_ns, op)) {
                return;
            }
            start = after_lapse(start, r.expires_ns);
        }
        next.readers.clear();
        next.writer = p;
        next.writer_depth = 1;
        next.writer_expires_ns = lease_end(start, op.lease_ns);
        out.add(std::move(next));
        return;
    }
    auto it = std::lower_bound(next.readers.begin(), next.readers.end(), p,
                               [](const Reader& r, std::int32_t q) { return r.process < q; });
    if (it == next.readers.end() || it->process != p) {
        next.readers.insert(it, Reader{p, 1U, lease_end(start, op.lease_ns)});
        out.add(std::move(next));
        return;
    }
    const bool lapsed = may_have_expired(it->expires_ns, op);
    const std::int64_t fresh_start = lapsed ? after_lapse(start, it->expires_ns) : start;
    ++it->depth;
    it->expires_ns = std::max(it->expires_ns, lease_end(start, op.lease_ns));
    if (lapsed) {
        Holds fresh = next;
        *(fresh.readers.begin() + (it - next.readers.begin())) =
            Reader{p, 1U, lease_end(fresh_start, op.lease_ns)};
        out.add(std::move(fresh));
    }
    out.add(std::move(next));
}

void rwlock_release(const Holds& holds, const ModelOp& op, Successors<Holds>& out) {
    const std::int32_t p = op.process;
    const auto reader = find_reader(holds.readers, p);
    const bool holds_anything = reader != holds.readers.end() || holds.writer == p;
    Holds next = holds;
    if (op.outcome == OpOutcome::Observation) {
        if (!holds_anything) {
            out.add(std::move(next));
            return;
        }
        // "not-held" while it holds: the hold it gives back must have lapsed; it ends now.
        if (reader != holds.readers.end()) {
            if (may_have_expired(reader->expires_ns, op)) {
                next.readers.erase(next.readers.begin() + (reader - holds.readers.begin()));
                out.add(std::move(next));
            }
        } else if (may_have_expired(holds.writer_expires_ns, op)) {
            drop_writer(next);
            out.add(std::move(next));
        }
        return;
    }
    if (!holds_anything) {
        // A retried unlock acknowledges the release before it (T7).
        if (op.repeat) {
            out.add(std::move(next));
        }
        return;
    }
    if (reader != holds.readers.end()) {
        auto it = next.readers.begin() + (reader - holds.readers.begin());
        if (--it->depth == 0) {
            next.readers.erase(it);
        }
    } else if (--next.writer_depth == 0) {
        drop_writer(next);
    }
    out.add(std::move(next));
}

}  // namespace

std::optional<RwLockModel::State> RwLockModel::step(const State& state, const ModelOp& op) {
    if (op.kind != OpKind::Acquire && op.kind != OpKind::Release) {
        return std::nullopt;
    }
    return step_lock(state, op, [&](const Holds& h, std::int64_t now, Successors<Holds>& out) {
        if (op.kind == OpKind::Acquire) {
            rwlock_acquire(h, op, now, out);
        } else {
            rwlock_release(h, op, out);
        }
    });
}

std::uint64_t RwLockModel::hash(const State& state) {
    std::uint64_t h = 0;
    state.holds.for_each([&](const Holds& holds) {
        h = mix_hash(h ^ ((std::uint64_t{static_cast<std::uint32_t>(holds.writer)} << 32) |
                          holds.writer_depth));
        h = mix_hash(h ^ static_cast<std::uint64_t>(holds.writer_expires_ns));
        for (const Reader& r : holds.readers) {
            h = mix_hash(h ^
                         ((std::uint64_t{static_cast<std::uint32_t>(r.process)} << 32) | r.depth));
            h = mix_hash(h ^ static_cast<std::uint64_t>(r.expires_ns));
        }
    });
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
