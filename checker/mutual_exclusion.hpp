#pragma once

// Check 1, mutual exclusion: per key, a hold runs from an `ok` acquire to its holder's release
// invoke (the last one, for a re-entrant hold), its crash, or the end of the history. Exclusive
// holds overlap nothing; shared holds may overlap each other. Every overlapping pair counts once,
// found when the later hold starts, so the work per grant is constant and memory is bounded by
// the open holds (plus one small record per key).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

// One hold as the check sees it, for a caller that draws them (the dashboard's timeline).
struct HoldSpan {
    std::uint64_t id = 0;              // unique within one check
    const std::string* key = nullptr;  // valid as long as the check lives
    std::int64_t process = 0;
    LockMode mode = LockMode::Exclusive;  // exclusive once a shared hold was upgraded
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    bool crashed = false;  // ended by its holder's crash, not by a release
};

// Told of every hold as it ends and of every conflicting pair as it is found, counted or not.
class HoldObserver {
  public:
    virtual ~HoldObserver() = default;
    virtual void hold_ended(const HoldSpan& hold) = 0;
    // `later` began (or was upgraded to exclusive) at `at_ns` while `earlier` was held.
    virtual void overlap_found(std::uint64_t earlier_id, std::uint64_t later_id,
                               std::int64_t at_ns) = 0;
};

class MutualExclusionCheck final : public StreamingCheck {
  public:
    explicit MutualExclusionCheck(std::size_t max_violations = 100);

    void on_event(const Event& event) override;
    // Holds still open end at the last event's time.
    void finish(std::int64_t end_time_ns) override;

    // checks.mutual_exclusion: {"valid", "violations", "processes" (in any violation), "holds",
    // "nested_grants", "ended_by_crash", "open_at_end", "incidents", "incident_list"}; not
    // applicable without lock operations. An incident is one hold and every grant that
    // overlapped it (the pairs it is the earlier hold of): a paused holder and the hundred grants
    // made under it are one incident. "incidents" counts them exactly; "incident_list" spells out
    // the first max_violations, each a checker::Incident (checker/incident.hpp, its one writer
    // and reader): "lost_updates" and "fencing_saves" count what followed, as attributed by
    // attribute().
    nlohmann::json result() const override;
    // Up to max_violations entries {"kind": "mutual_exclusion", "key", "message", "witness"},
    // witness {"key", "first": hold, "second": hold, "overlap_ns", "released_by"} with a hold
    // {"process", "token", "mode", "start_ns", "end_ns" (null: open at the end), "start_index"}
    // and released_by {"process", "token", "time_ns", "index"} (or null): another grant's release
    // that completed while the first hold was open, or was in flight when the second began - a
    // late or unowned unlock that may have freed it (T8).
    nlohmann::json violations() const override;

    // What an incident led to: a write by one of its holders that overwrote an update (the
    // resource check's lost update) or that the fence rejected (the fencing check's save).
    enum class Aftermath : std::uint8_t { LostUpdate, FencingSave };
    // Counts `what`, done by `process` on `key` now, for the incident its open hold is part of
    // (as the overlapped hold or as a grant that overlapped it); nothing if it is in none.
    void attribute(Aftermath what, const std::string& key, std::int64_t process);

    // The observer (not owned; nullptr for none) is told of holds and overlaps from now on.
    void observe(HoldObserver* observer) { observer_ = observer; }
    // The holds open now, as if they ended at `now_ns`.
    std::vector<HoldSpan> open_holds(std::int64_t now_ns) const;

  private:
    struct Hold {
        std::uint64_t id = 0;
        std::int64_t process = 0;
        std::string token;
        LockMode mode = LockMode::Exclusive;
        std::int64_t start_ns = 0;
        std::uint64_t start_index = 0;
        std::optional<std::int64_t> end_ns;
    };
    // A release that completed `ok`: the lock it freed may have been someone else's (T8).
    struct Released {
        std::int64_t process = 0;
        std::string token;
        std::int64_t time_ns = 0;  // completed
        std::uint64_t index = 0;
        std::int64_t invoked_ns = 0;
    };
    struct KeyHolds {
        std::vector<Hold> open;
        std::size_t exclusive = 0;
        std::optional<Released> last_release;
    };
    struct Witness {
        std::string key;
        Hold first;
        Hold second;
        std::optional<Released> released_by;
    };
    // An incident while the check runs; written out as a checker::Incident.
    struct IncidentTally {
        std::string key;
        Hold hold;
        std::uint64_t grants = 0;
        std::vector<std::int64_t> processes;        // sorted, unique
        std::vector<std::int64_t> later_processes;  // of the grants after the first: as above
        std::int64_t first_overlap_ns = 0;
        std::int64_t last_overlap_ns = 0;
        std::uint64_t lost_updates = 0;
        std::uint64_t fencing_saves = 0;
    };
    static constexpr std::size_t kUnlisted = static_cast<std::size_t>(-1);
    // A release in flight when a violation was found: if it completes ok, it may be what freed
    // the first hold's lock.
    struct Suspect {
        std::vector<std::size_t> witnesses;  // the listed ones it would explain
    };
    struct ReleaseInFlight {
        KeyHolds* holds = nullptr;  // keys_ is node-based: the pointer stays valid
        std::string token;
        std::int64_t invoked_ns = 0;
    };

    void on_grant(const Event& event);
    void end_hold(const std::string& key, std::int64_t process, std::int64_t time_ns, bool crashed);
    // Counts the pair (earlier, later) and spells it out while witnesses are wanted.
    void add_violation(const std::string& key, const KeyHolds& holds, const Hold& earlier,
                       const Hold& later);
    // A late release: asked for before `earlier` began, completed `ok` while it was held. It can
    // only have deleted someone else's lock - `earlier`'s, under its holder (T8) - which is how
    // `later` got it. (A release asked for during the hold is its own grant's, or a victim's.)
    static std::optional<Released> freed_under(const KeyHolds& holds, const Hold& earlier);
    void blame_suspect(const Released& release);
    static std::string message_of(const Witness& w);
    static std::string message_of(const IncidentTally& incident);
    void count_incident(const std::string& key, const Hold& earlier, const Hold& later);

    HoldObserver* observer_ = nullptr;
    HoldNesting nesting_;
    std::unordered_map<std::string, KeyHolds> keys_;
    PerProcess<ReleaseInFlight> releasing_;
    std::unordered_map<std::int64_t, Suspect> suspects_;
    std::vector<Witness> witnesses_;
    // Which witnesses show an open hold: patched with its end when it ends.
    std::unordered_map<std::uint64_t, std::vector<std::size_t>> witnesses_of_hold_;
    std::vector<IncidentTally> incidents_;  // the first max_violations
    // The incident of each open hold that has one (kUnlisted: counted, not listed); a hold that
    // ended can be overlapped no more.
    std::unordered_map<std::uint64_t, std::size_t> open_incidents_;
    // The listed incident each open hold that overlapped one belongs to.
    std::unordered_map<std::uint64_t, std::size_t> incident_of_later_;
    std::uint64_t incident_count_ = 0;
    std::uint64_t next_hold_id_ = 0;
    std::uint64_t holds_ = 0;
    std::uint64_t nested_grants_ = 0;
    std::uint64_t ended_by_crash_ = 0;
    std::uint64_t open_at_end_ = 0;
    std::int64_t end_time_ns_ = 0;
    bool lock_ops_seen_ = false;
};

}  // namespace lockbench::checker
