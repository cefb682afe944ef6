// `lockbench scenarios` as a user sees it: the real binary, its width from COLUMNS, or 80 when
// its output is not a terminal.

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/cli/cli_testing.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using testing::lockbench;
using testing::TempDir;

// COLUMNS for the binary this test starts, as the shell would pass it; unset again afterwards.
class Columns {
  public:
    explicit Columns(const char* value) {
        if (value)
            ::setenv("COLUMNS", value, 1);
        else
            ::unsetenv("COLUMNS");
    }
    ~Columns() { ::unsetenv("COLUMNS"); }
};

fs::path one_scenario(const TempDir& t) {
    const fs::path dir = t.path() / "scenarios";
    fs::create_directories(dir);
    std::ofstream(dir / "pause.json") << R"({
        "name": "pause",
        "summary": "The holder pauses past its lease just before its write.",
        "expect": {
            "set_nx_px": "violates:mutual_exclusion,violates:resource,safe:linearizability",
            "fenced": "violates:mutual_exclusion,violates:resource",
            "reentrant_hash": "safe",
            "rwlock": "safe",
            "rwlock_seed": "safe",
            "set_nx_px_del": "violates:mutual_exclusion,violates:resource"
        }})";
    return dir;
}

TEST(ScenariosCliTest, WrapsToColumns) {
    TempDir t;
    const fs::path dir = one_scenario(t);
    Columns columns("40");
    const auto r = lockbench(t, "scenarios --dir '" + dir.string() + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_EQ(r.out,
              "pause\n"
              "  The holder pauses past its lease just\n"
              "  before its write.\n"
              "  violates mutual_exclusion+resource:\n"
              "    fenced, set_nx_px, set_nx_px_del ·\n"
              "    safe: reentrant_hash, rwlock,\n"
              "    rwlock_seed\n");
}

TEST(ScenariosCliTest, IsEightyColumnsWideWhenNotOnATerminal) {
    TempDir t;
    const fs::path dir = one_scenario(t);
    Columns columns(nullptr);
    const auto r = lockbench(t, "scenarios --dir '" + dir.string() + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.out,
              "pause\n"
              "  The holder pauses past its lease just before its write.\n"
              "  violates mutual_exclusion+resource: fenced, set_nx_px, set_nx_px_del · safe:\n"
              "    reentrant_hash, rwlock, rwlock_seed\n");
    const auto verbose = lockbench(t, "scenarios --verbose --dir '" + dir.string() + "'");
    EXPECT_EQ(verbose.out,
              "pause\n"
              "  The holder pauses past its lease just before its write.\n"
              "  fenced: violates:mutual_exclusion, violates:resource\n"
              "  reentrant_hash: safe\n"
              "  rwlock: safe\n"
              "  rwlock_seed: safe\n"
              "  set_nx_px: violates:mutual_exclusion, violates:resource, safe:linearizability\n"
              "  set_nx_px_del: violates:mutual_exclusion, violates:resource\n");
}

// Every shipped scenario, in a narrow terminal: a name line, a summary, no line too wide.
TEST(ScenariosCliTest, EveryShippedScenarioFitsANarrowTerminal) {
    TempDir t;
    Columns columns("50");
    const auto r = lockbench(t, "scenarios");
    ASSERT_EQ(r.code, 0) << r.err;
    std::istringstream lines(r.out);
    std::size_t scenarios = 0;
    bool block_start = true;
    for (std::string line; std::getline(lines, line);) {
        std::size_t width = 0;
        for (unsigned char c : line)
            width += (c & 0xC0) != 0x80;
        EXPECT_LE(width, 50u) << line;
        if (line.empty()) {
            block_start = true;
            continue;
        }
        if (block_start) {
            ++scenarios;
            EXPECT_NE(line[0], ' ') << line;
            EXPECT_TRUE(fs::exists(fs::path(LOCKBENCH_WORKLOADS_DIR) / (line + ".json"))) << line;
        }
        block_start = false;
    }
    std::size_t files = 0;
    for (const auto& entry : fs::directory_iterator(LOCKBENCH_WORKLOADS_DIR))
        files += entry.path().extension() == ".json";
    EXPECT_EQ(scenarios, files);
}

TEST(ScenariosCliTest, AScenarioNamingALockLibraryThisMachineLacksIsListed) {
    TempDir t;
    const fs::path dir = t.path() / "scenarios";
    fs::create_directories(dir);
    std::ofstream(dir / "lib.json") << R"({"name": "lib", "summary": "A library's lock.",
        "expect": {"set_nx_px": "safe", "command:/nonexistent/runtime adapter.py": "safe"}})";
    const auto r = lockbench(t, "scenarios --dir '" + dir.string() + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("command:/nonexistent/runtime adapter.py"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace lockbench
