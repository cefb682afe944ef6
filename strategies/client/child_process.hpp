#pragma once

// One child process of lockbench, from fork to reaping: an embedded server (redis-server,
// ZooKeeper, etcd) or a lock library's adapter. Every child runs in a process group of its own, so
// a Ctrl-C at the terminal reaches lockbench only (which then ends its children in order) while a
// fault's signal reaches whatever the child started beside it; and the kernel kills it when
// lockbench dies without cleaning up (PR_SET_PDEATHSIG). A child never outlives its ChildProcess:
// the destructor kills the group and reaps it.
//
// It lives here, at the bottom of the build, because both the engine's servers and the external
// strategies' adapter processes are built on it, and strategies/ may not include engine/.

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <vector>

namespace lockbench {

enum class ChildStream {
    Inherit,  // lockbench's own
    Null,     // /dev/null
    Log,      // ChildLaunch::log, appended to (created if missing)
    Pipe,     // a pipe whose other end the parent takes (take_stdin / take_stdout)
};

struct ChildLaunch {
    std::vector<std::string> argv;       // argv[0] is looked up on PATH when it has no '/'
    std::vector<std::string> extra_env;  // NAME=VALUE, over lockbench's environment
    std::filesystem::path working_dir;   // empty: lockbench's
    int netns_fd = -1;                   // a network namespace to enter before exec
    ChildStream stdin_from = ChildStream::Null;
    ChildStream stdout_to = ChildStream::Null;
    ChildStream stderr_to = ChildStream::Inherit;
    std::filesystem::path log;  // where the Log streams go
    // Names the program in the error when it cannot run: "cannot run adapter 'x'".
    std::string role = "program";
};

// A program on PATH (or a path); nothing when it cannot be executed.
std::optional<std::filesystem::path> find_program(const std::string& name);

// The state letter of /proc/<pid>/stat ('R', 'S', 'T' stopped, 'Z' zombie...), 'T' only once
// every thread of the process has stopped; nothing when the process is gone.
std::optional<char> process_state(pid_t pid);

// The last `lines` non-empty lines of a log file joined with " | ", skipping lines that contain
// `noise` (when not empty); "(no log)" when there are none. To explain why a child failed.
std::string log_tail(const std::filesystem::path& log, std::size_t lines,
                     std::string_view noise = {});

class ChildProcess {
  public:
    // No process.
    ChildProcess() = default;
    // Starts the process. Throws std::system_error when it cannot: argv[0] not found or not
    // executable (ENOENT, "cannot run <role> 'argv[0]'"), the log cannot be opened, or fork,
    // a pipe, the namespace, the working directory or exec fail (said by the child before exec).
    explicit ChildProcess(const ChildLaunch& launch);
    // Kills the process group and reaps it.
    ~ChildProcess();
    ChildProcess(ChildProcess&& other) noexcept;
    ChildProcess& operator=(ChildProcess&& other) noexcept;
    ChildProcess(const ChildProcess&) = delete;
    ChildProcess& operator=(const ChildProcess&) = delete;

    // The process's id, also after it was reaped (to name it in proofs); -1 if none was started.
    pid_t pid() const { return pid_; }
    // Started and not reaped yet.
    bool running() const { return pid_ > 0 && !reaped_; }
    // False once the process has exited (reaps it). A multithreaded process (a JVM, etcd) is a
    // zombie until its last thread ends: only waitpid says it is gone, never kill(pid, 0).
    bool alive();
    bool paused() const { return paused_; }
    // 'T' when stopped, ...; nothing once reaped.
    std::optional<char> state() const;

    // Sends `signal` to the whole process group; false when the process is already reaped.
    bool signal(int signo);
    // SIGSTOP, then waits (up to a second) until /proc says it is stopped, so that a pause is in
    // place when its fault is logged. False if it never was.
    bool pause();
    void resume();  // SIGCONT, if paused
    // SIGKILL to the group, then reaps: true once the pid is gone from the process table.
    bool kill_and_reap();
    // SIGCONT (if paused) and SIGTERM; SIGKILL if it has not exited within `grace`. Reaps.
    void terminate(std::chrono::milliseconds grace);
    // Waits until the process exits on its own and reaps it; its wait status.
    int wait();

    // The parent's ends of the pipes (ChildStream::Pipe); the caller owns and closes them. -1
    // when there is none or it was taken.
    int take_stdin();
    int take_stdout();

    // How a reaped process ended: "exited with status 3", "was killed by signal Killed"; nothing
    // while it runs.
    std::optional<std::string> exit_description() const;

  private:
    void reaped_with(int status);

    pid_t pid_ = -1;
    bool reaped_ = false;
    bool paused_ = false;
    int wait_status_ = 0;
    int stdin_fd_ = -1;
    int stdout_fd_ = -1;
};

}  // namespace lockbench
