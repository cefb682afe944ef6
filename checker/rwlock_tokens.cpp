// Rwlock keys whose grants carry unique tokens: a linearization built without search.
//
// The model is RwLockModel, stepped exactly as the search steps it (models.hpp): each op bounded
// to take effect no later than the earliest return still to be placed, leases starting no earlier
// than the invokes placed before them. Shared holds coexist; an exclusive hold excludes every
// other hold (the writer's own shared holds are a downgrade; no upgrade); each hold ends at a
// release by its process or once its lease may have run out. When every ok acquire carries a
// token no other grant carries and every release names one (grants_named, lock_tokens.hpp), each
// release is its holder's, under the holder's process, so the holds a release can end are known.
//
// The pass is lock_tokens.cpp's for the mutex, widened to many holders: Wing & Gong's search with
// one choice at each step and no backtracking, walking the calls and returns in history order.
// An op is placed only after its call, and every required op is placed by its return at the
// latest (the search's own rules); each placement is RwLockModel::step with the search's bound,
// and a step that leaves more than one reading of the lock (a holder's re-entry once its lease may
// have run out: a re-entry or a new grant) counts as a failed placement. The choices:
//   - a `held` refusal goes as soon as a hold it conflicts with exists while it is in flight (a
//     writer for a shared one, anyone for an exclusive one): it changes nothing, not even the
//     model's `now`. If its return comes with no such hold, a grant in flight that makes one is
//     placed for it, among the first few ok and in-doubt acquires in flight: one whose hold is
//     over before the next grant returns if there is one (as lock_tokens.cpp's), else an ok one,
//     first to return first, else an in-doubt one, the shortest lease first;
//   - an ok acquire goes at its return, after ending each hold it conflicts with by a release in
//     flight of that holder's process (ok, then retried, then in doubt, then `not-held`), and
//     takes a hold over without one only when the model lets it (the holder's lease may have run
//     out): holds begin and end as late as they can, which leaves the most room to the refusals.
//     Before it, an ok acquire in flight that conflicts with it and either returns before its
//     first release is called or has a lease goes first, when the model takes both in that order
//     (the early one's lease may have run out by the later grant) and no ok release names the
//     early one - a writer whose reply came long after it took effect, placed at its return,
//     would find later readers still holding;
//   - every other required op goes at its return; in-doubt ops go only where needed (above).
// When every required op is placed, the ops placed, in that order, are a linearization the
// search accepts: each was placed where the search may place it, with the step the search takes.
// So `valid` is sound whatever the choices. The pass is not complete - a choice can be wrong (a
// grant placed early for a refusal that blocks a grant returning before that grant's release
// begins; a shared refusal whose only witness is a writer that readers in flight still block) -
// so when a placement fails it answers nothing and the search decides: a wrong choice costs time,
// never a wrong answer, and the pass never says `invalid`. The cross-check against the
// brute-force oracle (linearizability_test.cpp) counts how often it answers. Cost: O(n log n)
// plus, per forced grant, the releases in flight of the processes it displaces.

#include "checker/rwlock_tokens.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "checker/lock_tokens.hpp"

namespace lockbench::checker::lin {

namespace {

// The order a holder's releases in flight are tried in: one that certainly took effect first.
int release_rank(const ModelOp& op) {
    return op.outcome == OpOutcome::Observation ? 3
           : op.outcome == OpOutcome::Info      ? 2
           : op.repeat                          ? 1
                                                : 0;
}

class RwTokenLinearizer {
  public:
    explicit RwTokenLinearizer(const Partition& partition)
        : ops_(partition.ops),
          required_(partition.required_ops),
          placed_(ops_.size(), false),
          called_(ops_.size(), false) {}

    bool run(const std::vector<std::int64_t>& grant_of_release) {
        first_release_call_.assign(ops_.size(), kNeverReturned);
        has_ok_release_.assign(ops_.size(), false);
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            if (grant_of_release[i] >= 0) {
                const auto g = static_cast<std::size_t>(grant_of_release[i]);
                first_release_call_[g] = std::min(first_release_call_[g], ops_[i].call_seq);
                has_ok_release_[g] = has_ok_release_[g] || ops_[i].op.outcome == OpOutcome::Ok;
            }
        }
        std::size_t processes = 0;
        for (const SearchOp& op : ops_) {
            processes = std::max(processes, static_cast<std::size_t>(op.op.process) + 1);
        }
        releases_of_.resize(processes);
        first_unplaced_release_.assign(processes, 0);
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            if (ops_[i].op.kind == OpKind::Release) {
                releases_of_[static_cast<std::size_t>(ops_[i].op.process)].push_back(i);
            }
        }
        for (auto& releases : releases_of_) {
            std::sort(releases.begin(), releases.end(), [&](std::uint32_t a, std::uint32_t b) {
                return ops_[a].call_seq < ops_[b].call_seq;
            });
        }
        sweep_.emplace(ops_, required_);
        for (const TokenSweep::Point& p : sweep_->points()) {
            if (p.call) {
                on_call(p.op);
            } else if (!placed_[p.op] && !force(p.op)) {
                return false;
            }
        }
        return true;
    }

