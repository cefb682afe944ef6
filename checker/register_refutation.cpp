// Cheap refutations of a register history, before the search.
//
// The register model (models.hpp): at its linearization point, which lies inside its interval
// [invoke, return], an op sees the value left by the last write or successful cas linearized
// before it, or the initial value when there is none (nil, or LinearizabilityOptions::
// initial_value). A write of v and a successful cas [from, to] write v and `to`; a failed cas
// observed as a mismatch (--fail-means observation, or error "mismatch") sees some value other
// than `from` and writes nothing, so it is neither a producer nor an observer of a value here;
// a read whose reply was lost observes nothing. An op in doubt (`info`, or in flight at the end)
// may take effect at any time after its invoke, even after the history ends, or never: below it
// counts as a possible producer with no return, never as proof that its value was written. The
// positions compared (call_seq, return_seq) are stream positions: two of them never tie, and an op
// A "returned before B was invoked" exactly when A's linearization point must precede B's.
//
// 1. A value no op could have produced. An ok read of v, or an ok cas expecting v, linearized at
//    a point p <= its return. The value at p is the initial value or was written by an op W
//    linearized before p, and W's linearization point is >= W's invoke; so W was invoked before
//    the observer returned. If v is not the initial value and every write or cas of v (ok or in
//    doubt) was invoked after the observer returned (or there is none), no linearization exists.
//    A cas's own `to` never counts for its own `from`: it is written after the cas compared. A
//    read of nil needs a nil initial value: no op writes nil (a write of null is outside the
//    model).
//
// 2. A stale read, when every value is written once: no two writes or cas (ok or in doubt) write
//    the same value, and none writes the initial value. Then each value v has one producer P(v)
//    (the initial value: a virtual producer that returned before the history began). Say an op X
//    observed w (read it, or found it as a cas's `from`), and there is a value u with
//      - P(u) invoked after P(w) returned: P(w) is linearized before P(u);
//      - u proven written before X was invoked: P(u) itself returned ok, or an ok read of u or an
//        ok cas expecting u returned, before X's invoke; each of those is linearized after P(u)
//        (the one producer of u, as u is not the initial value: P(u) was invoked after something
//        returned), and before X.
//    Then P(w) < P(u) < X in every linearization, and the value at X was written by an op at or
//    after P(u), which is not P(w), the only writer of w: X cannot have seen w. Found in
//    O(n log n): the values sorted by their producer's invoke, with the earliest proof among
//    those invoked later kept as a suffix minimum, and one binary search per observer.
//
// Neither rule looks at the ops in doubt beyond counting them as possible producers, so both run
// in the same time whatever their number - where the search's cost grows with each of them.

#include "checker/register_refutation.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

#include "checker/register_values.hpp"

namespace lockbench::checker::lin {

namespace {

// A value as the register holds it: nil is a value of its own.
using namespace register_values;

std::string value_text(const Value& v) {
    return v.nil ? "null" : std::to_string(v.number);
}

class Refuter {
  public:
    Refuter(const Partition& partition, std::optional<std::int64_t> initial_value)
        : partition_(partition),
          ops_(partition.ops),
          initial_{!initial_value.has_value(), initial_value.value_or(0)} {}

    std::optional<Refutation> run() {
        index_producers();
        const bool unique = every_value_written_once();
        if (unique) {
            index_proofs();
        }
        // Required ops come first, in invoke order; only they observe.
        for (std::uint32_t x = 0; x < partition_.required_ops; ++x) {
            const auto seen = observed_value(ops_[x]);
            if (!seen) {
                continue;
            }
            if (auto r = unwritten(x, *seen)) {
                return r;
            }
            if (unique) {
                if (auto r = stale(x, *seen)) {
                    return r;
                }
            }
        }
        return std::nullopt;
    }

  private:
    // The two earliest-invoked producers of each value (two: a cas [v, v] is not its own).
    struct Producers {
        std::uint32_t first = kNoOp;
        std::uint32_t second = kNoOp;
        std::size_t count = 0;
    };

    void index_producers() {
        for (std::uint32_t i = 0; i < ops_.size(); ++i) {
            if (!may_write(ops_[i])) {
                continue;
            }
            Producers& p = producers_[written_value(ops_[i])];
            ++p.count;
            if (p.first == kNoOp || ops_[i].call_seq < ops_[p.first].call_seq) {
                p.second = p.first;
                p.first = i;
            } else if (p.second == kNoOp || ops_[i].call_seq < ops_[p.second].call_seq) {
                p.second = i;
            }
        }
    }

    std::string describe(std::uint32_t op) const {
        const RecordedOp& r = partition_.history->ops[ops_[op].source];
        return "process " + std::to_string(r.process) + "'s " + std::string(op_name(r.kind)) +
               (r.kind == OpKind::Write && r.input ? " of " + std::to_string(*r.input) : "") +
               (r.kind == OpKind::Cas && r.cas ? " [" + std::to_string(r.cas->first) + ", " +
                                                     std::to_string(r.cas->second) + "]"
                                               : "") +
               (r.status == Status::Info ? " (in doubt)" : "") + " (index " +
               std::to_string(r.invoke_index) + ")";
    }

    std::string saw(std::uint32_t x, const Value& v) const {
        return describe(x) +
               (ops_[x].op.kind == OpKind::Read ? " returned " : " found the expected ") +
               value_text(v);
    }

