// The server's cost of a run (summary.json's server_cost) is the server's own accounting: a run
// on a real redis-server reports, per command, exactly the calls INFO commandstats counted
// between a reading before the run and one after it, and those are the commands the clients'
// operations imply. Readings that cannot be compared (a restart between them) say so instead.

#include "engine/run/server_cost.hpp"

#include <fstream>
#include <map>
#include <sstream>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/run/run.hpp"
#include "engine/servers/redis_server.hpp"

namespace lockbench {
namespace {

using nlohmann::json;
using testing::TempDir;

std::map<std::string, std::uint64_t> command_calls(const RedisServer& server) {
    const Reply info = server.command({"INFO", "commandstats"});
    std::map<std::string, std::uint64_t> calls;
    for (const auto& [name, stat] : parse_redis_info(info.str).commands)
        calls[name] = stat.calls;
    return calls;
}

std::uint64_t attempted(const json& summary, const char* op) {
    const json& c = summary["ops"][op];
    return c["ok"].get<std::uint64_t>() + c["fail"].get<std::uint64_t>() +
           c["info"].get<std::uint64_t>();
}

struct LuaRun {
    std::string strategy;
    // Scripts the strategy runs per acquire (EVALSHA, else a SET of its own) and per release.
    bool acquire_is_script = false;
    // Distinct scripts: each runs once as EVAL after SCRIPT FLUSH (the first EVALSHA's NOSCRIPT).
    std::uint64_t scripts = 0;
};

void PrintTo(const LuaRun& run, std::ostream* out) {
    *out << run.strategy;
}

class ServerCostRunTest : public ::testing::TestWithParam<LuaRun> {};

// One client on one key never waits for the lock, so each acquire is one attempt: the counts are
// exact, whatever the machine's speed.
TEST_P(ServerCostRunTest, PerCommandCallsAreTheServersOwnCountsOfTheRun) {
    const LuaRun& param = GetParam();
    TempDir out;
    RedisServer server;
    server.command({"SCRIPT", "FLUSH"});
    auto before = command_calls(server);
    Workload w;
    w.name = "server-cost";
    w.strategy = param.strategy;
    w.clients = 1;
    w.keys = 1;
    w.duration_s = 0.3;
    w.hold_ms = Distribution::constant(0);
    w.lease_ms = 5000;
    w.resource = ResourceKind::None;
    RunOutcome r =
        run_workload({.workload = w, .redis = {server.endpoint()}, .out_dir = out.path()});
    auto after = command_calls(server);
    const json cost = r.summary.to_json()["server_cost"];
    ASSERT_EQ(cost["nodes"].size(), 1u) << cost.dump(1);
    const json& node = cost["nodes"][0];
    ASSERT_FALSE(node.contains("not_measured")) << node.dump(1);
    EXPECT_EQ(node["node"], server.endpoint().to_string());
    EXPECT_EQ(node["role"], "master");
    const json& per_command = node["per_command"];

    const std::uint64_t acquires = attempted(r.summary.to_json(), "acquire");
    const std::uint64_t releases = attempted(r.summary.to_json(), "release");
    ASSERT_GT(acquires, 10u);
    EXPECT_EQ(r.summary.to_json()["throughput"]["cycles"], cost["cycles"]);
    // What the clients' operations imply...
    EXPECT_EQ(per_command["evalsha"]["calls"].get<std::uint64_t>(),
              releases + (param.acquire_is_script ? acquires : 0))
        << per_command.dump(1);
    EXPECT_EQ(per_command["eval"]["calls"].get<std::uint64_t>(), param.scripts);
    if (!param.acquire_is_script) {
        EXPECT_EQ(per_command["set"]["calls"].get<std::uint64_t>(), acquires);
    }
    // ...and what the server counted itself, for every command only the clients send (outside
    // the run lockbench pings, reads CONFIG, and SCANs and UNLINKs its keys away).
    std::uint64_t sum = 0;
    for (const auto& [name, stat] : per_command.items()) {
        const std::uint64_t counted = after[name] - before[name];
        EXPECT_EQ(stat["calls"].get<std::uint64_t>(), counted) << name;
        EXPECT_GT(stat["calls"].get<std::uint64_t>(), 0u) << name;
        sum += stat["calls"].get<std::uint64_t>();
    }
    for (const auto& [name, calls] : after) {
        if (calls != before[name] && !per_command.contains(name)) {
            EXPECT_TRUE(name == "ping" || name == "config|get" || name == "scan" ||
                        name == "unlink" || name == "info")
                << name << " was called " << calls - before[name] << " times";
        }
    }
    EXPECT_EQ(node["commands"].get<std::uint64_t>(), sum);
    EXPECT_EQ(cost["total"]["commands"].get<std::uint64_t>(), sum);
    EXPECT_GT(node["cpu_us"].get<double>(), 0);
    EXPECT_DOUBLE_EQ(node["cpu_us_per_cycle"].get<double>(),
                     node["cpu_us"].get<double>() / cost["cycles"].get<double>());
    EXPECT_NE(r.summary.to_json()["server_cost"]["bottleneck"]["side"], "unknown");
    std::ifstream report(r.dir / "report.txt");
    std::stringstream text;
    text << report.rdbuf();
    EXPECT_NE(text.str().find("\ncost        server: "), std::string::npos) << text.str();
}

INSTANTIATE_TEST_SUITE_P(Strategies, ServerCostRunTest,
                         ::testing::Values(LuaRun{"set_nx_px", false, 1},
                                           LuaRun{"fenced", true, 2}),
                         [](const auto& param_info) { return param_info.param.strategy; });

const char kInfo[] =
    "# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n# Replication\r\nrole:master\r\n"
    "# CPU\r\nused_cpu_sys:1.500000\r\nused_cpu_user:0.500000\r\n"
    "used_cpu_sys_main_thread:1.000000\r\nused_cpu_user_main_thread:0.250000\r\n"
    "# Commandstats\r\n"
    "cmdstat_set:calls=10,usec=20,usec_per_call=2.00,rejected_calls=0,failed_calls=0\r\n"
    "cmdstat_client|setname:calls=3,usec=3,usec_per_call=1.00,rejected_calls=0,failed_calls=0\r\n"
    "cmdstat_info:calls=4,usec=400,usec_per_call=100.00,rejected_calls=0,failed_calls=0\r\n";

TEST(ServerCostTest, ReadsRedisInfo) {
    const ServerReading r = parse_redis_info(kInfo);
    EXPECT_EQ(r.run_id, "abc");
    EXPECT_EQ(r.role, "master");
    EXPECT_DOUBLE_EQ(r.cpu_s, 2.0);
    ASSERT_TRUE(r.main_thread_cpu_s);
    EXPECT_DOUBLE_EQ(*r.main_thread_cpu_s, 1.25);
    ASSERT_EQ(r.commands.size(), 3u);
    EXPECT_EQ(r.commands.at("set").calls, 10u);
    EXPECT_EQ(r.commands.at("set").usec, 20u);
    EXPECT_EQ(r.commands.at("client|setname").calls, 3u);
    // Redis 6 names no main thread.
    EXPECT_FALSE(parse_redis_info("run_id:x\nused_cpu_sys:1\nused_cpu_user:1\n").main_thread_cpu_s);
}

TEST(ServerCostTest, ReadsProcStatPastACommandNameWithSpacesAndParentheses) {
    // Fields 14 and 15 (utime 250, stime 150 ticks) and 22 (start time 777).
    const std::string line =
        "42 (java (x) y) S 1 42 42 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 30 0 777 1 2";
    const auto r = parse_proc_stat(line, 100);
    ASSERT_TRUE(r);
    EXPECT_DOUBLE_EQ(r->cpu_s, 4.0);
    EXPECT_EQ(r->start_ticks, 777u);
    EXPECT_FALSE(parse_proc_stat("42 (java) S 1 2", 100));
    EXPECT_FALSE(parse_proc_stat("", 100));
}

TEST(ServerCostTest, DifferencesLeaveOutTheOwnReadingAndRefuseARestartedServer) {
    const std::vector<MeteredServer> servers{
        {.service = "redis", .node = "a:1", .redis = Endpoint{"a", 1, ""}},
        {.service = "redis", .node = "b:2", .redis = Endpoint{"b", 2, ""}},
        {.service = "zookeeper", .node = "c:3", .not_measured = "the user's"}};
    ServerReading before = parse_redis_info(kInfo);
    ServerReading after = before;
    after.cpu_s += 0.9;                // 900 ms: 750 on the main thread
    *after.main_thread_cpu_s += 0.75;  // over 1 s: 0.75 of a core
    after.commands["set"].calls += 30'000;
    after.commands["set"].usec += 60'000;
    after.commands["info"].calls += 1;  // the first reading's own INFO
    after.commands["info"].usec += 100;
    ServerReading restarted = after;
    restarted.run_id = "other";
    const std::vector<ServerReading> b{before, before, ServerReading{.error = "the user's"}};
    const std::vector<ServerReading> a{after, restarted, ServerReading{.error = "the user's"}};
    const json cost = server_cost_json(
        servers, b, a, 1.0, EngineCost{.cpu_s = 0.9, .elapsed_s = 1.0, .cycles = 10'000});

    const json& node = cost["nodes"][0];
    EXPECT_DOUBLE_EQ(node["cpu_us"].get<double>(), 900'000);
    EXPECT_DOUBLE_EQ(node["main_thread_cpu_us"].get<double>(), 750'000);
    EXPECT_EQ(node["commands"], 30'000);
    EXPECT_EQ(node["per_command"], json::parse(R"({"set": {"calls": 30000, "usec": 60000,
                                                           "usec_per_call": 2.0}})"));
    EXPECT_DOUBLE_EQ(node["cpu_us_per_cycle"].get<double>(), 90);
    EXPECT_DOUBLE_EQ(node["cpu_us_per_command"].get<double>(), 30);
    EXPECT_EQ(cost["nodes"][1]["not_measured"],
              "restarted during the run: its counters began again");
    EXPECT_EQ(cost["nodes"][2]["not_measured"], "the user's");
    EXPECT_DOUBLE_EQ(cost["total"]["cpu_us"].get<double>(), 900'000);
    EXPECT_DOUBLE_EQ(cost["engine"]["cpu_us_per_cycle"].get<double>(), 90);
    // The engine used 0.9 of its one core: saturated; the server's main thread 0.75: not.
    EXPECT_EQ(cost["bottleneck"]["side"], "engine");
    EXPECT_EQ(cost["total"]["nodes_not_measured"], 2);
    EXPECT_EQ(server_cost_line(cost),
              "server: 90.0 µs CPU per lock cycle (30.0 per command); not measured: redis b:2 "
              "(restarted during the run: its counters began again); not measured: zookeeper c:3 "
              "(the user's) · engine: 90.0 µs per cycle · bottleneck: engine (0.90 of a core)");

    const json idle = server_cost_json(
        servers, b, a, 1.0, EngineCost{.cpu_s = 0.5, .elapsed_s = 1.0, .cycles = 10'000});
    EXPECT_EQ(idle["bottleneck"]["side"], "neither");
    EXPECT_EQ(server_cost_line(idle).substr(server_cost_line(idle).find("bottleneck")),
              "bottleneck: neither: engine (0.50 of a core), server (0.75 of a core)");
}

}  // namespace
}  // namespace lockbench
