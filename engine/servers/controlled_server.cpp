#include "engine/servers/controlled_server.hpp"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include "engine/servers/redis_server.hpp"  // EnvironmentError, find_executable
#include "strategies/client/event_loop.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

using namespace std::chrono_literals;

namespace {

// "3.250" seconds, for sleep(1).
std::string seconds(std::chrono::milliseconds ms) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3f", static_cast<double>(ms.count()) / 1000.0);
    return buf;
}

// How long the host waits beyond a fault's own end before it undoes the fault itself: the normal
// path (lockbench's own resume) comes first.
constexpr auto kDeadMansMargin = 2s;

}  // namespace

std::string shell_quote(const std::string& text) {
    std::string out = "'";
    for (char c : text) {
        if (c == '\'')
            out += "'\\''";
        else
            out += c;
    }
    return out + "'";
}

namespace {

// The program and arguments that run `command` on the host: over ssh, in its network
// namespace, or in a local shell; with sudo when the host's control says so.
std::vector<std::string> host_command_args(const HostControl& control, const std::string& command) {
    const std::string shell_command =
        control.sudo ? "sudo -n sh -c " + shell_quote(command) : command;
    std::vector<std::string> args;
    if (control.kind == HostControl::Kind::Ssh) {
        args = {find_executable("ssh"),
                "-p",
                std::to_string(control.ssh_port),
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=5"};
        if (!control.identity.empty()) {
            std::string identity = control.identity;
            if (identity.rfind("~/", 0) == 0) {
                if (const char* home = std::getenv("HOME"))
                    identity = std::string(home) + identity.substr(1);
            }
            args.insert(args.end(), {"-i", identity});
        }
        for (const auto& o : control.ssh_options)
            args.insert(args.end(), {"-o", o});
        args.insert(args.end(), {control.ssh_target, "--", shell_command});
    } else if (!control.netns.empty()) {
        args = {find_executable("nsenter"), "--net=" + control.netns, "sh", "-c", shell_command};
    } else {
        args = {find_executable("sh"), "-c", shell_command};
    }
    return args;
}

// Starts argv[0] in a process group of its own, stdin from /dev/null, stdout and stderr into
// one pipe whose read end is left in out[0]; returns its pid.
pid_t start_with_output_on_pipe(const std::vector<char*>& argv, int (&out)[2]) {
    if (::pipe2(out, O_CLOEXEC) != 0)
        throw EnvironmentError(std::string("pipe: ") + std::strerror(errno));
    const pid_t pid = ::fork();
    if (pid < 0) {
        ::close(out[0]);
        ::close(out[1]);
        throw EnvironmentError(std::string("fork: ") + std::strerror(errno));
    }
    if (pid == 0) {
        int devnull = ::open("/dev/null", O_RDONLY);
        if (devnull >= 0)
            ::dup2(devnull, STDIN_FILENO);
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(out[1], STDERR_FILENO);
        ::setpgid(0, 0);  // a Ctrl-C at the terminal is lockbench's to handle
        ::execv(argv[0], argv.data());
        ::_exit(127);
    }
    ::close(out[1]);
    return pid;
}

// Reads `fd` into `output` until the writer closes it; false when `timeout` ran out first.
bool read_until_closed(int fd, std::chrono::milliseconds timeout, std::string& output) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    char buf[4096];
    for (;;) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
            deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0)
            return false;
        pollfd p{fd, POLLIN, 0};
        const int ready = ::poll(&p, 1, static_cast<int>(left.count()));
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready <= 0)
            continue;
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n > 0) {
            output.append(buf, static_cast<std::size_t>(n));
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        return true;  // end of output: the command is done (or has closed its output)
    }
}

}  // namespace

std::string run_on_host(const HostControl& control, const std::string& command,
                        std::chrono::milliseconds timeout) {
    std::vector<std::string> args = host_command_args(control, command);
    std::vector<char*> argv;
    for (auto& a : args)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    int out[2];
    const pid_t pid = start_with_output_on_pipe(argv, out);
    std::string output;
    const bool timed_out = !read_until_closed(out[0], timeout, output);
    ::close(out[0]);
    if (timed_out)
        ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    while (!output.empty() && (output.back() == '\n' || output.back() == '\r'))
        output.pop_back();
    if (timed_out) {
        throw EnvironmentError("on " + control.describe() + ": `" + command +
                               "` did not finish within " + std::to_string(timeout.count()) +
                               " ms");
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const std::string code =
            WIFEXITED(status) ? std::to_string(WEXITSTATUS(status)) : std::string("a signal");
        // ssh says 255 when it could not connect or authenticate at all.
        throw EnvironmentError("on " + control.describe() + ": `" + command + "` failed (exit " +
                               code + ")" + (output.empty() ? "" : ": " + output));
    }
    return output;
}

