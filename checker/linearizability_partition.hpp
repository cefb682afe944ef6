#pragma once

// What the linearizability check keeps of a history, per key: each op as it was recorded, and the
// partition the WGL search runs on. Shared by the recording and parallel driver
// (linearizability.cpp) and the report writer (linearizability_report.cpp).

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"
#include "checker/linearizability.hpp"
#include "checker/models.hpp"
#include "checker/wgl_search.hpp"

namespace lockbench::checker::lin {

using wgl::kNeverReturned;
using wgl::SearchBudget;
using wgl::SearchOp;
using wgl::SearchResult;

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
    // Acquire ok: the grant carried a token. Release: the KeyHistory::ops index of the ok acquire
    // whose token it names (nullopt: no token, or one no grant of the key carried).
    bool token_granted = false;
    std::optional<std::uint32_t> grant;
};

struct KeyHistory {
    std::vector<RecordedOp> ops;  // in invoke order
    // Who was granted each token: a release names its grant by token.
    std::unordered_map<std::string, std::int64_t> owner_of_token;
    std::unordered_set<std::string> released_tokens;
    // The ok acquire (a KeyHistory::ops index) that was granted each token, and whether some
    // token was granted twice (then a token no longer names one grant: lock_tokens.hpp stands
    // aside).
    std::unordered_map<std::string, std::uint32_t> grant_of_token;
    bool token_granted_twice = false;
};

// What register_refutation.hpp or lock_refutation.hpp found without a search: why the key is
// not linearizable.
enum class RefutationRule : std::uint8_t {
    UnwrittenValue,  // a read (or a cas's expected value) no write or cas could have produced
    StaleRead,       // unique values: a value read after a later one was seen
    // Locks (lock_refutation.hpp):
    ReleaseWithoutGrant,  // an ok release by a process that cannot hold the lock
    RefusedWhileFree,     // a `held` refusal while nobody can have held the lock
    GrantedWhileHeld,     // a grant while another process's lease certainly ran
    NotHeldWhileHeld,     // a `not-held` answer while its process's lease certainly ran
};

// A Partition::ops index that names no op.
inline constexpr std::uint32_t kNoOp = std::numeric_limits<std::uint32_t>::max();

struct Refutation {
    RefutationRule rule = RefutationRule::UnwrittenValue;
    std::uint32_t op = 0;  // a Partition::ops index: the op no linearization can place
    struct Proof {
        std::string role;  // what the op proves, in words
        std::uint32_t op;  // a Partition::ops index
    };
    std::vector<Proof> proof;  // the other ops the argument uses
    std::string why;           // the sentence the report's message ends with
};

struct Partition {
    const std::string* key = nullptr;
    const KeyHistory* history = nullptr;
    std::vector<SearchOp> ops;  // required ops first (call order), then infos (call order)
    std::size_t required_ops = 0;
    SearchResult result;
    // Set when a cheap pass refuted the key before (instead of) the search.
    std::optional<Refutation> refutation;
    // Refuted, or linearized by unique_values.hpp, without the search.
    bool decided_without_search = false;
};

// The op a model takes from an event's `f`, nullopt for one it ignores.
std::optional<OpKind> op_kind(Model model, std::string_view f);
std::string_view op_name(OpKind kind);
// every_fail_observes: LinearizabilityOptions::every_fail_observes.
Partition make_partition(const std::string& key, const KeyHistory& history,
                         bool every_fail_observes);
// With LinearizabilityOptions' initial register value and prunings.
SearchResult search_partition(Model model, const Partition& partition, SearchBudget& budget,
                              const LinearizabilityOptions& options);

// The report writer: one violation as the check's JSON, and who took part in it.
// Its witness: the longest linearizable prefix (the last kPrefixShown ops), the op that could not
// be placed, the ops concurrent with it, and Knossos's final path - the last ops of the prefix with
// the model state each left, then the unplaceable op ("model": "inconsistent").
nlohmann::json violation_json(Model model, const Partition& partition,
                              std::optional<std::int64_t> initial_value);
std::int64_t process_of(const Partition& partition, std::uint32_t op);
// Who took part in a violated key's violation. `refuting`: the processes of the ops the refutation
// names (the unplaceable op and those it is refuted against, `SearchResult::concurrent`). That
// argument is minimal, not complete: a holder's late release that deleted someone else's lock
// leaves that someone's own ops contradicting each other, and only theirs are named (T8).
// `in_flight`: the refuting processes and every process with an op of the key that may have changed
// its state (neither a `fail` nor a read) in flight during the refuted window: from the earliest
// invocation among the refutation's ops (for the search's, with the prefix op that left the state
// the unplaceable op met) to the latest of their completions (one in doubt counts by its
// invocation). An op is in flight there if it was invoked before the window's end and completed
// (one in doubt: never) after its start. Both sorted, without repeats.
struct ViolationProcesses {
    std::vector<std::int64_t> refuting;
    std::vector<std::int64_t> in_flight;
};
ViolationProcesses violation_processes(Model model, const Partition& partition,
                                       std::optional<std::int64_t> initial_value);
// A key the search gave up on: how far it got (SearchResult::undecided), as
//   {"key", "decided_ops" (ops of the key invoked before the cut), "ops" (of the key),
//    "index" (the event index of the cut: every event before it is decided), "time_ns",
//    "in_doubt" (ops invoked before the cut and not returned there, infos included),
//    "in_doubt_ops" (the first 10 of them), "summary" (one line for the text report)}.
nlohmann::json partial_json(const Partition& partition);

}  // namespace lockbench::checker::lin