  private:
    const RwLockModel::Holds& holds() const { return state_.holds.first; }

    bool holds_anything(std::int32_t process) const {
        const auto& readers = holds().readers;
        return holds().writer == process ||
               std::any_of(readers.begin(), readers.end(),
                           [&](const RwLockModel::Reader& r) { return r.process == process; });
    }

    std::int64_t bound_ns() { return sweep_->bound_ns(placed_); }

    // Op `i` as the search steps it here: taking effect no later than the first return still to
    // be placed.
    ModelOp bounded(std::uint32_t i) {
        ModelOp op = ops_[i].op;
        op.latest_ns = linearized_no_later_than(op.latest_ns, bound_ns());
        return op;
    }

    bool place(std::uint32_t i) {
        const SearchOp& op = ops_[i];
        auto next = RwLockModel::step(state_, bounded(i));
        if (!next || !next->holds.rest.empty()) {
            return false;
        }
        state_ = std::move(*next);
        placed_[i] = true;
        if (is_grant(op)) {
            grants_in_flight_.remove(op, i);
        }
        if (!is_refusal(op)) {
            place_pending_refusals();
        }
        return true;
    }

    // Refusals in flight that the holds now explain go now: later, the holds may be gone.
    void place_pending_refusals() {
        if (holds().writer != RwLockModel::kNoWriter) {
            place_all(refusals_needing_writer_);
        }
        if (holds().writer != RwLockModel::kNoWriter || !holds().readers.empty()) {
            place_all(refusals_needing_holder_);
        }
    }

    void place_all(std::vector<std::uint32_t>& refusals) {
        std::vector<std::uint32_t> waiting;
        waiting.swap(refusals);
        for (const std::uint32_t r : waiting) {
            if (!placed_[r] && !place(r)) {
                refusals.push_back(r);
            }
        }
    }

    void on_call(std::uint32_t i) {
        called_[i] = true;
        const SearchOp& op = ops_[i];
        if (is_refusal(op)) {
            if (!place(i)) {
                (op.op.mode == LockMode::Shared ? refusals_needing_writer_
                                                : refusals_needing_holder_)
                    .push_back(i);
            }
        } else if (is_grant(op)) {
            grants_in_flight_.add(op, i);
        }
    }

    // Ends `process`'s holds with its releases in flight; false when some hold remains.
    bool end_holds_of(std::int32_t process) {
        const auto p = static_cast<std::size_t>(process);
        auto& releases = releases_of_[p];
        auto& first = first_unplaced_release_[p];
        while (first < releases.size() && placed_[releases[first]]) {
            ++first;
        }
        for (int pass = 0; pass < 4; ++pass) {
            for (std::size_t k = first; k < releases.size() && called_[releases[k]]; ++k) {
                const std::uint32_t r = releases[k];
                if (placed_[r] || release_rank(ops_[r].op) != pass) {
                    continue;
                }
                place(r);
                if (!holds_anything(process)) {
                    return true;
                }
            }
        }
        return false;
    }

    // Before a grant to `grant` at its return: the holds it conflicts with end by their releases
    // in flight where they can (taken over once its lease may have run out, a hold can never be
    // released ok again).
    void end_conflicting_holds(const ModelOp& grant) {
        std::vector<std::int32_t> holders;
        if (holds().writer != RwLockModel::kNoWriter && holds().writer != grant.process) {
            holders.push_back(holds().writer);
        }
        if (grant.mode == LockMode::Exclusive) {
            for (const RwLockModel::Reader& r : holds().readers) {
                if (r.process != grant.process) {
                    holders.push_back(r.process);
                }
            }
        }
        for (const std::int32_t holder : holders) {
            end_holds_of(holder);
        }
    }

    // Whether grant `g`, placed now at `seq` for a refusal, is over before the next grant returns
    // (lock_tokens.hpp).
    bool gone_before_next_grant(std::uint32_t g, std::uint64_t seq) const {
        return lin::gone_before_next_grant(ops_, sweep_->grant_returns(), g, seq, state_.now_ns,
                                           first_release_call_[g]);
    }

