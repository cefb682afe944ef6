// A sweep whose outcomes are forced, on real redis-servers: a t1-like holder paused far longer
// than its lease must lose mutual exclusion in every run, and paused far shorter in none. The
// heat map must say so and draw the boundary between them, and compare.html must render in a real
// headless browser (Debian's chromium), as timeline.html's test does. Then Ctrl-C in the middle
// of `lockbench compare`: the finished runs stay and compare.json says it is incomplete.

#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/compare/compare.hpp"
#include "engine/testing/headless_browser.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using namespace std::chrono_literals;

std::string read(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A comparison folder's compare.json, through its one reader.
CompareFile read_compare(const fs::path& folder) {
    return CompareFile::from_json(json::parse(read(folder / "compare.json")),
                                  (folder / "compare.json").string());
}

// t1 made short: the holder of k0 paused at 0.3 s, for as long as the sweep says.
Workload t1_like() {
    return Workload::from_json(json::parse(R"({
        "name": "t1-like", "clients": 6, "keys": 1, "hold_ms": 2, "wait_ms": 500,
        "duration_s": 2.2, "seed": 11,
        "faults": [{"fault": "pause-client", "target": "holder", "key": "k0", "at_s": 0.3,
                    "duration_ms": 1000, "scope": "worker"}]})"));
}

TEST(CompareScenario, AForcedGridIsUnsafeOnlyWhereThePauseOutlastsTheLease) {
    testing::TempDir out;
    CompareOptions options;
    options.base.workload = t1_like();
    options.base.out_dir = out.path();
    options.strategies = {"set_nx_px"};
    options.repeat = 2;
    const json as_run = options.base.workload.to_json();
    // Across: the lease; down: the pause - 1500 ms is far past a 200 ms lease and inside a
    // 3000 ms one; 20 ms is inside both.
    options.sweep = {parse_sweep("lease_ms=200,3000", as_run),
                     parse_sweep("duration_ms=1500,20", as_run)};
    const CompareOutcome outcome = run_compare(options);
    ASSERT_FALSE(outcome.interrupted);
    const CompareFile& c = outcome.compare;
    ASSERT_EQ(outcome.failure_exit_code, 0) << c.to_json()["failed"].dump();
    EXPECT_TRUE(c.complete);
    EXPECT_EQ(c.runs_done, 8u);
    ASSERT_EQ(c.settings.size(), 4u);
    for (const CompareSetting& setting : c.settings) {
        const bool unsafe =
            setting.at.at("lease_ms") == 200.0 && setting.at.at("faults[0].duration_ms") == 1500.0;
        const CompareStrategyStats& stats = setting.strategies.at("set_nx_px");
        const std::string where = json(setting.at).dump();
        EXPECT_EQ(stats.runs, 2) << where;
        EXPECT_EQ(stats.checks.at("mutual_exclusion").violated, unsafe ? 2 : 0) << where;
        EXPECT_EQ(stats.checks.at("mutual_exclusion").valid, unsafe ? 0 : 2) << where;
        EXPECT_EQ(stats.verdict.violated, unsafe ? 2 : 0) << where;
    }
    // Every run is a run folder of its own, as `lockbench run` writes it.
    for (const CompareRun& r : c.runs)
        EXPECT_TRUE(fs::exists(outcome.dir / r.run / "summary.json"));
    EXPECT_EQ(format_heat_map(c, "set_nx_px"),
              "set_nx_px: runs that violated a check, k of n (rows faults[0].duration_ms, "
              "columns lease_ms)\n"
              "                  lease_ms=200   lease_ms=3000\n"
              "duration_ms=1500  2/2 ###      | 0/2 .\n"
              "                  =============\n"
              "duration_ms=20    0/2 .          0/2 .\n");
    // compare.json is its one writer's, and reads back through its one reader unchanged.
    const std::string written = read(outcome.dir / "compare.json");
    EXPECT_EQ(written, c.to_json().dump(2) + "\n");
    EXPECT_EQ(CompareFile::from_json(json::parse(written), "compare.json").to_json().dump(2) + "\n",
              written);
    EXPECT_NE(read(outcome.dir / "compare.txt").find(format_heat_map(c, "set_nx_px")),
              std::string::npos);

    // compare.html in a real browser: it loads from the file alone and lays the heat map out.
    ASSERT_TRUE(testing::chromium_installed())
        << "chromium is not installed: bash scripts/bootstrap.sh installs it";
    const fs::path page = outcome.dir / "compare.html";
    const std::string html = read(page);
    for (const char* outside : {"src=", "<link", "@import", "url(http", "https://"})
        EXPECT_EQ(html.find(outside), std::string::npos) << outside;
    const testing::HeadlessBrowser browser(out.path() / "profile");
    const std::string dom = browser.dom(page);
    ASSERT_NE(dom.find("<body"), std::string::npos) << "chromium did not load the page";
    EXPECT_NE(dom.find("data-heatmaps-drawn=\"1\""), std::string::npos)
        << dom.substr(dom.find("<body"), 200);
    EXPECT_NE(dom.find("class=\"boundary\""), std::string::npos);
    const fs::path shot = out.path() / "compare.png";
    browser.screenshot(page, shot);
    ASSERT_TRUE(fs::exists(shot));
    EXPECT_GT(fs::file_size(shot), 20'000u);  // a page with a chart, not a blank one
}

// The folders of finished runs inside the comparison's hidden folder while it is being written.
std::size_t finished_runs(const fs::path& results) {
    std::size_t n = 0;
    std::error_code ec;
    for (const auto& compare : fs::directory_iterator(results, ec)) {
        for (const auto& run : fs::directory_iterator(compare.path(), ec)) {
            if (run.path().filename().string().rfind(".tmp-", 0) != 0 &&
                fs::exists(run.path() / "summary.json"))
                ++n;
        }
    }
    return n;
}

TEST(CompareScenario, CtrlCKeepsTheFinishedRunsAndSaysTheComparisonIsIncomplete) {
    testing::TempDir t;
    const fs::path results = t.path() / "results";
    const fs::path workload = t.path() / "short.json";
    std::ofstream(workload) << R"({"name": "short", "clients": 2, "keys": 1, "duration_s": 0.5})";
    const std::string out = (t.path() / "stdout.txt").string();
    const pid_t pid = ::fork();
    if (pid == 0) {
        std::freopen(out.c_str(), "w", stdout);
        ::execl(LOCKBENCH_BINARY, LOCKBENCH_BINARY, "compare", workload.c_str(), "--strategy",
                "set_nx_px,fenced", "--repeat", "50", "--out", results.c_str(),
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    // Interrupted once a run has finished: that one must stay.
    const auto give_up = std::chrono::steady_clock::now() + 60s;
    while (finished_runs(results) == 0 && std::chrono::steady_clock::now() < give_up)
        std::this_thread::sleep_for(20ms);
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 130);
    const std::vector<fs::path> folders{fs::directory_iterator(results), fs::directory_iterator()};
    ASSERT_EQ(folders.size(), 1u);  // no .tmp-* left behind
    EXPECT_EQ(folders[0].filename().string().rfind("compare-", 0), 0u) << folders[0];
    const CompareFile c = read_compare(folders[0]);
    EXPECT_FALSE(c.complete);
    EXPECT_TRUE(c.interrupted);
    EXPECT_GE(c.runs_done, 1u);
    EXPECT_LT(c.runs_done, 100u);
    for (const CompareRun& r : c.runs)
        EXPECT_TRUE(fs::exists(folders[0] / r.run / "summary.json"));
    EXPECT_NE(read(out).find("INCOMPLETE: interrupted after"), std::string::npos) << read(out);
    for (const auto& e : fs::recursive_directory_iterator(folders[0]))
        EXPECT_EQ(e.path().filename().string().find(".tmp"), std::string::npos) << e.path();
}

// `run --repeat`: one strategy N times into one folder, the same table; a fault-free workload is
// valid in every run, so it exits 0 as one valid run does.
TEST(CompareScenario, RunRepeatWritesOneFolderOfNRuns) {
    testing::TempDir t;
    const fs::path results = t.path() / "results";
    const std::string command = std::string("'") + LOCKBENCH_BINARY +
                                "' run --no-yardstick --strategy set_nx_px --clients 2 --keys 1 "
                                "--duration 0.3 --repeat 3 --out '" +
                                results.string() + "' >'" + (t.path() / "stdout.txt").string() +
                                "' 2>&1";
    const int status = std::system(command.c_str());
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << read(t.path() / "stdout.txt");
    const std::vector<fs::path> folders{fs::directory_iterator(results), fs::directory_iterator()};
    ASSERT_EQ(folders.size(), 1u);
    EXPECT_EQ(folders[0].filename().string().rfind("repeat-", 0), 0u) << folders[0];
    const CompareFile c = read_compare(folders[0]);
    EXPECT_EQ(c.kind, "repeat");
    EXPECT_EQ(c.runs_done, 3u);
    const CompareStrategyStats& stats = c.settings.at(0).strategies.at("set_nx_px");
    EXPECT_EQ(stats.verdict.valid, 3);
    EXPECT_EQ(stats.checks.at("mutual_exclusion").violated, 0);
    EXPECT_NE(read(t.path() / "stdout.txt").find("set_nx_px was safe in 3 of 3 runs"),
              std::string::npos)
        << read(t.path() / "stdout.txt");
}

// A rate expectation on `run`: one run leaves it unjudged and says it needs --repeat; repeated,
// the runs judge it together - here a fault-free lock asked to break mutual exclusion in at least
// 1 of 2 runs, which no run does: NOT MET, exit 1 (each run alone was valid, exit 0). The servers'
// cost per cycle is in the table, as the embedded redis-server measured it.
TEST(CompareScenario, RunRepeatJudgesARateExpectationThatOneRunCannot) {
    testing::TempDir t;
    const fs::path workload = t.path() / "tiny.json";
    std::ofstream(workload) << R"({"name": "tiny", "clients": 2, "keys": 1, "hold_ms": 1,
        "lease_ms": 2000, "duration_s": 0.3, "seed": 3,
        "expect": {"set_nx_px": "violates:mutual_exclusion in >= 1 of 2"}})";
    const fs::path results = t.path() / "results";
    const auto lockbench = [&](const std::string& args) {
        const std::string command = std::string("'") + LOCKBENCH_BINARY + "' run '" +
                                    workload.string() + "' --no-yardstick " + args + " --out '" +
                                    results.string() + "' >'" + (t.path() / "stdout.txt").string() +
                                    "' 2>/dev/null";
        const int status = std::system(command.c_str());
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    EXPECT_EQ(lockbench(""), 0);
    const std::string once = read(t.path() / "stdout.txt");
    EXPECT_NE(once.find("expected    violates:mutual_exclusion in >= 1 of 2 -> unknown\n"
                        "            not judged in one run: violates:mutual_exclusion in >= 1 of 2 "
                        "(a rate needs repeated runs: run --repeat N)\n"),
              std::string::npos)
        << once;
    fs::remove_all(results);

    EXPECT_EQ(lockbench("--repeat 2"), 1);
    const std::string repeated = read(t.path() / "stdout.txt");
    EXPECT_NE(repeated.find("\n  expected           violates:mutual_exclusion in >= 1 of 2 runs; "
                            "seen in 0 of 2: NOT as expected\n"),
              std::string::npos)
        << repeated;
    EXPECT_NE(repeated.find("  server cpu/cycle   "), std::string::npos) << repeated;
    const std::vector<fs::path> folders{fs::directory_iterator(results), fs::directory_iterator()};
    ASSERT_EQ(folders.size(), 1u);
    const CompareFile c = read_compare(folders[0]);
    const CompareStrategyStats& stats = c.settings.at(0).strategies.at("set_nx_px");
    EXPECT_EQ(stats.expectation_met, false);
    ASSERT_EQ(stats.rate_terms.size(), 1u);
    EXPECT_EQ(stats.rate_terms[0].held, 0);
    ASSERT_TRUE(stats.server_us_per_cycle.has_value());
    EXPECT_GT(stats.server_us_per_cycle->median.value_or(0), 0);
    for (const CompareRun& run : c.runs)
        EXPECT_GT(run.server_us_per_cycle.value_or(0), 0) << run.run;
}

}  // namespace
}  // namespace lockbench
