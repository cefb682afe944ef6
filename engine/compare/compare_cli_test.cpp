// `lockbench compare` and `run --repeat` on bad input, through the real binary: each is exit 2
// and one line on stderr naming what is wrong, refused before any run starts - no server, no
// results folder.

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

using testing::Cli, testing::lines, testing::lockbench;

// t1 without its expectations: a shipped scenario's expectations name the lock libraries, and
// loading it asks each adapter whether it can run (seconds each time).
const char* kT1Like = R"({"name": "t1-like", "clients": 6, "keys": 1, "hold_ms": 2,
  "lease_ms": 300, "wait_ms": 500, "duration_s": 2.5, "seed": 11,
  "faults": [{"fault": "pause-client", "target": "holder", "key": "k0", "at_s": 0.5,
              "duration_ms": 1000, "scope": "worker"}]})";

TEST(CompareCliTest, BadInputIsOneLineAndExitTwoNamingIt) {
    testing::TempDir scratch;
    const std::string out = (scratch.path() / "results").string();
    const fs::path t1 = scratch.path() / "t1-like.json";
    std::ofstream(t1) << kT1Like;
    struct Case {
        std::string args;
        std::string says;
    };
    for (const Case& c : {
             Case{"compare t1-holder-paused --strategy set_nx_px,no_such_lock",
                  "--strategy no_such_lock: unknown 'no_such_lock'"},
             Case{"compare T1 --strategy set_nx_px,set_nx_px", "twice"},
             Case{"compare T1 --strategy set_nx_px,", "an empty strategy name"},
             Case{"compare T1 --strategy set_nx_px --repeat 0", "--repeat"},
             Case{"compare no-such-scenario --strategy set_nx_px", "'no-such-scenario'"},
             Case{"compare T1 --strategy set_nx_px --sweep lease=300,1000",
                  "--sweep lease: no such field"},
             Case{"compare T1 --strategy set_nx_px --sweep resource=1,2",
                  "--sweep resource: not a numeric field"},
             Case{"compare T1 --strategy set_nx_px --sweep lease_ms=300,x", "'x' is not a number"},
             Case{"compare T1 --strategy set_nx_px --sweep lease_ms",
                  "--sweep lease_ms: write FIELD=v1,v2"},
             Case{"compare T1 --strategy set_nx_px --sweep lease_ms=0,300",
                  "--sweep lease_ms=0: /lease_ms: must be between 1"},
             Case{"compare T1 --strategy set_nx_px --sweep lease_ms=1,2 "
                  "--sweep hold_ms=1,2 --sweep wait_ms=1,2",
                  "--sweep: at most two"},
             Case{"compare T1 --strategy set_nx_px --sweep faults[1].at_s=1,2",
                  "--sweep faults[1].at_s: no such field"},
             // A setting the faults refuse: a pause after the run's end could never fire.
             Case{"compare T1 --strategy set_nx_px --sweep at_s=1,99",
                  "--strategy set_nx_px at at_s=99: "},
             Case{"run --no-yardstick --strategy set_nx_px --repeat 0", "--repeat"},
             Case{"run --no-yardstick --strategy set_nx_px --repeat 2 --clients-ramp 1,2",
                  "--clients-ramp"},
             Case{"run --no-yardstick --strategy nope --repeat 2", "unknown 'nope'"},
         }) {
        std::string args = c.args;
        if (const auto at = args.find(" T1 "); at != std::string::npos)
            args.replace(at, 4, " '" + t1.string() + "' ");
        const Cli r = lockbench(scratch, args + " --out '" + out + "'");
        EXPECT_EQ(r.code, 2) << c.args << ": " << r.err;
        EXPECT_EQ(lines(r.err), 1u) << c.args << ": " << r.err;
        EXPECT_NE(r.err.find(c.says), std::string::npos) << c.args << ": " << r.err;
        EXPECT_FALSE(fs::exists(out)) << c.args;
    }
}

TEST(CompareCliTest, HelpSaysWhatTheExitCodesMean) {
    testing::TempDir scratch;
    const Cli r = lockbench(scratch, "compare --help");
    EXPECT_EQ(r.code, 0);
    for (const char* says : {"k of n", "--sweep", "--repeat", "0 table produced", "130",
                             "--no-yardstick", "compare never measures the machine"})
        EXPECT_NE(r.out.find(says), std::string::npos) << says << "\n" << r.out;
}

// --no-yardstick as run and suite take it: accepted (and meaningless here), so the error is the
// next one on the line, not the flag.
TEST(CompareCliTest, NoYardstickIsAcceptedAndChangesNothing) {
    testing::TempDir scratch;
    const std::string out = (scratch.path() / "results").string();
    const Cli r = lockbench(scratch,
                            "compare no-such-scenario --strategy set_nx_px "
                            "--no-yardstick --out '" +
                                out + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("no workload file or scenario named 'no-such-scenario'"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.err.find("yardstick"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(out));
}

}  // namespace
}  // namespace lockbench
