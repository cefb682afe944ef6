// The embedded etcd (a real server: Debian's etcd-server), its JSON gateway client, its faults
// and the deployment of a run that asks for etcd, and `--etcd` naming a server that is not there.
// A partition needs hosts in network namespaces (root): those tests say so when skipped.

#include <algorithm>
#include <csignal>
#include <fstream>
#include <set>
#include <sstream>
#include <sys/wait.h>
#include <thread>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"
#include "engine/clients/history_recorder.hpp"
#include "engine/nemesis/fault.hpp"
#include "engine/nemesis/nemesis.hpp"
#include "engine/run/run.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/etcd_server.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/network_lab.hpp"
#include "engine/topology/server_cleanup.hpp"
#include "strategies/client/session.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::TempDir;

bool process_exists(pid_t pid) {
    return pid > 0 && ::kill(pid, 0) == 0;
}

std::vector<pid_t> pids_of(const EtcdCluster& cluster) {
    std::vector<pid_t> out;
    for (std::size_t i = 0; i < cluster.size(); ++i)
        out.push_back(cluster.member(i).pid());
    return out;
}

TEST(EtcdGateway, Base64AndPrefixRangeEnd) {
    EXPECT_EQ(base64_encode(""), "");
    EXPECT_EQ(base64_encode("f"), "Zg==");
    EXPECT_EQ(base64_encode("fo"), "Zm8=");
    EXPECT_EQ(base64_encode("foo"), "Zm9v");
    EXPECT_EQ(base64_encode("lockbench:ab12:"), "bG9ja2JlbmNoOmFiMTI6");
    for (const std::string text : {"", "f", "fo", "foo", "foob", "\xff\x00\x7f"})
        EXPECT_EQ(base64_decode(base64_encode(text)), text);
    EXPECT_THROW(base64_decode("a*b"), EtcdGatewayError);
    EXPECT_EQ(etcd_prefix_range_end("lockbench:ab:"), "lockbench:ab;");
    EXPECT_EQ(etcd_prefix_range_end("a\xff"), "b");
}

TEST(EtcdServer, OneMemberServesPutGetAndDeletesAPrefixThenLeavesNoProcess) {
    std::vector<pid_t> pids;
    fs::path dir;
    {
        EtcdCluster etcd(1);
        ASSERT_EQ(etcd.size(), 1u);
        const Endpoint ep = etcd.member(0).endpoint();
        pids = pids_of(etcd);
        dir = etcd.member(0).dir();
        ASSERT_TRUE(process_exists(pids[0]));
        EXPECT_EQ(etcd.leader(), std::optional<std::size_t>(0));
        const auto status = etcd_status(ep, 2s);
        EXPECT_EQ(status.version, "3.4.23");
        EXPECT_EQ(status.member_id, etcd.member(0).member_id());
        EXPECT_TRUE(status.leads());

        etcd_put(ep, "lockbench:run1:k0", "holder-1", 2s);
        etcd_put(ep, "lockbench:run1:k1", "holder-2", 2s);
        etcd_put(ep, "lockbench:run2:k0", "other run", 2s);
        EXPECT_EQ(etcd_get(ep, "lockbench:run1:k0", 2s), std::optional<std::string>("holder-1"));
        EXPECT_EQ(etcd_get(ep, "absent", 2s), std::nullopt);
        EXPECT_EQ(etcd_delete_prefix(ep, "lockbench:run1:", 2s), 2);
        EXPECT_EQ(etcd_get(ep, "lockbench:run1:k1", 2s), std::nullopt);
        EXPECT_EQ(etcd_get(ep, "lockbench:run2:k0", 2s), std::optional<std::string>("other run"));
    }
    EXPECT_FALSE(process_exists(pids[0]));
    EXPECT_FALSE(fs::exists(dir));
}

