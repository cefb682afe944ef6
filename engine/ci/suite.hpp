#pragma once

// `lockbench suite`: every shipped scenario against every strategy it names, one result folder per
// run, one table, and a JUnit file where an outcome that differs from the expectation fails.

#include <atomic>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/ci/suite_row.hpp"
#include "engine/topology/inventory.hpp"

namespace lockbench {

// How a suite shows its progress on stderr. A terminal gets one line redrawn in place; a CI log or
// a pipe (`| tee`), which cannot redraw, gets one plain line per finished run instead, so that a
// quarter of an hour of runs does not look like a hang.
enum class SuiteProgress { None, Terminal, Lines };

struct SuiteOptions {
    std::filesystem::path scenarios_dir;
    std::filesystem::path out_dir = "results";
    std::vector<std::string> strategies;  // empty: all
    std::vector<std::string> scenarios;   // empty: all
    bool quick = false;                   // fault-free runs at most kQuickDuration
    // Leave out the scenarios that start a deployment of many servers (Topology::many_servers):
    // CI's quick suite, whose time goes mostly to starting them; `ctest -L topology` asserts them.
    bool no_topology = false;
    int retries = 0;  // extra runs of a pair whose outcome was unexpected
    // Runs of each pair, interleaved (round r runs every pair once); one row per pair, its
    // checks as k of n and its expectation judged over the runs (expectation.hpp). Not with
    // retries, which would bias the count.
    int repeat = 1;
    std::optional<std::filesystem::path> junit;
    SuiteProgress progress = SuiteProgress::None;
    const std::atomic<bool>* interrupt = nullptr;
    // Measure the machine yardstick (yardstick.hpp) first and store it in suite.json, so the gate
    // can see a slowdown that hits every strategy. Off: the gate compares to set_nx_px only.
    bool yardstick = true;
    // ZooKeeper strategies: the user's ensemble "HOST:PORT[,HOST:PORT…]"; empty: each run starts
    // one (as `run --zookeeper`).
    std::string zookeeper;
    // The user's servers instead of embedded ones: --redis, or an inventory (whose controls let
    // pause-server and kill-server act on its hosts). A scenario that cannot run on them (a
    // topology lockbench must start, a fault on a process it cannot reach) is skipped, saying why.
    std::vector<Endpoint> redis;
    std::optional<Inventory> inventory;
    // --connections: every run's clients share this many connections per server; a scenario
    // whose faults need a connection per client is skipped, saying why.
    std::optional<int> connections;
};

// suite.json: what ran, what failed, what was skipped, and what the suite was asked.
struct SuiteTable {
    bool quick = false;
    nlohmann::json filter;  // null: every scenario and strategy (suite_filter)
    bool interrupted = false;
    nlohmann::json interrupted_run;  // {"scenario", "strategy", "dir"} of the run Ctrl-C stopped
    bool all_as_expected = false;
    nlohmann::json yardstick;  // Yardstick::to_json, or null
    std::vector<SuiteRow> runs;
    // {"scenario", "strategy", "error", "exit_code", "attempts", "wall_s"} (repeated: "round",
    // "dirs") of each pair that could not run; {"scenario", "strategy", "reason"} of each skipped.
    nlohmann::json failed = nlohmann::json::array();
    nlohmann::json skipped = nlohmann::json::array();
    std::optional<int> repeat;  // only a repeated suite says so

    nlohmann::json to_json() const;
    // A table as suite.json holds it (or an older one); a mistyped field is a SuiteInputError
    // naming `origin` and its JSON path.
    static SuiteTable from_json(const nlohmann::json& j, const std::string& origin);
};

struct SuiteOutcome {
    std::filesystem::path dir;  // <out>/suite-<UTC time>/
    SuiteTable table;           // what suite.json holds
    // With --repeat, every finished run as a single run's row with its round (1..N), pair by
    // pair (suite --csv's rows); table.runs has one row per pair. Empty without --repeat.
    std::vector<SuiteRow> each_run;
    bool all_as_expected = false;
    bool interrupted = false;
    // A run that failed (table.failed) is that run's error, and the others are kept: the
    // highest exit code of those errors (docs/cli.md, exit codes: 2, 4 or 5), 0 when none failed.
    int failure_exit_code = 0;
};

inline constexpr double kQuickDuration = 2.5;

// Throws WorkloadError (a bad scenario, exit 2) or EnvironmentError (exit 4) when it cannot
// start, or cannot write the suite; a run that fails is recorded, and the suite goes on.
SuiteOutcome run_suite(const SuiteOptions& options);
std::string format_table(const SuiteTable& table);
// One test case per (scenario, strategy), each with its time: the run's wall-clock seconds
// (start-up, retries and checking included; "wall_s"), or its measured duration in an older table.
std::string junit_xml(const SuiteTable& table);
// The same of a table as JSON (suite.json read back), through SuiteTable::from_json.
std::string format_table(const nlohmann::json& table);
std::string junit_xml(const nlohmann::json& table);

}  // namespace lockbench
