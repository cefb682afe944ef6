#pragma once

// Writes history.jsonl exactly as checker/HISTORY.md specifies. Every event is stamped with the
// engine's one monotonic clock (ns since run start) and its index under one short lock, so the
// order of `index` is the order of `time` across all client threads and the nemesis. A writer
// thread drains the lines to disk every few milliseconds: long runs stream, memory stays flat.
//
// The lock covers the stamp only - a clock read and an increment. Each thread formats its whole
// line after it, into lines of its own, and the writer puts the threads' lines back in index
// order. Formatting under one shared lock (the recorder's former shape), two threads recording at
// once spent 430 ns of CPU an event against 92 for one (history_recorder_bench), and the history
// as a whole was ~1.2 us of the engine's ~3.3 us per lock cycle in shared-connection runs: the
// engine, not the server, was their limit (docs/performance.md).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "checker/history.hpp"  // EventType
#include "engine/clients/history_file.hpp"
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
    // A lock held for nanoseconds, too short to sleep on: the stamp's (a clock read and an
    // increment; a contended std::mutex went to the kernel and back on most of its waits) and
    // each thread's lines' (its own appends, the writer's swap every few ms).
    class SpinLock {
      public:
        void lock();
        void unlock() { held_.store(false, std::memory_order_release); }

      private:
        std::atomic<bool> held_{false};
    };

    // One thread's finished lines, '\n'-terminated, in the order it stamped them, and where each
    // ends: the recording thread appends, the writer takes them all at once.
    struct ThreadLines {
        struct Line {
            std::uint64_t index;
            std::size_t end;  // offset in `text` just past its '\n'
        };
        SpinLock lock;  // the recording thread and, every few ms, the writer
        std::string text;
        std::vector<Line> lines;
    };

    // What the writer has taken from one thread and not yet written (past an index still
    // being formatted by another thread).
    struct TakenLines {
        ThreadLines* from = nullptr;
        std::string text;
        std::vector<ThreadLines::Line> lines;
        std::size_t next = 0;  // the first line not yet written
        // Empty, with capacity: traded for the thread's lines when they are taken.
        std::string fresh_text;
        std::vector<ThreadLines::Line> fresh_lines;
    };

    ThreadLines& lines_of_this_thread();
    void writer_loop();
    // Takes every thread's lines and appends, in index order, those up to the first index not
    // yet formatted to `out`.
    void take_in_order(std::string& out);
    void write_batch(const std::string& lines);

    EventLoop::TimePoint run_start_;
    // Tells this recorder's lines apart from an earlier one's at the same address.
    std::uint64_t serial_;
    HistoryFile file_;  // the writer thread's, then finish()'s

    mutable SpinLock stamp_lock_;
    std::uint64_t recorded_ = 0;             // guarded by stamp_lock_; also the next event's index
    std::int64_t last_client_event_ns_ = 0;  // guarded by stamp_lock_
    bool closed_ = false;                    // guarded by stamp_lock_: finish() began

    std::mutex threads_mutex_;
    std::unordered_map<std::thread::id, std::unique_ptr<ThreadLines>> threads_;
    std::vector<ThreadLines*> registered_;  // threads_'s values, in the order they came

    // The writer thread's own.
    std::vector<TakenLines> taken_;
    std::uint64_t written_ = 0;  // lines written so far, also the next index to write

    std::mutex writer_mutex_;
    std::condition_variable wake_;
    std::atomic<bool> wake_early_{false};
    bool stopping_ = false;    // guarded by writer_mutex_
    std::string write_error_;  // guarded by writer_mutex_
    std::thread writer_;
};

// JSON string escaping for keys, tokens and errors.
void append_json_string(std::string& out, std::string_view s);

}  // namespace lockbench