TEST(EtcdServer, ThreeMembersElectANewLeaderWhenTheLeaderIsKilledAndItRejoins) {
    std::vector<pid_t> pids;
    {
        EtcdCluster etcd(3);
        pids = pids_of(etcd);
        const auto first = etcd.wait_for_leader(5s);
        ASSERT_TRUE(first);
        // Every member names the same leader.
        for (std::size_t i = 0; i < 3; ++i) {
            const auto s = etcd.member(i).status();
            ASSERT_TRUE(s) << i;
            EXPECT_EQ(etcd.index_of(s->leader_id), first) << i;
        }
        etcd_put(etcd.member(*first).endpoint(), "k", "before", 2s);

        const pid_t killed = etcd.member(*first).pid();
        etcd.member(*first).kill();
        EXPECT_FALSE(process_exists(killed));
        std::optional<std::size_t> next;
        const auto deadline = std::chrono::steady_clock::now() + 10s;
        while ((!next || *next == *first) && std::chrono::steady_clock::now() < deadline) {
            next = etcd.wait_for_leader(1s);
        }
        ASSERT_TRUE(next);
        EXPECT_NE(*next, *first);
        // The survivors still hold the quorum's data, and take writes.
        EXPECT_EQ(etcd_get(etcd.member(*next).endpoint(), "k", 2s),
                  std::optional<std::string>("before"));
        etcd_put(etcd.member(*next).endpoint(), "k", "after", 2s);

        etcd.member(*first).restart();
        EXPECT_TRUE(etcd.member(*first).healthy(2s));
        EXPECT_EQ(etcd_get(etcd.member(*first).endpoint(), "k", 2s),
                  std::optional<std::string>("after"));
        pids.push_back(etcd.member(*first).pid());
    }
    for (pid_t pid : pids)
        EXPECT_FALSE(process_exists(pid)) << pid;
}

TEST(EtcdServer, APausedMemberAnswersNothingUntilResumed) {
    EtcdCluster etcd(3);
    const std::size_t member = 1;
    EtcdServer& m = etcd.member(member);
    m.pause();
    EXPECT_EQ(process_state(m.pid()), 'T');
    EXPECT_TRUE(m.paused());
    EXPECT_FALSE(etcd_healthy(m.endpoint(), 300ms));
    EXPECT_THROW(etcd_status(m.endpoint(), 300ms), EtcdGatewayError);
    m.resume();
    EXPECT_NE(process_state(m.pid()), 'T');
    const auto status = etcd_status(m.endpoint(), 5s);
    EXPECT_EQ(status.member_id, m.member_id());
}

TEST(EtcdServer, APartitionedLeaderIsReplacedAndRejoinsWhenHealed) {
    if (const std::string why = network_lab_unavailable(); !why.empty())
        GTEST_SKIP() << why;
    NetworkLab lab({"etcd1", "etcd2", "etcd3"});
    std::vector<EtcdHost> hosts;
    for (std::size_t i = 0; i < lab.size(); ++i)
        hosts.push_back({lab.netns_fd(i), lab.address(static_cast<int>(i))});
    std::vector<pid_t> pids;
    {
        EtcdCluster etcd(3, {}, hosts);
        pids = pids_of(etcd);
        EXPECT_EQ(etcd.member(0).endpoint().host, lab.address(0));
        const auto first = etcd.wait_for_leader(5s);
        ASSERT_TRUE(first);
        const int cut = static_cast<int>(*first);
        std::set<int> everyone;
        for (int i = 0; i < 3; ++i)
            everyone.insert(i);
        const int handle = lab.add_partition(isolate_grudge({cut}, everyone));
        // The majority elects one of its own; the cut-off member, still reachable from here,
        // no longer says it leads (CheckQuorum) and is not healthy (no leader it can hear).
        std::optional<std::size_t> next;
        const auto deadline = std::chrono::steady_clock::now() + 15s;
        while ((!next || *next == *first || etcd.member(*first).healthy()) &&
               std::chrono::steady_clock::now() < deadline) {
            next = etcd.wait_for_leader(1s);
        }
        ASSERT_TRUE(next);
        EXPECT_NE(*next, *first);
        EXPECT_FALSE(etcd.member(*first).healthy());
        etcd_put(etcd.member(*next).endpoint(), "k", "written in the majority", 2s);

        lab.remove_partition(handle);
        const auto healed = std::chrono::steady_clock::now() + 15s;
        while (!etcd.member(*first).healthy() && std::chrono::steady_clock::now() < healed)
            std::this_thread::sleep_for(50ms);
        ASSERT_TRUE(etcd.member(*first).healthy());
        EXPECT_EQ(etcd_get(etcd.member(*first).endpoint(), "k", 2s),
                  std::optional<std::string>("written in the majority"));
    }
    for (pid_t pid : pids)
        EXPECT_FALSE(process_exists(pid)) << pid;
}

// ---- The deployment of a run that asks for etcd

