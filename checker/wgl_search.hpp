#pragma once

// The search of one partition (one key's ops), independent of how the ops were recorded and of
// how the verdict is reported: linearizability.cpp feeds it and writes the report.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "checker/linearized_set.hpp"
#include "checker/memo_cache.hpp"
#include "checker/models.hpp"

namespace lockbench::checker::wgl {

using Clock = std::chrono::steady_clock;

// An info op, and one never completed, returns after everything else (Porcupine issue #8).
inline constexpr std::uint64_t kNeverReturned = std::numeric_limits<std::uint64_t>::max();

// Shared by every partition's search: the first to exceed a limit or to find a violation stops
// the others, so `check` returns within the time limit whatever the number of keys.
struct SearchBudget {
    Clock::time_point deadline;
    std::size_t memory_limit_bytes = 0;
    std::atomic<std::size_t> memory_used_bytes{0};
    std::atomic<bool> stop{false};
};

enum class SearchOutcome : std::uint8_t {
    Linearizable,
    NotLinearizable,
    TimeLimit,
    MemoryLimit,
    Stopped
};

struct SearchOp {
    ModelOp op;
    std::uint64_t call_seq = 0;
    std::uint64_t return_seq = kNeverReturned;
    std::uint32_t source = 0;  // index into KeyHistory::ops
    bool info = false;
};

struct SearchResult {
    SearchOutcome verdict = SearchOutcome::Linearizable;
    std::vector<std::uint32_t> longest_prefix;  // SearchOp indices, in linearization order
    std::optional<std::uint32_t> unplaceable;
    // The ops concurrent with `unplaceable` (their intervals overlap), placed or not: what it
    // could have been ordered against. The culprit is often among them - a late unlock the
    // search could place early, whose victim is the op that cannot be placed (T8).
    std::vector<std::uint32_t> concurrent;
    // TimeLimit, MemoryLimit: how far the search got (issue 32: an unknown that says nothing
    // helps nobody). `undecided` is the furthest op, in invoke order, that a linearization the
    // search built left out with every required op invoked before it placed; the history cut just
    // before its invoke is proved linearizable: that linearization's longest prefix of ops
    // invoked before the cut is a linearization of the cut history. (An op it places after one
    // invoked after the cut returned after that one's invoke, as the search places no op before
    // one that returned before its invoke: it was in flight at the cut, and an op in flight may
    // take effect or not. Its ops were stepped with bounds no later than the cut history's, and a
    // later bound only widens what an op may do.) nullopt: every required op was placed, which the
    // search would have answered.
    std::optional<std::uint32_t> undecided;
};

// Wing & Gong's search with Lowe's memoisation, over a doubly linked list of call and return
// entries in history order. Taking the first call entry whose op the model accepts and whose
// (set, state) is new "lifts" the op out of the list; meeting a return entry means the op it
// closes cannot come later, so the search backtracks. Reaching the first info return (they all sit
// at +infinity) means every required op is placed: infos may be left out.
template <class M>
class WglSearch {
  public:
    using State = typename M::State;

    // prune: our two prunings (symmetry breaking among equivalent ops, and no alternatives after
    // an op that changes no state); off, the search is Lowe's WGL with memoisation alone, for
    // the benchmark that measures what they buy.
    WglSearch(const std::vector<SearchOp>& ops, std::size_t required_ops, SearchBudget& budget,
              State initial = M::initial(), bool prune = true)
        : ops_(ops),
          required_ops_(required_ops),
          budget_(budget),
          initial_(std::move(initial)),
          prune_(prune),
          linearized_(required_ops, ops.size() - required_ops, 0x5eed ^ ops.size()) {
        build_list();
        if (prune_)
            find_dominators();
        else
            dominator_begin_.assign(ops_.size() + 1, 0);
    }

    ~WglSearch() { budget_.memory_used_bytes.fetch_sub(reported_bytes_); }
    WglSearch(const WglSearch&) = delete;
    WglSearch& operator=(const WglSearch&) = delete;

