// Mutex keys whose grants carry unique tokens: a linearization built without search, and the
// in-doubt acquires the search need not try.
//
// The model is MutexModel, stepped exactly as the search steps it (models.hpp): each op bounded
// to take effect no later than the earliest return still to be placed, leases starting no earlier
// than the invokes placed before them. When every ok acquire carries a token no other grant
// carries and every release names one, each release is known to belong to one grant, and the
// lock's life in any linearization is a sequence of holds, each one grant's: from its acquire to
// its release (an ok release, an in-doubt one that took effect, a retried one, a `not-held` by
// the holder whose lease may have run out), or to the next grant once its lease may have run out.
//
// linearize_lock_tokens: Wing & Gong's search with one choice at each step and no backtracking,
// walking the calls and returns in history order. An op is placed only after its call, and every
// required op is placed by its return at the latest (the search's own rules); each placement is
// MutexModel::step with the search's bounds. The choices:
//   - a `held` refusal goes as soon as the lock is held while it is in flight (it changes
//     nothing: the search's own pruning, which moves such an op to the front, shows nothing is
//     lost). If its return comes while the lock is free, a grant is placed for it: among the
//     first few ok and in-doubt acquires in flight, one whose hold is over before the next grant
//     returns (an ok one's first release is called by then, an in-doubt one's lease may have
//     run out), so that grant does not find it held; else the acquire in flight that returns
//     first, else the in-doubt one with the shortest lease (its hold ends soonest). Placing the
//     ok one that returns first when a grant in doubt was the holder (waiters refused while a
//     lost grant's lease runs) let the next grant take it over, and its ok release was stuck;
//   - every other required op goes at its return, as late as it may: holds begin as late and end
//     as late as they can, which leaves the most room to the refusals; an acquire that finds the
//     lock held ends that hold with a release of it in flight (ok, retried, in doubt, then
//     `not-held`) if it can, and takes it over without one only when the holder's lease may
//     have run out (taken over, a hold can never be released ok);
//   - before an ok acquire at its return, an ok acquire in flight with a lease and no ok release
//     goes first when the model takes both in that order: it may have taken effect long before
//     its reply and lost its lease on the way, and placed at its own return it would find a hold
//     without a lease granted meanwhile;
//   - in-doubt ops go only where needed (above), and otherwise never.
// When every required op is placed, the ops placed, in that order, are a linearization the
// search accepts: each was placed where the search would have placed it, with the step the search
// takes. So `valid` is sound whatever the choices. The pass is not complete - a choice can be
// wrong (a grant placed early for a refusal that blocks an acquire returning before that grant's
// release begins; a lease started at a later `now` than another order would give) - so when it
// is stuck it answers nothing and the search decides: a wrong choice costs time, never a wrong
// answer. On lockbench's lock histories it builds one nearly always (the cross-check counts how
// often), and O(n log n): each op enters and leaves a heap or list once, and an acquire scans the
// releases of one grant.
//
// drop_unneeded_acquires: an in-doubt acquire x is optional, and removing it from a
// linearization L breaks only what x's own hold made possible. A grant after it finds the lock
// free instead of held by a lease that may have run out, so it is granted with a lease that ends
// no later; later ops see a `now` no later; each of MutexModel's steps accepts at least as much
// from such a state (an earlier lease end only makes "may have run out" true sooner). What x's
// hold alone made possible is a `held` refusal placed inside it. So x may go when
//   (a) its process does nothing else after x's invoke and holds nothing when x is invoked (its
//       every other op returned by then, each of its grants released by an ok or `not-held`),
//       so x is a new grant nobody releases or re-enters; and
//   (b) every refusal o that returns after x's invoke is covered: some grant g, acquired ok and
//       released first by an ok release r (so g holds from its grant to r: only r can end it),
//       whose process does nothing else while g may hold, has ret(g) < ret(o) and call(o) <
//       call(r). Then in L, o can move into g's hold: to just after the later of g's grant and
//       the last op that must precede o. That position is before r (each op that returned before
//       o was called also returned before r was called) and before every op that must follow o
//       (each was called after o returned, so after g returned). Moving o earlier only loosens
//       the bound of the ops it leaves behind; moving it later, to just after g's grant, passes
//       only ops placed before g's grant, already bounded by g's return, which with times that
//       grow with the history (checked) is no later than o's.
// Leases play no part in (a) or (b): x is optional, so however long its lease, it never has to
// block anyone; what it could do is only ever help a refusal.

