#pragma once

// The real `lockbench` binary run from a test, its output captured: what a user would see.
// Tests that include this are compiled with LOCKBENCH_BINARY naming the binary.

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <utility>

#include "checker/testing/temp_dir.hpp"

namespace lockbench::testing {

struct Cli {
    int code = -1;
    std::string out, err;
};

// How many lines `text` has: a bad input is one line on stderr.
inline std::size_t lines(const std::string& text) {
    std::size_t n = 0;
    for (char c : text)
        n += c == '\n';
    return n;
}

// `lockbench ARGS` (ARGS as a shell would split them), with stdout and stderr captured in
// `scratch` and nothing on stdin; `prefix` is shell text put before it (`NAME=value` for it alone,
// `ulimit -n 64;`).
inline Cli lockbench(const TempDir& scratch, const std::string& args,
                     const std::string& prefix = "") {
    const std::filesystem::path out = scratch.path() / "stdout.txt";
    const std::filesystem::path err = scratch.path() / "stderr.txt";
    const std::string command = prefix + " '" + std::string(LOCKBENCH_BINARY) + "' " + args +
                                " >'" + out.string() + "' 2>'" + err.string() + "' </dev/null";
    const int status = std::system(command.c_str());
    Cli r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
}

// `lockbench ARGS` started in the background, its output going to files in `scratch`: for a test
// that acts on it while it runs (a Ctrl-C), then collects it with finish().
struct Running {
    pid_t pid = -1;
    std::filesystem::path out, err;

    // Waits (at most `limit`) until stdout or stderr holds `text`: the state a test acts in.
    bool wait_for_output(const std::string& text,
                         std::chrono::seconds limit = std::chrono::seconds(60)) const {
        const auto until = std::chrono::steady_clock::now() + limit;
        while (std::chrono::steady_clock::now() < until) {
            if (read_file(out).find(text) != std::string::npos ||
                read_file(err).find(text) != std::string::npos)
                return true;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        return false;
    }
    // Waits for the exit; a process still there after a failed assertion is killed here.
    Cli finish() {
        int status = 0;
        ::waitpid(pid, &status, 0);
        pid = -1;
        Cli r;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = read_file(out);
        r.err = read_file(err);
        return r;
    }
    Running() = default;
    Running(Running&& other) noexcept
        : pid(std::exchange(other.pid, -1)), out(std::move(other.out)), err(std::move(other.err)) {}
    Running(const Running&) = delete;
    Running& operator=(const Running&) = delete;
    Running& operator=(Running&&) = delete;
    // SIGTERM, not SIGKILL: lockbench then stops the servers it started.
    ~Running() {
        if (pid > 0) {
            ::kill(pid, SIGTERM);
            ::waitpid(pid, nullptr, 0);
        }
    }
};

inline Running start_lockbench(const TempDir& scratch, const std::string& args) {
    Running r;
    r.out = scratch.path() / "stdout.txt";
    r.err = scratch.path() / "stderr.txt";
    const std::string command = "exec '" + std::string(LOCKBENCH_BINARY) + "' " + args + " >'" +
                                r.out.string() + "' 2>'" + r.err.string() + "' </dev/null";
    r.pid = ::fork();
    if (r.pid == 0) {
        ::execl("/bin/sh", "sh", "-c", command.c_str(), static_cast<char*>(nullptr));
        ::_exit(127);
    }
    return r;
}

}  // namespace lockbench::testing
