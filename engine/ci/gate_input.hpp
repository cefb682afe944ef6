#pragma once

// What the gate reads: a suite's suite.json and a baseline written by make_baseline. Lenient about
// fields it does not use (suite.json grows), strict about those it does; every error is a
// GateInputError naming the file and the JSON path.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/ci/gate.hpp"
#include "engine/ci/throughput_stats.hpp"
#include "engine/ci/yardstick.hpp"

namespace lockbench::gate_input {

inline constexpr int kBaselineVersion = 1;
inline constexpr const char* kRefreshCommand =
    "build/release/engine/lockbench suite --quick --out results && "
    "build/release/engine/lockbench gate --write-baseline results/baseline.json";

using Key = std::pair<std::string, std::string>;  // (scenario, strategy)

struct CurrentRun {
    std::string scenario;
    std::string strategy;
    bool faults = false;
    std::optional<std::string> expected;
    std::optional<bool> as_expected;
    std::string got;  // the outcome in words, for UNEXPECTED OUTCOME and UNKNOWN
    double cycles_per_s = 0;
    Throughput throughput;
    std::optional<double> acquire_p99_ms;  // absent in older suites
};

struct CurrentSuite {
    bool quick = false;
    bool interrupted = false;
    std::optional<Yardstick> yardstick;  // absent: a suite run with --no-yardstick, or older
    std::vector<CurrentRun> runs;
    std::map<Key, std::size_t> index;
    // Pairs this machine could not run (a scenario that needs root), and why.
    std::map<Key, std::string> skipped;
    // What `suite --scenario/--strategy` selected; empty: every one. Absent in older suites.
    // With --no-topology, scenario_filter is every scenario the suite kept.
    std::vector<std::string> scenario_filter;
    std::vector<std::string> strategy_filter;
    bool no_topology = false;
    bool filtered() const {
        return !scenario_filter.empty() || !strategy_filter.empty() || no_topology;
    }
    bool includes(const Key& key) const;
    std::string filter_words() const;  // "--scenario a --strategy b", "--no-topology"
    // Pairs whose run errored (the machine, the disk, a server that died): the error, with the
    // exit code it would have had alone. Absent in older suites.
    std::map<Key, std::string> failed;
};

struct BaselineRun {
    std::string scenario;
    std::string strategy;
    bool faults = false;
    std::optional<std::string> expected;
    double cycles_per_s = 0;
    double median = 0;
    double noise = 0;
    std::optional<double> acquire_p99_ms;  // absent in older baselines: not compared
};

struct Baseline {
    std::string created;
    bool quick = false;
    std::optional<Yardstick> yardstick;  // absent: an older baseline
    std::vector<BaselineRun> runs;
    std::map<Key, std::size_t> index;
};

CurrentSuite parse_current(const nlohmann::json& j, const std::string& origin);
Baseline parse_baseline(const nlohmann::json& j, const std::string& origin);

}  // namespace lockbench::gate_input
