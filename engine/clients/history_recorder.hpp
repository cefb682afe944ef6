#pragma once

// Writes history.jsonl exactly as checker/HISTORY.md specifies. Every event is stamped with the
// engine's one monotonic clock (ns since run start) while holding the recorder's lock, so the
// order of `index` is the order of `time` across all client threads and the nemesis. A writer
// thread drains the buffer to disk every few milliseconds: long runs stream, memory stays flat.

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

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

class HistoryRecorder {
  public:
    // Opens `path` for writing and starts the writer thread. Throws std::runtime_error.
    HistoryRecorder(const std::filesystem::path& path, EventLoop::TimePoint run_start);
    ~HistoryRecorder();
    HistoryRecorder(const HistoryRecorder&) = delete;
    HistoryRecorder& operator=(const HistoryRecorder&) = delete;

    // Thread-safe. Returns the event's time (ns since run start). An event's `clock` must be
    // the recording thread's own (it is read under the recorder's lock, not the clock's).
    std::int64_t record(HistoryEvent event);
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

  private:
    struct Stamped {
        HistoryEvent event;
        std::int64_t time;
    };
    void writer_loop();
    void write_batch(std::vector<Stamped>& batch);

    EventLoop::TimePoint run_start_;
    std::FILE* file_ = nullptr;
    mutable std::mutex mutex_;
    std::condition_variable wake_;
    std::vector<Stamped> pending_;
    std::uint64_t recorded_ = 0;
    std::int64_t last_client_event_ns_ = 0;
    bool stopping_ = false;
    std::uint64_t next_index_ = 0;  // writer thread only
    std::string write_error_;       // guarded by mutex_
    std::thread writer_;
};

// JSON string escaping for keys, tokens and errors.
void append_json_string(std::string& out, std::string_view s);

}  // namespace lockbench
