// The real `lockbench` binary on input that is out of range or unreadable: each is exit 2 and one
// line on stderr naming the flag or the file - never an internal error (exit 5), never a run with
// a value that overflowed a clock type. And a suite whose run errored never passes the gate.

#include <arpa/inet.h>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"
#include "engine/cli/user_input.hpp"
#include "engine/servers/redis_server.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

using testing::Cli;
using testing::lines;
using testing::lockbench;

fs::path write(const testing::TempDir& scratch, const std::string& name, const std::string& text) {
    const fs::path file = scratch.path() / name;
    fs::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << text;
    return file;
}

// Refused before anything starts: no server, no results folder.
TEST(CliInputTest, AbsurdMillisecondsAndCountsAreUsageErrorsNamingTheFlag) {
    testing::TempDir scratch;
    const std::string out = (scratch.path() / "results").string();
    for (const std::string flag :
         {"--hold-ms 1e300", "--think-ms -1", "--duration -1", "--duration 1e300",
          "--lease-ms 9223372036854775807", "--lease-ms -5", "--wait-ms 99999999999999",
          "--clients -5", "--clients 99999999999", "--keys 0", "--threads 100000", "--seed -1"}) {
        const Cli r = lockbench(scratch, "run --no-yardstick --out '" + out + "' " + flag);
        EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
        EXPECT_EQ(lines(r.err), 1u) << flag << ": " << r.err;
        const std::string name = flag.substr(0, flag.find(' '));
        EXPECT_NE(r.err.find(name), std::string::npos) << flag << ": " << r.err;
        EXPECT_FALSE(fs::exists(out)) << flag;
    }
    const fs::path history = write(scratch, "h.jsonl", "");
    for (const std::string flag : {"--starvation-bound-ms 9223372036854775807",
                                   "--liveness-bound-ms 0", "--time-limit 1e300"}) {
        const Cli r = lockbench(scratch, "check '" + history.string() + "' " + flag);
        EXPECT_EQ(r.code, 2) << flag << ": " << r.err;
        EXPECT_EQ(lines(r.err), 1u) << flag << ": " << r.err;
        EXPECT_NE(r.err.find(flag.substr(0, flag.find(' '))), std::string::npos) << r.err;
    }
}

TEST(CliInputTest, HelpShowsTheRangeOfEachBoundedFlag) {
    testing::TempDir scratch;
    const Cli r = lockbench(scratch, "run --help");
    EXPECT_EQ(r.code, 0);
    for (const std::string range : {"INT in [1 - 100000]", "INT in [0 - 86400000]",
                                    "FLOAT in [0 - 86400000]", "FLOAT in [0.01 - 86400]"})
        EXPECT_NE(r.out.find(range), std::string::npos) << range << "\n" << r.out;
}

