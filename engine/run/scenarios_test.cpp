// Every shipped demonstration (workloads/*.json) against every strategy it names, on real
// redis-servers with real faults: the checker's verdict must equal the scenario's expectation
// and every scheduled fault must have fired. A demonstration that fails to demonstrate fails
// here, and so does a "safe" strategy that shows a violation. Each runs on embedded servers and,
// where its faults allow, on servers the test starts itself and hands over as --redis; a term
// stated as a rate is judged over the runs it names.

#include <algorithm>
#include <cctype>
#include <fcntl.h>
#include <filesystem>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <sys/file.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "checker/check.hpp"
#include "checker/testing/temp_dir.hpp"
#include "engine/ci/suite.hpp"
#include "engine/compare/compare.hpp"
#include "engine/nemesis/nemesis.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/run.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/servers/zookeeper_server.hpp"
#include "engine/testing/run_files.hpp"
#include "engine/topology/network_lab.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

struct ScenarioCase {
    fs::path file;
    std::string scenario;
    std::string strategy;
};

// A topology scenario starts a deployment of many servers (a Sentinel deployment in network
// namespaces, a Redis Cluster, a ZooKeeper ensemble): it runs in the binary built with
// LOCKBENCH_TOPOLOGY_SCENARIOS (label `topology`, opt-in; the default suite still asserts every
// one, CI's quick suite leaves them out with --no-topology).
bool is_topology_scenario(const Workload& w) {
    return w.topology.many_servers();
}

std::vector<ScenarioCase> shipped_cases() {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(LOCKBENCH_WORKLOADS_DIR)) {
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<ScenarioCase> cases;
    for (const auto& f : files) {
        Workload w = Workload::load(f);
#ifdef LOCKBENCH_TOPOLOGY_SCENARIOS
        const bool wanted = is_topology_scenario(w);
#else
        const bool wanted = !is_topology_scenario(w);
#endif
        if (!wanted)
            continue;
        for (const auto& [strategy, expected] : w.expect)
            cases.push_back({f, w.name, strategy});
    }
    return cases;
}

// As the suite's --quick: a fault-free scenario needs no more than a few seconds to judge (the
// demonstrations keep their own timing).
void quicken(Workload& w) {
    if (w.faults.empty())
        w.duration_s = std::min(w.duration_s, kQuickDuration);
}

// Names the case in gtest's output instead of dumping its bytes.
void PrintTo(const ScenarioCase& c, std::ostream* os) {
    *os << c.scenario << " x " << c.strategy;
}

using testing::TempDir;

// What a failure needs to show: each check's verdict and the processes in its violations, the
// processes each fault hit, and the first witnesses.
std::string explain(const nlohmann::json& s) {
    std::string out = "checks:";
    for (const auto& [name, check] : s["verdict"]["checks"].items()) {
        out += "\n  " + name + " " + check.value("valid", nlohmann::json()).dump() + " processes " +
               check.value("processes", nlohmann::json()).dump();
    }
    out += "\nfaults: " + s["nemesis"].dump();
    for (const auto& reason : s["verdict"].value("unknown_reasons", nlohmann::json::array()))
        out += "\nunknown: " + reason.get<std::string>();
    std::size_t shown = 0;
    for (const auto& v : s["verdict"]["violations"]) {
        if (++shown > 5)
            break;
        out += "\n  [" + v.value("kind", std::string()) + "] " + v.value("message", std::string());
    }
    return out;
}

// A strategy whose every client is a JVM (Curator) beside another run on two cores stalls its
// clients past the scenarios' 300 ms ZooKeeper sessions: Curator then declares lost a session the
// server still holds, and the lock sticks for seconds (seen at ctest -j2, under load). Those
// cases run alone among the scenario tests: an exclusive lock on a file every case takes shared.
// Not a retry: the run is judged as it went; only its neighbours wait.
class ScenarioSlot {
  public:
    explicit ScenarioSlot(const std::string& strategy) {
        const auto adapter = find_adapter(strategy);
        const bool alone = adapter && !adapter->argv.empty() &&
                           fs::path(adapter->argv.front()).filename() == "java";
        fd_ = ::open("/tmp/lockbench-scenario-tests.lock", O_CREAT | O_RDWR | O_CLOEXEC, 0666);
        if (fd_ >= 0)
            ::flock(fd_, alone ? LOCK_EX : LOCK_SH);
    }
    ~ScenarioSlot() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    ScenarioSlot(const ScenarioSlot&) = delete;
    ScenarioSlot& operator=(const ScenarioSlot&) = delete;

  private:
    int fd_ = -1;
};

// A run not as expected keeps its folder: the failure message says where, and its history is
// what tells a flaky demonstration from a finding.
void keep_unless_as_expected(TempDir& out, const RunOutcome& r) {
    const nlohmann::json as_expected = r.summary.to_json()["as_expected"];
    if (!as_expected.is_boolean() || !as_expected.get<bool>())
        out.keep();
}