Workload workload_of(const std::string& text) {
    return Workload::from_json(nlohmann::json::parse(text), "w.json");
}

std::vector<std::string> texts(const std::vector<Endpoint>& endpoints) {
    std::vector<std::string> out;
    for (const auto& ep : endpoints)
        out.push_back(ep.to_string());
    return out;
}

TEST(EtcdDeployment, StartsTheTopologysMembersAndEachSessionLearnsTheirEndpoints) {
    const Workload w = workload_of(R"({"topology": {"etcd_servers": 3}})");
    EXPECT_EQ(w.topology.etcd_servers, 3);
    EXPECT_EQ(w.to_json()["topology"]["etcd_servers"], 3);
    Deployment d;
    d.start_etcd(w, {});
    ASSERT_TRUE(d.etcd);
    EXPECT_EQ(d.etcd->size(), 3u);
    EXPECT_FALSE(d.etcd_lab) << "no fault partitions a member: every member on loopback";
    EXPECT_EQ(texts(d.etcd_endpoints), texts(d.etcd->endpoints()));
    EXPECT_NO_THROW(d.check_etcd_reachable());
    EXPECT_NO_THROW(d.check_alive());

    EventLoop loop;
    Session session(loop, {Endpoint{}}, {}, "c0-test");
    EXPECT_TRUE(session.etcd_endpoints().empty());
    session.set_etcd_endpoints(d.etcd_endpoints);
    EXPECT_EQ(texts(session.etcd_endpoints()), texts(d.etcd->endpoints()));

    // A member that dies under the run ends it, as a redis-server's death does. (A Go process's
    // threads exit one by one after SIGKILL: it can be reaped only once the last has.)
    ::kill(d.etcd->member(0).pid(), SIGKILL);
    std::string error;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (error.empty() && std::chrono::steady_clock::now() < deadline) {
        try {
            d.check_alive();
            std::this_thread::sleep_for(5ms);
        } catch (const EnvironmentError& e) {
            error = e.what();
        }
    }
    EXPECT_EQ(error.rfind("etcd etcd1 on 127.0.0.1:", 0), 0u) << error;
}

TEST(EtcdDeployment, TheUsersEtcdIsUsedAsGivenAndAnUnreachableOneIsAnEnvironmentError) {
    const int nobody = pick_free_port();
    const Workload w = workload_of(R"({"strategy": "set_nx_px"})");
    Deployment d = Deployment::start(w, {}, "", {Endpoint{"127.0.0.1", nobody, ""}});
    EXPECT_FALSE(d.etcd);
    EXPECT_EQ(texts(d.etcd_endpoints),
              std::vector<std::string>{"127.0.0.1:" + std::to_string(nobody)});
    try {
        d.check_etcd_reachable();
        ADD_FAILURE() << "nobody listens there";
    } catch (const EnvironmentError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "cannot reach etcd: etcd at 127.0.0.1:" + std::to_string(nobody) +
                      " /v3/maintenance/status: cannot connect: "
                      "Connection refused");
    }
    // A strategy that needs no etcd, and no --etcd: none.
    Deployment plain = Deployment::start(w, {});
    EXPECT_TRUE(plain.etcd_endpoints.empty());
    EXPECT_FALSE(plain.etcd);
}

TEST(EtcdDeployment, CleanupDeletesTheRunsKeysFromTheUsersEtcdAndNothingElse) {
    EtcdCluster users(1);
    const Endpoint ep = users.member(0).endpoint();
    etcd_put(ep, "lockbench:0a1b2c:k0", "lock", 2s);
    etcd_put(ep, "lockbench:0a1b2c:k0/694d7f2a", "lease key", 2s);
    etcd_put(ep, "lockbench:ffffff:k0", "another run", 2s);
    etcd_put(ep, "theirs", "the user's own", 2s);
    Deployment d;
    d.embedded = true;  // Redis: ours; etcd: theirs
    d.etcd_endpoints = {Endpoint{"127.0.0.1", pick_free_port(), ""}, ep};
    const nlohmann::json report =
        clean_up_user_servers(workload_of("{}"), d, {}, "lockbench:0a1b2c:");
    ASSERT_TRUE(report.is_object()) << report.dump();
    EXPECT_EQ(report["etcd"]["server"], ep.to_string()) << "the first member did not answer";
    EXPECT_EQ(report["etcd"]["deleted"], 2);
    EXPECT_TRUE(report["left"].empty()) << report.dump();
    EXPECT_EQ(etcd_get(ep, "lockbench:0a1b2c:k0", 2s), std::nullopt);
    EXPECT_EQ(etcd_get(ep, "lockbench:ffffff:k0", 2s), std::optional<std::string>("another run"));
    EXPECT_EQ(etcd_get(ep, "theirs", 2s), std::optional<std::string>("the user's own"));
    // Embedded etcd: nothing of the user's to clean.
    Deployment ours;
    ours.etcd = std::make_unique<EtcdCluster>(1);
    ours.etcd_endpoints = ours.etcd->endpoints();
    EXPECT_TRUE(clean_up_user_servers(workload_of("{}"), ours, {}, "lockbench:0a1b2c:").is_null());
}

