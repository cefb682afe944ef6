#include "engine/run/ramp.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"
#include "engine/run/run.hpp"
#include "engine/testing/run_files.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::tmp_folders;

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
    EXPECT_EQ(saved, r.ramp.to_json());
    // ramp.json's one reader reads back what its one writer wrote.
    EXPECT_EQ(RampFile::from_json(saved, "ramp.json").to_json(), saved);
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

std::string read_text(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// A ramp whose second point needs more file descriptors than the process may open (its hard
// limit lowered, and as root the right to raise it dropped): that point is the ramp's error, and
// the first point's run is kept, with the curve, the table and exit 4.
TEST(ClientsRamp, APointThatFailsIsNamedAndThePointsBeforeItAreKept) {
    testing::TempDir t;
    const fs::path results = t.path() / "results";
    const std::string keep_limit =
        ::geteuid() == 0 ? "setpriv --bounding-set=-sys_resource --inh-caps=-sys_resource " : "";
    const std::string command = "ulimit -n 512; " + keep_limit + "'" + LOCKBENCH_BINARY +
                                "' run --no-yardstick --clients-ramp 2,5000 --keys 2 "
                                "--duration 0.5 --out '" +
                                results.string() + "' >'" + (t.path() / "out.txt").string() +
                                "' 2>'" + (t.path() / "err.txt").string() + "'";
    const int status = std::system(("bash -c \"" + command + "\"").c_str());
    ASSERT_TRUE(WIFEXITED(status));
    const std::string out = read_text(t.path() / "out.txt");
    const std::string err = read_text(t.path() / "err.txt");
    EXPECT_EQ(WEXITSTATUS(status), 4) << out << err;
    // The point that ran is one line (off a terminal), the one that failed another.
    EXPECT_EQ(err.rfind("[1/2] set_nx_px with 2 clients: ", 0), 0u) << err;
    EXPECT_NE(err.find("\nfailed: set_nx_px with 5000 clients: --clients 5000 needs about "),
              std::string::npos)
        << err;
    EXPECT_EQ(std::count(err.begin(), err.end(), '\n'), 2) << err;
    EXPECT_NE(out.find("set_nx_px with 5000 clients: --clients 5000 needs about"),
              std::string::npos)
        << out;
    EXPECT_TRUE(tmp_folders(results).empty()) << tmp_folders(results).front();

    std::vector<fs::path> ramps(fs::directory_iterator(results), fs::directory_iterator{});
    ASSERT_EQ(ramps.size(), 1u);
    const json saved = json::parse(std::ifstream(ramps[0] / "ramp.json"));
    const json& curve = saved["curves"]["set_nx_px"];
    ASSERT_EQ(curve.size(), 1u) << saved.dump(2);
    EXPECT_EQ(curve[0]["clients"], 2);
    EXPECT_GT(curve[0]["cycles_per_s"].get<double>(), 0);
    const json run =
        json::parse(std::ifstream(ramps[0] / curve[0]["run"].get<std::string>() / "summary.json"));
    EXPECT_EQ(run["clients"], 2);
    ASSERT_EQ(saved["failed"].size(), 1u) << saved.dump(2);
    EXPECT_EQ(saved["failed"][0]["strategy"], "set_nx_px");
    EXPECT_EQ(saved["failed"][0]["clients"], 5000);
    EXPECT_EQ(saved["failed"][0]["exit_code"], 4);
    EXPECT_NE(saved["failed"][0]["error"].get<std::string>().find("file descriptors"),
              std::string::npos);
    const std::string table = read_text(ramps[0] / "ramp.txt");
    EXPECT_NE(table.find("\nfailed\n  set_nx_px with 5000 clients: --clients 5000 needs about"),
              std::string::npos)
        << table;
    // Its folder and the one point's run, nothing else: the failed point left no folder.
    EXPECT_EQ(std::distance(fs::directory_iterator(ramps[0]), fs::directory_iterator{}), 3);
}

// Digits masked: a line's numbers are measurements.
std::string without_digits(const std::string& text) {
    std::string masked;
    for (char c : text) {
        if (c >= '0' && c <= '9') {
            if (masked.empty() || masked.back() != '#')
                masked += '#';
        } else {
            masked += c;
        }
    }
    return masked;
}

// Off a terminal (a CI log, `| tee`) a ramp prints one line per finished point, as a suite does
// per run, and its table on stdout; nothing else on stderr.
TEST(ClientsRamp, OffATerminalEachFinishedPointIsOneLine) {
    testing::TempDir scratch;
    const testing::Cli r = testing::lockbench(
        scratch, "run --no-yardstick --clients-ramp 1,2 --keys 1 --duration 0.3 --out '" +
                     (scratch.path() / "results").string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    EXPECT_EQ(without_digits(r.err),
              "[#/#] set_nx_px with # clients: #.# cycles/s, valid (#.# s)\n"
              "[#/#] set_nx_px with # clients: #.# cycles/s, valid (#.# s)\n");
    EXPECT_EQ(r.err.substr(0, 28), "[1/2] set_nx_px with 1 clien");
    EXPECT_NE(r.err.find("\n[2/2] set_nx_px with 2 clients: "), std::string::npos) << r.err;
    EXPECT_EQ(r.out.substr(0, 6), "ramp: ");
}

// Ctrl-C during a point: the run cut short is written inside the ramp's folder, like any
// interrupted run, and the ramp's table names it - no folder there is one the table does not list.
TEST(ClientsRamp, AnInterruptedRampNamesThePointItCutShort) {
    testing::TempDir out;
    Workload w;
    w.name = "ramp-cut";
    w.keys = 2;
    w.duration_s = 120;  // never reached: the test interrupts the first point
    w.lease_ms = 5000;
    std::atomic<bool> interrupt{false};
    std::atomic<bool> finished{false};  // a ramp that failed must not leave the thread waiting
    std::thread ctrl_c([&] {
        // The first point is running once its clients have written history.
        const auto running = [&] {
            std::error_code ec;
            for (auto it = fs::recursive_directory_iterator(out.path(), ec);
                 !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
                std::error_code size_ec;
                if (it->path().filename() == "history.jsonl" &&
                    fs::file_size(it->path(), size_ec) > 0 && !size_ec)
                    return true;
            }
            return false;
        };
        while (!finished && !running())
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        interrupt = true;
    });
    RampOutcome r;
    try {
        r = run_ramp({.workload = w,
                      .strategies = {"set_nx_px"},
                      .clients = {1, 4},
                      .out_dir = out.path(),
                      .interrupt = &interrupt});
    } catch (...) {
        finished = true;
        ctrl_c.join();
        throw;
    }
    finished = true;
    ctrl_c.join();
    EXPECT_TRUE(r.interrupted);
    const json saved = json::parse(std::ifstream(r.dir / "ramp.json"));
    EXPECT_EQ(saved["interrupted"], true);
    EXPECT_TRUE(saved["curves"].empty()) << saved.dump(2);
    std::vector<std::string> runs;
    for (const auto& e : fs::directory_iterator(r.dir)) {
        if (e.is_directory())
            runs.push_back(e.path().filename().string());
    }
    ASSERT_EQ(runs.size(), 1u);
    EXPECT_EQ(saved["interrupted_point"],
              (json{{"strategy", "set_nx_px"}, {"clients", 1}, {"run", runs[0]}}));
    const json summary = json::parse(std::ifstream(r.dir / runs[0] / "summary.json"));
    EXPECT_EQ(summary["clients"], 1);
    EXPECT_EQ(read_text(r.dir / "ramp.txt"),
              "ramp: ramp-cut, 120 s per point  (INTERRUPTED)\n"
              "\ninterrupted\n  set_nx_px with 1 clients: cut short, not on the curve (its run: " +
                  runs[0] + ")\n");
}

}  // namespace
}  // namespace lockbench
