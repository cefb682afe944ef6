// Cheap refutations of a lock history, before (instead of) the search.
//
// The models are MutexModel and RwLockModel (models.hpp), stepped as the WGL search steps them:
// an op X can be placed next only when no unplaced op returned before X was invoked (so every op
// placed before an unplaced op U was invoked before U returned, and an op that returned before X
// was invoked precedes X in every linearization), and X is stepped with its latest time bounded
// by the latest time of the unplaced op that returns first. Ok and `held`/`not-held` ops are
// required: every linearization places them. An op in doubt may be placed or not. "Process" is
// the model's: a release counts as its grant's process (linearizability.cpp), so a process's
// ops are the ones the model matches against its holds.
//
// 1. release-without-grant: an ok release R by process P, not a retried one. Only a grant by P
//    (ok or in doubt) placed before R can make P a holder, and each op placed before R was invoked
//    before R returned. If no grant of P was invoked before R returned, P holds nothing at R in
//    any linearization, and an owner-aware lock refuses R.
//
// 2. refused-while-free: a `held` refusal O. The lock starts free and only a grant makes it held
//    (a holder whose lease may have run out still counts as holding for a refusal). If no grant
//    (ok or in doubt, any process; for a shared refusal of an rwlock, no exclusive grant) was
//    invoked before O returned, nothing placed before O holds it.
//
// 3. granted-while-held and 4. not-held-while-held: an ok grant G of process P (exclusive for
//    rule 3 on an rwlock unless the other grant is) such that every other op of P returned
//    before G was invoked or was invoked after the op X below returned. Then between G and X no
//    op of P is placed. After G, P holds the lock in every reading the model keeps, with a lease
//    that ends no earlier than G's invoke plus G's lease (a lease starts at the model's `now`,
//    which is no earlier than G's invoke; a re-entry keeps the later end). No op of another
//    process ends P's hold before X unless P's lease may have run out: a release or `not-held`
//    by another process touches only that process's holds, a refusal changes nothing, and a
//    grant displaces P only when P's lease may have run out at its bounded time. When the
//    history's times grow with its positions (checked: the required ops by return have
//    non-decreasing latest times), every op placed before X is bounded by X's own latest time,
//    so if X returned before P's lease can have ended, nothing displaces P before X, and at X:
//      3. X is an ok grant by another process Q that was invoked after G returned: it finds P
//         holding, lease running (for an rwlock: P's writer hold, or P's shared hold against an
//         exclusive X) - no reading accepts it;
//      4. X is P's next op, a `not-held` release invoked after G returned: P holds, lease
//         running - no reading accepts it. On an rwlock, not when G is exclusive and an earlier
//         shared acquire of P may have granted: the release gives P's shared hold back first,
//         and that hold's lease may have run out (the cross-check found it).
//    For 3, X is the ok grant that returns first among those invoked after G returned and
//    before P's next op was invoked (a range minimum, by sparse table): O(n log n) overall.
//
// Each rule only ever says invalid, with the ops that prove it; what none of them finds, the
// token passes or the search decide. The cross-check runs them against the brute-force oracle
// and the search on random token histories, valid and corrupted (linearizability_test.cpp).

#include "checker/lock_refutation.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "checker/lock_tokens.hpp"

namespace lockbench::checker::lin {

namespace {

constexpr std::uint64_t kNoSeq = std::numeric_limits<std::uint64_t>::max();

bool exclusive(const SearchOp& op) {
    return op.op.mode == LockMode::Exclusive;
}

// The ok grant returning first among those invoked in a range of call positions: a sparse table
// over the grants ordered by invoke.
class FirstReturn {
  public:
    FirstReturn(const std::vector<SearchOp>& ops, std::vector<std::uint32_t> grants)
        : ops_(ops), by_call_(std::move(grants)) {
        std::sort(by_call_.begin(), by_call_.end(), [&](std::uint32_t a, std::uint32_t b) {
            return ops_[a].call_seq < ops_[b].call_seq;
        });
        table_.push_back(by_call_);
        for (std::size_t width = 1; 2 * width <= by_call_.size(); width *= 2) {
            const auto& below = table_.back();
            std::vector<std::uint32_t> level(by_call_.size() - 2 * width + 1);
            for (std::size_t i = 0; i < level.size(); ++i) {
                level[i] = earlier(below[i], below[i + width]);
            }
            table_.push_back(std::move(level));
        }
    }