#include "checker/lock_tokens.hpp"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace lockbench::checker::lin {

namespace {

class TokenLinearizer {
  public:
    explicit TokenLinearizer(const Partition& partition)
        : ops_(partition.ops),
          partition_(partition),
          placed_(ops_.size(), false),
          called_(ops_.size(), false),
          releases_(ops_.size()) {}

    bool run() {
        auto grant = grants_named(partition_);
        if (!grant) {
            return false;
        }
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            if ((*grant)[i] >= 0) {
                releases_[static_cast<std::size_t>((*grant)[i])].push_back(i);
            }
        }
        sweep_.emplace(ops_, partition_.required_ops);
        for (const TokenSweep::Point& p : sweep_->points()) {
            if (p.call) {
                on_call(p.op);
            } else if (!placed_[p.op] && !force(p.op)) {
                return false;
            }
            if (bail_) {
                return false;
            }
        }
        return true;
    }

  private:
    bool lock_held() const { return state_.holds.first.holder != MutexModel::kFree; }

    std::int64_t bound_ns() { return sweep_->bound_ns(placed_); }

    bool place(std::uint32_t i) {
        const SearchOp& op = ops_[i];
        if (is_grant(op) && state_.holds.first.holder == op.op.process) {
            bail_ = true;  // a re-entry: more than one reading may follow; the search decides
            return false;
        }
        ModelOp bounded = op.op;
        bounded.latest_ns = linearized_no_later_than(bounded.latest_ns, bound_ns());
        auto next = MutexModel::step(state_, bounded);
        if (!next || !next->holds.rest.empty()) {
            return false;
        }
        state_ = std::move(*next);
        placed_[i] = true;
        if (is_grant(op)) {
            holder_grant_ = i;
            grants_in_flight_.remove(op, i);
        }
        if (!lock_held()) {
            holder_grant_.reset();
            return true;
        }
        // Placing a refusal keeps the lock held, so this runs again inside: take the list first.
        std::vector<std::uint32_t> refusals;
        refusals.swap(pending_refusals_);
        for (const std::uint32_t refusal : refusals) {
            if (!placed_[refusal] && !place(refusal)) {
                return false;
            }
        }
        return true;
    }

    void on_call(std::uint32_t i) {
        called_[i] = true;
        const SearchOp& op = ops_[i];
        if (is_refusal(op)) {
            if (!lock_held() || !place(i)) {
                pending_refusals_.push_back(i);
            }
        } else if (is_grant(op)) {
            grants_in_flight_.add(op, i);
        }
    }

    // Ends the current hold with one of its releases in flight; false when none can.
    bool end_hold() {
        if (!holder_grant_) {
            return false;
        }
        const auto& releases = releases_[*holder_grant_];
        // Ok releases first, then retried ones, then in-doubt ones, then `not-held`.
        for (int pass = 0; pass < 4; ++pass) {
            for (const std::uint32_t r : releases) {
                const ModelOp& op = ops_[r].op;
                const int rank = op.outcome == OpOutcome::Observation ? 3
                                 : op.outcome == OpOutcome::Info      ? 2
                                 : op.repeat                          ? 1
                                                                      : 0;
                if (rank != pass || !called_[r] || placed_[r]) {
                    continue;
                }
                if (place(r) && !lock_held()) {
                    return true;
                }
                if (bail_ || !lock_held()) {
                    return false;
                }
            }
        }
        return false;
    }

    // Whether a grant placed now, at `seq`, for a refusal holds no longer than the lock may stay
    // taken (lock_tokens.hpp).
    bool gone_before_next_grant(std::uint32_t g, std::uint64_t seq) const {
        const std::uint64_t first_release_call =
            releases_[g].empty() ? kNeverReturned : ops_[releases_[g].front()].call_seq;
        return lin::gone_before_next_grant(ops_, sweep_->grant_returns(), g, seq, state_.now_ns,
                                           first_release_call);
    }

    // A `held` refusal returning at `seq` with the lock free: a grant in flight is placed for it,
    // one that is gone before the next grant returns if there is one, else the ok one returning
    // first, else the one in doubt with the shortest lease.
    bool grant_for_refusal(std::uint64_t seq) {
        std::vector<std::uint32_t> candidates;
        const auto take = [&](const auto& grants) {
            int tried = 0;
            for (auto it = grants.begin(); it != grants.end() && tried < kGrantsTried;
                 ++it, ++tried) {
                candidates.push_back(it->second);
            }
        };
        take(grants_in_flight_.ok);
        take(grants_in_flight_.in_doubt);
        for (const std::uint32_t g : candidates) {
            if (gone_before_next_grant(g, seq) && place(g)) {
                return true;
            }
        }
        return (!grants_in_flight_.ok.empty() && place(grants_in_flight_.ok.begin()->second)) ||
               (!grants_in_flight_.in_doubt.empty() &&
                place(grants_in_flight_.in_doubt.begin()->second));
    }