// The outcome a run must have: its expectation met (judged, not unknown), every fault fired.
void expect_as_expected(const ScenarioCase& c, const RunOutcome& r) {
    const nlohmann::json s = r.summary.to_json();
    ASSERT_FALSE(r.interrupted);
    for (const auto& f : s["nemesis"]) {
        EXPECT_EQ(f["took_effect"], f["due"])
            << c.scenario << " x " << c.strategy << ": " << f.dump();
    }
    ASSERT_TRUE(s["as_expected"].is_boolean())
        << c.scenario << " x " << c.strategy << ": the verdict was unknown\n"
        << explain(s);
    EXPECT_TRUE(s["as_expected"].get<bool>()) << c.scenario << " x " << c.strategy << ": expected "
                                              << s["expected"].get<std::string>() << "\n"
                                              << explain(s) << "\nresult kept in " << r.dir;
}

// The case's workload as the suite's --quick runs it; empty, with why, when this machine cannot
// run it (a deployment in network namespaces needs root).
std::optional<Workload> quick_workload(const ScenarioCase& c, std::string& why_not) {
    Workload w = Workload::load(c.file);
    if (w.topology.in_namespaces()) {
        why_not = network_lab_unavailable();
        if (!why_not.empty())
            return std::nullopt;
    }
    w.strategy = c.strategy;
    quicken(w);
    w.validate();
    return w;
}

// A shipped case run as the suite's --quick runs it: the test holds the strategy's slot to its end,
// and is skipped where this machine cannot run the case.
class QuickScenarioTest : public ::testing::TestWithParam<ScenarioCase> {
  protected:
    void SetUp() override {
        slot_.emplace(GetParam().strategy);
        std::string why_not;
        workload_ = quick_workload(GetParam(), why_not);
        if (!workload_)
            GTEST_SKIP() << why_not;
    }
    const Workload& workload() const { return *workload_; }

  private:
    std::optional<ScenarioSlot> slot_;
    std::optional<Workload> workload_;
};

class ScenarioTest : public QuickScenarioTest {};

TEST_P(ScenarioTest, VerdictEqualsTheExpectation) {
    const auto& c = GetParam();
    TempDir out;
    const RunOutcome r = run_workload({.workload = workload(), .out_dir = out.path()});
    keep_unless_as_expected(out, r);
    expect_as_expected(c, r);
}

// A scenario whose faults act on clients or through the fault proxy works on servers lockbench
// did not start (a user's own deployment, `--redis`, and `--zookeeper` for ZooKeeper's locks):
// the same outcome, every fault fired.
bool runs_on_external_servers(const Workload& w) {
    for (const auto& f : Nemesis::parse(w.faults, w.name)) {
        if (f->needs_embedded_servers() || f->needs_embedded_zookeeper() || f->needs_network_lab())
            return false;
    }
    return w.topology.kind != TopologyKind::Replicated &&
           w.topology.kind != TopologyKind::Sentinel && w.topology.kind != TopologyKind::Cluster;
}

