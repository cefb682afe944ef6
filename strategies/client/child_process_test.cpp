// The one child-process class every server and adapter runs on: what it starts the child with
// (argv, environment, working dir, streams), its process group, SIGSTOP seen as state T and
// SIGCONT undoing it, SIGKILL reaped, SIGTERM bounded by a grace, PR_SET_PDEATHSIG when lockbench
// dies, and a program that cannot run refused with one clear error.

#include "strategies/client/child_process.hpp"

#include <chrono>
#include <csignal>
#include <cstring>
#include <fstream>
#include <sstream>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::TempDir;

// Everything on `fd` until its writers close it; closes it.
std::string read_all(int fd) {
    std::string out;
    char buf[512];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    ::close(fd);
    return out;
}

// One line from `fd` (the child saying it is ready), without closing it.
std::string read_line(int fd) {
    std::string line;
    char c = 0;
    while (::read(fd, &c, 1) == 1 && c != '\n')
        line += c;
    return line;
}

std::string file_text(const fs::path& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// Polls /proc until the process's state is (or, with `until_not`, is no longer) `wanted`;
// the state seen last.
std::optional<char> wait_for_state(const ChildProcess& child, char wanted, bool until_not) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    std::optional<char> state = child.state();
    while ((state == wanted) == until_not && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(1ms);
        state = child.state();
    }
    return state;
}

ChildLaunch sleeper() {
    return ChildLaunch{.argv = {"sleep", "30"}};
}

TEST(ChildProcessTest, StartsWithItsArgvEnvironmentAndWorkingDir) {
    TempDir dir;
    ChildProcess child(
        ChildLaunch{.argv = {"sh", "-c", "echo \"$0 $LOCKBENCH_CHILD_TEST\"; pwd", "zero"},
                    .extra_env = {"LOCKBENCH_CHILD_TEST=from the launch"},
                    .working_dir = dir.path(),
                    .stdout_to = ChildStream::Pipe});
    const std::string out = read_all(child.take_stdout());
    EXPECT_EQ(child.wait(), 0);
    EXPECT_EQ(out, "zero from the launch\n" + fs::canonical(dir.path()).string() + "\n");
    EXPECT_FALSE(child.running());
    EXPECT_EQ(child.exit_description(), "exited with status 0");
}

TEST(ChildProcessTest, WritesStdoutAndStderrToItsLogAndReadsStdinFromAPipe) {
    TempDir dir;
    const fs::path log = dir.path() / "child.log";
    ChildProcess child(
        ChildLaunch{.argv = {"sh", "-c", "read line; echo \"out $line\"; echo err >&2"},
                    .stdin_from = ChildStream::Pipe,
                    .stdout_to = ChildStream::Log,
                    .stderr_to = ChildStream::Log,
                    .log = log});
    const int in = child.take_stdin();
    ASSERT_EQ(::write(in, "hello\n", 6), 6);
    ::close(in);
    EXPECT_EQ(child.wait(), 0);
    EXPECT_EQ(file_text(log), "out hello\nerr\n");
    EXPECT_EQ(log_tail(log, 1), "err");
    EXPECT_EQ(log_tail(log, 5), "out hello | err");
    EXPECT_EQ(log_tail(log, 5, "hello"), "err");
    EXPECT_EQ(log_tail(dir.path() / "none.log", 5), "(no log)");
}

TEST(ChildProcessTest, RunsInAProcessGroupOfItsOwn) {
    ChildProcess child(sleeper());
    EXPECT_EQ(::getpgid(child.pid()), child.pid());
    EXPECT_NE(::getpgid(child.pid()), ::getpgrp());
}

TEST(ChildProcessTest, PauseIsSeenAsStateTAndResumeEndsIt) {
    ChildProcess child(sleeper());
    ASSERT_TRUE(child.pause());
    EXPECT_TRUE(child.paused());
    EXPECT_EQ(child.state(), 'T');
    EXPECT_EQ(process_state(child.pid()), 'T');
    child.resume();
    EXPECT_FALSE(child.paused());
    // Running again: it wakes ('R') and goes back to its sleep ('S').
    EXPECT_EQ(wait_for_state(child, 'S', /*until_not=*/false), 'S');
    EXPECT_TRUE(child.alive());
}

// The states of every thread of the process, as /proc lists them.
std::string thread_states(pid_t pid) {
    std::string states;
    std::error_code error;
    for (const auto& task :
         fs::directory_iterator("/proc/" + std::to_string(pid) + "/task", error)) {
        const std::string stat = file_text(task.path() / "stat");
        if (const auto close = stat.rfind(") ");
            close != std::string::npos && close + 2 < stat.size())
            states += stat[close + 2];
    }
    return states;
}