    // Before grant `g` at its return: an ok grant in flight with a lease and no ok release may
    // have taken effect long before its reply, its lease run out while the reply was on its
    // way; placed at its own return it would find a hold without a lease granted meanwhile
    // (50 clients: 11 of 20 seeds fell back to the search so). Placed first when the model,
    // stepped on a copy, accepts it and then `g`, in that order - so `g` finds its lease run out.
    void place_leased_grants_first(std::uint32_t g) {
        std::vector<std::uint32_t> first;
        for (auto it = grants_in_flight_.ok.begin();
             it != grants_in_flight_.ok.end() && first.size() < kEarlyGrantsTried; ++it) {
            const std::uint32_t h = it->second;
            const bool released_ok =
                std::any_of(releases_[h].begin(), releases_[h].end(),
                            [&](std::uint32_t r) { return ops_[r].op.outcome == OpOutcome::Ok; });
            if (h != g && ops_[h].op.process != ops_[g].op.process &&
                ops_[h].op.lease_ns != kNever && !released_ok) {
                first.push_back(h);
            }
        }
        for (const std::uint32_t h : first) {
            const std::int64_t bound = bound_ns();
            ModelOp early = ops_[h].op;
            early.latest_ns = linearized_no_later_than(early.latest_ns, bound);
            const auto after_h = MutexModel::step(state_, early);
            if (!after_h || !after_h->holds.rest.empty()) {
                continue;
            }
            ModelOp grant = ops_[g].op;
            grant.latest_ns = linearized_no_later_than(grant.latest_ns, bound);
            const auto after_g = MutexModel::step(*after_h, grant);
            if (after_g && after_g->holds.rest.empty()) {
                place(h);
            }
        }
    }

    bool force(std::uint32_t i) {
        const SearchOp& op = ops_[i];
        if (is_refusal(op)) {
            if (!lock_held() && !grant_for_refusal(op.return_seq)) {
                return false;
            }
            return placed_[i] || place(i);
        }
        if (is_grant(op)) {
            place_leased_grants_first(i);
        }
        // A hold with a release in flight ends by it, not by a grant that takes over once its
        // lease may have run out: taken over, it could never be released ok.
        if (is_grant(op) && lock_held() && end_hold()) {
            return place(i);
        }
        return !bail_ && place(i);
    }

    const std::vector<SearchOp>& ops_;
    const Partition& partition_;
    MutexModel::State state_ = MutexModel::initial();
    std::vector<bool> placed_;
    std::vector<bool> called_;
    std::vector<std::vector<std::uint32_t>> releases_;  // per grant, its releases in call order
    std::optional<TokenSweep> sweep_;                   // from run() on
    std::optional<std::uint32_t> holder_grant_;
    std::vector<std::uint32_t> pending_refusals_;
    GrantsInFlight grants_in_flight_;
    bool bail_ = false;
};

}  // namespace

TokenSweep::TokenSweep(const std::vector<SearchOp>& ops, std::size_t required) : ops_(ops) {
    points_.reserve(ops.size() * 2);
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
        points_.push_back({ops[i].call_seq, i, true});
        if (i < required) {
            points_.push_back({ops[i].return_seq, i, false});
            by_return_.push_back(i);
        }
    }
    std::sort(points_.begin(), points_.end(),
              [](const Point& a, const Point& b) { return a.seq < b.seq; });
    std::sort(by_return_.begin(), by_return_.end(), [&](std::uint32_t a, std::uint32_t b) {
        return ops[a].return_seq < ops[b].return_seq;
    });
    for (const std::uint32_t i : by_return_) {
        if (is_grant(ops[i])) {
            grant_returns_.push_back(i);
        }
    }
}

std::int64_t TokenSweep::bound_ns(const std::vector<bool>& placed) {
    while (next_return_ < by_return_.size() && placed[by_return_[next_return_]]) {
        ++next_return_;
    }
    return next_return_ < by_return_.size() ? ops_[by_return_[next_return_]].op.latest_ns : kNever;
}