class ExternalScenarioTest : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(ExternalScenarioTest, VerdictEqualsTheExpectationOnServersItDidNotStart) {
    const auto& c = GetParam();
    const ScenarioSlot slot(c.strategy);
    Workload w = Workload::load(c.file);
    w.strategy = c.strategy;
    quicken(w);
    w.validate();
    // What the strategy needs (Redlock: its masters), resolved as for embedded servers; the run
    // resolves the workload itself for the servers it is given.
    Workload resolved = w;
    resolved.resolve();
    // Started here as a user starts theirs: lockbench only gets their addresses.
    const int nodes =
        resolved.topology.kind == TopologyKind::Masters ? resolved.topology.masters : 1;
    std::vector<std::unique_ptr<RedisServer>> servers;
    std::vector<Endpoint> endpoints;
    for (int i = 0; i < nodes; ++i) {
        servers.push_back(std::make_unique<RedisServer>());
        endpoints.push_back(servers.back()->endpoint());
    }
    // A strategy that waits for replicas: the user's master has one (lockbench sees only the
    // master's address).
    if (find_strategy(w.strategy)->capabilities.needs_replicas) {
        servers.push_back(std::make_unique<RedisServer>(RedisServerOptions{
            .extra_args = {"--replicaof", "127.0.0.1", std::to_string(servers[0]->port())}}));
        // ... and it has synced, as a deployment in use has.
        for (int i = 0;
             i < 500 &&
             servers.back()->command({"INFO", "replication"}).str.find("master_link_status:up") ==
                 std::string::npos;
             ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::unique_ptr<ZooKeeperEnsemble> zookeeper;
    if (find_strategy(w.strategy)->capabilities.zookeeper)
        zookeeper = std::make_unique<ZooKeeperEnsemble>(w.topology.zookeeper_servers);
    TempDir out;
    RunOutcome r = run_workload({.workload = w,
                                 .redis = endpoints,
                                 .zookeeper = zookeeper ? zookeeper->hosts() : "",
                                 .out_dir = out.path()});
    EXPECT_EQ(r.summary.to_json()["redis"]["mode"], "external");
    if (zookeeper) {
        EXPECT_EQ(r.summary.to_json()["zookeeper"]["mode"], "external");
    }
    keep_unless_as_expected(out, r);
    expect_as_expected(c, r);
}

std::string case_name(const ::testing::TestParamInfo<ScenarioCase>& info) {
    std::string name = info.param.scenario + "_" + info.param.strategy;
    std::replace_if(
        name.begin(), name.end(),
        [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); }, '_');
    return name;
}

INSTANTIATE_TEST_SUITE_P(Shipped, ScenarioTest, ::testing::ValuesIn(shipped_cases()), case_name);

std::vector<ScenarioCase> external_cases() {
    std::vector<ScenarioCase> out;
    for (const auto& c : shipped_cases()) {
        if (runs_on_external_servers(Workload::load(c.file)))
            out.push_back(c);
    }
    return out;
}

// The external cases that run every scenario and every strategy at least once on servers the
// test did not start: each scenario takes a strategy not yet taken where it has one, then each
// strategy left out takes its first scenario. These prove the path from a user's servers for
// every fault and every client; CI (--gate) runs only them, since its quick suite asserts every
// pair's verdict on embedded servers. The others are `ShippedRest`, in every other test run.
std::vector<ScenarioCase> covering_external_cases(bool covering) {
    const auto all = external_cases();
    std::vector<bool> chosen(all.size(), false);
    std::set<std::string> scenarios_done, strategies_done;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (scenarios_done.contains(all[i].scenario))
            continue;
        std::size_t pick = i;  // the scenario's first case unless one brings a new strategy
        for (std::size_t j = i; j < all.size() && all[j].scenario == all[i].scenario; ++j) {
            if (!strategies_done.contains(all[j].strategy)) {
                pick = j;
                break;
            }
        }
        chosen[pick] = true;
        scenarios_done.insert(all[pick].scenario);
        strategies_done.insert(all[pick].strategy);
    }
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (!strategies_done.contains(all[i].strategy)) {
            chosen[i] = true;
            strategies_done.insert(all[i].strategy);
        }
    }
    std::vector<ScenarioCase> out;
    for (std::size_t i = 0; i < all.size(); ++i) {
        if (chosen[i] == covering)
            out.push_back(all[i]);
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Shipped, ExternalScenarioTest,
                         ::testing::ValuesIn(covering_external_cases(true)), case_name);
INSTANTIATE_TEST_SUITE_P(ShippedRest, ExternalScenarioTest,
                         ::testing::ValuesIn(covering_external_cases(false)), case_name);

// A term stated as a rate (workloads/README.md: where a race makes one run unreliable) is judged
// over as many runs as its rate names, as `lockbench run --repeat N` judges it; the single-run
// tests above judge the expectation's other terms.
int runs_a_rate_names(const std::string& expected) {
    int runs = 0;
    for (const auto& term : Expectation::parse(expected).terms) {
        if (term.rate)
            runs = std::max(runs, term.rate->n);
    }
    return runs;
}

std::vector<ScenarioCase> rated_cases() {
    std::vector<ScenarioCase> out;
    for (const auto& c : shipped_cases()) {
        if (runs_a_rate_names(Workload::load(c.file).expect.at(c.strategy)) > 0)
            out.push_back(c);
    }
    return out;
}

class RatedScenarioTest : public QuickScenarioTest {};

TEST_P(RatedScenarioTest, EveryRateHoldsOverTheRunsItNames) {
    const auto& c = GetParam();
    TempDir out;
    CompareOptions options;
    options.base.workload = workload();
    options.base.out_dir = out.path();
    options.strategies = {c.strategy};
    options.repeat = runs_a_rate_names(workload().expect.at(c.strategy));
    options.kind = "repeat";
    const CompareOutcome outcome = run_compare(options);
    ASSERT_FALSE(outcome.interrupted);
    const CompareStrategyStats& stats = outcome.compare.settings.at(0).strategies.at(c.strategy);
    if (stats.expectation_met != true)
        out.keep();
    EXPECT_EQ(stats.expectation_met, true)
        << c.scenario << " x " << c.strategy << ": expected " << workload().expect.at(c.strategy)
        << " over " << options.repeat << " runs\n"
        << outcome.compare.to_json()["settings"][0]["strategies"][c.strategy].dump(1)
        << "\nresult kept in " << outcome.dir;
}

