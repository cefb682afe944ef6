// `lockbench demo` as a user meets it: what it says when Ctrl-C cuts its run short.

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

// An interrupted demo's story is of the part that ran: the demo says so above it, as run's
// report.txt does, not only in a line on stderr the story scrolls away.
TEST(DemoTest, AnInterruptedDemoSaysSoAboveItsStory) {
    testing::TempDir scratch;
    const fs::path dir = scratch.path() / "scenarios";
    fs::create_directories(dir);
    std::ofstream(dir / "long.json") << R"({"name": "long", "description": "Runs a minute.",
        "clients": 2, "keys": 1, "duration_s": 60, "expect": {"set_nx_px": "safe"}})";
    testing::Running demo =
        testing::start_lockbench(scratch, "demo long --dir '" + dir.string() + "' --out '" +
                                              (scratch.path() / "results").string() + "'");
    // The header and the description are printed as the run starts.
    ASSERT_TRUE(demo.wait_for_output("Runs a minute.\n\n"));
    ::kill(demo.pid, SIGINT);
    const testing::Cli r = demo.finish();
    EXPECT_EQ(r.code, 130) << r.err;
    const std::string header = "\nlockbench demo: long / set_nx_px  (INTERRUPTED after ";
    const std::size_t at = r.out.find(header);
    ASSERT_NE(at, std::string::npos) << r.out;
    EXPECT_NE(r.out.find(" of 60.0 s; the story is of the part that ran)\n", at), std::string::npos)
        << r.out;
    EXPECT_EQ(r.err, "lockbench: interrupted; the partial result is marked so\n");
}

}  // namespace
}  // namespace lockbench