bool gone_before_next_grant(const std::vector<SearchOp>& ops,
                            const std::vector<std::uint32_t>& grant_returns, std::uint32_t g,
                            std::uint64_t seq, std::int64_t now_ns,
                            std::uint64_t first_release_call) {
    // The first grant other than g to return after seq.
    auto it =
        std::upper_bound(grant_returns.begin(), grant_returns.end(), seq,
                         [&](std::uint64_t s, std::uint32_t r) { return s < ops[r].return_seq; });
    if (it != grant_returns.end() && *it == g) {
        ++it;
    }
    if (it == grant_returns.end()) {
        return true;
    }
    const SearchOp& next = ops[*it];
    if (!ops[g].info) {
        return next.return_seq > first_release_call;
    }
    const std::int64_t start = std::max(now_ns, ops[g].op.earliest_ns);
    return ops[g].op.lease_ns != kNever &&
           next.op.latest_ns >= lease_end(start, ops[g].op.lease_ns);
}

std::optional<std::vector<std::int64_t>> grants_named(const Partition& partition) {
    const auto& recorded = partition.history->ops;
    if (partition.history->token_granted_twice) {
        return std::nullopt;
    }
    std::vector<std::int64_t> op_of_source(recorded.size(), -1);
    for (std::uint32_t i = 0; i < partition.ops.size(); ++i) {
        op_of_source[partition.ops[i].source] = i;
    }
    std::vector<std::int64_t> grant(partition.ops.size(), -1);
    for (std::uint32_t i = 0; i < partition.ops.size(); ++i) {
        const SearchOp& op = partition.ops[i];
        const RecordedOp& r = recorded[op.source];
        if (op.op.kind == OpKind::Acquire && op.op.outcome == OpOutcome::Ok && !r.token_granted) {
            return std::nullopt;
        }
        if (op.op.kind == OpKind::Release) {
            if (!r.grant || op_of_source[*r.grant] < 0) {
                return std::nullopt;
            }
            grant[i] = op_of_source[*r.grant];
        }
    }
    return grant;
}

bool linearize_lock_tokens(const Partition& partition) {
    return TokenLinearizer(partition).run();
}

namespace {

// Times grow with the history, as (b)'s move of a refusal needs: false when a required op that
// returned later has an earlier latest time.
bool times_grow_with_returns(const std::vector<SearchOp>& ops, std::size_t required) {
    std::vector<std::uint32_t> by_return;
    for (std::uint32_t i = 0; i < required; ++i) {
        by_return.push_back(i);
    }
    std::sort(by_return.begin(), by_return.end(), [&](std::uint32_t a, std::uint32_t b) {
        return ops[a].return_seq < ops[b].return_seq;
    });
    for (std::size_t k = 1; k < by_return.size(); ++k) {
        if (ops[by_return[k]].op.latest_ns < ops[by_return[k - 1]].op.latest_ns) {
            return false;
        }
    }
    return true;
}

// Each process's ops by call.
std::vector<std::vector<std::uint32_t>> ops_of_each_process(const std::vector<SearchOp>& ops) {
    std::vector<std::vector<std::uint32_t>> of_process;
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
        const auto p = static_cast<std::size_t>(ops[i].op.process);
        if (of_process.size() <= p) {
            of_process.resize(p + 1);
        }
        of_process[p].push_back(i);
    }
    for (auto& list : of_process) {
        std::sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
            return ops[a].call_seq < ops[b].call_seq;
        });
    }
    return of_process;
}

// Per grant: its first release (-1: none).
std::vector<std::int64_t> first_release_of_each_grant(const std::vector<SearchOp>& ops,
                                                      const std::vector<std::int64_t>& grant) {
    std::vector<std::int64_t> release_of(ops.size(), -1);
    for (std::uint32_t i = 0; i < ops.size(); ++i) {
        const std::int64_t g = grant[i];
        if (g >= 0 && !ops[i].op.repeat &&
            (release_of[static_cast<std::size_t>(g)] < 0 ||
             ops[i].call_seq <
                 ops[static_cast<std::size_t>(release_of[static_cast<std::size_t>(g)])].call_seq)) {
            release_of[static_cast<std::size_t>(g)] = i;
        }
    }
    return release_of;
}

