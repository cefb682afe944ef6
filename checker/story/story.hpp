#pragma once

// A run's story: what happened around its first violation, told in plain sentences built from
// the history's events - who acquired with which lease, when the fault hit, when the lease ran
// out, who was granted the lock while the first holder still held it, what each wrote, which
// write was lost or rejected by the fence - and a per-process text swimlane of that window. Every
// claim names the events it rests on (their indices) and carries the facts it states, so a test
// (or a sceptical reader) can check each against the history. Nothing is canned per scenario:
// the same code tells T1, a failover, a late unlock and a crashed holder.

#include <cstdint>
#include <filesystem>
#include <istream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "checker/report.hpp"

namespace lockbench::checker {

struct StoryContext {
    std::string scenario;  // "" for a history without one
    std::string strategy;  // the strategy the history ran, "" if unknown
    std::string library;   // a lock library's name (summary.json's adapter.library), "" if none
    // The scenario's expectations, strategy -> outcome (workloads/README.md): what the same
    // scenario does to the other strategies, for the closing "what would have prevented it".
    std::vector<std::pair<std::string, std::string>> expectations;
    // What other scenarios expect of a strategy where they expect it to fail (a violation or a
    // deadlock): strategy, scenario, outcome. A strategy recommended as the prevention is then
    // named with the scenarios it fails in, so that the story never recommends a lock the suite
    // shows failing elsewhere (a lock that never expires, say) without saying so.
    struct FailureElsewhere {
        std::string strategy;
        std::string scenario;
        std::string outcome;
    };
    std::vector<FailureElsewhere> failures_elsewhere;
};

enum class ClaimKind : std::uint8_t {
    Acquired,             // `process` acquired `key` (events: invoke, ok)
    FaultHit,             // the nemesis did `fault` to `process` (or the servers) (events: it)
    LeaseRanOut,          // the holder's lease had certainly run out before the next grant
    LeaseMayHaveRunOut,   // ... may have (the grant came between the two bounds)
    LeaseStillRan,        // ... certainly still ran: the service forgot the lock
    NoLease,              // the holder's lock has no lease (events: the acquire invoke)
    ForeignRelease,       // `process`'s release completed `ok` during the hold (invoke, ok)
    FailedAcquireBefore,  // ... after its own acquire had failed (events: that completion)
    GrantedWhileHeld,     // `process` was granted the lock `other` still held (events: ok)
    MoreGrants,           // `value` more grants overlapped the hold (events: the last one)
    Wrote,                // `process` wrote `value` (events: the write's ok)
    LostUpdate,           // ... and that write lost an update (events: it, the overwritten one)
    StaleWriteRejected,   // the resource refused `process`'s write with fence `value`; `other`
                          // wrote the higher fence it had accepted (events: write, that write)
    Released,             // `process` asked to release; the answer (events: invoke, completion)
    Crashed,              // the nemesis crashed `process` while it held the lock (events: it)
    WaitedInVain,         // `process` tried `value` times and got nothing (events: its invokes)
    NeverRegranted,       // nobody was granted the key until `time_ns` or the end
    CheckerFound,         // the checker's own sentence for a violation no story covers
    NoViolation,          // nothing to tell
    Prevention,           // what the scenario's expectations say of the other strategies
    PreventionCaveat,     // ... and where other scenarios expect those strategies to fail
    LibrarySaidLost,      // the lock library told `process` it lost `key` (events: its signal)
    LibraryGrantedLate,   // the library granted `process`'s acquire its adapter had answered in
                          // doubt, and the adapter released it (events: the acquire's `info`,
                          // the late grant, the release's report, those found)
    LibraryAbandoned,     // the library gave up `process`'s acquire its adapter had answered in
                          // doubt, and whatever it held was gone (events: the acquire's `info`
                          // when found, the adapter's report)
};

struct Claim {
    ClaimKind kind = ClaimKind::CheckerFound;
    std::string text;                   // one sentence, with the event indices it rests on
    std::vector<std::uint64_t> events;  // those indices
    // The facts the sentence states (those that apply to its kind):
    std::int64_t process = -1;
    std::optional<std::int64_t> other;  // the other process (the holder a grant overlapped)
    std::int64_t time_ns = 0;
    std::string token;
    std::optional<std::int64_t> value;     // written value, fence, count
    std::optional<std::int64_t> lease_ms;  // Acquired
    std::string fault;                     // FaultHit: the nemesis event's `f`
    std::string library_text;              // LibrarySaidLost: what the library said
    // Where the sentence goes in the story's time order (time_ns unless set).
    std::int64_t sort_ns = kUnset;
    static constexpr std::int64_t kUnset = INT64_MIN;
};

struct Story {
    std::string headline;  // one line: what went wrong, or that nothing did
    std::string key;       // the key the story is about ("" when none)
    std::vector<Claim> claims;
    std::int64_t window_start_ns = 0;  // the swimlane's window
    std::int64_t window_end_ns = 0;
    std::string swimlane;  // text, at most 100 columns; "" when there is no window
    // What bounds a grant, as the sentences and the timeline name it: "lease", or "session
    // timeout" for ZooKeeper's locks (their lease_ms is the session's timeout).
    std::string lease_name = "lease";
};

// Builds the story of `report`'s first violation (a mutual-exclusion incident first, else a
// deadlock, else the checker's first witness) from the history it judged.
// Throws what HistoryReader throws.
Story tell_story(const std::filesystem::path& history, const Report& report,
                 const StoryContext& context);
Story tell_story(std::istream& history, const Report& report, const StoryContext& context);

// The story as the terminal and story.txt show it: headline, numbered sentences, swimlane.
std::string format_story(const Story& story);

}  // namespace lockbench::checker