TEST(CliInputTest, AnInventoryOrGateFileWithANumberNoDoubleHoldsIsBadInput) {
    testing::TempDir scratch;
    const fs::path inventory =
        write(scratch, "inv.json", "{\"nodes\": [\n  {\"host\": \"h\", \"port\": 1e400}]}");
    Cli r = lockbench(scratch, "run --no-yardstick --inventory '" + inventory.string() + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "lockbench: " + inventory.string() +
                         ": not valid JSON: at line 2, column 25: number overflow parsing "
                         "'1e400'\n");

    const fs::path baseline = write(scratch, "baseline.json", "{\"version\": 1e400}");
    const fs::path suite = write(scratch, "suite-x/suite.json",
                                 R"({"quick": true, "interrupted": false, "runs": []})");
    r = lockbench(scratch, "gate --baseline '" + baseline.string() + "' --current '" +
                               suite.parent_path().string() + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(r.err, "lockbench: " + baseline.string() +
                         ": not valid JSON: at line 1, column 13: number overflow parsing "
                         "'1e400'\n");
}

// What CI runs after the quick suite: a suite in which one run errored exits 1 with a FAILED row.
TEST(CliInputTest, TheGateFailsASuiteWithAFailedRunAndNamesIt) {
    testing::TempDir scratch;
    const std::string run = R"({"scenario": "baseline", "strategy": "set_nx_px", "faults": false,
        "cycles_per_s": 1000, "cycles_per_second": [1000, 1000, 1000], "duration_s": 3,
        "acquire_p99_ms": 0.5, "valid": true, "violation_kinds": [], "expected": "safe",
        "as_expected": true})";
    const fs::path whole = write(scratch, "whole/suite.json",
                                 R"({"quick": true, "interrupted": false, "runs": [)" + run +
                                     R"(, )" + run.substr(0, run.find("set_nx_px")) + R"(redlock)" +
                                     run.substr(run.find("set_nx_px") + 9) + "]}");
    const fs::path baseline = scratch.path() / "baseline.json";
    Cli r = lockbench(scratch, "gate --write-baseline '" + baseline.string() + "' --current '" +
                                   whole.parent_path().string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    ASSERT_EQ(lockbench(scratch, "gate --baseline '" + baseline.string() + "' --current '" +
                                     whole.parent_path().string() + "'")
                  .code,
              0);
    const fs::path broken = write(
        scratch, "broken/suite.json",
        R"({"quick": true, "interrupted": false, "runs": [)" + run +
            R"(], "failed": [{"scenario": "baseline", "strategy": "redlock", "error": "redis-server on 127.0.0.1:7001 died during the run", "exit_code": 4, "attempts": 1}]})");
    r = lockbench(scratch, "gate --baseline '" + baseline.string() + "' --current '" +
                               broken.parent_path().string() + "'");
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("FAILED: the run could not be done: redis-server on 127.0.0.1:7001 died "
                         "during the run (exit 4)"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.rfind("gate FAIL: 2 cells, 1 problem (1 FAILED)\n", 0), 0u) << r.out;
}

// A run's outcome in a suite.json the gate is handed, mistyped or missing, is bad input named by
// the file and its JSON path: never read as "unknown", which the gate would report as what the
// run did.
TEST(CliInputTest, TheGateNamesAMistypedOrMissingOutcomeByItsPath) {
    testing::TempDir scratch;
    const std::string head = R"({"quick": true, "interrupted": false, "runs": [{"scenario":
        "baseline", "strategy": "set_nx_px", "faults": false, "cycles_per_s": 1000,
        "cycles_per_second": [1000, 1000, 1000], "duration_s": 3, "acquire_p99_ms": 0.5,
        "expected": "safe", "as_expected": true)";
    const fs::path good =
        write(scratch, "good/suite.json", head + R"(, "valid": true, "violation_kinds": []}]})");
    const fs::path baseline = scratch.path() / "baseline.json";
    ASSERT_EQ(lockbench(scratch, "gate --write-baseline '" + baseline.string() + "' --current '" +
                                     good.parent_path().string() + "'")
                  .code,
              0);
    const std::vector<std::pair<std::string, std::string>> cases{
        {R"(, "valid": "yes", "violation_kinds": []}]})",
         "/runs/0/valid: must be true, false, \"unknown\" or \"not-applicable\", not \"yes\""},
        {R"(, "violation_kinds": []}]})", "/runs/0/valid: missing"},
        {R"(, "valid": false, "violation_kinds": [3]}]})",
         "/runs/0/violation_kinds/0: must be a string, not a number"}};
    for (std::size_t i = 0; i < cases.size(); ++i) {
        const auto& [tail, what] = cases[i];
        const fs::path current =
            write(scratch, "bad" + std::to_string(i) + "/suite.json", head + tail);
        const Cli r = lockbench(scratch, "gate --baseline '" + baseline.string() + "' --current '" +
                                             current.parent_path().string() + "'");
        EXPECT_EQ(r.code, 2) << tail << ": " << r.out << r.err;
        EXPECT_EQ(r.err, "lockbench: " + current.string() + ": " + what + "\n") << tail;
    }
}