    // The grant invoked after `after_call` and before `before_call` that returns first; kNoOp
    // when there is none.
    std::uint32_t in(std::uint64_t after_call, std::uint64_t before_call) const {
        const auto call_less = [&](std::uint32_t g, std::uint64_t seq) {
            return ops_[g].call_seq < seq;
        };
        const auto lo = static_cast<std::size_t>(
            std::lower_bound(by_call_.begin(), by_call_.end(), after_call + 1, call_less) -
            by_call_.begin());
        const auto hi = static_cast<std::size_t>(
            std::lower_bound(by_call_.begin(), by_call_.end(), before_call, call_less) -
            by_call_.begin());
        if (lo >= hi) {
            return kNoOp;
        }
        std::size_t level = 0;
        while ((std::size_t{2} << level) <= hi - lo) {
            ++level;
        }
        return earlier(table_[level][lo], table_[level][hi - (std::size_t{1} << level)]);
    }

  private:
    std::uint32_t earlier(std::uint32_t a, std::uint32_t b) const {
        return ops_[a].return_seq <= ops_[b].return_seq ? a : b;
    }

    const std::vector<SearchOp>& ops_;
    std::vector<std::uint32_t> by_call_;
    std::vector<std::vector<std::uint32_t>> table_;
};

class LockRefuter {
  public:
    LockRefuter(Model model, const Partition& partition)
        : rwlock_(model == Model::RwLock), partition_(partition), ops_(partition.ops) {}

    std::optional<Refutation> run() {
        std::vector<std::vector<std::uint32_t>> of_process;
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            const auto p = static_cast<std::size_t>(ops_[i].op.process);
            if (of_process.size() <= p) {
                of_process.resize(p + 1);
            }
            of_process[p].push_back(i);
        }
        for (auto& list : of_process) {
            std::sort(list.begin(), list.end(), [&](std::uint32_t a, std::uint32_t b) {
                return ops_[a].call_seq < ops_[b].call_seq;
            });
        }
        releases_without_grant(of_process);
        refusals_while_free();
        if (times_grow_with_positions()) {
            held_through(of_process);
        }
        return std::move(found_);
    }

  private:
    void offer(Refutation refutation) {
        const std::uint64_t at = ops_[refutation.op].return_seq;
        if (!found_ || at < found_at_) {
            found_at_ = at;
            found_ = std::move(refutation);
        }
    }

    const RecordedOp& recorded(std::uint32_t op) const {
        return partition_.history->ops[ops_[op].source];
    }
    std::string who(std::uint32_t op) const {
        return "process " + std::to_string(recorded(op).process) + "'s " +
               std::string(op_name(ops_[op].op.kind)) + " (index " +
               std::to_string(recorded(op).invoke_index) + ")";
    }

    void releases_without_grant(const std::vector<std::vector<std::uint32_t>>& of_process) {
        std::vector<std::uint64_t> first_grant_call(of_process.size(), kNoSeq);
        for (std::size_t p = 0; p < of_process.size(); ++p) {
            for (const std::uint32_t i : of_process[p]) {
                if (is_grant(ops_[i])) {
                    first_grant_call[p] = ops_[i].call_seq;  // the list is in call order
                    break;
                }
            }
        }
        for (std::uint32_t r = 0; r < partition_.required_ops; ++r) {
            const SearchOp& op = ops_[r];
            if (op.op.kind != OpKind::Release || op.op.outcome != OpOutcome::Ok || op.op.repeat) {
                continue;
            }
            if (first_grant_call[static_cast<std::size_t>(op.op.process)] > op.return_seq) {
                offer({RefutationRule::ReleaseWithoutGrant,
                       r,
                       {},
                       who(r) + " succeeded, but no acquire of that process was invoked before it "
                                "returned: it released a lock it cannot have held"});
            }
        }
    }

    void refusals_while_free() {
        std::uint64_t first_grant_call = kNoSeq;
        std::uint64_t first_exclusive_grant_call = kNoSeq;
        for (const SearchOp& op : ops_) {
            if (is_grant(op)) {
                first_grant_call = std::min(first_grant_call, op.call_seq);
                if (exclusive(op)) {
                    first_exclusive_grant_call = std::min(first_exclusive_grant_call, op.call_seq);
                }
            }
        }
        for (std::uint32_t o = 0; o < partition_.required_ops; ++o) {
            const SearchOp& op = ops_[o];
            if (!is_refusal(op)) {
                continue;
            }
            const bool shared_refusal = rwlock_ && !exclusive(op);
            const std::uint64_t first =
                shared_refusal ? first_exclusive_grant_call : first_grant_call;
            if (first > op.return_seq) {
                offer({RefutationRule::RefusedWhileFree,
                       o,
                       {},
                       who(o) + " was refused as held, but no " +
                           (shared_refusal ? "exclusive " : "") +
                           "acquire was invoked before it returned: nobody can have held the "
                           "lock"});
            }
        }
    }