// A grant covers the refusals that overlap [its return, its release's call] when it holds
// for all of that: released first by an ok release, its process doing nothing else meanwhile.
// Sorted (grant return, release call) pairs.
std::vector<std::pair<std::uint64_t, std::uint64_t>> grant_covers(
    const std::vector<SearchOp>& ops, std::size_t required, const std::vector<std::int64_t>& grant,
    const std::vector<std::int64_t>& release_of,
    const std::vector<std::vector<std::uint32_t>>& of_process) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> covers;
    for (std::uint32_t g = 0; g < required; ++g) {
        const std::int64_t r = release_of[g];
        if (!is_grant(ops[g]) || r < 0 || static_cast<std::size_t>(r) >= required ||
            ops[static_cast<std::size_t>(r)].op.outcome != OpOutcome::Ok) {
            continue;
        }
        const SearchOp& release = ops[static_cast<std::size_t>(r)];
        bool alone = true;
        for (const std::uint32_t other : of_process[static_cast<std::size_t>(ops[g].op.process)]) {
            const bool its_own = other == g || grant[other] == g;
            const bool overlaps =
                ops[other].call_seq < release.return_seq && ops[other].return_seq > ops[g].call_seq;
            if (!its_own && overlaps) {
                alone = false;
                break;
            }
        }
        if (alone) {
            covers.push_back({ops[g].return_seq, release.call_seq});
        }
    }
    std::sort(covers.begin(), covers.end());
    return covers;
}

// The latest return of a refusal no grant covers: an in-doubt acquire invoked before it may
// be what that refusal saw.
std::uint64_t uncovered_refusals_until(
    const std::vector<SearchOp>& ops, std::size_t required,
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& covers) {
    std::vector<std::uint64_t> latest_release_call(covers.size());
    for (std::size_t k = 0; k < covers.size(); ++k) {
        latest_release_call[k] =
            std::max(k == 0 ? 0 : latest_release_call[k - 1], covers[k].second);
    }
    std::uint64_t uncovered_until = 0;
    for (std::uint32_t o = 0; o < required; ++o) {
        if (!is_refusal(ops[o])) {
            continue;
        }
        const auto end = std::lower_bound(covers.begin(), covers.end(),
                                          std::pair{ops[o].return_seq, std::uint64_t{0}});
        const std::size_t n = static_cast<std::size_t>(end - covers.begin());
        if (n == 0 || latest_release_call[n - 1] <= ops[o].call_seq) {
            uncovered_until = std::max(uncovered_until, ops[o].return_seq);
        }
    }
    return uncovered_until;
}

// An in-doubt grant `x` called when its process had finished everything before it, every
// grant of those released by a required op.
bool its_process_was_idle(const std::vector<SearchOp>& ops, std::size_t required, std::size_t x,
                          const std::vector<std::int64_t>& release_of,
                          const std::vector<std::vector<std::uint32_t>>& of_process) {
    for (const std::uint32_t other : of_process[static_cast<std::size_t>(ops[x].op.process)]) {
        if (other == x) {
            continue;
        }
        const bool done_before = ops[other].return_seq < ops[x].call_seq;
        const std::int64_t r = is_grant(ops[other]) ? release_of[other] : 0;
        const bool released =
            r >= 0 && (!is_grant(ops[other]) ||
                       (static_cast<std::size_t>(r) < required &&
                        ops[static_cast<std::size_t>(r)].return_seq < ops[x].call_seq));
        if (!done_before || !released) {
            return false;
        }
    }
    return true;
}

void remove_marked(std::vector<SearchOp>& ops, const std::vector<bool>& drop) {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        if (!drop[i]) {
            ops[kept++] = ops[i];
        }
    }
    ops.resize(kept);
}

}  // namespace

std::size_t drop_unneeded_acquires(Partition& partition) {
    auto& ops = partition.ops;
    const std::size_t required = partition.required_ops;
    const auto grant = grants_named(partition);
    if (!grant || required == ops.size()) {
        return 0;
    }
    if (!times_grow_with_returns(ops, required)) {
        return 0;
    }
    const auto of_process = ops_of_each_process(ops);
    const auto release_of = first_release_of_each_grant(ops, *grant);
    const std::uint64_t uncovered_until = uncovered_refusals_until(
        ops, required, grant_covers(ops, required, *grant, release_of, of_process));
    std::vector<bool> drop(ops.size(), false);
    std::size_t dropped = 0;
    for (std::size_t x = required; x < ops.size(); ++x) {
        if (!is_grant(ops[x]) || ops[x].call_seq < uncovered_until) {
            continue;
        }
        if (its_process_was_idle(ops, required, x, release_of, of_process)) {
            drop[x] = true;
            ++dropped;
        }
    }
    if (dropped > 0) {
        remove_marked(ops, drop);
    }
    return dropped;
}

}  // namespace lockbench::checker::lin