    std::optional<Refutation> unwritten(std::uint32_t x, const Value& v) const {
        if (v == initial_) {
            return std::nullopt;
        }
        std::uint32_t producer = kNoOp;
        if (const auto it = producers_.find(v); it != producers_.end()) {
            producer = it->second.first != x ? it->second.first : it->second.second;
        }
        if (producer != kNoOp && ops_[producer].call_seq < ops_[x].return_seq) {
            return std::nullopt;
        }
        Refutation r;
        r.rule = RefutationRule::UnwrittenValue;
        r.op = x;
        if (v.nil) {
            r.why = saw(x, v) + ", but the register starts at " + value_text(initial_) +
                    " and no op writes null";
        } else if (producer == kNoOp) {
            r.why = saw(x, v) + ", a value no write or cas writes" +
                    (initial_.nil ? "" : " and not the initial value");
        } else {
            r.why = saw(x, v) + ", a value every write or cas of which began after it returned" +
                    " (the first: " + describe(producer) + ")";
            r.proof.push_back(
                {"the first op that writes the value, invoked after it returned", producer});
        }
        return r;
    }

    bool every_value_written_once() const {
        for (const auto& [value, p] : producers_) {
            if (p.count > 1 || value == initial_) {
                return false;
            }
        }
        return true;
    }

    // Each written value with its producer, sorted by the producer's invoke, and from each on the
    // earliest proof that some value written by a producer invoked at or after it was written.
    struct Written {
        std::uint64_t invoked;
        std::uint32_t producer;
        std::uint64_t proven_at;  // the earliest return of a proof
        std::uint32_t proof;      // that op (kNoOp: no proof)
    };

    void index_proofs() {
        std::unordered_map<Value, std::size_t, ValueHash> slot;
        for (const auto& [value, p] : producers_) {
            slot[value] = written_.size();
            written_.push_back({ops_[p.first].call_seq, p.first, wgl::kNeverReturned, kNoOp});
        }
        const auto prove = [&](const Value& v, std::uint32_t op) {
            const auto it = slot.find(v);
            if (it == slot.end()) {
                return;
            }
            Written& w = written_[it->second];
            if (ops_[op].return_seq < w.proven_at) {
                w.proven_at = ops_[op].return_seq;
                w.proof = op;
            }
        };
        for (std::uint32_t i = 0; i < partition_.required_ops; ++i) {
            if (may_write(ops_[i]) && is_ok(ops_[i])) {
                prove(written_value(ops_[i]), i);
            }
            if (const auto seen = observed_value(ops_[i])) {
                prove(*seen, i);
            }
        }
        std::sort(written_.begin(), written_.end(),
                  [](const Written& a, const Written& b) { return a.invoked < b.invoked; });
        earliest_proof_from_.resize(written_.size() + 1, kNoOp);
        for (std::size_t i = written_.size(); i-- > 0;) {
            const std::uint32_t later = earliest_proof_from_[i + 1];
            earliest_proof_from_[i] =
                later != kNoOp && written_[later].proven_at <= written_[i].proven_at
                    ? later
                    : static_cast<std::uint32_t>(i);
        }
    }

    std::optional<Refutation> stale(std::uint32_t x, const Value& w) const {
        // When w's producer returned; the initial value was there before every op.
        std::uint64_t written_by = 0;
        std::uint32_t producer = kNoOp;
        if (w != initial_) {
            const auto it = producers_.find(w);
            if (it == producers_.end()) {
                return std::nullopt;
            }
            producer = it->second.first;
            if (!is_ok(ops_[producer])) {
                return std::nullopt;  // in doubt: it may take effect as late as it likes
            }
            written_by = ops_[producer].return_seq;
        }
        const auto from =
            std::upper_bound(written_.begin(), written_.end(), written_by,
                             [](std::uint64_t at, const Written& v) { return at < v.invoked; });
        const std::uint32_t best =
            earliest_proof_from_[static_cast<std::size_t>(from - written_.begin())];
        if (best == kNoOp || written_[best].proven_at >= ops_[x].call_seq) {
            return std::nullopt;
        }
        const Written& newer = written_[best];
        Refutation r;
        r.rule = RefutationRule::StaleRead;
        r.op = x;
        r.why =
            saw(x, w) + ", " +
            (producer == kNoOp ? "the initial value" : "written by " + describe(producer)) +
            ", although " + describe(newer.producer) + " began after " +
            (producer == kNoOp ? "the history did" : "that returned") + " and " +
            (newer.proof == newer.producer ? "returned" : "was seen by " + describe(newer.proof)) +
            " before it began; every value is written once, so " + value_text(w) +
            " cannot be there again";
        if (producer != kNoOp) {
            r.proof.push_back({"wrote the value it saw", producer});
        }
        r.proof.push_back(
            {"wrote a newer value, invoked after that write returned", newer.producer});
        if (newer.proof != newer.producer) {
            r.proof.push_back({"saw the newer value before it was invoked", newer.proof});
        }
        return r;
    }

    const Partition& partition_;
    const std::vector<SearchOp>& ops_;
    Value initial_;
    std::unordered_map<Value, Producers, ValueHash> producers_;
    std::vector<Written> written_;
    std::vector<std::uint32_t> earliest_proof_from_;  // a written_ index, or kNoOp
};

}  // namespace

std::string_view rule_name(RefutationRule rule) {
    switch (rule) {
        case RefutationRule::UnwrittenValue:
            return "unwritten-value";
        case RefutationRule::StaleRead:
            return "stale-read";
        case RefutationRule::ReleaseWithoutGrant:
            return "release-without-grant";
        case RefutationRule::RefusedWhileFree:
            return "refused-while-free";
        case RefutationRule::GrantedWhileHeld:
            return "granted-while-held";
        case RefutationRule::NotHeldWhileHeld:
            return "not-held-while-held";
    }
    return "";
}

std::optional<Refutation> refute_register(const Partition& partition,
                                          std::optional<std::int64_t> initial_value) {
    return Refuter(partition, initial_value).run();
}

}  // namespace lockbench::checker::lin
