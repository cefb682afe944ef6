#pragma once

// One adapter process (strategies/adapters/PROTOCOL.md): a child speaking newline-delimited JSON
// on its stdin/stdout, its stderr in a log file, in a process group of its own so that a fault
// (SIGSTOP, SIGKILL) reaches whatever the runtime started beside it. Its stdout is read on the
// client's EventLoop; call() sends one request and waits for the answer carrying its id.
//
// Anything the adapter does outside the protocol - a line that is not a JSON object, an answer
// to an id nobody asked, no answer in time, an exit or a closed stdout - breaks the process: one
// line on stderr naming the client and what happened, the process killed, every call in flight
// ends with AdapterBroken (an IoError: its outcome is unknown, the history records `info`).

#include <chrono>
#include <coroutine>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "strategies/client/child_process.hpp"
#include "strategies/client/event_loop.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

// The adapter broke the protocol or went away while a call was in flight: in doubt.
class AdapterBroken : public IoError {
  public:
    using IoError::IoError;
};

struct AdapterLaunch {
    std::vector<std::string> argv;             // argv[0] is looked up on PATH when it has no '/'
    std::vector<std::string> extra_env;        // NAME=VALUE added to lockbench's environment
    std::optional<std::filesystem::path> log;  // the adapter's stderr; none: lockbench's stderr
};

// Splits a command line on spaces, with '...' and "..." quoting (no escapes, no expansion): what
// --client-command accepts. Throws std::invalid_argument for an empty command or an open quote.
std::vector<std::string> split_command_line(const std::string& command);

class AdapterProcess final : private EventLoop::IoHandler {
  public:
    // Starts the process; throws std::system_error when it cannot be started (not found, fork,
    // pipes, exec). `who` names it in messages ("client c3-9f3a2b").
    AdapterProcess(EventLoop& loop, const AdapterLaunch& launch, std::string who);
    // Kills the process group and reaps it.
    ~AdapterProcess();
    AdapterProcess(const AdapterProcess&) = delete;
    AdapterProcess& operator=(const AdapterProcess&) = delete;

    pid_t pid() const { return child_.pid(); }
    // This process's number among every adapter process this lockbench started (from 1): unlike
    // a pid, never given to another process, so it tells request ids of a client's successive
    // processes apart (each starts its ids at 1).
    std::uint32_t serial() const { return serial_; }
    bool broken() const { return broken_.has_value(); }
    bool crashed() const { return crashed_; }  // by crash(): a fault, not the adapter's doing
    const std::string& broken_reason() const;

    // Sends `request` with the next id and waits for its answer, at most `timeout` (then the
    // process is broken: "late"). Throws AdapterBroken.
    Task<nlohmann::json> call(nlohmann::json request, std::chrono::milliseconds timeout);
    // The id the next call() gives its request.
    std::int64_t next_request_id() const { return next_id_; }

    // Unsolicited messages (`lost`): called on the loop thread, for each one.
    void set_on_message(std::function<void(const nlohmann::json&)> handler) {
        on_message_ = std::move(handler);
    }
    // Called once when the process breaks, with the reason (after the stderr line).
    void set_on_broken(std::function<void(const std::string&)> handler) {
        on_broken_ = std::move(handler);
    }

    // Signals to the whole process group. Each returns false when the process is already gone.
    // SIGSTOP, meant to last until `until`: answers due meanwhile are not late.
    bool stop(EventLoop::TimePoint until);
    bool resume();  // SIGCONT
    // SIGKILL, then reaps: returns true once the old pid is reaped (gone from the process table).
    bool kill_and_reap();
    // A crash lockbench injected: SIGKILL and reap, and the call in flight ends in doubt without
    // the process counting as misbehaving. Returns kill_and_reap()'s answer.
    bool crash();
    // Closes stdin (the adapter's cue to exit), then waits up to `grace` for it to exit before
    // killing it. Never breaks the process: an exit is what was asked.
    Task<void> close(std::chrono::milliseconds grace);

  private:
    struct Pending {
        std::int64_t id;
        std::optional<nlohmann::json> reply;
        std::coroutine_handle<> waiter;
        EventLoop::TimerId timer = 0;
    };
    struct ReplyAwaiter;

    void on_io(std::uint32_t epoll_events) override;
    void handle_line(std::string_view line);
    void break_with(const std::string& reason, bool report = true);
    void arm_deadline(Pending& pending, const std::string& type, std::chrono::milliseconds timeout);
    void detach_stdout();
    std::string exit_description();

    EventLoop& loop_;
    std::string who_;
    std::uint32_t serial_;
    ChildProcess child_;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
    bool closing_ = false;
    bool crashed_ = false;
    EventLoop::TimePoint stopped_until_{};
    std::string buffer_;
    std::int64_t next_id_ = 1;
    std::map<std::int64_t, Pending*> pending_;
    std::optional<std::string> broken_;
    std::function<void(const nlohmann::json&)> on_message_;
    std::function<void(const std::string&)> on_broken_;
};

}  // namespace lockbench
