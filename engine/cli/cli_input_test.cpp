// The real `lockbench` binary on input that is out of range or unreadable: each is exit 2 and one
// line on stderr naming the flag or the file - never an internal error (exit 5), never a run with
// a value that overflowed a clock type. And a suite whose run errored never passes the gate.

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

using testing::Cli;
using testing::lockbench;

std::size_t lines(const std::string& text) {
    std::size_t n = 0;
    for (char c : text)
        n += c == '\n';
    return n;
}

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

}  // namespace
}  // namespace lockbench
