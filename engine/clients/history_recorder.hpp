#pragma once

// Writes history.jsonl exactly as checker/HISTORY.md specifies. Every event is stamped with the
// engine's one monotonic clock (ns since run start) while holding the recorder's lock, so the
// order of `index` is the order of `time` across all client threads and the nemesis. A writer
// thread drains the buffer to disk every few milliseconds: long runs stream, memory stays flat.
//
// An event is formatted by the thread that records it, into a buffer of that thread's, before
// the lock (everything but index, time and clock), and appended as its finished line under it:
// a lock cycle's four events cost no allocation and no per-event object for the writer thread
// to format and free - at 100,000 cycles/s that was most of the engine's CPU per cycle.

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "checker/history.hpp"  // EventType
#include "strategies/client/clock.hpp"
#include "strategies/client/event_loop.hpp"

namespace lockbench {

// The history's event types are the checker's (checker/HISTORY.md): one enum, one spelling.
using checker::EventType;

struct HistoryEvent {
    EventType type = EventType::Invoke;
    std::int64_t process = 0;  // kNemesis for the nemesis, kLibrary for a lock library's signal
    std::string_view f;        // a static name: acquire, release, read, write, pause, ...
    std::string key;
    std::string value = "null";            // already-serialized JSON
    std::optional<std::int64_t> clock_ms;  // the client's own clock reading
    const Clock* clock = nullptr;          // else read this clock at the event's time
    std::string error;                     // fail/info only
    std::optional<std::int64_t> fence;     // fenced resource writes (top-level extra field)

    static constexpr std::int64_t kNemesis = -1;
    // "process": "library" (HISTORY.md): what a lock library itself told a client ("lost").
    static constexpr std::int64_t kLibrary = -2;
};

// The same event, borrowing its strings: what the clients' hot path records without copying them.
struct HistoryEventView {
    EventType type = EventType::Invoke;
    std::int64_t process = 0;
    std::string_view f;
    std::string_view key;
    std::string_view value = "null";  // already-serialized JSON
    std::optional<std::int64_t> clock_ms;
    const Clock* clock = nullptr;
    std::string_view error;
    std::optional<std::int64_t> fence;
};

class HistoryRecorder {
  public:
    // Opens `path` for writing and starts the writer thread. Throws std::runtime_error.
    HistoryRecorder(const std::filesystem::path& path, EventLoop::TimePoint run_start);
    ~HistoryRecorder();
    HistoryRecorder(const HistoryRecorder&) = delete;
    HistoryRecorder& operator=(const HistoryRecorder&) = delete;

    // Thread-safe. Returns the event's time (ns since run start). An event's `clock` must be
    // the recording thread's own (it is read under the recorder's lock, not the clock's).
    std::int64_t record(const HistoryEvent& event);
    std::int64_t record(const HistoryEventView& event);
    std::int64_t now_ns() const;

    // Flushes everything and closes the file; throws std::runtime_error if any write failed
    // (e.g. the disk is full), so a run never reports success over a truncated history.
    void finish();
    std::uint64_t events() const;
    // The time (ns since run start) of the last event a client recorded, 0 if none: where the
    // clients' running time ends when they were still finishing operations after the stop.
    std::int64_t last_client_event_ns() const;

    // One JSON line (without '\n') for an event at `index` and `time`.
    static void append_json(std::string& out, const HistoryEvent& e, std::uint64_t index,
                            std::int64_t time_ns);
    static void append_json(std::string& out, const HistoryEventView& e, std::uint64_t index,
                            std::int64_t time_ns);

  private:
    void writer_loop();
    void write_batch(const std::string& lines);

    EventLoop::TimePoint run_start_;
    std::FILE* file_ = nullptr;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::string pending_;         // finished lines, '\n'-terminated, in index order
    std::uint64_t recorded_ = 0;  // also the next event's index
    std::int64_t last_client_event_ns_ = 0;
    bool stopping_ = false;
    std::string write_error_;  // guarded by mutex_
    std::thread writer_;
};

// JSON string escaping for keys, tokens and errors.
void append_json_string(std::string& out, std::string_view s);

}  // namespace lockbench
