#pragma once

// history.jsonl (checker/HISTORY.md) turned into what the timeline draws: lock holds per process,
// nemesis events, and the holds that overlap on one key. Nothing here decides what a hold or an
// overlap is: the history is read by the checker's parser and the holds and overlaps are the
// checker's mutual-exclusion check's own, so the timeline and the verdict cannot disagree.
//
// (The check's rule: a hold runs from an `ok` acquire to its holder's release invoke, the last
// one of a re-entrant hold, or to its crash, or to the end of the history; shared holds may
// overlap each other, an exclusive hold - or a shared one upgraded - overlaps nothing.)

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "checker/history.hpp"
#include "checker/mutual_exclusion.hpp"

namespace lockbench::dashboard {

// "history.jsonl:LINE: what" — the message the window shows.
class HistoryError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

enum class HoldMode : std::uint8_t { exclusive, shared };

struct Hold {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int64_t process = 0;
    std::int32_t key = 0;  // index into Timeline::keys
    HoldMode mode = HoldMode::exclusive;
    bool open_ended = false;  // still held when the history ends (or, live, so far)
    bool crashed = false;     // ended by the holder's crash, not by a release
    bool overlapped = false;  // overlaps a conflicting hold on the same key
};

struct NemesisEvent {
    std::int64_t time_ns = 0;
    std::string f;
    std::string target;  // value.target as text, "" if none
};

// Two conflicting holds (indices into Timeline::holds) and the interval they share.
struct Overlap {
    std::size_t a = 0;
    std::size_t b = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int32_t key = 0;
};

// An immutable picture of a history, cheap to hand to the view.
struct Timeline {
    std::vector<std::string> keys;
    std::vector<std::int64_t> processes;    // row → process id, ascending
    std::vector<Hold> holds;                // sorted by (row, start)
    std::vector<std::size_t> row_begin;     // holds of row r: [row_begin[r], row_begin[r + 1])
    std::vector<std::int64_t> row_max_len;  // longest hold per row, to search by start time
    std::vector<NemesisEvent> nemesis;
    std::vector<Overlap> overlaps;     // the first kMaxOverlaps found, by start time
    std::size_t overlap_count = 0;     // all of them: the checker's violation count
    std::size_t overlapped_holds = 0;  // holds drawn red
    std::vector<double> cycles_per_s;  // completed releases per second of run, for live mode
    std::int64_t end_ns = 0;           // time of the last event
    std::size_t events = 0;

    static constexpr std::size_t kMaxOverlaps = 10'000;

    std::size_t rows() const { return processes.size(); }
    std::size_t row_of(std::int64_t process) const;  // rows() if unknown
};

// Reads a history incrementally: feed it lines as they arrive (live mode) and take a snapshot
// whenever the view wants one.
class HistoryModel : private checker::HoldObserver {
  public:
    HistoryModel();
    ~HistoryModel() override;
    HistoryModel(const HistoryModel&) = delete;
    HistoryModel& operator=(const HistoryModel&) = delete;

    // Feeds the next line (without its newline). Throws HistoryError naming the line.
    void add_line(std::string_view line);

    // Holds still open are cut at the last event and marked open_ended.
    std::shared_ptr<const Timeline> snapshot() const;

    std::size_t events() const { return events_; }
    std::size_t lines() const;

  private:
    void hold_ended(const checker::HoldSpan& hold) override;
    void overlap_found(std::uint64_t earlier_id, std::uint64_t later_id,
                       std::int64_t at_ns) override;
    std::int32_t key_id(const std::string& key);
    Hold hold_of(const checker::HoldSpan& span);
    // snapshot's steps: the holds still open at the end (ids: the check's id of each hold), and
    // the overlaps between holds by their place in the sorted timeline.
    void addOpenHolds(Timeline& t, std::vector<std::uint64_t>& ids) const;
    void addOverlaps(Timeline& t,
                     const std::unordered_map<std::uint64_t, std::size_t>& index_of_id) const;

    checker::HistoryParser parser_;
    checker::MutualExclusionCheck holds_check_;
    checker::Event event_;
    std::string line_;  // the parser writes a NUL behind the line

    struct FoundOverlap {
        std::uint64_t earlier = 0;
        std::uint64_t later = 0;
        std::int64_t at_ns = 0;
    };
    std::vector<std::string> keys_;
    std::unordered_map<std::string, std::int32_t> key_ids_;
    std::vector<Hold> closed_;
    std::vector<std::uint64_t> closed_ids_;  // the check's id of each closed hold
    std::vector<FoundOverlap> overlaps_;     // the first Timeline::kMaxOverlaps
    std::unordered_set<std::uint64_t> overlapped_ids_;
    std::vector<NemesisEvent> nemesis_;
    std::vector<std::int64_t> processes_;
    std::vector<double> cycles_per_s_;
    std::unordered_set<std::int64_t> seen_;
    std::int64_t end_ns_ = 0;
    std::size_t events_ = 0;
};

// Follows history.jsonl as it grows: each poll() feeds the complete lines written since the last
// one. A final line without '\n' is held back until it is completed, unless `at_end` says the
// file is finished (then it is parsed, and a truncated line is an error).
class HistoryFollower {
  public:
    explicit HistoryFollower(std::filesystem::path path) : path_(std::move(path)) {}

    // Returns the number of lines fed. Throws HistoryError.
    std::size_t poll(HistoryModel& model, bool at_end);

    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
    std::uint64_t offset_ = 0;
    std::string partial_;
};

// Reads a whole (finished) history. Throws HistoryError.
std::shared_ptr<const Timeline> load_history(const std::filesystem::path& path);

}  // namespace lockbench::dashboard