    // A grant in flight that explains `refusal` (returning at `seq`), placed; false when none
    // could be. One gone before the next grant returns first, as lock_tokens.cpp's.
    bool grant_for(const SearchOp& refusal, std::uint64_t seq) {
        const auto explains = [&](std::uint32_t g) {
            return refusal.op.mode == LockMode::Exclusive || ops_[g].op.mode == LockMode::Exclusive;
        };
        const auto try_from = [&](const auto& grants) {
            std::vector<std::uint32_t> candidates;
            for (const auto& [order, g] : grants) {
                if (explains(g)) {
                    candidates.push_back(g);
                    if (candidates.size() == kGrantsTried) {
                        break;
                    }
                }
            }
            return candidates;
        };
        std::vector<std::uint32_t> candidates = try_from(grants_in_flight_.ok);
        const std::vector<std::uint32_t> doubtful = try_from(grants_in_flight_.in_doubt);
        candidates.insert(candidates.end(), doubtful.begin(), doubtful.end());
        for (const std::uint32_t g : candidates) {
            if (gone_before_next_grant(g, seq) && place(g)) {
                return true;
            }
        }
        return std::any_of(candidates.begin(), candidates.end(),
                           [&](std::uint32_t g) { return place(g); });
    }

    bool force(std::uint32_t i) {
        const SearchOp& op = ops_[i];
        if (is_refusal(op)) {
            if (place(i)) {
                return true;
            }
            return grant_for(op, op.return_seq) && (placed_[i] || place(i));
        }
        if (is_grant(op)) {
            place_grants_that_must_come_first(i);
            end_conflicting_holds(op.op);
        }
        return place(i);
    }

    static bool conflict(const ModelOp& a, const ModelOp& b) {
        return a.process != b.process &&
               (a.mode == LockMode::Exclusive || b.mode == LockMode::Exclusive);
    }

    // Before grant `g` at its return: an ok grant in flight that conflicts with it and returns
    // before g's first release is called cannot follow g (g holds until then) unless g's lease
    // may have run out; it may precede g, taken over once its own lease may have run out (it took
    // effect early, and its lease ran out while it waited for its reply). One with a lease that
    // returns later may have done the same, and placed at its own return it can find holds
    // without a lease granted meanwhile. Placed first when the model, stepped on a copy, accepts
    // both in that order - and only when no ok release names it, which a hold taken over could
    // never have.
    void place_grants_that_must_come_first(std::uint32_t g) {
        std::vector<std::uint32_t> first;
        // Only the candidates count against the limit: an early writer whose reply came after
        // dozens of readers' replies (50 clients) sits behind them all, and counting every grant
        // in flight left it out - the readers then found it still holding.
        for (auto it = grants_in_flight_.ok.begin();
             it != grants_in_flight_.ok.end() && first.size() < kEarlyGrantsTried; ++it) {
            const std::uint32_t h = it->second;
            const bool blocked_after =
                it->first < first_release_call_[g] || ops_[h].op.lease_ns != kNever;
            if (h != g && !has_ok_release_[h] && blocked_after &&
                conflict(ops_[h].op, ops_[g].op)) {
                first.push_back(h);
            }
        }
        for (const std::uint32_t h : first) {
            auto after_h = RwLockModel::step(state_, bounded(h));
            if (!after_h || !after_h->holds.rest.empty()) {
                continue;
            }
            const auto after_g = RwLockModel::step(*after_h, bounded(g));
            if (after_g && after_g->holds.rest.empty()) {
                place(h);
            }
        }
    }

    const std::vector<SearchOp>& ops_;
    const std::size_t required_;
    RwLockModel::State state_ = RwLockModel::initial();
    std::vector<bool> placed_;
    std::vector<bool> called_;
    std::vector<std::vector<std::uint32_t>> releases_of_;  // per process, in call order
    std::vector<std::size_t> first_unplaced_release_;      // per process: all before are placed
    std::vector<std::uint64_t> first_release_call_;        // per grant: its first release's call
    std::vector<bool> has_ok_release_;                     // per grant
    std::optional<TokenSweep> sweep_;                      // from run() on
    std::vector<std::uint32_t> refusals_needing_writer_;   // shared `held`, in flight
    std::vector<std::uint32_t> refusals_needing_holder_;   // exclusive `held`, in flight
    GrantsInFlight grants_in_flight_;
};

}  // namespace

bool linearize_rwlock_tokens(const Partition& partition) {
    const auto grant_of_release = grants_named(partition);
    return grant_of_release && RwTokenLinearizer(partition).run(*grant_of_release);
}

}  // namespace lockbench::checker::lin