    SearchResult run() {
        SearchResult result;
        result.verdict = search();
        if (result.verdict == SearchOutcome::NotLinearizable) {
            result.longest_prefix = deepest_;
            result.unplaceable = first_unplaceable();
            if (result.unplaceable) {
                result.concurrent = concurrent_with(*result.unplaceable);
            }
        } else if (result.verdict == SearchOutcome::TimeLimit ||
                   result.verdict == SearchOutcome::MemoryLimit) {
            note_how_far(result);
        }
        return result;
    }

  private:
    struct Entry {
        std::uint32_t op;
        std::uint32_t match;  // a call's return entry
        std::uint32_t prev;
        std::uint32_t next;
        bool is_call;
    };
    struct Frame {
        std::uint32_t call_entry;
        State state_before;
        bool forced;  // the op preserved the state: see backtrack()
    };
    static constexpr std::uint32_t kHead = 0;  // the list is circular through it
    static constexpr std::uint32_t kBudgetCheckEvery = 1024;
    // Listing fewer dominators only prunes less; the cap bounds the lists of info ops, which
    // overlap everything after them.
    static constexpr std::size_t kMaxDominators = 16;

    std::size_t bit_of(std::uint32_t op) const {
        return op < required_ops_ ? op : linearized_.info_base() + (op - required_ops_);
    }