long long ControlledServer::pid() const {
    EventLoop loop;
    RedisConnection c(loop, node_.endpoint, {.connect_timeout = 2000ms, .command_timeout = 2000ms});
    std::string info;
    try {
        info = run_sync(loop, [](RedisConnection& conn) -> Task<std::string> {
            Reply r = co_await conn.command("INFO", "server");
            co_return r.is_string() ? r.as_string() : std::string();
        }(c));
    } catch (const RedisError& e) {
        throw EnvironmentError("node " + node_.name + " (" + node_.endpoint.to_string() +
                               ") did not say its process id: " + e.what());
    }
    const auto at = info.find("process_id:");
    if (at == std::string::npos)
        throw EnvironmentError("node " + node_.name + ": INFO server has no process_id");
    return std::stoll(info.substr(at + 11));
}

void ControlledServer::pause(std::chrono::milliseconds duration) {
    const long long p = pid();
    const std::string resume_later =
        "sleep " +
        seconds(duration + std::chrono::duration_cast<std::chrono::milliseconds>(kDeadMansMargin)) +
        "; kill -CONT " + std::to_string(p);
    run_on_host(*node_.control, "kill -STOP " + std::to_string(p) + " && (nohup sh -c " +
                                    shell_quote(resume_later) + " >/dev/null 2>&1 </dev/null &)");
    paused_pid_ = p;
}

void ControlledServer::resume() {
    if (paused_pid_ == 0)
        return;
    run_on_host(*node_.control, "kill -CONT " + std::to_string(paused_pid_));
    paused_pid_ = 0;
}

void ControlledServer::kill(std::optional<std::chrono::milliseconds> restart_after) {
    const long long p = pid();
    std::string command = "kill -9 " + std::to_string(p);
    if (restart_after) {
        // kill -9 only sends the signal: a restart at once (t4's restart_after_ms 0) could start
        // while the old server still held its port, fail to bind and never answer. The restart
        // waits for the old process to be gone (a zombie is: its sockets are closed), for 10 s at
        // most (a pid reused meanwhile must not hold it back for ever).
        const std::string old = std::to_string(p);
        const std::string gone = "i=0; while kill -0 " + old + " 2>/dev/null && ! grep -qs " +
                                 "'^State:[[:space:]]*Z' /proc/" + old +
                                 "/status && [ $i -lt 200 ]; do sleep 0.05; i=$((i+1)); done";
        command +=
            " && (nohup sh -c " +
            shell_quote("sleep " + seconds(*restart_after) + "; " + gone + "; " + node_.restart) +
            " >/dev/null 2>&1 </dev/null &)";
    }
    run_on_host(*node_.control, command);
}

std::string ControlledServer::isolation_rule() const {
    return "INPUT -p tcp --dport " + std::to_string(node_.endpoint.port) +
           " -m comment --comment " + isolation_tag_ + " -j DROP";
}

void ControlledServer::isolate(std::chrono::milliseconds duration) {
    // Each isolation's rule is its own: the host's dead-man deletion of an earlier one (still
    // sleeping out its margin) must not delete a later isolation of the same port early.
    static std::atomic<std::uint64_t> isolations{0};
    isolation_tag_ = "lockbench-" + std::to_string(::getpid()) + "-" + std::to_string(++isolations);
    const std::string rule = isolation_rule();
    const std::string end_later =
        "sleep " +
        seconds(duration + std::chrono::duration_cast<std::chrono::milliseconds>(kDeadMansMargin)) +
        "; iptables -w -D " + rule;
    run_on_host(*node_.control, "iptables -w -I " + rule + " && (nohup sh -c " +
                                    shell_quote(end_later) + " >/dev/null 2>&1 </dev/null &)");
    isolated_ = true;
}

void ControlledServer::end_isolation() {
    if (!isolated_)
        return;
    // The host may have deleted it already (its own deadline passed first): not an error.
    run_on_host(*node_.control, "iptables -w -D " + isolation_rule() + " 2>/dev/null || true");
    isolated_ = false;
}

bool ControlledServer::answers() const {
    EventLoop loop;
    RedisConnection c(loop, node_.endpoint, {.connect_timeout = 500ms, .command_timeout = 500ms});
    try {
        return run_sync(loop, [](RedisConnection& conn) -> Task<bool> {
            co_return (co_await conn.command("PING")).str == "PONG";
        }(c));
    } catch (const RedisError&) {
        return false;
    }
}

void ControlledServer::wait_until_answers(std::chrono::milliseconds timeout) const {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!answers()) {
        if (std::chrono::steady_clock::now() >= deadline) {
            throw EnvironmentError("node " + node_.name + " (" + node_.endpoint.to_string() +
                                   ") did not answer within " + std::to_string(timeout.count()) +
                                   " ms of its restart (`" + node_.restart + "`)");
        }
        std::this_thread::sleep_for(50ms);
    }
}

}  // namespace lockbench
