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

namespace lockbench::checker {
namespace {

using Clock = std::chrono::steady_clock;

// An info op, and one never completed, returns after everything else (Porcupine issue #8).
constexpr std::uint64_t kNeverReturned = std::numeric_limits<std::uint64_t>::max();
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
};

// The set of linearized ops. Ops that must be linearized (ok, observations) take the low bits in
// call order and info ops the high bits, so in practice the set is "all ops up to a frontier, a
// few beyond it, some infos": the memo cache stores only the words from the first non-full word to
// the last non-zero one of each region, which is what keeps an entry a few words long on
// histories of thousands of ops. The hash is Zobrist's (a random key per bit, xor-ed), so
// flipping a bit updates it in O(1) instead of rehashing the whole set on every step.
class LinearizedSet {
  public:
    LinearizedSet(std::size_t required_ops, std::size_t info_ops, std::uint64_t seed)
        : required_words_((required_ops + 63) / 64),
          words_(required_words_ + (info_ops + 63) / 64, 0),
          keys_(required_words_ * 64 + info_ops) {
        for (auto& key : keys_) {
            seed += 0x9e3779b97f4a7c15ULL;
            key = mix_hash(seed);
        }
    }

    // Bit positions: required op i at i, info op j at required_words * 64 + j.
    std::size_t info_base() const { return required_words_ * 64; }

    void set(std::size_t bit) {
        const std::size_t w = bit / 64;
        words_[w] |= std::uint64_t{1} << (bit % 64);
        hash_ ^= keys_[bit];
        if (w < required_words_) {
            while (full_prefix_ < required_words_ && words_[full_prefix_] == ~std::uint64_t{0}) {
                ++full_prefix_;
            }
            required_end_ = std::max(required_end_, w + 1);
        }
    }

    bool test(std::size_t bit) const { return (words_[bit / 64] >> (bit % 64)) & 1U; }

    void clear(std::size_t bit) {
        const std::size_t w = bit / 64;
        words_[w] &= ~(std::uint64_t{1} << (bit % 64));
        hash_ ^= keys_[bit];
        if (w < required_words_) {
            full_prefix_ = std::min(full_prefix_, w);
            while (required_end_ > 0 && words_[required_end_ - 1] == 0) {
                --required_end_;
            }
        }
    }

    std::uint64_t hash() const { return hash_; }

    // The canonical window of the set: equal sets have equal windows and words.
    struct Window {
        std::uint32_t required_begin, required_end, info_begin, info_end;
        friend bool operator==(const Window&, const Window&) = default;
        std::size_t size() const {
            return (required_end - required_begin) + (info_end - info_begin);
        }
    };
    Window window() const {
        std::size_t info_begin = required_words_;
        std::size_t info_end = words_.size();
        while (info_begin < info_end && words_[info_begin] == 0) {
            ++info_begin;
        }
        while (info_end > info_begin && words_[info_end - 1] == 0) {
            --info_end;
        }
        const std::size_t required_begin = std::min(full_prefix_, required_end_);
        return {static_cast<std::uint32_t>(required_begin),
                static_cast<std::uint32_t>(std::max(required_begin, required_end_)),
                static_cast<std::uint32_t>(info_begin), static_cast<std::uint32_t>(info_end)};
    }
    void copy_window(const Window& window, std::vector<std::uint64_t>& out) const {
        out.insert(out.end(), words_.begin() + window.required_begin,
                   words_.begin() + window.required_end);
        out.insert(out.end(), words_.begin() + window.info_begin, words_.begin() + window.info_end);
    }
    bool window_equals(const Window& window, const std::uint64_t* stored) const {
        return std::equal(words_.begin() + window.required_begin,
                          words_.begin() + window.required_end, stored) &&
               std::equal(words_.begin() + window.info_begin, words_.begin() + window.info_end,
                          stored + (window.required_end - window.required_begin));
    }