    // Symmetry breaking. Two ops with the same effect on every state (two writes of 3, two cas
    // [1,2]; for locks the process counts, so never two of one process at once) are
    // interchangeable, except for deadlines: if both can go next, a linearization that places
    // the later-returning one first stays valid with the two swapped. So an op is not tried
    // while an equivalent op that returns before it (or returns with it and was called first)
    // can go next. Listed per op: the equivalent ops that overlap it and return first; ops that
    // returned before it was called are placed whenever it is a candidate.
    // Sound because lexicographic (return, call) order is strict: the first op of a class that
    // can go next is never skipped.
    void find_dominators() {
        // Required ops and infos are each in call order already: merge them.
        std::vector<std::uint32_t> indices(ops_.size());
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            indices[i] = i;
        }
        std::vector<std::uint32_t> by_call(ops_.size());
        const auto infos_begin = indices.begin() + static_cast<std::ptrdiff_t>(required_ops_);
        std::merge(
            indices.begin(), infos_begin, infos_begin, indices.end(), by_call.begin(),
            [&](std::uint32_t a, std::uint32_t b) { return ops_[a].call_seq < ops_[b].call_seq; });
        std::unordered_map<EquivalenceKey, std::vector<std::uint32_t>, EquivalenceKeyHash> active;
        std::vector<std::vector<std::uint32_t>> dominators(ops_.size());
        for (const std::uint32_t op : by_call) {
            const SearchOp& o = ops_[op];
            auto& members = active[equivalence_key(o.op)];
            std::erase_if(members,
                          [&](std::uint32_t m) { return ops_[m].return_seq < o.call_seq; });
            for (const std::uint32_t m : members) {
                auto& list = ops_[m].return_seq <= o.return_seq ? dominators[op] : dominators[m];
                if (list.size() < kMaxDominators) {
                    list.push_back(ops_[m].return_seq <= o.return_seq ? m : op);
                }
            }
            // An info never leaves by returning: it leaves once its list is full, or every
            // later op of its class would scan it.
            std::erase_if(members, [&](std::uint32_t m) {
                return ops_[m].info && dominators[m].size() >= kMaxDominators;
            });
            members.push_back(op);
        }
        dominator_begin_.assign(ops_.size() + 1, 0);
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            dominator_begin_[i + 1] = dominator_begin_[i] + dominators[i].size();
            dominator_list_.insert(dominator_list_.end(), dominators[i].begin(),
                                   dominators[i].end());
        }
    }

    struct EquivalenceKey {
        OpKind kind;
        bool observation;
        LockMode mode;
        std::int32_t process;
        std::int64_t value;
        std::int64_t cas_to;
        bool read_nil;
        // A lease lock's step reads the op's times: ops are alike only if those agree too.
        std::int64_t earliest_ns;
        std::int64_t latest_ns;
        std::int64_t lease_ns;
        bool repeat;
        friend bool operator==(const EquivalenceKey&, const EquivalenceKey&) = default;
    };
    struct EquivalenceKeyHash {
        std::size_t operator()(const EquivalenceKey& k) const {
            return mix_hash(static_cast<std::uint64_t>(k.value) * 31 +
                            static_cast<std::uint64_t>(k.cas_to) * 7 +
                            static_cast<std::uint64_t>(k.process) * 131 +
                            static_cast<std::uint64_t>(k.kind) * 3 + (k.observation ? 1 : 0) +
                            static_cast<std::uint64_t>(k.earliest_ns) * 19 +
                            static_cast<std::uint64_t>(k.latest_ns) * 17 +
                            static_cast<std::uint64_t>(k.lease_ns) * 13 + (k.repeat ? 5 : 0));
        }
    };
    static EquivalenceKey equivalence_key(const ModelOp& op) {
        // ok and info ops have the same effect where they take effect; an info may also not
        // take effect, which only widens its options, and its return is +infinity.
        const bool timed = M::kProcessMatters;  // the lock models; a register ignores time
        return {op.kind,
                op.outcome == OpOutcome::Observation,
                op.mode,
                M::kProcessMatters ? op.process : 0,
                op.value,
                op.cas_to,
                op.read_nil,
                timed ? op.earliest_ns : 0,
                timed && op.outcome != OpOutcome::Info ? op.latest_ns : kNever,
                timed ? op.lease_ns : kNever,
                op.repeat};
    }

    // Whether an equivalent op that returns first can go next: it is unplaced and called
    // before the first return still in the list.
    bool dominated(std::uint32_t op) {
        for (std::size_t i = dominator_begin_[op]; i < dominator_begin_[op + 1]; ++i) {
            const std::uint32_t d = dominator_list_[i];
            if (!linearized_.test(bit_of(d)) && ops_[d].call_seq < first_return_seq()) {
                return true;
            }
        }
        return false;
    }

    // The list changes only when the search moves to another node, which resets this.
    std::uint64_t first_return_seq() {
        if (first_return_seq_ == 0) {
            std::uint32_t e = entries_[kHead].next;
            while (e != kHead && entries_[e].is_call) {
                e = entries_[e].next;
            }
            first_return_seq_ = e == kHead ? kNeverReturned : ops_[entries_[e].op].return_seq;
            first_return_ns_ = e == kHead ? kNever : ops_[entries_[e].op].op.latest_ns;
        }
        return first_return_seq_;
    }

    // `op` as the model must step it here: taking effect no later than every op still to be
    // placed returns (see linearized_no_later_than in models.hpp).
    ModelOp within_order(const ModelOp& op) {
        first_return_seq();
        ModelOp bounded = op;
        bounded.latest_ns = linearized_no_later_than(op.latest_ns, first_return_ns_);
        return bounded;
    }

    void build_list() {
        struct Point {
            std::uint64_t seq;
            std::uint32_t op;
            bool is_call;
        };
        std::vector<Point> points;
        points.reserve(ops_.size() * 2);
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            points.push_back({ops_[i].call_seq, i, true});
            points.push_back({ops_[i].return_seq, i, false});
        }
        // Infos all return at +infinity; among them, order does not matter, but calls must come
        // before their own return.
        std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) {
            if (a.seq != b.seq) {
                return a.seq < b.seq;
            }
            return a.is_call != b.is_call ? a.is_call : a.op < b.op;
        });
        entries_.resize(points.size() + 1);
        std::vector<std::uint32_t> call_entry(ops_.size());
        entries_[kHead] = {0, 0, static_cast<std::uint32_t>(points.size()), 1, false};
        for (std::uint32_t i = 0; i < points.size(); ++i) {
            const std::uint32_t e = i + 1;
            entries_[e] = {points[i].op, 0, e - 1, e == points.size() ? kHead : e + 1,
                           points[i].is_call};
            if (points[i].is_call) {
                call_entry[points[i].op] = e;
            } else {
                entries_[call_entry[points[i].op]].match = e;
            }
        }
        if (points.empty()) {
            entries_[kHead].prev = entries_[kHead].next = kHead;
        }
    }

    void lift(std::uint32_t call) {
        const Entry& c = entries_[call];
        entries_[c.prev].next = c.next;
        entries_[c.next].prev = c.prev;
        const Entry& r = entries_[c.match];
        entries_[r.prev].next = r.next;
        entries_[r.next].prev = r.prev;
    }

    void unlift(std::uint32_t call) {
        const std::uint32_t ret = entries_[call].match;
        entries_[entries_[ret].prev].next = ret;
        entries_[entries_[ret].next].prev = ret;
        entries_[entries_[call].prev].next = call;
        entries_[entries_[call].next].prev = call;
    }

    SearchOutcome search() {
        State state = initial_;
        std::uint32_t entry = entries_[kHead].next;
        std::uint32_t until_budget_check = kBudgetCheckEvery;
        while (true) {
            if (--until_budget_check == 0) {
                until_budget_check = kBudgetCheckEvery;
                if (auto exceeded = check_budget()) {
                    return *exceeded;
                }
            }
            if (entry == kHead) {
                return SearchOutcome::Linearizable;
            }
            const Entry& current = entries_[entry];
            if (current.is_call) {
                const SearchOp& op = ops_[current.op];
                if (dominated(current.op)) {
                    entry = current.next;
                    continue;
                }
                if (auto next = M::step(state, within_order(op.op))) {
                    // A lock state with several readings is narrowed by an observation (a
                    // "held" rules out the free ones): placing it first would not be harmless.
                    const bool preserves_state =
                        prune_ && never_changes_state(op.op) && *next == state;
                    const std::size_t bit = bit_of(current.op);
                    linearized_.set(bit);
                    if (cache_.insert(linearized_.hash() ^ M::hash(*next), linearized_, *next)) {
                        stack_.push_back({entry, std::move(state), preserves_state});
                        state = std::move(*next);
                        lift(entry);
                        note_cut(current.op);
                        first_return_seq_ = 0;
                        note_depth();
                        entry = entries_[kHead].next;
                        continue;
                    }
                    linearized_.clear(bit);
                    if (preserves_state && !backtrack(state, entry)) {
                        return SearchOutcome::NotLinearizable;
                    }
                    if (preserves_state) {
                        continue;
                    }
                }
                entry = current.next;
                continue;
            }
            if (ops_[current.op].info) {
                return SearchOutcome::Linearizable;
            }
            if (!backtrack(state, entry)) {
                return SearchOutcome::NotLinearizable;
            }
        }
    }

    // Undoes linearizations back to the most recent one that has alternatives left, and points
    // `entry` at the first alternative. False when there is none: the history is refuted.
    //
    // An op that never changes any state (a read, a refused cas or acquire) and can be placed
    // now has no alternatives: any linearization from here that places it later stays valid with
    // it moved to the front, because it changes nothing and nothing unplaced had to precede it.
    // (A write of the value already there does not qualify: placed later, it may change it.) So
    // when it fails, the choice before it failed too. On read-heavy histories with dozens of
    // processes this prunes most of the search.
    bool backtrack(State& state, std::uint32_t& entry) {
        while (!stack_.empty()) {
            Frame frame = std::move(stack_.back());
            stack_.pop_back();
            agreeing_prefix_ = std::min(agreeing_prefix_, stack_.size());
            linearized_.clear(bit_of(entries_[frame.call_entry].op));
            first_unplaced_required_ =
                std::min<std::size_t>(first_unplaced_required_, entries_[frame.call_entry].op);
            state = std::move(frame.state_before);
            unlift(frame.call_entry);
            first_return_seq_ = 0;
            if (!frame.forced) {
                entry = entries_[frame.call_entry].next;
                return true;
            }
        }
        return false;
    }

    // Keeps the deepest linearization seen without copying the whole stack at every new depth:
    // `deepest_` and the stack agree on their first `agreeing_prefix_` frames.
    void note_depth() {
        if (stack_.size() <= deepest_.size()) {
            return;
        }
        deepest_.resize(agreeing_prefix_);
        for (std::size_t i = agreeing_prefix_; i < stack_.size(); ++i) {
            deepest_.push_back(entries_[stack_[i].call_entry].op);
        }
        agreeing_prefix_ = stack_.size();
    }

    // The required op that returns first among those the deepest linearization left out.
    std::optional<std::uint32_t> first_unplaceable() const {
        std::vector<bool> placed(ops_.size(), false);
        for (auto op : deepest_) {
            placed[op] = true;
        }
        std::optional<std::uint32_t> earliest;
        for (std::uint32_t op = 0; op < required_ops_; ++op) {
            if (!placed[op] && (!earliest || ops_[op].return_seq < ops_[*earliest].return_seq)) {
                earliest = op;
            }
        }
        return earliest;
    }

    // Only placing the first unplaced required op moves the cut, and only past ops placed
    // already: those overlap it, so the scan is as long as the history is concurrent.
    void note_cut(std::uint32_t placed) {
        if (placed != first_unplaced_required_) {
            return;
        }
        while (first_unplaced_required_ < required_ops_ &&
               linearized_.test(bit_of(static_cast<std::uint32_t>(first_unplaced_required_)))) {
            ++first_unplaced_required_;
        }
        furthest_cut_ = std::max(furthest_cut_, first_unplaced_required_);
    }

    void note_how_far(SearchResult& result) const {
        if (furthest_cut_ < required_ops_) {
            result.undecided = static_cast<std::uint32_t>(furthest_cut_);
        }
    }

    // Every other op whose interval overlaps `op`'s.
    std::vector<std::uint32_t> concurrent_with(std::uint32_t op) const {
        std::vector<std::uint32_t> out;
        for (std::uint32_t other = 0; other < ops_.size(); ++other) {
            if (other != op && ops_[other].call_seq < ops_[op].return_seq &&
                ops_[other].return_seq > ops_[op].call_seq) {
                out.push_back(other);
            }
        }
        return out;
    }

    std::optional<SearchOutcome> check_budget() {
        if (budget_.stop.load(std::memory_order_relaxed)) {
            return SearchOutcome::Stopped;
        }
        if (Clock::now() >= budget_.deadline) {
            return SearchOutcome::TimeLimit;
        }
        const std::size_t bytes = cache_.memory_bytes() + stack_.capacity() * sizeof(Frame) +
                                  deepest_.capacity() * sizeof(std::uint32_t);
        if (bytes > reported_bytes_) {
            budget_.memory_used_bytes.fetch_add(bytes - reported_bytes_);
        } else {
            budget_.memory_used_bytes.fetch_sub(reported_bytes_ - bytes);
        }
        reported_bytes_ = bytes;
        if (budget_.memory_used_bytes.load() > budget_.memory_limit_bytes) {
            return SearchOutcome::MemoryLimit;
        }
        return std::nullopt;
    }

    const std::vector<SearchOp>& ops_;
    std::size_t required_ops_;
    SearchBudget& budget_;
    State initial_;
    bool prune_;
    LinearizedSet linearized_;
    std::vector<Entry> entries_;
    std::vector<std::size_t> dominator_begin_;  // op i's dominators: [begin[i], begin[i + 1])
    std::vector<std::uint32_t> dominator_list_;
    std::uint64_t first_return_seq_ = 0;     // 0: not yet known at this node
    std::int64_t first_return_ns_ = kNever;  // its op's latest_ns, known with it
    MemoCache<M> cache_;
    std::vector<Frame> stack_;
    std::vector<std::uint32_t> deepest_;
    std::size_t agreeing_prefix_ = 0;
    std::size_t reported_bytes_ = 0;
    // The first required op (they are in invoke order) the current linearization leaves out, and
    // the furthest that ever was: SearchResult::undecided.
    std::size_t first_unplaced_required_ = 0;
    std::size_t furthest_cut_ = 0;
};

}  // namespace lockbench::checker::wgl
