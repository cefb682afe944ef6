#include "engine/clients/history_recorder.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "engine/servers/embedded_server.hpp"  // EnvironmentError

namespace lockbench {

using namespace std::chrono_literals;

void append_json_string(std::string& out, std::string_view s) {
    out.push_back('"');
    for (char c : s) {
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
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out.push_back(c);
                }
        }
    }
    out.push_back('"');
}

void HistoryRecorder::append_json(std::string& out, const HistoryEvent& e, std::uint64_t index,
                                  std::int64_t time_ns) {
    out += "{\"index\":";
    out += std::to_string(index);
    out += ",\"type\":\"";
    out += event_type_word(e.type);
    out += "\",\"process\":";
    if (e.process == HistoryEvent::kNemesis) {
        out += "\"nemesis\"";
    } else if (e.process == HistoryEvent::kLibrary) {
        out += "\"library\"";
    } else {
        out += std::to_string(e.process);
    }
    out += ",\"f\":";
    append_json_string(out, e.f);
    out += ",\"key\":";
    append_json_string(out, e.key);
    out += ",\"value\":";
    out += e.value;
    out += ",\"time\":";
    out += std::to_string(time_ns);
    if (e.clock_ms) {
        out += ",\"clock\":";
        out += std::to_string(*e.clock_ms);
    }
    if (!e.error.empty()) {
        out += ",\"error\":";
        append_json_string(out, e.error);
    }
    if (e.fence) {
        out += ",\"fence\":";
        out += std::to_string(*e.fence);
    }
    out.push_back('}');
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

std::int64_t HistoryRecorder::record(HistoryEvent event) {
    std::lock_guard lock(mutex_);
    // Stamped under the lock: index order == time order across threads.
    const auto now = EventLoop::now();
    if (event.clock && !event.clock_ms)
        event.clock_ms = event.clock->wall_ms_at(now);
    event.clock = nullptr;  // the writer thread must not read a client's clock
    const std::int64_t t =
        std::chrono::duration_cast<std::chrono::nanoseconds>(now - run_start_).count();
    if (event.process >= 0)
        last_client_event_ns_ = t;
    pending_.push_back(Stamped{std::move(event), t});
    ++recorded_;
    if (pending_.size() >= 65'536)
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
    std::vector<Stamped> batch;
    for (;;) {
        bool last;
        {
            std::unique_lock lock(mutex_);
            wake_.wait_for(lock, 20ms, [&] { return stopping_ || pending_.size() >= 65'536; });
            batch.swap(pending_);
            last = stopping_;
        }
        write_batch(batch);
        batch.clear();
        if (last)
            return;
    }
}

void HistoryRecorder::write_batch(std::vector<Stamped>& batch) {
    if (batch.empty())
        return;
    std::string out;
    out.reserve(batch.size() * 160);
    for (const auto& s : batch) {
        append_json(out, s.event, next_index_++, s.time);
        out.push_back('\n');
    }
    if (std::fwrite(out.data(), 1, out.size(), file_) != out.size()) {
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