// A misspelt subcommand is named, with the nearest there is; not "A subcommand is required".
TEST(CliInputTest, AnUnknownSubcommandIsNamedWithTheNearestOne) {
    testing::TempDir scratch;
    Cli r = lockbench(scratch, "chek h.jsonl");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err,
              "lockbench: unknown subcommand 'chek'; did you mean check? (see lockbench --help)\n");
    r = lockbench(scratch, "bogus");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(
        r.err.rfind("lockbench: unknown subcommand 'bogus'; the subcommands are strategies, ", 0),
        0u)
        << r.err;
    const std::string help = " (see lockbench --help)\n";
    EXPECT_EQ(r.err.substr(r.err.size() - help.size()), help) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    r = lockbench(scratch, "--verison");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err,
              "lockbench: there is no option --verison; did you mean --version? (see lockbench "
              "--help)\n");
}

// The help to read is the subcommand's, and an unknown option is named as one - also before a
// value that would otherwise be taken for the workload file.
TEST(CliInputTest, AnUnknownOptionIsNamedWithTheSubcommandsHelp) {
    testing::TempDir scratch;
    const std::string out = " --out '" + (scratch.path() / "results").string() + "'";
    for (const auto& [args, message] : std::vector<std::pair<std::string, std::string>>{
             {"run --bogus", "lockbench: run has no option --bogus (see lockbench run --help)\n"},
             {"run --rate-limit 5",
              "lockbench: run has no option --rate-limit; did you mean --rate? (see lockbench "
              "run --help)\n"},
             {"run --clinets 4",
              "lockbench: run has no option --clinets; did you mean --clients? (see lockbench "
              "run --help)\n"},
             {"run --clients 0",
              "lockbench: --clients: must be between 1 and 100000, not 0 (see lockbench run "
              "--help)\n"},
             {"run --resource bogus --no-yardstick",
              "lockbench: --resource: must be one of none|counter|fenced, not \"bogus\"\n"},
             {"run no-such-workload.json --no-yardstick",
              "lockbench: no-such-workload.json: cannot open\n"},
         }) {
        const Cli r = lockbench(scratch, args + out);
        EXPECT_EQ(r.code, 2) << args << ": " << r.err;
        EXPECT_EQ(r.err, message) << args;
        EXPECT_FALSE(fs::exists(scratch.path() / "results")) << args;
    }
}

// `demo t1` means t1-holder-paused: the names that continue it, not every name that begins so.
TEST(CliInputTest, AnUnknownScenarioSuggestsTheNearestNames) {
    testing::TempDir scratch;
    const fs::path dir = scratch.path() / "scenarios";
    for (const char* name : {"baseline", "t1-holder-paused", "t10-process-pause", "t8-late-unlock"})
        write(scratch, std::string("scenarios/") + name + ".json", "{}");
    for (const auto& [name, suggestion] : std::vector<std::pair<std::string, std::string>>{
             {"t1", "; did you mean t1-holder-paused?"},
             {"t1-holder", "; did you mean t1-holder-paused?"},
             {"basline", "; did you mean baseline?"},
             {"nothing-like-it", ""},
         }) {
        // --no-yardstick as run takes it: accepted, not an unknown option.
        const Cli r =
            lockbench(scratch, "demo " + name + " --no-yardstick --dir '" + dir.string() + "'");
        EXPECT_EQ(r.code, 2) << name;
        EXPECT_EQ(r.err, "lockbench: demo: no scenario named " + name + " in " + dir.string() +
                             suggestion + " (see lockbench scenarios)\n")
            << name;
    }
}

