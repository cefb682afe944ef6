#include "engine/clients/history_recorder.hpp"

#include <charconv>
#include <cstring>
#include <string>

#include "engine/servers/embedded_server.hpp"  // EnvironmentError

namespace lockbench {

using namespace std::chrono_literals;

namespace {

// A line is written through a pointer into room made for it first (line_bound): appending its
// twenty-odd pieces to a std::string one by one, each checking the capacity, cost as much as the
// rest of recording an event.

template <std::size_t N>
char* put(char* out, const char (&literal)[N]) {
    std::memcpy(out, literal, N - 1);
    return out + N - 1;
}

char* put(char* out, std::string_view s) {
    std::memcpy(out, s.data(), s.size());
    return out + s.size();
}

constexpr std::size_t kIntegerRoom = 20;  // -9223372036854775808

char* put_integer(char* out, std::int64_t v) {
    return std::to_chars(out, out + kIntegerRoom, v).ptr;
}

// Every character escaped as \u00XX, and the quotes.
constexpr std::size_t json_string_room(std::string_view s) {
    return 6 * s.size() + 2;
}

char* put_json_string(char* out, std::string_view s) {
    *out++ = '"';
    // Keys, tokens and errors rarely need escaping: copy the runs between escapes whole.
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out = put(out, s.substr(run, i - run));
        run = i + 1;
        switch (c) {
            case '"':
                out = put(out, "\\\"");
                break;
            case '\\':
                out = put(out, "\\\\");
                break;
            case '\n':
                out = put(out, "\\n");
                break;
            case '\r':
                out = put(out, "\\r");
                break;
            case '\t':
                out = put(out, "\\t");
                break;
            default: {
                constexpr std::string_view kHex = "0123456789abcdef";
                out = put(out, "\\u00");
                *out++ = kHex[c >> 4];
                *out++ = kHex[c & 0xf];
            }
        }
    }
    out = put(out, s.substr(run));
    *out++ = '"';
    return out;
}

// The most an event's line can take, the fixed names and five numbers included.
std::size_t line_room(const HistoryEventView& e) {
    return 160 + 5 * kIntegerRoom + json_string_room(e.f) + json_string_room(e.key) +
           e.value.size() + json_string_room(e.error);
}

char* put_line(char* out, const HistoryEventView& e, std::uint64_t index, std::int64_t time_ns,
               std::optional<std::int64_t> clock_ms) {
    out = put(out, "{\"index\":");
    out = put_integer(out, static_cast<std::int64_t>(index));
    out = put(out, ",\"type\":\"");
    out = put(out, event_type_word(e.type));
    out = put(out, "\",\"process\":");
    if (e.process == HistoryEvent::kNemesis) {
        out = put(out, "\"nemesis\"");
    } else if (e.process == HistoryEvent::kLibrary) {
        out = put(out, "\"library\"");
    } else {
        out = put_integer(out, e.process);
    }
    out = put(out, ",\"f\":");
    out = put_json_string(out, e.f);
    out = put(out, ",\"key\":");
    out = put_json_string(out, e.key);
    out = put(out, ",\"value\":");
    out = put(out, e.value);
    out = put(out, ",\"time\":");
    out = put_integer(out, time_ns);
    if (clock_ms) {
        out = put(out, ",\"clock\":");
        out = put_integer(out, *clock_ms);
    }
    if (!e.error.empty()) {
        out = put(out, ",\"error\":");
        out = put_json_string(out, e.error);
    }
    if (e.fence) {
        out = put(out, ",\"fence\":");
        out = put_integer(out, *e.fence);
    }
    *out++ = '}';
    return out;
}

// Appends a line and its '\n' when `newline`.
void append_line(std::string& out, const HistoryEventView& e, std::uint64_t index,
                 std::int64_t time_ns, std::optional<std::int64_t> clock_ms, bool newline) {
    const std::size_t room = line_room(e) + 1;
    // Most lines fit on the stack: one copy into `out`, not a zero-filled resize and back.
    constexpr std::size_t kStackRoom = 1024;
    if (room <= kStackRoom) {
        char line[kStackRoom];
        char* end = put_line(line, e, index, time_ns, clock_ms);
        if (newline)
            *end++ = '\n';
        out.append(line, static_cast<std::size_t>(end - line));
        return;
    }
    const std::size_t start = out.size();
    out.resize(start + room);
    char* end = put_line(out.data() + start, e, index, time_ns, clock_ms);
    if (newline)
        *end++ = '\n';
    out.resize(static_cast<std::size_t>(end - out.data()));
}

HistoryEventView view_of(const HistoryEvent& e) {
    return HistoryEventView{.type = e.type,
                            .process = e.process,
                            .f = e.f,
                            .key = e.key,
                            .value = e.value,
                            .clock_ms = e.clock_ms,
                            .clock = e.clock,
                            .error = e.error,
                            .fence = e.fence};
}

// A thread wakes the writer early once this much of its lines is waiting (some 30,000 events),
// else the writer comes every 20 ms.
constexpr std::size_t kWakeWriterBytes = 4 << 20;

std::atomic<std::uint64_t> next_recorder_serial{1};
}  // namespace

