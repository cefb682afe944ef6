#include "strategies/client/child_process.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <fstream>
#include <initializer_list>
#include <poll.h>
#include <sched.h>
#include <stdexcept>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <utility>

extern char** environ;

namespace lockbench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

[[noreturn]] void throw_errno(int error, const std::string& what) {
    throw std::system_error(error, std::generic_category(), what);
}

void close_all(std::initializer_list<int> fds) {
    for (int fd : fds) {
        if (fd >= 0)
            ::close(fd);
    }
}

// What the child failed at before exec, told to the parent through a close-on-exec pipe.
enum class ChildStep : int { Setns, Chdir, Streams, Exec };
struct ChildFailure {
    ChildStep step;
    int error;
};

// The environment the child gets: lockbench's, with `extra` (NAME=VALUE) replacing or adding.
std::vector<std::string> environment_with(const std::vector<std::string>& extra) {
    std::vector<std::string> out;
    for (char** e = environ; *e; ++e) {
        const std::string_view entry(*e);
        const auto name = entry.substr(0, entry.find('=') + 1);
        bool overridden = false;
        for (const auto& added : extra)
            overridden |= added.starts_with(name);
        if (!overridden)
            out.emplace_back(entry);
    }
    out.insert(out.end(), extra.begin(), extra.end());
    return out;
}

std::vector<char*> pointers_to(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings)
        out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// The descriptor a stream of the child gets, opened before fork (only async-signal-safe calls
