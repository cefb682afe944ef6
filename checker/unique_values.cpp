// A linearization of a register key with unique values, built without search.
//
// When no two writes or cas (ok or in doubt) write the same value and none writes the initial
// value, each value v is written by one op, P(v), and is current in one stretch of any
// linearization: from P(v) until the next write. Every ok read of v, and every ok cas expecting
// v, must sit in that stretch. So once the register holds v, no write may be placed while an
// observer of v is still unplaced: v would never come back for it.
//
// The pass runs Wing & Gong's search with one choice at each step and no backtracking. An op may
// go next when no unplaced required op returned before it was invoked (the search's own rule);
// among those:
//   - a read of the current value, and a failed cas (observed mismatch) whose expected value is
//     not the current one, go at once: they change nothing (the search's own pruning);
//   - otherwise a write goes, one that leaves no unplaced observer of the current value behind.
//     Which one: two values' stretches do not overlap, and X's must reach its latest invoke
//     among its write and observers (reach) while Y's must begin by their earliest return (due);
//     X can precede Y only if reach(X) < due(Y) (Gibbons and Korach order clusters by the same
//     zones). So the write whose reach is below every other candidate's due goes (see
//     place_a_write). A cas that goes joins the stretch of what it expects to its own: along such
//     a chain, the first writer stands for the whole block (the earliest due, the furthest reach),
//     and a cas goes only when the register holds what it expects, as its last observer.
//     A write or cas in doubt whose value nobody observes is not placed (in doubt, it may never
//     have taken effect) - except when a failed cas needs the current value gone; one whose
//     value is observed must have taken effect, and is placed like an ok one.
// When every required op is placed, the ops placed, in that order, are a linearization: each was
// placed only where the search would have placed it, so the answer `valid` is sound whatever the
// choices. When the pass is stuck it answers nothing, and the search decides; a wrong choice costs
// time, never a wrong answer. The pass is not complete (the cross-check counts how often it
// builds one where the oracle says valid: nearly always on a correct register's histories), but
// it is fast: on wgl_bench's generated register, 100 processes x 100,000 ops with 20 % in doubt
// take ~40 ms, where the search alone ran out of memory.
//
// O(n log n + n w), w the number of writes that may go next at a time (the history's
// concurrency): each op enters and leaves a heap or list once, and each write scans the writes
// that may go next.

#include "checker/unique_values.hpp"

#include <algorithm>
#include <functional>
#include <unordered_map>
#include <utility>
#include <vector>

#include <queue>

#include "checker/register_values.hpp"

namespace lockbench::checker::lin {

namespace {

using namespace register_values;

bool is_mismatch(const SearchOp& op) {
    return op.op.kind == OpKind::Cas && op.op.outcome == OpOutcome::Observation;
}

class UniqueLinearizer {
  public:
    UniqueLinearizer(const Partition& partition, std::optional<std::int64_t> initial_value)
        : ops_(partition.ops),
          required_(partition.required_ops),
          current_{!initial_value.has_value(), initial_value.value_or(0)},
          placed_(ops_.size(), false),
          unplaced_required_(partition.required_ops),
          needed_(ops_.size(), false),
          reach_(ops_.size(), 0),
          due_(ops_.size(), wgl::kNeverReturned) {}

    bool run() {
        if (!index()) {
            return false;
        }
        admit();
        while (true) {
            while (!ready_.empty()) {
                const std::uint32_t op = ready_.back();
                ready_.pop_back();
                place(op);
            }
            if (unplaced_required_ == 0) {
                return true;
            }
            if (!place_a_write()) {
                return false;
            }
        }
    }

  private:
    using Candidate = std::pair<std::uint64_t, std::uint32_t>;  // return, op

