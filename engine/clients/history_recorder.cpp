#include "engine/clients/history_recorder.hpp"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

#include "engine/servers/embedded_server.hpp"  // EnvironmentError

namespace lockbench {

using namespace std::chrono_literals;

void append_json_string(std::string& out, std::string_view s) {
    out.push_back('"');
    // Keys, tokens and errors rarely need escaping: copy the runs between escapes whole.
    std::size_t run = 0;
    for (std::size_t i = 0; i < s.size(); ++i) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out.append(s.data() + run, i - run);
        run = i + 1;
        switch (c) {
            case '"':
                out += "\\\"";
                break;
            case '\\':
                out += "\\\\";
                break;
            case '\n':
                out += "\\n";
                break;
            case '\r':
                out += "\\r";
                break;
            case '\t':
                out += "\\t";
                break;
            default: {
                constexpr std::string_view kHex = "0123456789abcdef";
                const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xf]};
                out.append(escaped, sizeof escaped);
            }
        }
    }
    out.append(s.data() + run, s.size() - run);
    out.push_back('"');
}

namespace {
// std::to_string's digits, without its string.
void append_integer(std::string& out, std::int64_t v) {
    char digits[24];
    const auto end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    // A count, not an iterator range: append(first, last) goes through replace(), which costs
    // as much as the digits themselves (four numbers an event).
    out.append(digits, static_cast<std::size_t>(end - digits));
}

// A line's fields from `type` to `"time":` (its index before them, its time after).
void append_before_time(std::string& out, const HistoryEventView& e) {
    out += ",\"type\":\"";
    out += event_type_word(e.type);
    out += "\",\"process\":";
    if (e.process == HistoryEvent::kNemesis) {
        out += "\"nemesis\"";
    } else if (e.process == HistoryEvent::kLibrary) {
        out += "\"library\"";
    } else {
        append_integer(out, e.process);
    }
    out += ",\"f\":";
    append_json_string(out, e.f);
    out += ",\"key\":";
    append_json_string(out, e.key);
    out += ",\"value\":";
    out += e.value;
    out += ",\"time\":";
}

void append_clock(std::string& out, std::optional<std::int64_t> clock_ms) {
    if (clock_ms) {
        out += ",\"clock\":";
        append_integer(out, *clock_ms);
    }
}

// A line's fields after its time and clock, and its closing brace.
void append_after_clock(std::string& out, const HistoryEventView& e) {
    if (!e.error.empty()) {
        out += ",\"error\":";
        append_json_string(out, e.error);
    }
    if (e.fence) {
        out += ",\"fence\":";
        append_integer(out, *e.fence);
    }
    out.push_back('}');
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

// The writer is woken early once this much is waiting (about 65,000 events), else every 20 ms.
constexpr std::size_t kWakeWriterBytes = 8 << 20;
}  // namespace

void HistoryRecorder::append_json(std::string& out, const HistoryEvent& e, std::uint64_t index,
                                  std::int64_t time_ns) {
    append_json(out, view_of(e), index, time_ns);
}

void HistoryRecorder::append_json(std::string& out, const HistoryEventView& e, std::uint64_t index,
                                  std::int64_t time_ns) {
    out += "{\"index\":";
    append_integer(out, static_cast<std::int64_t>(index));
    append_before_time(out, e);
    append_integer(out, time_ns);
    append_clock(out, e.clock_ms);
    append_after_clock(out, e);
}

HistoryRecorder::HistoryRecorder(const std::filesystem::path& path, EventLoop::TimePoint run_start)
    : run_start_(run_start) {
    file_ = std::fopen(path.c_str(), "w");
    if (!file_) {
        throw EnvironmentError("cannot write " + path.string() + ": " + std::strerror(errno));
    }
    writer_ = std::thread([this] { writer_loop(); });
}

HistoryRecorder::~HistoryRecorder() {
    try {
        finish();
    } catch (...) {
        // Already reported by the caller's finish(); a destructor must not throw.
    }
}

std::int64_t HistoryRecorder::now_ns() const {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(EventLoop::now() - run_start_)
        .count();
}

std::int64_t HistoryRecorder::record(const HistoryEvent& event) {
    return record(view_of(event));
}

std::int64_t HistoryRecorder::record(const HistoryEventView& event) {
    // What does not depend on the event's time is formatted before the lock, into this thread's
    // own buffer (no allocation once it has grown); the lock only orders and copies.
    thread_local std::string parts;
    parts.clear();
    append_before_time(parts, event);
    const std::size_t before_time = parts.size();
    append_after_clock(parts, event);
    parts.push_back('\n');
    const std::string_view head(parts.data(), before_time);
    const std::string_view tail(parts.data() + before_time, parts.size() - before_time);

    std::lock_guard lock(mutex_);
    // Stamped under the lock: index order == time order across threads.
    const auto now = EventLoop::now();
    std::optional<std::int64_t> clock_ms = event.clock_ms;
    if (event.clock && !clock_ms)
        clock_ms = event.clock->wall_ms_at(now);
    const std::int64_t t =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - run_start_).count();
    if (event.process >= 0)
        last_client_event_ns_ = t;
    pending_ += "{\"index\":";
    append_integer(pending_, static_cast<std::int64_t>(recorded_));
    pending_ += head;
    append_integer(pending_, t);
    append_clock(pending_, clock_ms);
    pending_ += tail;
    ++recorded_;
    if (pending_.size() >= kWakeWriterBytes)
        wake_.notify_one();
    return t;
}

std::uint64_t HistoryRecorder::events() const {
    std::lock_guard lock(mutex_);
    return recorded_;
}

std::int64_t HistoryRecorder::last_client_event_ns() const {
    std::lock_guard lock(mutex_);
    return last_client_event_ns_;
}

void HistoryRecorder::writer_loop() {
    std::string batch;
    for (;;) {
        bool last;
        {
            std::unique_lock lock(mutex_);
            wake_.wait_for(lock, 20ms,
                           [&] { return stopping_ || pending_.size() >= kWakeWriterBytes; });
            // The two buffers trade places: each keeps the capacity it grew to.
            batch.swap(pending_);
            last = stopping_;
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
    if (std::fwrite(lines.data(), 1, lines.size(), file_) != lines.size()) {
        std::lock_guard lock(mutex_);
        if (write_error_.empty())
            write_error_ = std::strerror(errno);
    }
}

void HistoryRecorder::finish() {
    if (!writer_.joinable()) {
        std::lock_guard lock(mutex_);
        if (!write_error_.empty())
            throw EnvironmentError("writing the history failed: " + write_error_);
        return;
    }
    {
        std::lock_guard lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_one();
    writer_.join();
    if (std::fflush(file_) != 0 || std::ferror(file_)) {
        std::lock_guard lock(mutex_);
        if (write_error_.empty())
            write_error_ = std::strerror(errno);
    }
    if (std::fclose(file_) != 0) {
        std::lock_guard lock(mutex_);
        if (write_error_.empty())
            write_error_ = std::strerror(errno);
    }
    file_ = nullptr;
    std::lock_guard lock(mutex_);
    if (!write_error_.empty())
        throw EnvironmentError("writing the history failed: " + write_error_);
}

}  // namespace lockbench
