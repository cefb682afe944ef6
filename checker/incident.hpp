#pragma once

// An incident, as the mutual-exclusion check lists it in checks.mutual_exclusion.incident_list:
// one hold and every grant that overlapped it. One type, written in one place (to_json, by the
// check) and read in one place (from_json): the story, timeline.html, the text report and the
// dashboard all read these fields through it.

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"
#include "checker/report.hpp"

namespace lockbench::checker {

struct Incident {
    std::string key;
    std::int64_t process = 0;  // the holder whose hold was overlapped
    std::string token;
    LockMode mode = LockMode::Exclusive;
    std::int64_t start_ns = 0;
    std::optional<std::int64_t> end_ns;   // nullopt: still held at the end of the history
    std::uint64_t grants = 0;             // the grants that overlapped the hold
    std::vector<std::int64_t> processes;  // of those grants, sorted, unique
    // Of the grants after the first, sorted, unique: whom "N more grants" went to (the first
    // grantee only when it was granted again). Empty in an older summary.json.
    std::vector<std::int64_t> later_processes;
    std::int64_t first_overlap_ns = 0;
    std::int64_t last_overlap_ns = 0;
    std::uint64_t lost_updates = 0;   // writes of its holders that overwrote an update
    std::uint64_t fencing_saves = 0;  // ... that the fence rejected
    std::string message;              // the check's sentence

    // From the hold's start to its last overlap or its end, whichever is later; a hold still
    // open at the end runs to `open_end_ns`.
    std::pair<std::int64_t, std::int64_t> span(std::int64_t open_end_ns) const;

    // {"key", "process", "token", "mode", "start_ns", "end_ns" (null: open at the end), "grants",
    //  "processes", "later_processes", "first_overlap_ns", "last_overlap_ns", "lost_updates",
    //  "fencing_saves", "message"}
    nlohmann::json to_json() const;
    // A field missing or null reads as its default (older checkers wrote fewer fields); a field
    // of another type is an IncidentError naming its JSON path ("PATH/key: must be a string, not
    // a number"): a damaged or hand-edited summary.json must not show as an incident of process 0
    // at time 0.
    static Incident from_json(const nlohmann::json& j, const std::string& path);
};

// The evidence of a mutual_exclusion witness (Witness::evidence, MutualExclusionCheck::violations
// its writer): two holds that overlapped, and the release that may have freed the first.
struct OverlapEvidence {
    struct Hold {
        std::int64_t process = 0;
        std::string token;
        LockMode mode = LockMode::Exclusive;
        std::int64_t start_ns = 0;
        std::optional<std::int64_t> end_ns;  // nullopt: open at the end of the history
        std::uint64_t start_index = 0;       // its acquire's ok
    };
    struct Release {
        std::int64_t process = 0;
        std::string token;
        std::int64_t time_ns = 0;
        std::uint64_t index = 0;  // its ok
    };
    std::string key;
    Hold first, second;
    std::int64_t overlap_ns = 0;
    std::optional<Release> released_by;

    // {"key", "first": hold, "second": hold, "overlap_ns", "released_by": release or null}, a hold
    // {"process", "token", "mode", "start_ns", "end_ns" (null: open), "start_index"}, a release
    // {"process", "token", "time_ns", "index"}.
    nlohmann::json to_json() const;
    // As Incident::from_json: missing or null is the default ("first" and "second" must be
    // there), another type an IncidentError naming its path.
    static OverlapEvidence from_json(const nlohmann::json& j, const std::string& path);
};

// The evidence of a resource witness (ResourceCheck::violations its writer): a write that
// overwrote an update.
struct LostUpdateEvidence {
    struct Write {
        std::int64_t process = 0;
        std::int64_t value = 0;
        std::int64_t time_ns = 0;
        std::uint64_t index = 0;  // its ok
    };
    std::string key;
    Write overwritten, write;
    std::optional<Write> late;  // T13: the write delivered late that set the counter back

    // {"key", "overwritten": write, "write": write, "late": write (only when there is one)}, a
    // write {"process", "value", "time_ns", "index"}.
    nlohmann::json to_json() const;
    // As OverlapEvidence::from_json ("overwritten" and "write" must be there).
    static LostUpdateEvidence from_json(const nlohmann::json& j, const std::string& path);
};

// The evidence of `report`'s listed witnesses of each kind, in the report's order, a witness
// without evidence (null) left out. Strict, as Incident::from_json; the path is summary.json's
// ("/verdict/violations/N/witness").
std::vector<OverlapEvidence> overlap_evidence(const Report& report);
std::vector<LostUpdateEvidence> lost_update_evidence(const Report& report);

// A listed incident that is not of the type it must be; what() is "PATH: WHAT".
class IncidentError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// Where summary.json keeps the list, the prefix of an IncidentError's path.
inline constexpr const char* kIncidentListPath = "/verdict/checks/mutual_exclusion/incident_list";

// The incidents `report`'s mutual-exclusion check listed, first ones first (none without it).
// Strict, as Incident::from_json: the list, when there, is an array of objects.
std::vector<Incident> listed_incidents(const Report& report);
// How many there were in all (the list is capped).
std::uint64_t incident_count(const Report& report);

}  // namespace lockbench::checker