// are allowed between fork and exec in a threaded process); -1: inherited. `parent_end`
// receives the parent's end of a pipe.
int open_stream(ChildStream stream, bool child_reads, const ChildLaunch& launch, int& parent_end) {
    switch (stream) {
        case ChildStream::Inherit:
            return -1;
        case ChildStream::Null: {
            const int fd = ::open("/dev/null", (child_reads ? O_RDONLY : O_WRONLY) | O_CLOEXEC);
            if (fd < 0)
                throw_errno(errno, "cannot open /dev/null");
            return fd;
        }
        case ChildStream::Log: {
            if (child_reads)
                throw std::invalid_argument("a child cannot read its log");
            const int fd =
                ::open(launch.log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
            if (fd < 0)
                throw_errno(errno, "cannot open " + launch.role + " log " + launch.log.string());
            return fd;
        }
        case ChildStream::Pipe: {
            int ends[2];
            if (::pipe2(ends, O_CLOEXEC) != 0)
                throw_errno(errno, "pipe");
            parent_end = child_reads ? ends[1] : ends[0];
            return child_reads ? ends[0] : ends[1];
        }
    }
    return -1;
}

// In the child: makes `fd` (opened close-on-exec) the stream `target` of the program. An fd
// that already is the target (lockbench's own stream was closed) keeps its number, but must
// lose close-on-exec. Async-signal-safe.
bool become(int fd, int target) {
    if (fd < 0)
        return true;
    if (fd == target)
        return ::fcntl(fd, F_SETFD, 0) == 0;
    return ::dup2(fd, target) == target;
}

// What the child runs, built before fork(): after it, a threaded process may only make
// async-signal-safe calls.
struct ChildExec {
    const std::string& program_path;
    std::vector<char*> argv;
    std::vector<char*> envp;
    std::string working_dir;
    int netns_fd = -1;
};

// The child's ends of its streams, the parent's ends of its pipes, and the report pipe the child
// tells a failure before exec through.
struct ChildStreams {
    int child_in = -1, child_out = -1, child_err = -1, parent_in = -1, parent_out = -1;
    int report[2] = {-1, -1};
};

ChildStreams open_child_streams(const ChildLaunch& launch) {
    ChildStreams s;
    int unused = -1;
    try {
        s.child_in = open_stream(launch.stdin_from, true, launch, s.parent_in);
        s.child_out = open_stream(launch.stdout_to, false, launch, s.parent_out);
        if (launch.stderr_to == ChildStream::Pipe)
            throw std::invalid_argument("a child's stderr goes to its log, not a pipe");
        s.child_err = open_stream(launch.stderr_to, false, launch, unused);
        if (::pipe2(s.report, O_CLOEXEC) != 0)
            throw_errno(errno, "pipe");
    } catch (...) {
        close_all({s.child_in, s.child_out, s.child_err, s.parent_in, s.parent_out});
        throw;
    }
    return s;
}

// In the child, between fork and exec: async-signal-safe calls only.
[[noreturn]] void exec_in_child(const ChildExec& exec, const ChildStreams& streams, pid_t parent) {
    // Its own group: a fault signals the child and whatever it started, and a Ctrl-C at the
    // terminal reaches lockbench only, which then ends its children itself.
    ::setpgid(0, 0);
    // The safety net when lockbench dies without cleaning up (SIGKILL, a crash): the child
    // must not outlive it. It fires when the spawning thread ends, which happens only after
    // the run has ended its children.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent)
        ::_exit(127);
    auto fail = [&](ChildStep step) {
        const ChildFailure failure{step, errno};
        [[maybe_unused]] auto n = ::write(streams.report[1], &failure, sizeof failure);
        ::_exit(127);
    };
    if (exec.netns_fd >= 0 && ::setns(exec.netns_fd, CLONE_NEWNET) != 0)
        fail(ChildStep::Setns);
    if (!exec.working_dir.empty() && ::chdir(exec.working_dir.c_str()) != 0)
        fail(ChildStep::Chdir);
    if (!become(streams.child_in, STDIN_FILENO) || !become(streams.child_out, STDOUT_FILENO) ||
        !become(streams.child_err, STDERR_FILENO))
        fail(ChildStep::Streams);
    // lockbench ignores SIGPIPE (a write to a dead adapter must fail, not end it) and its
    // threads block signals: neither may reach the program, which expects the defaults.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    ::execve(exec.program_path.c_str(), exec.argv.data(), exec.envp.data());
    fail(ChildStep::Exec);
    ::_exit(127);  // not reached: fail() exits
}

// The report pipe closes when exec succeeds. A process forked meanwhile by another thread
// holds a copy until its own exec (the network lab's holders never exec): the wait is
// bounded, and a child that fails after it is seen exiting as before. Closes `report_fd`.
std::optional<ChildFailure> read_child_failure(int report_fd) {
    ChildFailure failure{};
    pollfd readable{report_fd, POLLIN, 0};
    ssize_t got = 0;
    int ready = 0;
    while ((ready = ::poll(&readable, 1, 2000)) < 0 && errno == EINTR) {
    }
    if (ready == 1) {
        while ((got = ::read(report_fd, &failure, sizeof failure)) < 0 && errno == EINTR) {
        }
    }
    ::close(report_fd);
    if (got == static_cast<ssize_t>(sizeof failure))
        return failure;
    return std::nullopt;
}

[[noreturn]] void throw_child_failure(const ChildFailure& failure, const std::string& working_dir,
                                      const std::string& cannot_run) {
    switch (failure.step) {
        case ChildStep::Setns:
            throw_errno(failure.error, "setns");
        case ChildStep::Chdir:
            throw_errno(failure.error, "cannot enter " + working_dir);
        case ChildStep::Streams:
            throw_errno(failure.error, "dup2");
        case ChildStep::Exec:
            break;
    }
    throw_errno(failure.error, cannot_run);
}

}  // namespace

std::optional<fs::path> find_program(const std::string& name) {
    if (name.empty())
        return std::nullopt;
    if (name.find('/') != std::string::npos) {
        if (::access(name.c_str(), X_OK) == 0 && !fs::is_directory(name))
            return fs::path(name);
        return std::nullopt;
    }
    const char* path = std::getenv("PATH");
    const std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
    std::size_t start = 0;
    while (start <= dirs.size()) {
        const std::size_t end = std::min(dirs.find(':', start), dirs.size());
        fs::path candidate = fs::path(end > start ? dirs.substr(start, end - start) : ".") / name;
        if (::access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate))
            return candidate;
        start = end + 1;
    }
    return std::nullopt;
}