TEST(EtcdDeployment, ARunOnTheUsersEtcdSaysSoAndDeletesItsPrefixThere) {
    EtcdCluster users(1);
    const Endpoint ep = users.member(0).endpoint();
    etcd_put(ep, "theirs", "the user's own", 2s);
    TempDir out;
    RunOptions options{.workload = workload_of(R"({"clients": 2, "duration_s": 0.2})"),
                       .out_dir = out.path()};
    options.etcd = {ep};
    const RunOutcome outcome = run_workload(options);
    const nlohmann::json summary = outcome.summary.to_json();
    EXPECT_EQ(summary["etcd"]["mode"], "external") << summary.dump(2);
    EXPECT_TRUE(summary["etcd"]["servers"].is_null());
    EXPECT_EQ(summary["etcd"]["endpoints"], nlohmann::json::array({ep.to_string()}));
    EXPECT_EQ(summary["cleanup"]["etcd"]["server"], ep.to_string()) << summary["cleanup"].dump();
    EXPECT_EQ(summary["cleanup"]["etcd"]["deleted"], 0);
    EXPECT_EQ(etcd_get(ep, "theirs", 2s), std::optional<std::string>("the user's own"));
}

// ---- Faults

struct NemesisEvent {
    std::string f;
    nlohmann::json value;
};

std::vector<NemesisEvent> nemesis_events(const fs::path& history) {
    std::vector<NemesisEvent> out;
    std::ifstream in(history);
    for (std::string line; std::getline(in, line);) {
        const auto e = nlohmann::json::parse(line);
        if (e.value("process", nlohmann::json()) == "nemesis")
            out.push_back({e["f"], e["value"]});
    }
    return out;
}

// The one event named f; fails the test when there is not exactly one.
NemesisEvent only(const std::vector<NemesisEvent>& events, const std::string& f) {
    std::vector<NemesisEvent> found;
    for (const auto& e : events) {
        if (e.f == f)
            found.push_back(e);
    }
    EXPECT_EQ(found.size(), 1u) << f;
    return found.empty() ? NemesisEvent{} : found.front();
}

std::unique_ptr<Fault> fault_of(const std::string& spec) {
    return make_fault(nlohmann::json::parse(spec), "w.json", "/faults/0");
}

// A deployment with the embedded etcd of `w`, a nemesis context over it, and its history.
struct FaultBench {
    explicit FaultBench(const Workload& w)
        : history(dir.path() / "history.jsonl", EventLoop::now()) {
        deployment.start_etcd(w, {});
    }
    std::vector<NemesisEvent> events() {
        history.finish();
        return nemesis_events(dir.path() / "history.jsonl");
    }
    TempDir dir;
    HistoryRecorder history;
    Deployment deployment;
    ClientDirectory clients;
    NemesisContext ctx{history, deployment, clients, 7};
};

