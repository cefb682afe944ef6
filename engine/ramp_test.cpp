#include "ramp.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "run.hpp"
#include "temp_dir.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

TEST(ClientsRamp, StartStepEndAndListsAreTheCurvesPoints) {
    EXPECT_EQ(parse_clients_ramp("1:10:31"), (std::vector<int>{1, 11, 21, 31}));
    EXPECT_EQ(parse_clients_ramp("1:10:35"), (std::vector<int>{1, 11, 21, 31}));
    EXPECT_EQ(parse_clients_ramp("2:4"), (std::vector<int>{2, 3, 4}));
    EXPECT_EQ(parse_clients_ramp("1,10,50,2000"), (std::vector<int>{1, 10, 50, 2000}));
}

TEST(ClientsRamp, BadRampsAreRefusedSayingWhy) {
    const auto refused = [](const std::string& text, const std::string& why) {
        try {
            parse_clients_ramp(text);
            ADD_FAILURE() << text << " was accepted";
        } catch (const WorkloadError& e) {
            EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
        }
    };
    refused("0:1:5", "'0' is not a client count");
    refused("1:x:5", "'x' is not a client count");
    refused("5:1:2", "END is below START");
    refused("1:2:3:4", "write START:STEP:END");
    refused("10,5", "increasing order");
    refused("10", "at least two points");
    refused("1,,5", "'' is not a client count");
    refused("1:1:1000", "more than 64 points");
}

// A real ramp: each point a real run inside the ramp's folder, one curve per strategy.
TEST(ClientsRamp, RunsEveryPointForEveryStrategyIntoOneFolder) {
    testing::TempDir out;
    Workload w;
    w.name = "ramp-test";
    w.keys = 2;
    w.duration_s = 0.5;
    w.lease_ms = 5000;
    RampOutcome r = run_ramp({.workload = w,
                              .strategies = {"set_nx_px", "fenced"},
                              .clients = {1, 4},
                              .out_dir = out.path()});
    EXPECT_FALSE(r.interrupted);
    EXPECT_EQ(r.verdict, checker::Verdict::Valid);
    EXPECT_EQ(r.dir.parent_path(), out.path());
    EXPECT_EQ(r.dir.filename().string().rfind("ramp-", 0), 0u);
    const json saved = json::parse(std::ifstream(r.dir / "ramp.json"));
    EXPECT_EQ(saved, r.curves);
    EXPECT_EQ(saved["clients"], json::parse("[1, 4]"));
    for (const char* strategy : {"set_nx_px", "fenced"}) {
        const json& curve = saved["curves"][strategy];
        ASSERT_EQ(curve.size(), 2u) << strategy;
        for (std::size_t i = 0; i < 2; ++i) {
            const json& p = curve[i];
            EXPECT_EQ(p["clients"], i == 0 ? 1 : 4);
            EXPECT_GT(p["cycles_per_s"].get<double>(), 0);
            EXPECT_EQ(p["fairness"]["clients"], p["clients"]);
            EXPECT_EQ(p["verdict"], true);
            // Its run is in the ramp's folder, for the same strategy and client count.
            const json run =
                json::parse(std::ifstream(r.dir / p["run"].get<std::string>() / "summary.json"));
            EXPECT_EQ(run["strategy"], strategy);
            EXPECT_EQ(run["clients"], p["clients"]);
        }
    }
    EXPECT_TRUE(fs::exists(r.dir / "ramp.txt"));
    // Nothing else is left behind: one folder, committed.
    EXPECT_EQ(std::distance(fs::directory_iterator(out.path()), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace lockbench