// The strategy a demonstration shows by default: the first its scenario's expectation says it
// breaks (violates or deadlocks), set_nx_px ahead of the others; else the first it names.
TEST(CliInputTest, ADemoShowsTheFirstStrategyItsScenarioBreaks) {
    testing::TempDir scratch;
    const fs::path dir = scratch.path() / "scenarios";
    const std::string out = (scratch.path() / "results").string();
    for (
        const auto& [expect, shown] : std::vector<std::pair<std::string, std::string>>{
            {R"({"fenced": "safe", "set_nx_px": "safe", "set_nx_px_del": "deadlocks"})",
             "set_nx_px_del"},
            {R"({"fenced": "violates:mutual_exclusion", "set_nx_px": "violates:fencing|resource"})",
             "set_nx_px"},
            {R"({"fenced": "safe:liveness", "set_nx_px": "safe"})", "fenced"},
        }) {
        write(scratch, "scenarios/s.json",
              R"({"name": "s", "duration_s": 0.1, "expect": )" + expect + "}");
        // An unreachable --redis: the demo names its choice, then stops before anything runs.
        const Cli r = lockbench(
            scratch, "demo s --dir '" + dir.string() + "' --redis 127.0.0.1:1 --out '" + out + "'");
        EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "lockbench demo: s / " + shown) << expect;
        EXPECT_EQ(r.code, 4) << expect << ": " << r.err;
        EXPECT_FALSE(fs::exists(out) && !fs::is_empty(out)) << expect;
    }
}

// A scenario whose every lock breaks names the one its story is about: t10 breaks set_nx_px too,
// but its point is reentrant_hash's watchdog paused with its holder.
TEST(CliInputTest, ADemoShowsTheStrategyItsScenarioIsAbout) {
    testing::TempDir scratch;
    const fs::path dir = scratch.path() / "scenarios";
    const std::string out = (scratch.path() / "results").string();
    write(scratch, "scenarios/s.json",
          R"({"name": "s", "duration_s": 0.1, "demo_strategy": "reentrant_hash", "expect": {)"
          R"("set_nx_px": "violates:mutual_exclusion", "reentrant_hash": "violates:resource"}})");
    Cli r = lockbench(
        scratch, "demo s --dir '" + dir.string() + "' --redis 127.0.0.1:1 --out '" + out + "'");
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')), "lockbench demo: s / reentrant_hash");
    EXPECT_EQ(r.code, 4) << r.err;

    // The shipped t10 says so.
    r = lockbench(scratch, "demo t10-process-pause --dir '" + std::string(LOCKBENCH_WORKLOADS_DIR) +
                               "' --redis 127.0.0.1:1 --out '" + out + "'");
    EXPECT_EQ(r.out.substr(0, r.out.find('\n')),
              "lockbench demo: t10-process-pause / reentrant_hash");
    EXPECT_EQ(r.code, 4) << r.err;

    // One the scenario does not name is a mistake in the file.
    write(scratch, "scenarios/s.json",
          R"({"name": "s", "demo_strategy": "fenced", "expect": {"set_nx_px": "safe"}})");
    r = lockbench(scratch, "demo s --dir '" + dir.string() + "'");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.err, "lockbench: " + (dir / "s.json").string() +
                         ": /demo_strategy: must be one of the strategies `expect` names\n");
}

TEST(CliInputTest, NearestNamesAndTheDefaultRedisPort) {
    EXPECT_EQ(cli::nearest_names("t5", {"t5-failover", "t50", "t5-sentinel"}),
              (std::vector<std::string>{"t5-failover", "t5-sentinel"}));
    EXPECT_EQ(cli::nearest_names("zzz", {"run", "demo"}), std::vector<std::string>{});
    EXPECT_EQ(cli::either({"a", "b", "c"}), "a, b or c");
    // As redis-cli takes it: a host alone is port 6379.
    EXPECT_EQ(cli::with_redis_port("127.0.0.1"), "127.0.0.1:6379");
    EXPECT_EQ(cli::with_redis_port("[::1]"), "[::1]:6379");
    EXPECT_EQ(cli::with_redis_port("10.0.0.5:7000"), "10.0.0.5:7000");
    EXPECT_EQ(cli::with_redis_port("[::1]:7000"), "[::1]:7000");
}