INSTANTIATE_TEST_SUITE_P(Shipped, RatedScenarioTest, ::testing::ValuesIn(rated_cases()), case_name);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(RatedScenarioTest);

#ifndef LOCKBENCH_TOPOLOGY_SCENARIOS
// What linearizability says about the lock service, through `lockbench check --model mutex` on
// set_nx_px's histories: a holder that crashed (its lease freed the lock), a lost acquire reply
// and a late unlock are what a lease lock does; a restart without persistence is not.
class LockServiceTest : public ::testing::TestWithParam<std::pair<std::string, bool>> {};

TEST_P(LockServiceTest, MutexModelJudgesTheService) {
    const auto& [scenario, linearizable] = GetParam();
    Workload w = Workload::load(fs::path(LOCKBENCH_WORKLOADS_DIR) / (scenario + ".json"));
    w.strategy = "set_nx_px";
    w.checks.model = "none";  // judged below, as a user would, from the history alone
    TempDir out;
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    checker::CheckOptions options;
    options.model = checker::Model::Mutex;
    options.only = std::vector<std::string>{"linearizability"};
    const auto report = checker::check_history(r.dir / "history.jsonl", options);
    EXPECT_EQ(report.verdict, linearizable ? checker::Verdict::Valid : checker::Verdict::Invalid)
        << scenario << "\n"
        << checker::format_report(report);
}

INSTANTIATE_TEST_SUITE_P(Shipped, LockServiceTest,
                         ::testing::Values(std::pair{std::string("holder-crash"), true},
                                           std::pair{std::string("t6-acquire-reply-lost"), true},
                                           std::pair{std::string("t8-late-unlock"), true},
                                           std::pair{std::string("t4-restart-without-persistence"),
                                                     false}),
                         [](const auto& param_info) {
                             std::string name = param_info.param.first;
                             std::replace(name.begin(), name.end(), '-', '_');
                             return name;
                         });

// T8's late DEL must land inside a hold, or the demonstration shows nothing (seen in CI: it
// landed just after the holder released, found no key, and the run was safe). The stall resumes
// at the next grant after its 800 ms: the DEL completes inside a hold granted after the stall's
// duration ended, before that holder's release. Resumed when the 800 ms are over instead, the
// DEL lands in whichever hold is in progress then, one granted before the duration ended.
TEST(LateUnlockScenario, TheLateDeleteLandsInAHoldGrantedAfterTheStall) {
    Workload w = Workload::load(fs::path(LOCKBENCH_WORKLOADS_DIR) / "t8-late-unlock.json");
    w.strategy = "set_nx_px_del";
    TempDir out;
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    const auto events = testing::read_history(r.dir / "history.jsonl");
    std::optional<nlohmann::json> stall;
    std::optional<std::int64_t> late_release_done_ns;
    for (const auto& e : events) {
        if (e["process"] == "nemesis" && e["f"] == "stall")
            stall = e;
        else if (stall && !late_release_done_ns && e["process"] == (*stall)["value"]["target"] &&
                 e["f"] == "release" && e["type"] != "invoke")
            late_release_done_ns = e["time"].get<std::int64_t>();
    }
    ASSERT_TRUE(stall && late_release_done_ns) << "no stalled release in " << r.dir;
    const std::int64_t stall_end_ns = (*stall)["time"].get<std::int64_t>() +
                                      (*stall)["value"]["ms"].get<std::int64_t>() * 1'000'000;
    // The hold the DEL landed in: the last grant before it, and that holder's next release.
    std::optional<nlohmann::json> grant;
    for (const auto& e : events) {
        if (e["time"].get<std::int64_t>() > *late_release_done_ns)
            break;
        if (e["f"] == "acquire" && e["type"] == "ok" && e["process"] != (*stall)["value"]["target"])
            grant = e;
    }
    ASSERT_TRUE(grant) << r.dir;
    EXPECT_GE((*grant)["time"].get<std::int64_t>(), stall_end_ns)
        << "the late DEL landed in a hold granted before the stall's 800 ms ended; result in "
        << r.dir;
    for (const auto& e : events) {
        if (e["process"] == (*grant)["process"] && e["f"] == "release" && e["type"] == "invoke" &&
            e["index"].get<std::int64_t>() > (*grant)["index"].get<std::int64_t>()) {
            EXPECT_GT(e["time"].get<std::int64_t>(), *late_release_done_ns)
                << "the holder released before the late DEL landed; result in " << r.dir;
            break;
        }
    }
    EXPECT_EQ(r.summary.to_json()["verdict"]["checks"]["mutual_exclusion"]["valid"], false)
        << r.summary.to_json()["verdict"].dump(2);
    if (HasFailure())
        out.keep();
}
#endif

}  // namespace
}  // namespace lockbench