TEST(EtcdFaults, KillTheLeaderProvesItsProcessGoneAndTheRestartRejoins) {
    FaultBench bench(workload_of(R"({"topology": {"etcd_servers": 3}})"));
    EtcdCluster& etcd = *bench.deployment.etcd;
    const auto leader = etcd.wait_for_leader(5s);
    ASSERT_TRUE(leader);
    const pid_t pid = etcd.member(*leader).pid();
    auto fault = fault_of(R"({"fault": "kill-etcd", "restart_after_ms": 0})");
    EXPECT_EQ(fault->target().kind, FaultTarget::Kind::Leader);
    fault->apply(bench.ctx);
    EXPECT_EQ(fault->effects(), 1) << fault->miss_reason();
    EXPECT_FALSE(process_exists(pid));
    bench.ctx.run_all_pending();
    EXPECT_TRUE(etcd.member(*leader).healthy(2s));
    const auto events = bench.events();
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].f, "kill-etcd");
    EXPECT_EQ(events[0].value["node"], *leader);
    EXPECT_EQ(events[0].value["pid"], pid);
    EXPECT_EQ(events[0].value["pid_gone"], true);
    EXPECT_EQ(events[0].value["role"], "leader");
    const NemesisEvent restart = only(events, "restart-etcd");
    EXPECT_EQ(restart.value["node"], *leader);
    EXPECT_NE(restart.value["pid"], pid);
    // A new leader took over (restarted at once, the killed member may win the election: what
    // counts is the newer term), and with it etcd renewed every lease: the history says so.
    const NemesisEvent renewed = only(events, "leases-renewed");
    EXPECT_EQ(renewed.value["by_ms"], 1000);
    EXPECT_GT(renewed.value["term"].get<std::uint64_t>(), 1u);
    EXPECT_EQ(bench.ctx.windows().size(), 1u);
    EXPECT_TRUE(bench.ctx.windows()[0].end_s.has_value());
}

TEST(EtcdFaults, PauseANamedMemberProvesItStoppedAndResumesIt) {
    FaultBench bench(workload_of(R"({"topology": {"etcd_servers": 3}})"));
    EtcdServer& member = bench.deployment.etcd->member(2);
    auto fault = fault_of(R"({"fault": "pause-etcd", "target": "node:2", "duration_ms": 0})");
    fault->apply(bench.ctx);
    EXPECT_EQ(fault->effects(), 1) << fault->miss_reason();
    EXPECT_EQ(process_state(member.pid()), 'T');
    bench.ctx.run_all_pending();
    EXPECT_FALSE(member.paused());
    EXPECT_EQ(etcd_status(member.endpoint(), 5s).member_id, member.member_id());
    const auto events = bench.events();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].f, "pause-etcd");
    EXPECT_EQ(events[0].value["node"], 2);
    EXPECT_EQ(events[0].value["state"], "T");
    EXPECT_EQ(events[0].value["pid"], member.pid());
    EXPECT_EQ(events[1].f, "resume-etcd");
    EXPECT_NE(events[1].value["state"], "T");
}

TEST(EtcdFaults, KillARandomMemberWithoutARestartLeavesItDown) {
    FaultBench bench(workload_of(R"({})"));
    auto fault =
        fault_of(R"({"fault": "kill-etcd", "target": "random", "restart_after_ms": null})");
    EXPECT_EQ(fault->target().kind, FaultTarget::Kind::Random);
    fault->apply(bench.ctx);
    EXPECT_EQ(fault->effects(), 1) << fault->miss_reason();
    bench.ctx.run_all_pending();
    EXPECT_FALSE(bench.deployment.etcd->member(0).running());
    // Nothing left to kill: said, not silently skipped.
    fault->apply(bench.ctx);
    EXPECT_EQ(fault->effects(), 1);
    EXPECT_EQ(fault->miss_reason(), "no etcd member was running");
    const auto events = bench.events();
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].f, "kill-etcd");
}