// A port where something else listens (ssh here) says what answered, not just "protocol error".
TEST(CliInputTest, APortThatIsNotRedisSaysWhatAnswered) {
    const int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    ASSERT_GE(listener, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    ASSERT_EQ(::listen(listener, 8), 0);
    socklen_t length = sizeof address;
    ASSERT_EQ(::getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
    const int port = ntohs(address.sin_port);
    std::thread ssh([listener] {
        for (;;) {
            const int c = ::accept(listener, nullptr, nullptr);
            if (c < 0)
                return;  // the test shut the listener down
            const std::string banner = "SSH-2.0-OpenSSH_9.2p1 Debian-2+deb12u3\r\n";
            [[maybe_unused]] const auto sent = ::send(c, banner.data(), banner.size(), 0);
            char buf[256];
            while (::recv(c, buf, sizeof buf, 0) > 0) {
            }
            ::close(c);
        }
    });
    testing::TempDir scratch;
    const std::string endpoint = "127.0.0.1:" + std::to_string(port);
    const Cli r = lockbench(scratch, "run --no-yardstick --duration 0.1 --redis " + endpoint +
                                         " --out '" + (scratch.path() / "results").string() + "'");
    ::shutdown(listener, SHUT_RDWR);
    ssh.join();
    ::close(listener);
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(r.err, "lockbench: cannot reach Redis at " + endpoint + ": " + endpoint +
                         " did not answer like Redis (got 'SSH-2.0-OpenSSH_9.2p1 "
                         "Debian-2+deb12u3'): protocol error: is this a Redis server?\n");
}

// The password: on the command line (every local user sees it in ps), in a file, or in the
// environment as redis-cli's REDISCLI_AUTH; a refused or missing one names the ways to give it.
TEST(CliInputTest, TheRedisPasswordComesFromAFileOrTheEnvironmentAndARefusalSaysHow) {
    RedisServer server({.password = "s3cret"});
    testing::TempDir scratch;
    const std::string endpoint = "127.0.0.1:" + std::to_string(server.port());
    const std::string run =
        "run --no-yardstick --strategy set_nx_px --clients 1 --duration 0.2 "
        "--redis " +
        endpoint + " --out '" + (scratch.path() / "results").string() + "'";
    ::unsetenv("LOCKBENCH_REDIS_PASSWORD");
    Cli r = lockbench(scratch, run);
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_EQ(r.err, "lockbench: cannot reach Redis at " + endpoint +
                         ": NOAUTH Authentication required. (it wants a password: "
                         "--password-file FILE, LOCKBENCH_REDIS_PASSWORD or --password)\n");
    r = lockbench(scratch, run + " --password wrong");
    EXPECT_EQ(r.code, 4) << r.out << r.err;
    EXPECT_NE(r.err.find("WRONGPASS"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.substr(r.err.find(" (the password")),
              " (the password given with --password, --password-file or "
              "LOCKBENCH_REDIS_PASSWORD was refused)\n")
        << r.err;

    const fs::path file = write(scratch, "password", "s3cret\n");
    r = lockbench(scratch, run + " --password-file '" + file.string() + "'");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    r = lockbench(scratch, run + " --password-file '" + file.string() + "' --password s3cret");
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(r.err, "lockbench: --password excludes --password-file (see lockbench run --help)\n");
    r = lockbench(scratch, run + " --password-file '" + (scratch.path() / "none").string() + "'");
    EXPECT_EQ(r.code, 2) << r.out << r.err;
    EXPECT_EQ(r.err, "lockbench: --password-file: cannot read " +
                         (scratch.path() / "none").string() + "\n");

    ::setenv("LOCKBENCH_REDIS_PASSWORD", "s3cret", 1);
    r = lockbench(scratch, run);
    ::unsetenv("LOCKBENCH_REDIS_PASSWORD");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
}

}  // namespace
}  // namespace lockbench
