// `--connections`: the same workload run with one connection per client and with the clients
// sharing a few auto-pipelined connections passes the same checks, for every Redis strategy; and
// a fault that needs a client's own connection is refused up front in shared mode.

#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"
#include "engine/run/run.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/testing/redis_fixture.hpp"
#include "strategies/registry.hpp"

namespace lockbench {
namespace {

using nlohmann::json;
using testing::TempDir;

long long connections_received(const RedisServer& server) {
    const std::string info = server.command({"INFO", "stats"}).as_string();
    const std::string field = "total_connections_received:";
    const auto at = info.find(field);
    if (at == std::string::npos)
        throw std::runtime_error("no " + field + " in INFO stats");
    return std::stoll(info.substr(at + field.size()));
}

struct ModeOutcome {
    json summary;
    std::string report;         // report.txt
    long long connections = 0;  // that the servers accepted during the run, all of them
};

class SharedConnectionsRunTest : public ::testing::TestWithParam<std::string> {
  protected:
    static constexpr int kClients = 32;

    ModeOutcome run_in_mode(int connections) {
        const bool redlock = GetParam() == "redlock";
        const testing::UsersRedisServers users(redlock ? 3 : 1);
        const auto& [servers, endpoints] = users;
        std::vector<long long> before;
        for (const auto& s : servers)
            before.push_back(connections_received(*s));
        Workload w;
        w.name = "shared-connections";
        w.strategy = GetParam();
        w.clients = kClients;
        w.threads = 2;
        w.connections = connections;
        w.keys = 2;
        w.duration_s = 1;
        w.hold_ms = Distribution::constant(1);
        w.lease_ms = 5000;
        w.wait_ms = 100;
        if (find_strategy(GetParam())->capabilities.shared_mode)
            w.shared_ratio = 0.3;
        if (GetParam() == "fenced")
            w.resource = ResourceKind::Fenced;
        TempDir out;
        RunOutcome r = run_workload({.workload = w, .redis = endpoints, .out_dir = out.path()});
        ModeOutcome outcome{.summary = r.summary.to_json(),
                            .report = testing::read_file(r.dir / "report.txt")};
        for (std::size_t i = 0; i < servers.size(); ++i)
            outcome.connections += connections_received(*servers[i]) - before[i];
        return outcome;
    }
};

TEST_P(SharedConnectionsRunTest, HistoriesPassTheSameChecksInEitherMode) {
    const std::size_t servers = GetParam() == "redlock" ? 3 : 1;
    const ModeOutcome own = run_in_mode(0);
    const ModeOutcome shared = run_in_mode(4);
    for (const ModeOutcome* mode : {&own, &shared}) {
        const json& summary = mode->summary;
        const json& checks = summary["verdict"]["checks"];
        for (const char* name : {"mutual_exclusion", "linearizability", "liveness", "resource"})
            EXPECT_EQ(checks[name]["valid"], true) << name << ": " << checks[name].dump();
        // The same checks apply in either mode (a fence, say, only where the strategy has one).
        for (const auto& [name, check] : own.summary["verdict"]["checks"].items())
            EXPECT_EQ(checks[name]["valid"], check["valid"]) << name << ": " << checks[name].dump();
        EXPECT_EQ(summary["verdict"]["valid"], true) << summary["verdict"].dump();
        EXPECT_GT(summary["throughput"]["cycles"].get<std::uint64_t>(), 100u);
        EXPECT_GT(summary["history"]["events"].get<std::uint64_t>(), 400u);
    }
    EXPECT_EQ(own.summary["connections"], (json{{"mode", "per-client"}, {"per_server", kClients}}));
    EXPECT_EQ(shared.summary["connections"], (json{{"mode", "shared"}, {"per_server", 4}}));
    EXPECT_NE(shared.report.find("clients 32 sharing 4 auto-pipelined connections per server, "),
              std::string::npos)
        << shared.report;
    EXPECT_NE(own.report.find("clients 32, seed "), std::string::npos) << own.report;
    // Each client connected on its own, and then over four connections per server. The run's
    // own readings and clean-up add a few in either mode, and a strategy that waits on pub/sub
    // (rwlock, reentrant_hash) keeps each client's subscriber in either mode too.
    EXPECT_GE(own.connections, static_cast<long long>(kClients * servers));
    EXPECT_LT(shared.connections, own.connections - static_cast<long long>(kClients * servers) / 2)
        << "shared " << shared.connections << ", one per client " << own.connections;
}

INSTANTIATE_TEST_SUITE_P(RedisStrategies, SharedConnectionsRunTest,
                         ::testing::Values("set_nx_px", "setnx_getset", "fenced", "reentrant_hash",
                                           "rwlock", "rwlock_seed", "redlock"),
                         [](const auto& param_info) { return param_info.param; });

TEST(SharedConnectionsRefusalTest, AFaultOnAClientsOwnConnectionIsRefusedInOneLine) {
    TempDir scratch;
    const auto workload = scratch.path() / "crash.json";
    std::ofstream(workload) << R"({"name": "crash", "clients": 6, "faults": [
        {"fault": "crash-client", "target": "holder", "key": "k0", "at_s": 0.5}]})";
    const auto r = testing::lockbench(scratch, "run '" + workload.string() +
                                                   "' --connections 2 --no-yardstick --out '" +
                                                   (scratch.path() / "results").string() + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(testing::lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("'crash-client' acts on one client's own connection and 6 clients "
                         "share 2 (--connections): it needs one connection per client"),
              std::string::npos)
        << r.err;
    EXPECT_FALSE(std::filesystem::exists(scratch.path() / "results"));
    // As many connections as clients is one each: the fault runs as it always did.
    EXPECT_EQ(std::string(),
              why_it_cannot_run({.workload = Workload::load(workload), .connections = 6}));
}

TEST(SharedConnectionsRefusalTest, WhatCannotShareConnectionsIsRefused) {
    Workload w;
    w.clients = 8;
    w.threads = 4;
    w.connections = 2;
    EXPECT_NE(why_it_cannot_run({.workload = w}).find("fewer than the 4 threads"),
              std::string::npos);
    w.threads = 1;
    w.strategy = "zk_mutex";
    EXPECT_NE(why_it_cannot_run({.workload = w}).find("zk_mutex connects by itself (ZooKeeper)"),
              std::string::npos);
    w.strategy = "set_nx_px";
    EXPECT_EQ(why_it_cannot_run({.workload = w}), "");
    TempDir scratch;
    const auto r = testing::lockbench(
        scratch, "run --connections 0 --out '" + (scratch.path() / "results").string() + "'");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_EQ(testing::lines(r.err), 1u) << r.err;
    EXPECT_NE(r.err.find("--connections: must be 1..100000, not 0"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace lockbench