TEST(EtcdFaults, PartitionTheLeaderProvesTheDropsAndHeals) {
    if (const std::string why = network_lab_unavailable(); !why.empty())
        GTEST_SKIP() << why;
    FaultBench bench(workload_of(
        R"({"topology": {"etcd_servers": 3}, "faults": [{"fault": "partition-etcd"}]})"));
    ASSERT_TRUE(bench.deployment.etcd_lab) << "a partition puts every member in a host";
    EtcdCluster& etcd = *bench.deployment.etcd;
    EXPECT_EQ(etcd.member(1).endpoint().host, bench.deployment.etcd_lab->address(1));
    const auto leader = etcd.wait_for_leader(5s);
    ASSERT_TRUE(leader);
    auto fault = fault_of(R"({"fault": "partition-etcd", "duration_ms": 0})");
    fault->apply(bench.ctx);
    EXPECT_EQ(fault->effects(), 1) << fault->miss_reason();
    // The majority replaces the cut-off leader.
    std::optional<std::size_t> next;
    const auto deadline = std::chrono::steady_clock::now() + 15s;
    while ((!next || *next == *leader) && std::chrono::steady_clock::now() < deadline)
        next = etcd.wait_for_leader(1s);
    ASSERT_TRUE(next);
    EXPECT_NE(*next, *leader);
    bench.ctx.run_all_pending();
    EXPECT_TRUE(bench.deployment.etcd_lab->grudge().empty());
    const auto healed = std::chrono::steady_clock::now() + 15s;
    while (!etcd.member(*leader).healthy() && std::chrono::steady_clock::now() < healed)
        std::this_thread::sleep_for(50ms);
    EXPECT_TRUE(etcd.member(*leader).healthy());
    const auto events = bench.events();
    ASSERT_EQ(events.size(), 3u);
    EXPECT_EQ(events[0].f, "partition-etcd");
    EXPECT_EQ(only(events, "leases-renewed").value["node"], *next);
    EXPECT_EQ(events[0].value["role"], "leader");
    const std::string cut = "etcd" + std::to_string(*leader + 1);
    std::vector<std::string> others;
    for (std::size_t i = 0; i < 3; ++i) {
        if (i != *leader)
            others.push_back("etcd" + std::to_string(i + 1));
    }
    EXPECT_EQ(events[0].value["drops"][cut], nlohmann::json(others)) << events[0].value.dump();
    for (const auto& other : others)
        EXPECT_EQ(events[0].value["drops"][other], nlohmann::json::array({cut}));
    only(events, "heal-etcd");
}

TEST(EtcdFaults, AWorkloadsEtcdFaultsAreCheckedBeforeAnythingStarts) {
    EXPECT_EQ(fault_of(R"({"fault": "kill-etcd", "target": "node:1"})")->target().index, 1);
    try {
        fault_of(R"({"fault": "pause-etcd", "target": "master"})");
        ADD_FAILURE();
    } catch (const WorkloadError& e) {
        EXPECT_STREQ(e.what(),
                     "w.json: /faults/0/target: must be leader|random|node:N for an etcd fault, "
                     "not \"master\"");
    }
    const auto error_of = [](const std::string& text) -> std::string {
        try {
            Workload w = workload_of(text);
            Nemesis::validate(Nemesis::parse(w.faults, w.name), w);
        } catch (const WorkloadError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(error_of(R"({"faults": [{"fault": "kill-etcd"}]})"),
              "adhoc: /faults/0: 'kill-etcd' acts on etcd, and set_nx_px uses none: it could never "
              "fire (an etcd strategy)");
}

TEST(EtcdWorkload, ABadEtcdServersIsNamedByItsPath) {
    const auto error_of = [](const std::string& text) -> std::string {
        try {
            workload_of(text);
        } catch (const WorkloadError& e) {
            return e.what();
        }
        return "";
    };
    EXPECT_EQ(error_of(R"({"topology": {"etcd_servers": 2}})"),
              "w.json: /topology/etcd_servers: must be 1 or an odd cluster of 3, 5 or 7, not 2");
    EXPECT_EQ(error_of(R"({"topology": {"etcd_servers": 9}})")
                  .rfind("w.json: /topology/etcd_servers: ", 0),
              0u);
}

// ---- The command line

using testing::Cli;
using testing::lockbench;

TEST(EtcdCli, AnUnreachableEtcdIsExit4InOneLine) {
    TempDir dir;
    const int nobody = pick_free_port();
    const Cli r = lockbench(dir,
                            "run --strategy set_nx_px --duration 0.2 --no-yardstick "
                            "--out '" +
                                (dir.path() / "results").string() +
                                "' --etcd 127.0.0.1:" + std::to_string(nobody));
    EXPECT_EQ(r.code, 4) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_NE(r.err.find("cannot reach etcd: etcd at 127.0.0.1:" + std::to_string(nobody)),
              std::string::npos)
        << r.err;
}

TEST(EtcdCli, ABadEtcdListIsExit2) {
    TempDir dir;
    const Cli r = lockbench(dir,
                            "run --strategy set_nx_px --duration 0.2 --no-yardstick "
                            "--out '" +
                                (dir.path() / "results").string() + "' --etcd 127.0.0.1:2379,");
    EXPECT_EQ(r.code, 2) << r.err;
    EXPECT_NE(r.err.find("--etcd: an empty HOST:PORT in '127.0.0.1:2379,'"), std::string::npos)
        << r.err;
}

}  // namespace
}  // namespace lockbench