namespace {

std::optional<char> stat_state(const fs::path& stat_file) {
    std::ifstream stat(stat_file);
    std::string text;
    if (!stat || !std::getline(stat, text))
        return std::nullopt;
    // "pid (comm) S ...": comm may itself contain ") ", so the last one ends it.
    const auto close = text.rfind(") ");
    if (close == std::string::npos || close + 2 >= text.size())
        return std::nullopt;
    return text[close + 2];
}

}  // namespace

std::optional<char> process_state(pid_t pid) {
    if (pid <= 0)
        return std::nullopt;
    const fs::path proc = "/proc/" + std::to_string(pid);
    const auto leader = stat_state(proc / "stat");
    if (leader != 'T')
        return leader;
    // kill(SIGSTOP) returns once the signal is queued. The thread that takes it (the leader,
    // mostly) stops first and then wakes the others, which stop when the kernel next runs them:
    // on a loaded machine a JVM's other threads can still serve a request meanwhile. Stopped means
    // every thread stopped; a thread that has ended (Z, X) or vanished serves nothing.
    std::error_code error;
    for (const auto& task : fs::directory_iterator(proc / "task", error)) {
        const auto state = stat_state(task.path() / "stat");
        if (state && *state != 'T' && *state != 't' && *state != 'Z' && *state != 'X')
            return state;
    }
    return leader;
}

std::string log_tail(const fs::path& log, std::size_t lines, std::string_view noise) {
    std::ifstream in(log);
    std::deque<std::string> tail;
    for (std::string line; std::getline(in, line);) {
        if (line.empty() || (!noise.empty() && line.find(noise) != std::string::npos))
            continue;
        tail.push_back(line);
        if (tail.size() > lines)
            tail.pop_front();
    }
    std::string out;
    for (const auto& l : tail)
        out += (out.empty() ? "" : " | ") + l;
    return out.empty() ? "(no log)" : out;
}

ChildProcess::ChildProcess(const ChildLaunch& launch) {
    if (launch.argv.empty())
        throw std::invalid_argument("a child process needs a command");
    const std::string cannot_run = "cannot run " + launch.role + " '" + launch.argv[0] + "'";
    const auto program = find_program(launch.argv[0]);
    if (!program)
        throw_errno(ENOENT, cannot_run);
    // Everything the child needs is built before fork().
    const std::string program_path = program->string();
    std::vector<std::string> argv_strings = launch.argv;
    std::vector<std::string> env_strings = environment_with(launch.extra_env);
    const ChildExec exec{program_path, pointers_to(argv_strings), pointers_to(env_strings),
                         launch.working_dir.string(), launch.netns_fd};
    const ChildStreams streams = open_child_streams(launch);

    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int error = errno;
        close_all({streams.child_in, streams.child_out, streams.child_err, streams.parent_in,
                   streams.parent_out, streams.report[0], streams.report[1]});
        throw_errno(error, "fork");
    }
    if (pid == 0)
        exec_in_child(exec, streams, parent);
    // Also from the parent: a signal sent before the child ran setpgid must still find the group.
    ::setpgid(pid, pid);
    pid_ = pid;
    close_all({streams.child_in, streams.child_out, streams.child_err, streams.report[1]});
    stdin_fd_ = streams.parent_in;
    stdout_fd_ = streams.parent_out;
    if (const auto failure = read_child_failure(streams.report[0])) {
        wait();
        close_all({std::exchange(stdin_fd_, -1), std::exchange(stdout_fd_, -1)});
        throw_child_failure(*failure, exec.working_dir, cannot_run);
    }
}