    // Rules 3 and 4 bound every op placed before X by X's latest time only when times grow with
    // stream positions, as they do in every history the engine writes.
    bool times_grow_with_positions() const {
        std::vector<std::uint32_t> by_return;
        for (std::uint32_t i = 0; i < partition_.required_ops; ++i) {
            by_return.push_back(i);
        }
        std::sort(by_return.begin(), by_return.end(), [&](std::uint32_t a, std::uint32_t b) {
            return ops_[a].return_seq < ops_[b].return_seq;
        });
        for (std::size_t k = 1; k < by_return.size(); ++k) {
            if (ops_[by_return[k]].op.latest_ns < ops_[by_return[k - 1]].op.latest_ns) {
                return false;
            }
        }
        return true;
    }

    void held_through(const std::vector<std::vector<std::uint32_t>>& of_process) {
        std::vector<std::uint32_t> grants;
        std::vector<std::uint32_t> exclusive_grants;
        for (std::uint32_t i = 0; i < partition_.required_ops; ++i) {
            if (is_grant(ops_[i])) {
                grants.push_back(i);
                if (exclusive(ops_[i])) {
                    exclusive_grants.push_back(i);
                }
            }
        }
        const FirstReturn any_grant(ops_, std::move(grants));
        const FirstReturn exclusive_grant(ops_, std::move(exclusive_grants));
        for (const auto& list : of_process) {
            std::uint64_t returned_before = 0;  // the latest return of the process's ops so far
            bool may_read_before = false;       // a shared acquire of it that may have granted
            for (std::size_t k = 0; k < list.size(); ++k) {
                const std::uint32_t g = list[k];
                const SearchOp& grant = ops_[g];
                const bool alone_before = returned_before < grant.call_seq;
                const bool reader_before = may_read_before;
                returned_before = std::max(returned_before, grant.return_seq);
                may_read_before |= rwlock_ && grant.op.kind == OpKind::Acquire &&
                                   !exclusive(grant) && grant.op.outcome != OpOutcome::Observation;
                if (!alone_before || !is_grant(grant) || grant.op.outcome != OpOutcome::Ok) {
                    continue;
                }
                const std::uint32_t next = k + 1 < list.size() ? list[k + 1] : kNoOp;
                if (next != kNoOp && ops_[next].call_seq < grant.return_seq) {
                    continue;  // the process's next op overlaps its grant
                }
                const std::int64_t lease_ends = lease_end(grant.op.earliest_ns, grant.op.lease_ns);
                const std::uint64_t next_call = next == kNoOp ? kNoSeq : ops_[next].call_seq;
                const FirstReturn& rivals =
                    rwlock_ && !exclusive(grant) ? exclusive_grant : any_grant;
                const std::uint32_t rival = rivals.in(grant.return_seq, next_call);
                if (rival != kNoOp && ops_[rival].return_seq < next_call &&
                    ops_[rival].op.latest_ns < lease_ends) {
                    offer({RefutationRule::GrantedWhileHeld,
                           rival,
                           {{"holds the lock", g}},
                           who(rival) + " was granted the lock while " + who(g) +
                               " held it: that grant returned before this acquire was invoked, "
                               "its lease cannot have run out by this grant's return, and its "
                               "process did nothing else in between"});
                }
                const std::uint32_t after_next = k + 2 < list.size() ? list[k + 2] : kNoOp;
                // A writer that may also hold a shared hold of its own from before: its release
                // gives that one back first (the model's reading), whose lease may have run out.
                const bool release_may_be_anothers = exclusive(grant) && reader_before;
                if (next != kNoOp && !release_may_be_anothers &&
                    ops_[next].op.kind == OpKind::Release &&
                    ops_[next].op.outcome == OpOutcome::Observation &&
                    (after_next == kNoOp || ops_[after_next].call_seq > ops_[next].return_seq) &&
                    ops_[next].op.latest_ns < lease_ends) {
                    offer({RefutationRule::NotHeldWhileHeld,
                           next,
                           {{"holds the lock", g}},
                           who(next) + " was refused as not-held while " + who(g) +
                               " held it: the lease cannot have run out by then, and the "
                               "process did nothing else in between"});
                }
            }
        }
    }

    bool rwlock_;
    const Partition& partition_;
    const std::vector<SearchOp>& ops_;
    std::optional<Refutation> found_;
    std::uint64_t found_at_ = kNoSeq;
};

}  // namespace

std::optional<Refutation> refute_lock(Model model, const Partition& partition) {
    if (model != Model::Mutex && model != Model::RwLock) {
        return std::nullopt;
    }
    return LockRefuter(model, partition).run();
}

}  // namespace lockbench::checker::lin