// A server's other threads keep serving until they stop too: a paused process has none running.
TEST(ChildProcessTest, PauseReturnsOnlyOnceEveryThreadHasStopped) {
    for (int round = 0; round < 5; ++round) {
        ChildProcess child(
            ChildLaunch{.argv = {"python3", "-c",
                                 "import threading\n"
                                 "def spin():\n    while True: pass\n"
                                 "for _ in range(6): threading.Thread(target=spin).start()\n"
                                 "spin()\n"}});
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while (thread_states(child.pid()).size() < 7 && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(1ms);
        ASSERT_EQ(thread_states(child.pid()).size(), 7u);
        ASSERT_TRUE(child.pause());
        EXPECT_EQ(thread_states(child.pid()), "TTTTTTT") << "round " << round;
        EXPECT_EQ(child.state(), 'T');
    }
}

TEST(ChildProcessTest, KillReapsTheProcess) {
    ChildProcess child(sleeper());
    ASSERT_TRUE(child.pause());  // a stopped process dies of SIGKILL all the same
    const pid_t pid = child.pid();
    EXPECT_TRUE(child.kill_and_reap());
    EXPECT_FALSE(child.running());
    EXPECT_FALSE(child.alive());
    EXPECT_FALSE(child.paused());
    EXPECT_EQ(child.pid(), pid);
    EXPECT_FALSE(process_state(pid).has_value());
    EXPECT_EQ(child.exit_description(), "was killed by signal Killed");
    EXPECT_FALSE(child.signal(SIGCONT));  // never a signal to a pid that may be reused
}

TEST(ChildProcessTest, AliveReapsAChildThatExited) {
    ChildProcess child(ChildLaunch{.argv = {"sh", "-c", "exit 3"}});
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (child.alive() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(1ms);
    EXPECT_FALSE(child.running());
    EXPECT_FALSE(process_state(child.pid()).has_value());  // reaped, not a zombie
    EXPECT_EQ(child.exit_description(), "exited with status 3");
}

TEST(ChildProcessTest, TerminateEndsAPausedChildWithSigterm) {
    ChildProcess child(sleeper());
    ASSERT_TRUE(child.pause());
    child.terminate(5s);
    EXPECT_FALSE(child.running());
    EXPECT_EQ(child.exit_description(), "was killed by signal Terminated");
}

TEST(ChildProcessTest, TerminateKillsAChildThatIgnoresSigtermAfterTheGrace) {
    ChildProcess child(
        ChildLaunch{.argv = {"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 1; done"},
                    .stdout_to = ChildStream::Pipe});
    const int out = child.take_stdout();
    ASSERT_EQ(read_line(out), "ready");
    ::close(out);
    child.terminate(100ms);
    EXPECT_FALSE(child.running());
    EXPECT_EQ(child.exit_description(), "was killed by signal Killed");
}

TEST(ChildProcessTest, DestructorLeavesNoProcess) {
    pid_t pid = -1;
    {
        ChildProcess child(sleeper());
        pid = child.pid();
        ASSERT_TRUE(process_state(pid).has_value());
    }
    EXPECT_FALSE(process_state(pid).has_value());
}

// lockbench dies without cleaning up (SIGKILL, a crash): the kernel kills its children. A
// reaper process stands in for init, so that the orphan's end is seen exactly.
TEST(ChildProcessTest, AChildDiesWithLockbench) {
    int report[2];
    ASSERT_EQ(::pipe(report), 0);
    const pid_t reaper = ::fork();
    ASSERT_GE(reaper, 0);
    if (reaper == 0) {
        ::close(report[0]);
        ::prctl(PR_SET_CHILD_SUBREAPER, 1);
        int to_reaper[2];
        if (::pipe(to_reaper) != 0)
            ::_exit(10);
        const pid_t lockbench = ::fork();
        if (lockbench == 0) {
            // "lockbench": starts a child and dies at once, destructors unrun.
            pid_t grandchild = -1;
            try {
                grandchild = (new ChildProcess(sleeper()))->pid();
            } catch (...) {
                ::_exit(13);
            }
            [[maybe_unused]] auto n = ::write(to_reaper[1], &grandchild, sizeof grandchild);
            ::_exit(0);
        }
        ::close(to_reaper[1]);
        pid_t grandchild = -1;
        if (::read(to_reaper[0], &grandchild, sizeof grandchild) != sizeof grandchild)
            ::_exit(11);
        ::waitpid(lockbench, nullptr, 0);
        int status = 0;
        if (::waitpid(grandchild, &status, 0) != grandchild)
            ::_exit(12);
        [[maybe_unused]] auto n = ::write(report[1], &status, sizeof status);
        ::_exit(0);
    }
    ::close(report[1]);
    int status = 0;
    const std::string said = read_all(report[0]);
    int reaper_status = 0;
    ASSERT_EQ(::waitpid(reaper, &reaper_status, 0), reaper);
    ASSERT_TRUE(WIFEXITED(reaper_status));
    ASSERT_EQ(WEXITSTATUS(reaper_status), 0);
    ASSERT_EQ(said.size(), sizeof status);
    std::memcpy(&status, said.data(), sizeof status);
    ASSERT_TRUE(WIFSIGNALED(status));
    EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

TEST(ChildProcessTest, AMissingProgramIsOneClearError) {
    try {
        ChildProcess child(ChildLaunch{.argv = {"lockbench-no-such-program"}, .role = "adapter"});
        FAIL() << "a program that is not there was started";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), ENOENT);
        EXPECT_STREQ(e.what(),
                     "cannot run adapter 'lockbench-no-such-program': No such file or directory");
    }
}

TEST(ChildProcessTest, AProgramThatExecCannotRunIsAnErrorNotAnExit) {
    TempDir dir;
    const fs::path script = dir.path() / "script";
    std::ofstream(script) << "#!/lockbench/no/such/interpreter\n";
    fs::permissions(script, fs::perms::owner_all);
    try {
        ChildProcess child(ChildLaunch{.argv = {script.string()}});
        FAIL() << "a script with a missing interpreter was started";
    } catch (const std::system_error& e) {
        EXPECT_EQ(e.code().value(), ENOENT);
        EXPECT_EQ(std::string(e.what()),
                  "cannot run program '" + script.string() + "': No such file or directory");
    }
}

TEST(ChildProcessTest, AMissingWorkingDirIsAnError) {
    try {
        ChildProcess child(ChildLaunch{.argv = {"true"}, .working_dir = "/lockbench/no/such/dir"});
        FAIL() << "a child was started in a folder that is not there";
    } catch (const std::system_error& e) {
        EXPECT_STREQ(e.what(), "cannot enter /lockbench/no/such/dir: No such file or directory");
    }
}

}  // namespace
}  // namespace lockbench