    // False when the values are not unique.
    bool index() {
        std::unordered_map<Value, std::uint32_t, ValueHash> producer;
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            if (may_write(ops_[i])) {
                const Value v = written_value(ops_[i]);
                if (v == current_ || !producer.emplace(v, i).second) {
                    return false;
                }
                reach_[i] = ops_[i].call_seq;
                due_[i] = ops_[i].return_seq;  // an info's: never
            }
        }
        for (std::uint32_t i = 0; i < required_; ++i) {
            if (const auto v = observed_value(ops_[i])) {
                ++observers_left_[*v];
                if (const auto p = producer.find(*v); p != producer.end()) {
                    reach_[p->second] = std::max(reach_[p->second], ops_[i].call_seq);
                    due_[p->second] = std::min(due_[p->second], ops_[i].return_seq);
                }
            }
            returns_.push({ops_[i].return_seq, i});
        }
        // A cas in doubt whose value someone observes took effect, where the register held what
        // it expects: it is an observer of that value too (and so, along a chain, the cas in
        // doubt that wrote that value).
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            std::uint32_t link = i;
            while (ops_[link].op.kind == OpKind::Cas && may_write(ops_[link]) &&
                   !is_ok(ops_[link]) && !needed_[link] &&
                   observers_left_[written_value(ops_[link])] > 0) {
                needed_[link] = true;
                const Value from{false, ops_[link].op.value};
                const auto p = producer.find(from);
                if (++observers_left_[from] > 1 || p == producer.end()) {
                    break;
                }
                link = p->second;
            }
        }
        // A cas that goes takes over from the writer of what it expects: the two values' stretches
        // are one block, which begins by the earliest due and reaches the furthest reach along
        // a chain of such cas. Each writer in the chain stands for its block.
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            std::uint32_t link = i;
            while (ops_[link].op.kind == OpKind::Cas && (is_ok(ops_[link]) || needed_[link])) {
                const auto from = producer.find(Value{false, ops_[link].op.value});
                if (from == producer.end()) {
                    break;
                }
                const std::uint32_t before = from->second;
                if (due_[before] <= due_[link] && reach_[before] >= reach_[link]) {
                    break;
                }
                due_[before] = std::min(due_[before], due_[link]);
                reach_[before] = std::max(reach_[before], reach_[link]);
                link = before;
            }
        }
        // Required ops and infos are each in invoke order: merge them.
        by_call_.reserve(ops_.size());
        std::size_t r = 0;
        std::size_t info = required_;
        while (r < required_ || info < ops_.size()) {
            const bool take_required =
                info == ops_.size() || (r < required_ && ops_[r].call_seq < ops_[info].call_seq);
            by_call_.push_back(static_cast<std::uint32_t>(take_required ? r++ : info++));
        }
        return true;
    }

    // Makes every op invoked before the first unplaced required return a candidate.
    void admit() {
        while (!returns_.empty() && placed_[returns_.top().second]) {
            returns_.pop();
        }
        const std::uint64_t frontier =
            returns_.empty() ? wgl::kNeverReturned : returns_.top().first;
        while (next_call_ < by_call_.size() && ops_[by_call_[next_call_]].call_seq < frontier) {
            const std::uint32_t i = by_call_[next_call_++];
            const SearchOp& op = ops_[i];
            if (is_mismatch(op)) {
                if (Value{false, op.op.value} != current_) {
                    ready_.push_back(i);
                } else {
                    waiting_mismatches_[current_].push_back(i);
                }
            } else if (may_write(op)) {
                const Value v = written_value(op);
                // In doubt and never observed: it may never have taken effect. A write of that
                // kind is kept aside, for a failed cas that needs the current value gone.
                if (!is_ok(op) && observers_left_[v] == 0) {
                    if (op.op.kind == OpKind::Write) {
                        spare_writes_.push_back(i);
                    } else {
                        spare_cas_from_[Value{false, op.op.value}].push_back(i);
                    }
                    continue;
                }
                pool_.push_back(i);
            } else if (const auto v = observed_value(op)) {
                if (*v == current_) {
                    ready_.push_back(i);
                } else {
                    waiting_reads_[*v].push_back(i);
                }
            }
        }
    }

    void place(std::uint32_t i) {
        placed_[i] = true;
        if (i < required_) {
            --unplaced_required_;
        }
        const SearchOp& op = ops_[i];
        if (const auto v = observed_value(op)) {
            --observers_left_[*v];
        } else if (needed_[i]) {
            --observers_left_[Value{false, op.op.value}];
        }
        if (may_write(op)) {
            const Value old = current_;
            current_ = written_value(op);
            if (auto it = waiting_mismatches_.find(old); it != waiting_mismatches_.end()) {
                ready_.insert(ready_.end(), it->second.begin(), it->second.end());
                waiting_mismatches_.erase(it);
            }
            if (auto it = waiting_reads_.find(current_); it != waiting_reads_.end()) {
                ready_.insert(ready_.end(), it->second.begin(), it->second.end());
                waiting_reads_.erase(it);
            }
        }
        if (i < required_) {
            admit();
        }
    }

    // Two values' stretches do not overlap, and value X's stretch must reach its latest invoke
    // (reach) while Y's must begin before its earliest return (due): X can precede Y only if
    // reach(X) < due(Y). So the next value is one whose reach is below every other candidate's
    // due. If the one with the smallest reach is not such a value, only the one with the smallest
    // due can be (any other that is would need a reach below both).
    bool place_a_write() {
        const std::size_t left = observers_left_[current_];
        // A failed cas expecting the current value needs it gone, and nobody needs it any more:
        // a write in doubt that nobody observes can end it (its value then needs nothing either),
        // or such a cas that expects it.
        if (auto it = waiting_mismatches_.find(current_);
            left == 0 && it != waiting_mismatches_.end() && !it->second.empty()) {
            auto cas = spare_cas_from_.find(current_);
            std::vector<std::uint32_t>* spare =
                !spare_writes_.empty()                                 ? &spare_writes_
                : cas != spare_cas_from_.end() && !cas->second.empty() ? &cas->second
                                                                       : nullptr;
            if (spare != nullptr) {
                const std::uint32_t op = spare->back();
                spare->pop_back();
                place(op);
                return true;
            }
        }
        const auto eligible = [&](std::uint32_t op) {
            if (ops_[op].op.kind == OpKind::Write) {
                return left == 0;
            }
            // A cas goes where the register holds what it expects, and is itself the last
            // observer of the value it replaces (an ok one, and one in doubt whose value someone
            // observes; the rest are never candidates).
            return Value{false, ops_[op].op.value} == current_ && left == 1;
        };
        std::optional<std::size_t> least_reach;
        std::optional<std::size_t> least_due;
        std::uint64_t due_1 = wgl::kNeverReturned;  // the smallest due, and the next
        std::uint64_t due_2 = wgl::kNeverReturned;
        for (std::size_t k = 0; k < pool_.size(); ++k) {
            const std::uint32_t op = pool_[k];
            if (due_[op] < due_1) {
                due_2 = due_1;
                due_1 = due_[op];
            } else if (due_[op] < due_2) {
                due_2 = due_[op];
            }
            if (!eligible(op)) {
                continue;
            }
            if (!least_reach || reach_[op] < reach_[pool_[*least_reach]]) {
                least_reach = k;
            }
            if (!least_due || due_[op] < due_[pool_[*least_due]]) {
                least_due = k;
            }
        }
        const auto precedes_the_others = [&](std::size_t k) {
            const std::uint32_t op = pool_[k];
            return reach_[op] < (due_[op] == due_1 ? due_2 : due_1);
        };
        std::optional<std::size_t> chosen;
        if (least_reach && precedes_the_others(*least_reach)) {
            chosen = least_reach;
        } else if (least_due && precedes_the_others(*least_due)) {
            chosen = least_due;
        } else {
            chosen = least_due;  // no order of the candidates fits their zones: try anyway
        }
        if (!chosen) {
            return false;
        }
        const std::uint32_t op = pool_[*chosen];
        pool_[*chosen] = pool_.back();
        pool_.pop_back();
        place(op);
        return true;
    }

    const std::vector<SearchOp>& ops_;
    std::size_t required_;
    Value current_;
    std::vector<bool> placed_;
    std::size_t unplaced_required_;
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> returns_;
    std::vector<std::uint32_t> by_call_;
    std::size_t next_call_ = 0;
    std::vector<std::uint32_t> ready_;
    std::unordered_map<Value, std::vector<std::uint32_t>, ValueHash> waiting_reads_;
    std::unordered_map<Value, std::vector<std::uint32_t>, ValueHash> waiting_mismatches_;
    std::unordered_map<Value, std::size_t, ValueHash> observers_left_;
    // Per writer: the latest invoke among it and its value's observers, which the stretch in
    // which the value is current must reach, and the earliest return, before which it must begin.
    std::vector<bool> needed_;  // a cas in doubt that must have taken effect
    std::vector<std::uint64_t> reach_;
    std::vector<std::uint64_t> due_;
    std::vector<std::uint32_t> pool_;  // writers that may go next, unplaced
    // Writes, and cas by expected value, in doubt and unobserved, that may go next.
    std::vector<std::uint32_t> spare_writes_;
    std::unordered_map<Value, std::vector<std::uint32_t>, ValueHash> spare_cas_from_;
};

}  // namespace

bool linearize_unique_values(const Partition& partition,
                             std::optional<std::int64_t> initial_value) {
    return UniqueLinearizer(partition, initial_value).run();
}

}  // namespace lockbench::checker::lin