ChildProcess::~ChildProcess() {
    close_all({stdin_fd_, stdout_fd_});
    kill_and_reap();
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      reaped_(std::exchange(other.reaped_, false)),
      paused_(std::exchange(other.paused_, false)),
      wait_status_(other.wait_status_),
      stdin_fd_(std::exchange(other.stdin_fd_, -1)),
      stdout_fd_(std::exchange(other.stdout_fd_, -1)) {}

ChildProcess& ChildProcess::operator=(ChildProcess&& other) noexcept {
    if (this != &other) {
        close_all({stdin_fd_, stdout_fd_});
        kill_and_reap();
        pid_ = std::exchange(other.pid_, -1);
        reaped_ = std::exchange(other.reaped_, false);
        paused_ = std::exchange(other.paused_, false);
        wait_status_ = other.wait_status_;
        stdin_fd_ = std::exchange(other.stdin_fd_, -1);
        stdout_fd_ = std::exchange(other.stdout_fd_, -1);
    }
    return *this;
}

void ChildProcess::reaped_with(int status) {
    reaped_ = true;
    paused_ = false;
    wait_status_ = status;
}

bool ChildProcess::alive() {
    if (!running())
        return false;
    int status = 0;
    const pid_t got = ::waitpid(pid_, &status, WNOHANG);
    if (got == pid_) {
        reaped_with(status);
    } else if (got < 0 && errno == ECHILD) {
        reaped_with(0);  // reaped by someone else: gone all the same
    }
    return !reaped_;
}

std::optional<char> ChildProcess::state() const {
    return running() ? process_state(pid_) : std::nullopt;
}

bool ChildProcess::signal(int signo) {
    if (!alive())
        return false;
    return ::kill(-pid_, signo) == 0 || ::kill(pid_, signo) == 0;
}

bool ChildProcess::pause() {
    if (!running() || paused_)
        return paused_;
    if (!signal(SIGSTOP))
        return false;
    paused_ = true;
    // SIGSTOP is delivered when the kernel gets to each of the process's threads.
    const auto deadline = std::chrono::steady_clock::now() + 1s;
    for (;;) {
        const auto now = state();
        if (now == 'T')
            return true;
        if (!now || std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(1ms);
    }
}

void ChildProcess::resume() {
    if (running() && paused_) {
        signal(SIGCONT);
        paused_ = false;
    }
}

bool ChildProcess::kill_and_reap() {
    if (pid_ <= 0)
        return false;
    if (!reaped_) {
        ::kill(-pid_, SIGKILL);
        ::kill(pid_, SIGKILL);  // in case the group was never formed
        wait();
    }
    // Reaped: the pid no longer names a process of ours (ESRCH), unless reused since.
    return ::kill(pid_, 0) != 0 && errno == ESRCH;
}

void ChildProcess::terminate(std::chrono::milliseconds grace) {
    if (!running())
        return;
    resume();
    signal(SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace;
    while (std::chrono::steady_clock::now() < deadline) {
        if (!alive())
            return;
        std::this_thread::sleep_for(5ms);
    }
    kill_and_reap();
}

int ChildProcess::wait() {
    if (!running())
        return wait_status_;
    int status = 0;
    pid_t got;
    while ((got = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    reaped_with(got == pid_ ? status : 0);
    return wait_status_;
}

int ChildProcess::take_stdin() {
    return std::exchange(stdin_fd_, -1);
}

int ChildProcess::take_stdout() {
    return std::exchange(stdout_fd_, -1);
}

std::optional<std::string> ChildProcess::exit_description() const {
    if (pid_ <= 0 || !reaped_)
        return std::nullopt;
    if (WIFEXITED(wait_status_))
        return "exited with status " + std::to_string(WEXITSTATUS(wait_status_));
    if (WIFSIGNALED(wait_status_))
        return std::string("was killed by signal ") + ::strsignal(WTERMSIG(wait_status_));
    return "exited";
}

}  // namespace lockbench