void append_json_string(std::string& out, std::string_view s) {
    const std::size_t start = out.size();
    out.resize(start + json_string_room(s));
    char* end = put_json_string(out.data() + start, s);
    out.resize(static_cast<std::size_t>(end - out.data()));
}

void HistoryRecorder::append_json(std::string& out, const HistoryEvent& e, std::uint64_t index,
                                  std::int64_t time_ns) {
    append_json(out, view_of(e), index, time_ns);
}

void HistoryRecorder::append_json(std::string& out, const HistoryEventView& e, std::uint64_t index,
                                  std::int64_t time_ns) {
    append_line(out, e, index, time_ns, e.clock_ms, false);
}

HistoryRecorder::HistoryRecorder(const std::filesystem::path& path, EventLoop::TimePoint run_start)
    : run_start_(run_start), serial_(next_recorder_serial.fetch_add(1)), file_(path) {
    writer_ = std::thread([this] { writer_loop(); });
}

HistoryRecorder::~HistoryRecorder() {
    try {
        finish();
    } catch (...) {
        // Already reported by the caller's finish(); a destructor must not throw.
    }
}

void HistoryRecorder::SpinLock::lock() {
    int spins = 0;
    while (held_.exchange(true, std::memory_order_acquire)) {
        while (held_.load(std::memory_order_relaxed)) {
            // A holder the scheduler preempted would keep a pure spinner out for a whole slice.
            if (++spins > 100) {
                std::this_thread::yield();
            } else {
#if defined(__x86_64__) || defined(__i386__)
                __builtin_ia32_pause();
#endif
            }
        }
    }
}

std::int64_t HistoryRecorder::now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(EventLoop::now() - run_start_)
        .count();
}

HistoryRecorder::ThreadLines& HistoryRecorder::lines_of_this_thread() {
    // A thread records into one recorder at a time: its lines are found without a lock.
    struct Cached {
        std::uint64_t serial = 0;
        ThreadLines* lines = nullptr;
    };
    thread_local Cached cached;
    if (cached.serial == serial_)
        return *cached.lines;
    std::lock_guard lock(threads_mutex_);
    auto& slot = threads_[std::this_thread::get_id()];
    if (!slot) {
        slot = std::make_unique<ThreadLines>();
        registered_.push_back(slot.get());
    }
    cached = {serial_, slot.get()};
    return *slot;
}

std::int64_t HistoryRecorder::record(const HistoryEvent& event) {
    return record(view_of(event));
}

std::int64_t HistoryRecorder::record(const HistoryEventView& event) {
    ThreadLines& mine = lines_of_this_thread();
    EventLoop::TimePoint now;
    std::uint64_t index;
    std::int64_t t;
    {
        std::lock_guard stamp(stamp_lock_);
        // Stamped together: index order == time order across threads.
        now = EventLoop::now();
        t = std::chrono::duration_cast<std::chrono::nanoseconds>(now - run_start_).count();
        if (closed_)
            return t;  // the history is complete: nothing recorded after finish() is written
        index = recorded_++;
        if (event.process >= 0)
            last_client_event_ns_ = t;
    }
    std::optional<std::int64_t> clock_ms = event.clock_ms;
    if (event.clock && !clock_ms)
        clock_ms = event.clock->wall_ms_at(now);
    bool wake = false;
    {
        std::lock_guard lock(mine.lock);
        append_line(mine.text, event, index, t, clock_ms, true);
        mine.lines.push_back({index, mine.text.size()});
        wake = mine.text.size() >= kWakeWriterBytes;
    }
    if (wake && !wake_early_.exchange(true))
        wake_.notify_one();
    return t;
}

std::uint64_t HistoryRecorder::events() const {
    std::lock_guard stamp(stamp_lock_);
    return recorded_;
}

