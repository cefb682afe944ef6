#pragma once

// The gate's machine yardstick: how fast this machine serves the two commands a set_nx_px cycle
// sends (SET key token NX PX, then the compare-and-delete release), measured by redis-benchmark -
// code that is not ours - against a fresh embedded redis-server. Dividing a strategy's throughput
// by it cancels the machine's speed but not lockbench's own: a build that makes every strategy
// twice as slow moves every ratio to set_nx_px together (which the gate cannot see) but halves
// every ratio to the yardstick (which it can).

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench {

struct YardstickPoint {
    int connections = 1;
    double set_rps = 0;           // SET NX PX, requests/s (median of the repeats)
    double release_rps = 0;       // EVAL compare-and-delete, requests/s
    double cycles_per_s = 0;      // the round-trip bound of one cycle: 1 / (1/set + 1/release)
    double noise = 0;             // relative MAD of cycles_per_s over the repeats
    std::vector<double> samples;  // cycles_per_s of each repeat
};

struct Yardstick {
    std::string tool = "redis-benchmark";
    std::vector<YardstickPoint> points;  // 1 connection, then more
    // lockbench's own connection layer sending the same two commands on one connection, cycles/s:
    // recorded beside the yardstick for diagnosis (a regression in our connection code shows here
    // and in every strategy at once), never divided by - it would slow with the code it judges.
    std::optional<double> lockbench_cycles_per_s;

    // The point the gate divides by: the one with the most connections (suite runs use several
    // clients).
    const YardstickPoint& reference() const { return points.back(); }

    // Adds a later measurement of the same machine: medians and noise over all repeats, so a
    // machine whose load changed during a suite shows it as noise (and the gate is lenient).
    void absorb(const Yardstick& later);

    nlohmann::json to_json() const;
    // nullopt for null or a shape it does not know (an older file: no yardstick).
    static std::optional<Yardstick> from_json(const nlohmann::json& j);
};

// Starts a redis-server, runs redis-benchmark `repeats` times per command at 1 and `connections`
// connections, stops the server. A suite measures before its runs and after them. Throws
// EnvironmentError when redis-benchmark is missing or fails.
Yardstick measure_yardstick(int connections = 8, int repeats = 3,
                            const std::string& redis_benchmark = "redis-benchmark");

}  // namespace lockbench