  private:
    std::size_t required_words_;
    std::vector<std::uint64_t> words_;
    std::vector<std::uint64_t> keys_;
    std::uint64_t hash_ = 0;
    std::size_t full_prefix_ = 0;   // words [0, full_prefix_) are all ones
    std::size_t required_end_ = 0;  // required words [required_end_, …) are zero
};

// Lowe's memo cache: the (linearized set, state) pairs already explored. Open addressing over
// 8-byte slots (a 32-bit tag and an entry number), the set's words in one arena: no allocation per
// entry, and one cache line per probe in the common case.
template <class M>
class MemoCache {
  public:
    using State = typename M::State;

    MemoCache() : slots_(kInitialSlots) {}

    // False when the pair was already there.
    bool insert(std::uint64_t hash, const LinearizedSet& set, const State& state) {
        const auto window = set.window();
        const std::uint32_t tag = static_cast<std::uint32_t>(hash >> 32);
        std::size_t mask = slots_.size() - 1;
        for (std::size_t i = hash & mask;; i = (i + 1) & mask) {
            Slot& slot = slots_[i];
            if (slot.entry == 0) {
                break;
            }
            if (slot.tag == tag) {
                const Entry& entry = entries_[slot.entry - 1];
                if (entry.hash == hash && entry.window == window && entry.state == state &&
                    set.window_equals(window, arena_.data() + entry.words_at)) {
                    return false;
                }
            }
        }
        entries_.push_back({hash, arena_.size(), window, state});
        set.copy_window(window, arena_);
        heap_bytes_ += M::heap_bytes(state);
        if (entries_.size() * 2 > slots_.size()) {
            grow();
        }
        place(hash, static_cast<std::uint32_t>(entries_.size()));
        return true;
    }

    std::size_t memory_bytes() const {
        return slots_.capacity() * sizeof(Slot) + entries_.capacity() * sizeof(Entry) +
               arena_.capacity() * sizeof(std::uint64_t) + heap_bytes_;
    }

  private:
    static constexpr std::size_t kInitialSlots = 1024;
    struct Slot {
        std::uint32_t tag = 0;
        std::uint32_t entry = 0;  // 1-based; 0: empty
    };
    struct Entry {
        std::uint64_t hash;
        std::size_t words_at;
        LinearizedSet::Window window;
        State state;
    };

    void place(std::uint64_t hash, std::uint32_t entry) {
        const std::size_t mask = slots_.size() - 1;
        std::size_t i = hash & mask;
        while (slots_[i].entry != 0) {
            i = (i + 1) & mask;
        }
        slots_[i] = {static_cast<std::uint32_t>(hash >> 32), entry};
    }

    void grow() {
        slots_.assign(slots_.size() * 2, Slot{});
        for (std::size_t e = 0; e < entries_.size(); ++e) {
            place(entries_[e].hash, static_cast<std::uint32_t>(e + 1));
        }
    }

    std::vector<Slot> slots_;
    std::vector<Entry> entries_;
    std::vector<std::uint64_t> arena_;
    std::size_t heap_bytes_ = 0;
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

    WglSearch(const std::vector<SearchOp>& ops, std::size_t required_ops, SearchBudget& budget)
        : ops_(ops),
          required_ops_(required_ops),
          budget_(budget),
          linearized_(required_ops, ops.size() - required_ops, 0x5eed ^ ops.size()) {
        build_list();
        find_dominators();
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
        }
        return first_return_seq_;
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
        State state = M::initial();
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
                if (auto next = M::step(state, op.op)) {
                    const bool preserves_state = never_changes_state(op.op);
                    const std::size_t bit = bit_of(current.op);
                    linearized_.set(bit);
                    if (cache_.insert(linearized_.hash() ^ M::hash(*next), linearized_, *next)) {
                        stack_.push_back({entry, std::move(state), preserves_state});
                        state = std::move(*next);
                        lift(entry);
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
    LinearizedSet linearized_;
    std::vector<Entry> entries_;
    std::vector<std::size_t> dominator_begin_;  // op i's dominators: [begin[i], begin[i + 1])
    std::vector<std::uint32_t> dominator_list_;
    std::uint64_t first_return_seq_ = 0;  // 0: not yet known at this node
    MemoCache<M> cache_;
    std::vector<Frame> stack_;
    std::vector<std::uint32_t> deepest_;
    std::size_t agreeing_prefix_ = 0;
    std::size_t reported_bytes_ = 0;
};

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