std::int64_t HistoryRecorder::last_client_event_ns() const {
    std::lock_guard stamp(stamp_lock_);
    return last_client_event_ns_;
}

void HistoryRecorder::take_in_order(std::string& out) {
    {
        std::lock_guard lock(threads_mutex_);
        for (std::size_t i = taken_.size(); i < registered_.size(); ++i)
            taken_.push_back(TakenLines{.from = registered_[i]});
    }
    for (auto& taken : taken_) {
        if (taken.next > 0) {  // drop what was written, keep the rest
            const std::size_t written_bytes = taken.lines[taken.next - 1].end;
            taken.text.erase(0, written_bytes);
            taken.lines.erase(taken.lines.begin(),
                              taken.lines.begin() + static_cast<std::ptrdiff_t>(taken.next));
            for (auto& line : taken.lines)
                line.end -= written_bytes;
            taken.next = 0;
        }
        {
            // The buffers trade places (each keeps the capacity it grew to): the thread is held
            // up for two swaps, never for a copy.
            std::lock_guard lock(taken.from->lock);
            taken.from->text.swap(taken.fresh_text);
            taken.from->lines.swap(taken.fresh_lines);
        }
        if (taken.lines.empty()) {
            taken.text.swap(taken.fresh_text);
            taken.lines.swap(taken.fresh_lines);
        } else {
            const std::size_t base = taken.text.size();
            taken.text += taken.fresh_text;
            for (const auto& line : taken.fresh_lines)
                taken.lines.push_back({line.index, base + line.end});
        }
        taken.fresh_text.clear();
        taken.fresh_lines.clear();
    }
    // Each thread's lines are in index order; the next index is at the head of one of them,
    // unless its thread is still formatting it.
    TakenLines* last = nullptr;
    for (;;) {
        const auto holds_next = [this](const TakenLines& t) {
            return t.next < t.lines.size() && t.lines[t.next].index == written_;
        };
        TakenLines* from = last && holds_next(*last) ? last : nullptr;
        for (std::size_t i = 0; !from && i < taken_.size(); ++i) {
            if (holds_next(taken_[i]))
                from = &taken_[i];
        }
        if (!from)
            return;
        const std::size_t begin = from->next == 0 ? 0 : from->lines[from->next - 1].end;
        while (holds_next(*from)) {
            ++from->next;
            ++written_;
        }
        out.append(from->text, begin, from->lines[from->next - 1].end - begin);
        last = from;
    }
}

void HistoryRecorder::writer_loop() {
    std::string batch;
    for (;;) {
        bool last;
        {
            std::unique_lock lock(writer_mutex_);
            wake_.wait_for(lock, 20ms, [&] { return stopping_ || wake_early_.load(); });
            last = stopping_;
        }
        wake_early_.store(false);
        take_in_order(batch);
        if (last) {
            // finish() closed the stamps: every index below `total` is written or about to be,
            // by a thread between its stamp and its line - unless that thread failed in between
            // (out of memory), and then the history has a hole and says so.
            const std::uint64_t total = events();
            const auto give_up = EventLoop::now() + 5s;
            while (written_ < total && EventLoop::now() < give_up) {
                std::this_thread::yield();
                take_in_order(batch);
            }
            if (written_ < total) {
                std::lock_guard lock(writer_mutex_);
                write_error_ = "event " + std::to_string(written_) + " was never formatted";
            }
        }
        write_batch(batch);
        batch.clear();
        if (last)
            return;
    }
}

void HistoryRecorder::write_batch(const std::string& lines) {
    if (lines.empty())
        return;
    if (!file_.append(lines)) {
        std::lock_guard lock(writer_mutex_);
        if (write_error_.empty())
            write_error_ = file_.error();
    }
}

void HistoryRecorder::finish() {
    if (!writer_.joinable()) {
        std::lock_guard lock(writer_mutex_);
        if (!write_error_.empty())
            throw EnvironmentError("writing the history failed: " + write_error_);
        return;
    }
    {
        std::lock_guard stamp(stamp_lock_);
        closed_ = true;
    }
    {
        std::lock_guard lock(writer_mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    writer_.join();
    std::lock_guard lock(writer_mutex_);
    if (!file_.close() && write_error_.empty())
        write_error_ = file_.error();
    if (!write_error_.empty())
        throw EnvironmentError("writing the history failed: " + write_error_);
}

}  // namespace lockbench
