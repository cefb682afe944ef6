// The embedded ZooKeeper (a real server: Debian's zookeeper package), the C client's bridge to
// the event loop, and `lockbench run --strategy zk_mutex` end to end. The JVM takes a second or
// two to start: one server for the whole binary's tests where they can share it.

#include <algorithm>
#include <fstream>
#include <netinet/in.h>
#include <optional>
#include <set>
#include <signal.h>
#include <sstream>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"
#include "engine/clients/client.hpp"
#include "engine/clients/resource.hpp"
#include "engine/run/run.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/servers/zookeeper_server.hpp"
#include "engine/testing/redis_fixture.hpp"
#include "engine/testing/run_files.hpp"
#include "engine/testing/zookeeper_fixture.hpp"
#include "strategies/client/zk_client.hpp"
#include "strategies/registry.hpp"
#include "strategies/zk_lock_internals.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using testing::Cli, testing::lines, testing::lockbench, testing::TempDir;

// The events of the run's history.jsonl.
std::vector<nlohmann::json> history_of(const RunOutcome& r) {
    return testing::read_history(r.dir / "history.jsonl");
}

// A zk_mutex run of `clients` clients on `keys` keys for `duration_s` seconds.
Workload zk_mutex_workload(double duration_s, int clients, int keys) {
    Workload w;
    w.strategy = "zk_mutex";
    w.duration_s = duration_s;
    w.clients = clients;
    w.keys = keys;
    return w;
}

bool process_exists(pid_t pid) {
    return ::kill(pid, 0) == 0;
}

TEST(ZooKeeperServerTest, StartsAnswersTakesAZnodeAndStopsLeavingNoProcess) {
    pid_t pid = -1;
    fs::path dir;
    {
        ZooKeeperServer server;
        pid = server.pid();
        dir = server.dir();
        ASSERT_TRUE(process_exists(pid));
        EXPECT_EQ(server.four_letter_word("ruok"), "imok");
        EventLoop loop;
        ZkClient zk(loop, server.hosts(), 4000ms, 5000ms);
        run_sync(loop, zk.connected());
        EXPECT_EQ(zk.session_timeout(), 4000ms);  // granted as asked
        auto created =
            run_sync(loop, zk.create("/lockbench-probe", "hello", ZOO_EPHEMERAL_SEQUENTIAL));
        ASSERT_EQ(created.rc, ZOK);
        EXPECT_EQ(created.value, "/lockbench-probe0000000000");
        auto data = run_sync(loop, zk.get_watched(created.value));
        ASSERT_EQ(data.rc, ZOK);
        EXPECT_EQ(data.value, "hello");
        auto children = run_sync(loop, zk.get_children("/"));
        ASSERT_EQ(children.rc, ZOK);
        EXPECT_NE(std::find(children.children.begin(), children.children.end(),
                            "lockbench-probe0000000000"),
                  children.children.end());
        // The watch set by get_watched fires on the deletion.
        auto removed = run_sync(loop, zk.remove(created.value));
        ASSERT_EQ(removed.rc, ZOK);
        EXPECT_TRUE(run_sync(loop, zk.wait_deleted(created.value, EventLoop::now() + 2s)));
        EXPECT_EQ(run_sync(loop, zk.remove(created.value)).rc, ZNONODE);
    }
    EXPECT_FALSE(process_exists(pid));
    EXPECT_FALSE(fs::exists(dir));
}

// What starting a server with `options` threw as an EnvironmentError; nullopt when it started.
std::optional<std::string> environment_error_of(const ZooKeeperServerOptions& options) {
    try {
        ZooKeeperServer server(options);
        return std::nullopt;
    } catch (const EnvironmentError& e) {
        return e.what();
    }
}

TEST(ZooKeeperServerTest, MissingJavaIsAnEnvironmentErrorInOneLine) {
    const auto what = environment_error_of({.java = "/nonexistent/java"});
    ASSERT_TRUE(what) << "started without java";
    EXPECT_NE(what->find("java not found"), std::string::npos) << *what;
    EXPECT_NE(what->find("scripts/bootstrap.sh"), std::string::npos) << *what;
    EXPECT_EQ(what->find('\n'), std::string::npos);
}

TEST(ZooKeeperServerTest, MissingPackageIsAnEnvironmentErrorInOneLine) {
    const auto what = environment_error_of({.jar = "/nonexistent/zookeeper.jar"});
    ASSERT_TRUE(what) << "started without the jar";
    EXPECT_NE(what->find("/nonexistent/zookeeper.jar not found"), std::string::npos) << *what;
    EXPECT_NE(what->find("zookeeper package"), std::string::npos) << *what;
}

TEST(ZooKeeperServerTest, ABusyPortIsAnEnvironmentError) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ASSERT_GE(fd, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ASSERT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ASSERT_EQ(::listen(fd, 4), 0);
    ASSERT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
    const int port = ntohs(addr.sin_port);
    EXPECT_EQ(environment_error_of({.port = port}),
              "ZooKeeper: port " + std::to_string(port) + " is busy");
    ::close(fd);
}

TEST(ZooKeeperServerTest, AClientThatCannotConnectIsAConnectErrorNotAHang) {
    EventLoop loop;
    ZkClient zk(loop, "127.0.0.1:" + std::to_string(pick_free_port()), 4000ms, 300ms);
    const auto start = EventLoop::now();
    EXPECT_THROW(run_sync(loop, zk.connected()), ConnectError);
    EXPECT_LT(EventLoop::now() - start, 1500ms);
}

TEST(ZooKeeperRunTest, ZkMutexRunsEndToEndWithoutFaultsAndHoldsMutualExclusion) {
    TempDir out;
    const Workload w = zk_mutex_workload(1.5, 4, 2);
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    EXPECT_EQ(run_exit_code(r), 0) << r.summary.to_json().dump(2);
    const nlohmann::json checks = r.summary.to_json()["verdict"]["checks"];
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
    EXPECT_EQ(checks["mutual_exclusion"]["valid"], true);
    EXPECT_EQ(checks["mutual_exclusion"]["violations"], 0);
    EXPECT_EQ(checks["resource"]["violations"], 0);
    EXPECT_EQ(checks["fencing"]["grants_without_fence"], 0);
    EXPECT_EQ(checks["fencing"]["repeated_fences"], 0);
    EXPECT_EQ(r.summary.to_json()["ops"]["acquire"]["info"].get<std::uint64_t>(), 0u);
    EXPECT_EQ(r.summary.to_json()["ops"]["release"]["fail"].get<std::uint64_t>(), 0u);
    EXPECT_GT(r.summary.to_json()["throughput"]["cycles"].get<std::uint64_t>(), 20u);
    // Every grant's token is its znode and its fence the node's sequence number.
    int grants = 0;
    for (const auto& e : history_of(r)) {
        if (e["f"] == "acquire" && e["type"] == "invoke") {
            EXPECT_EQ(e["value"]["lease_ms"], w.lease_ms);
        }
        if (e["f"] != "acquire" || e["type"] != "ok")
            continue;
        ++grants;
        const std::string token = e["value"]["token"];
        const std::string prefix = "/lockbench/locks/" + e["key"].get<std::string>() + "/_c_";
        EXPECT_EQ(token.rfind(prefix, 0), 0u) << token;
        EXPECT_EQ(std::stoll(token.substr(token.size() - 10)),
                  e["value"]["fence"].get<std::int64_t>());
    }
    EXPECT_GT(grants, 20);
}

// --zookeeper: the user's ensemble, where lock paths carry the run's key prefix (the history
// names keys as the workload does).
TEST(ZooKeeperRunTest, ZkMutexRunsOnAnEnsembleItDidNotStartWithPerRunPrefixes) {
    ZooKeeperServer ensemble;
    EventLoop loop;
    ZkClient zk(loop, ensemble.hosts(), 4000ms, 5000ms);
    const std::string locks = "/lockbench/locks";
    // Someone else's lock (another run's, still going) is there before and after.
    const std::string empty;
    for (std::string path : {std::string("/lockbench"), locks, locks + "/someone-else"})
        ASSERT_EQ(run_sync(loop, zk.create(path, empty, 0)).rc, ZOK) << path;
    TempDir out;
    const Workload w = zk_mutex_workload(0.5, 2, 2);
    RunOutcome r =
        run_workload({.workload = w, .zookeeper = ensemble.hosts(), .out_dir = out.path()});
    EXPECT_EQ(run_exit_code(r), 0) << r.summary.to_json()["verdict"].dump(2);
    const std::string prefix = r.summary.to_json()["redis"]["key_prefix"];
    ASSERT_EQ(prefix.rfind("lockbench:", 0), 0u) << prefix;
    int grants = 0;
    std::set<std::string> locked;  // each acquire's lock node was made for it
    for (const auto& e : history_of(r)) {
        if (e["f"] == "acquire")
            locked.insert(e["key"].get<std::string>());
        if (e["f"] != "acquire" || e["type"] != "ok")
            continue;
        ++grants;
        const std::string key = e["key"];
        EXPECT_TRUE(key == "k0" || key == "k1") << key;
        const std::string token = e["value"]["token"];
        EXPECT_EQ(token.rfind("/lockbench/locks/" + prefix + key + "/_c_", 0), 0u) << token;
    }
    EXPECT_GT(grants, 5);
    // The run's lock nodes went when it ended; the other lock stays, and so its parents.
    const nlohmann::json cleanup = r.summary.to_json()["cleanup"];
    EXPECT_EQ(cleanup["zookeeper"]["hosts"], ensemble.hosts()) << cleanup.dump();
    EXPECT_EQ(cleanup["zookeeper"]["deleted"], locked.size()) << cleanup.dump();
    EXPECT_EQ(cleanup["left"], nlohmann::json::array()) << cleanup.dump();
    auto children = run_sync(loop, zk.get_children(locks));
    ASSERT_EQ(children.rc, ZOK);
    EXPECT_EQ(children.children, std::vector<std::string>{"someone-else"});
}

TEST(ZooKeeperCliTest, StrategiesListsZkMutexAndAnUnreachableEnsembleIsExitFour) {
    TempDir scratch;
    Cli list = lockbench(scratch, "strategies");
    ASSERT_EQ(list.code, 0) << list.err;
    EXPECT_NE(list.out.find("zk_mutex"), std::string::npos) << list.out;
    EXPECT_NE(list.out.find("zookeeper"), std::string::npos) << list.out;

    const int port = pick_free_port();  // nobody listens there
    Cli run = lockbench(scratch, "run --strategy zk_mutex --duration 0.5 --out '" +
                                     (scratch.path() / "results").string() +
                                     "' --zookeeper 127.0.0.1:" + std::to_string(port));
    EXPECT_EQ(run.code, 4) << run.err;
    EXPECT_EQ(lines(run.err), 1u) << run.err;
    EXPECT_NE(run.err.find("cannot reach ZooKeeper at 127.0.0.1:" + std::to_string(port)),
              std::string::npos)
        << run.err;

    Cli bad = lockbench(scratch, "run --strategy zk_mutex --zookeeper nohostport");
    EXPECT_EQ(bad.code, 2) << bad.err;
    EXPECT_EQ(lines(bad.err), 1u) << bad.err;
    EXPECT_NE(bad.err.find("--zookeeper"), std::string::npos) << bad.err;
}

// Clients that reach Redis but not a ZooKeeper session (a 1 ms lease, far below what the server
// grants) are counted before they are stopped, and the message names ZooKeeper: it said "only 2
// of 2 clients could connect to Redis".
TEST(ZooKeeperCliTest, ClientsWithoutAZooKeeperSessionAreNamedAsSuch) {
    TempDir scratch;
    const Cli run = lockbench(scratch,
                              "run --no-yardstick --strategy zk_mutex --lease-ms 1 --clients 2 "
                              "--duration 0.5 --out '" +
                                  (scratch.path() / "results").string() + "'");
    EXPECT_EQ(run.code, 4) << run.err;
    EXPECT_EQ(lines(run.err), 1u) << run.err;
    EXPECT_EQ(run.err.rfind("lockbench: only 0 of 2 clients could connect to ZooKeeper within ", 0),
              0u)
        << run.err;
}

// The suite and a demonstration take the user's ensemble as a run does: the lock nodes are
// there, under the run's prefix, and the summary names the ensemble.
TEST(ZooKeeperCliTest, SuiteAndDemoRunZooKeepersLocksOnTheUsersEnsemble) {
    ZooKeeperServer ensemble;
    TempDir scratch;
    const fs::path suite_out = scratch.path() / "suite", demo_out = scratch.path() / "demo";
    Cli suite = lockbench(scratch,
                          "suite --scenario holder-crash --strategy zk_rwlock "
                          "--no-yardstick --zookeeper " +
                              ensemble.hosts() + " --out '" + suite_out.string() + "'");
    EXPECT_EQ(suite.code, 0) << suite.out << suite.err;
    EXPECT_NE(suite.out.find("1 of 1 runs as expected"), std::string::npos) << suite.out;
    Cli demo = lockbench(scratch, "demo holder-crash --strategy zk_mutex --zookeeper " +
                                      ensemble.hosts() + " --out '" + demo_out.string() + "'");
    EXPECT_EQ(demo.code, 0) << demo.out << demo.err;

    std::vector<std::string> prefixes;
    int cleaned_up = 0;
    for (const fs::path& summary : {suite_out, demo_out}) {
        for (const auto& e : fs::recursive_directory_iterator(summary)) {
            if (e.path().filename() != "summary.json")
                continue;
            const auto s = nlohmann::json::parse(std::ifstream(e.path()));
            EXPECT_EQ(s["zookeeper"]["mode"], "external") << e.path();
            EXPECT_EQ(s["zookeeper"]["hosts"], ensemble.hosts()) << e.path();
            prefixes.push_back(s["redis"]["key_prefix"]);
            cleaned_up +=
                s["cleanup"]["zookeeper"]["deleted"].get<int>() > 0 && s["cleanup"]["left"].empty();
        }
    }
    ASSERT_EQ(prefixes.size(), 2u);
    EXPECT_EQ(cleaned_up, 2);
    // Each run took its lock nodes away, and the last one the parents it left empty: the
    // ensemble has what it had before, its root's zookeeper node only.
    EventLoop loop;
    ZkClient zk(loop, ensemble.hosts(), 4000ms, 5000ms);
    EXPECT_EQ(run_sync(loop, zk.get_children("/lockbench")).rc, ZNONODE);
    EXPECT_EQ(run_sync(loop, zk.get_children("/")).children, std::vector<std::string>{"zookeeper"});

    Cli unreachable =
        lockbench(scratch,
                  "suite --scenario holder-crash --strategy "
                  "zk_mutex --no-yardstick --zookeeper 127.0.0.1:" +
                      std::to_string(pick_free_port()) + " --out '" + suite_out.string() + "'");
    EXPECT_EQ(unreachable.code, 4) << unreachable.out << unreachable.err;
    EXPECT_EQ(lines(unreachable.err), 1u) << unreachable.err;
}

// The grant an acquire answered (none: it was denied).
std::optional<Grant> grant_of(const AcquireResult& result) {
    if (const Grant* grant = std::get_if<Grant>(&result))
        return *grant;
    return std::nullopt;
}

// The fence of a ZooKeeper lock is its node's sequence number, and the protected resource checks
// it as it checks fenced's number. Here the holder's node goes as the server deletes it when the
// holder's session expires (a second handle deletes it, so the holder itself keeps running and
// still believes it holds); the next holder gets a higher fence and writes; the first holder's
// late write is then refused by the fenced register and accepted by the plain counter.
class ZooKeeperFenceTest : public testing::RedisAndZooKeeperTest {};

TEST_F(ZooKeeperFenceTest, AStaleHoldersWriteIsRefusedByItsNodesSequenceNumber) {
    for (const std::string strategy : {"zk_mutex", "zk_rwlock"}) {
        SCOPED_TRACE(strategy);
        server().command({"FLUSHALL"});
        auto a = zk_session("a-" + strategy), b = zk_session("b-" + strategy);
        auto lock_a = make_strategy(strategy), lock_b = make_strategy(strategy);
        const std::string key = "orders-" + strategy;
        const AcquireRequest request{.key = key, .lease = 4000ms, .wait_budget = 3000ms};
        const std::optional<Grant> stale = grant_of(run(lock_a->acquire(*a, request)));
        ASSERT_TRUE(stale);
        ASSERT_TRUE(stale->fence.has_value());

        // The server takes the node away (the session expired); the holder is not told.
        EventLoop loop;
        ZkClient undertaker(loop, zookeeper_->hosts(), 4000ms, 5000ms);
        ASSERT_EQ(run_sync(loop, undertaker.remove(stale->token)).rc, ZOK);
        const std::optional<Grant> current = grant_of(run(lock_b->acquire(*b, request)));
        ASSERT_TRUE(current);
        ASSERT_TRUE(current->fence.has_value());
        EXPECT_GT(*current->fence, *stale->fence);

        ProtectedResource fenced(true), counter(false);
        EXPECT_TRUE(run(fenced.write(*b, key, 1, current->fence)));
        EXPECT_FALSE(run(fenced.write(*a, key, 1, stale->fence)));  // the fence saves it
        EXPECT_TRUE(run(counter.write(*b, key, 1, std::nullopt)));
        EXPECT_TRUE(run(counter.write(*a, key, 1, std::nullopt)));  // a lost update, unfenced
        EXPECT_EQ(run(lock_a->release(*a, *stale)), ReleaseOutcome::NotHeld);
        EXPECT_EQ(run(lock_b->release(*b, *current)), ReleaseOutcome::Released);
    }
}

// A crash (Session::kill): the dead client's session ends on the server when its timeout has
// passed - not before (the lock stays with the dead holder meanwhile), and not never - so its
// ephemeral node goes and a waiter gets the lock; the killed handle refuses every further call.
TEST(ZooKeeperServerTest, AKilledClientsSessionEndsAfterItsTimeoutAndItsNodesGo) {
    ZooKeeperServer server;
    EventLoop loop;
    auto a = std::make_unique<ZkClient>(loop, server.hosts(), 600ms, 5000ms);
    ZkClient b(loop, server.hosts(), 4000ms, 5000ms);
    run_sync(loop, a->connected());
    run_sync(loop, b.connected());
    const std::string node = "/held", none;
    ASSERT_EQ(run_sync(loop, a->create(node, none, ZOO_EPHEMERAL)).rc, ZOK);
    ASSERT_EQ(run_sync(loop, b.get_watched(node)).rc, ZOK);
    const auto start = EventLoop::now();
    a->kill("crashed");
    EXPECT_THROW(run_sync(loop, a->get_children(node)), ClosedError);
    a.reset();  // the process is gone; its session is not, yet
    EXPECT_FALSE(run_sync(loop, b.wait_deleted(node, start + 400ms)));
    EXPECT_TRUE(run_sync(loop, b.wait_deleted(node, start + 3s)));
    EXPECT_GE(EventLoop::now() - start, 590ms);
    EXPECT_LT(EventLoop::now() - start, 2s);
    EXPECT_EQ(run_sync(loop, b.get_watched(node)).rc, ZNONODE);
    // The undertaker closes the dead handle after the session ended; a test that exits before
    // it has leaves the handle's threads unjoined (TSan: a thread leak), as a run would.
    EXPECT_TRUE(ZkClient::wait_for_undertakers(5s));
}

// Three members elect one leader. Killed, the leader is replaced by one of the others, and a
// node created before the kill is still there (it was written to a majority); restarted, it
// rejoins as a follower. A paused member is no member while stopped. Nothing is left behind.
TEST(ZooKeeperEnsembleTest, ElectsANewLeaderWhenItsLeaderIsKilledAndTheOldOneRejoins) {
    std::vector<pid_t> pids;
    std::vector<fs::path> dirs;
    {
        ZooKeeperEnsemble ensemble(3);
        ASSERT_EQ(ensemble.size(), 3u);
        int leaders = 0, followers = 0;
        for (std::size_t i = 0; i < 3; ++i) {
            pids.push_back(ensemble.server(i).pid());
            dirs.push_back(ensemble.server(i).dir());
            const std::string mode = ensemble.server(i).mode();
            leaders += mode == "leader";
            followers += mode == "follower";
        }
        EXPECT_EQ(leaders, 1);
        EXPECT_EQ(followers, 2);
        const std::string hosts = ensemble.hosts();
        EXPECT_EQ(std::count(hosts.begin(), hosts.end(), ','), 2);

        EventLoop loop;
        ZkClient zk(loop, ensemble.hosts(), 4000ms, 5000ms);
        run_sync(loop, zk.connected());
        const std::string node = "/written-before", none;
        ASSERT_EQ(run_sync(loop, zk.create(node, none, 0)).rc, ZOK);

        const auto old_leader = ensemble.leader();
        ASSERT_TRUE(old_leader.has_value());
        ensemble.server(*old_leader).kill();
        EXPECT_FALSE(process_exists(pids[*old_leader]));
        const auto new_leader = ensemble.wait_for_leader(10s);
        ASSERT_TRUE(new_leader.has_value()) << "no leader after the kill";
        EXPECT_NE(*new_leader, *old_leader);
        // The client's session moved to a live member and the node survived.
        EXPECT_EQ(run_sync(loop, zk.get_watched(node)).rc, ZOK);

        ensemble.server(*old_leader).restart();
        EXPECT_EQ(ensemble.server(*old_leader).mode(), "follower");
        EXPECT_EQ(ensemble.leader(), new_leader);

        ensemble.server(*new_leader).pause();
        EXPECT_EQ(ensemble.server(*new_leader).four_letter_word("srvr"), "");  // stopped: silent
        ensemble.server(*new_leader).resume();
        // Answers again - once the JVM has run long enough after SIGCONT to notice the socket (a
        // sanitizer build's CI machine once took more than the 1 s one ask waits).
        std::string answer;
        for (const auto until = std::chrono::steady_clock::now() + 10s;
             answer.empty() && std::chrono::steady_clock::now() < until;)
            answer = ensemble.server(*new_leader).four_letter_word("srvr");
        EXPECT_NE(answer, "");
        pids[*old_leader] = ensemble.server(*old_leader).pid();
    }
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_FALSE(process_exists(pids[i])) << i;
        EXPECT_FALSE(fs::exists(dirs[i])) << i;
    }
}

// The embedded server's session limits (zookeeper_server.cpp: minSessionTimeout,
// maxSessionTimeout): a session that asks for less or more is clamped to them.
constexpr auto kEmbeddedMinSession = 100ms;
constexpr auto kEmbeddedMaxSession = 600'000ms;

Workload workload_from(const fs::path& dir, const std::string& json) {
    const fs::path file = dir / "workload-under-test.json";
    std::ofstream(file) << json;
    return Workload::load(file);
}

// A ZooKeeper lock's lease is the session timeout the server negotiated, not the one asked for:
// the lock lives as long as that session. Redis strategies apply the lease they were given.
class ZooKeeperLockTest : public testing::RedisTest {
  protected:
    std::unique_ptr<Session> zk_session(const ZooKeeperServer& zookeeper, const std::string& name,
                                        std::chrono::milliseconds connect_timeout = 1000ms) {
        auto session =
            make_session(name, Clock(), ConnectionOptions{.connect_timeout = connect_timeout});
        session->set_zookeeper_hosts(zookeeper.hosts());
        return session;
    }
};

TEST_F(ZooKeeperLockTest, TheAppliedLeaseIsTheSessionTimeoutTheServerNegotiated) {
    ZooKeeperServer zookeeper;
    for (const std::string strategy : {"zk_mutex", "zk_rwlock"}) {
        SCOPED_TRACE(strategy);
        const std::pair<std::chrono::milliseconds, std::chrono::milliseconds> asked_granted[] = {
            {50ms, kEmbeddedMinSession}, {4000ms, 4000ms}, {700'000ms, kEmbeddedMaxSession}};
        for (const auto& [asked, granted] : asked_granted) {
            SCOPED_TRACE(asked.count());
            auto session = zk_session(zookeeper, strategy + std::to_string(asked.count()));
            auto lock = make_strategy(strategy);
            EXPECT_EQ(run(lock->applied_lease(*session, asked)), granted);
            // The grant carries the same lease (the same session).
            const AcquireRequest request{.key = "lease-" + strategy, .lease = asked};
            const std::optional<Grant> grant = grant_of(run(lock->acquire(*session, request)));
            ASSERT_TRUE(grant);
            EXPECT_EQ(grant->lease, granted);
            EXPECT_EQ(run(lock->release(*session, *grant)), ReleaseOutcome::Released);
        }
    }
    auto redis_session = make_session("redis");
    auto redis_lock = make_strategy("set_nx_px");
    EXPECT_EQ(run(redis_lock->applied_lease(*redis_session, 700'000ms)), std::nullopt);
}

// Item 1 of issue 26: a release that cannot reach the server (it is restarting) left the lock
// node behind under the live session and said `fail` - nothing changed - while nobody got the
// lock again. The release is in doubt: the node stays, holding the lock, until this client's next
// attempt deletes it, and then the lock is granted again.
TEST_F(ZooKeeperLockTest, AReleaseThatCannotReachTheServerIsInDoubtAndItsNodeGoesNextAttempt) {
    ZooKeeperServer zookeeper;
    for (const std::string strategy : {"zk_mutex", "zk_rwlock"}) {
        SCOPED_TRACE(strategy);
        auto a = zk_session(zookeeper, "a-" + strategy, 300ms);
        auto lock_a = make_strategy(strategy), lock_b = make_strategy(strategy);
        const std::string key = "restarting-" + strategy;
        const AcquireRequest request{.key = key, .lease = 4000ms, .wait_budget = 3000ms};
        const std::optional<Grant> held = grant_of(run(lock_a->acquire(*a, request)));
        ASSERT_TRUE(held);

        zookeeper.kill();
        // Wait until the client knows the server is gone: the delete is then never sent (a
        // delete sent before that is lost on the way, the case that was already in doubt).
        ZkClient& zk_a = a->zookeeper(request.lease);
        for (bool gone = false; !gone;) {
            try {
                run(zk_a.connected());
                std::this_thread::sleep_for(5ms);
            } catch (const ConnectError&) {
                gone = true;
            }
        }
        try {
            run(lock_a->release(*a, *held));
            FAIL() << "a release without a server succeeded";
        } catch (const RedisError& e) {
            EXPECT_NE(dynamic_cast<const TimeoutError*>(&e), nullptr) << e.what();
            EXPECT_EQ(failure_of(e).type, EventType::Info) << e.what();
        }

        zookeeper.restart();
        // The node outlived the release: the lock is still held, by nobody.
        auto b = zk_session(zookeeper, "b-" + strategy);
        const AcquireRequest once{.key = key, .lease = 4000ms};
        auto refused = run(lock_b->acquire(*b, once));
        ASSERT_NE(std::get_if<Denied>(&refused), nullptr);
        EXPECT_EQ(std::get<Denied>(refused).why, Denied::Why::Held);

        // The same session comes back, and its next attempt deletes the node first.
        for (bool back = false; !back;) {
            try {
                run(zk_a.connected());
                back = true;
            } catch (const ConnectError&) {
            }
        }
        const std::optional<Grant> regranted = grant_of(run(lock_a->acquire(*a, request)));
        ASSERT_TRUE(regranted) << "the released node still blocks the lock";
        EXPECT_FALSE(regranted->reentry);
        EXPECT_GT(*regranted->fence, *held->fence);
        EXPECT_EQ(run(lock_a->release(*a, *regranted)), ReleaseOutcome::Released);
        const std::optional<Grant> b_grant = grant_of(run(lock_b->acquire(*b, once)));
        ASSERT_TRUE(b_grant);
        EXPECT_EQ(run(lock_b->release(*b, *b_grant)), ReleaseOutcome::Released);
    }
}

// A waiter's node outlives its acquire: the server went away while the client waited in the
// queue, so its delete could not be sent and the acquire is in doubt. Once the holder releases,
// that node is first in the queue and holds the lock for nobody until this client's next attempt
// deletes it. The history must show that hold end (a main job's zk-server-restarted x zk_rwlock
// was judged not linearizable without it: a grant came while the model still saw the in-doubt
// acquire's lease running): the attempt reports the node's hold as a late grant and its delete as
// that grant's release. A node found further back never held the lock: nothing is reported.
TEST_F(ZooKeeperLockTest, AnInDoubtAcquiresNodeFoundFirstInTheQueueIsReportedAsALateGrant) {
    ZooKeeperServer zookeeper;
    for (const std::string strategy : {"zk_mutex", "zk_rwlock"}) {
        for (const bool holder_released : {true, false}) {
            SCOPED_TRACE(strategy +
                         (holder_released ? ": the holder released" : ": the holder still holds"));
            const std::string key = "queued-" + strategy + std::to_string(holder_released);
            auto a = zk_session(zookeeper, "a-" + key, 300ms);
            auto b = zk_session(zookeeper, "b-" + key);
            auto lock_a = make_strategy(strategy), lock_b = make_strategy(strategy);
            const AcquireRequest request{.key = key, .lease = 4000ms, .wait_budget = 3000ms};
            const std::optional<Grant> held = grant_of(run(lock_b->acquire(*b, request)));
            ASSERT_TRUE(held);

            struct Report {
                std::string key, phase, token;
                bool ok;
            };
            std::vector<Report> reports;
            a->set_late_grant_hook([&reports](const std::string& k, std::string_view phase, bool ok,
                                              const std::string& token) {
                reports.push_back({k, std::string(phase), token, ok});
            });
            // The server dies once a's node is in the queue behind b's.
            a->set_checkpoint_hook([&zookeeper](std::string_view point) {
                if (point == ZkLockInternals::kQueued && zookeeper.running())
                    zookeeper.kill();
                return 0ms;
            });
            try {
                run(lock_a->acquire(*a, request));
                FAIL() << "an acquire without a server ended definitely";
            } catch (const RedisError& e) {
                EXPECT_EQ(failure_of(e).type, EventType::Info) << e.what();
            }
            a->set_checkpoint_hook({});
            zookeeper.restart();
            const auto reconnect = [this](Session& session) {
                ZkClient& zk = session.zookeeper(4000ms);
                for (bool back = false; !back;) {
                    try {
                        run(zk.connected());
                        back = true;
                    } catch (const ConnectError&) {
                    }
                }
            };
            reconnect(*b);
            reconnect(*a);
            if (holder_released) {
                EXPECT_EQ(run(lock_b->release(*b, *held)), ReleaseOutcome::Released);
            }

            const AcquireRequest once{.key = key, .lease = 4000ms};
            auto next = run(lock_a->acquire(*a, once));
            if (holder_released) {
                ASSERT_EQ(reports.size(), 2u);
                EXPECT_EQ(reports[0].phase, "granted");
                EXPECT_EQ(reports[1].phase, "released");
                EXPECT_TRUE(reports[1].ok);
                for (const auto& r : reports) {
                    EXPECT_EQ(r.key, key);
                    EXPECT_TRUE(r.token.starts_with(ZkLockInternals::lock_path(key) + "/_c_"))
                        << r.token;
                }
                // The node is gone: the next attempt got the lock.
                const std::optional<Grant> regranted = grant_of(next);
                ASSERT_TRUE(regranted);
                EXPECT_NE(regranted->token, reports[0].token);
                EXPECT_EQ(run(lock_a->release(*a, *regranted)), ReleaseOutcome::Released);
            } else {
                EXPECT_TRUE(reports.empty())
                    << reports.size() << " reports, the first " << reports.front().phase;
                ASSERT_NE(std::get_if<Denied>(&next), nullptr);
                EXPECT_EQ(run(lock_b->release(*b, *held)), ReleaseOutcome::Released);
            }
        }
    }
}

// Item 1's timing as a run: zk-server-restarted with the server down for 1.5 s and a 300 ms
// connect timeout. The holder of k0 is paused across the kill, so its release comes while the
// server is down whatever the machine's speed: it is `info`, and once the server is back the lock
// is granted again - before the fix, every acquire until the end was refused `held` and the run
// was VALID. The run lasts long enough after the restart for a client whose connection attempt
// met the starting server (ZooKeeper 3.8 may then leave the socket open, unanswered) to give that
// connection up, after 2/3 of its session timeout, and reconnect.
TEST(ZooKeeperRunTest, AReleaseDuringARestartIsInDoubtAndTheLockIsGrantedAgainAfterIt) {
    TempDir out;
    Workload w = workload_from(out.path(), R"({
        "name": "zk-release-during-restart", "strategy": "zk_mutex",
        "clients": 6, "keys": 1, "hold_ms": 5, "think_ms": 5, "lease_ms": 4000, "wait_ms": 1000,
        "duration_s": 9, "seed": 33, "connect_timeout_ms": 300,
        "faults": [
          {"fault": "pause-client", "target": "holder", "key": "k0", "at_s": 0.5,
           "duration_ms": 1500},
          {"fault": "kill-zookeeper", "target": "node:0", "at_s": 1.0, "restart_after_ms": 1500}
        ]})");
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    EXPECT_EQ(run_exit_code(r), 0) << r.summary.to_json()["verdict"].dump(2);
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump(2);
    int releases_in_doubt = 0, releases_failed = 0, grants_after_restart = 0;
    bool restarted = false;
    for (const auto& e : history_of(r)) {
        if (e["process"] == "nemesis" && e["f"] == "restart-zookeeper")
            restarted = true;
        if (e["f"] == "release" && e["type"] == "fail")
            ++releases_failed;
        if (e["f"] == "release" && e["type"] == "info" &&
            e["error"].get<std::string>().find("cannot connect") != std::string::npos)
            ++releases_in_doubt;
        if (e["f"] == "acquire" && e["type"] == "ok" && restarted)
            ++grants_after_restart;
    }
    ASSERT_TRUE(restarted);
    EXPECT_GE(releases_in_doubt, 1);  // the paused holder's, at least
    EXPECT_EQ(releases_failed, 0);
    EXPECT_GT(grants_after_restart, 0) << "k0 was never granted again after the restart";
}

// Item 4 of issue 26: the history's lease_ms is the session timeout the server negotiated. Above
// the server's limit, the workload's lease would make a correct re-grant a lost lock; below it, a
// lenient model and a story naming the wrong timeout.
TEST(ZooKeeperRunTest, TheHistorysLeaseIsTheNegotiatedSessionTimeoutAboveAndBelowTheLimits) {
    {
        SCOPED_TRACE("above");
        TempDir out;
        Workload w = zk_mutex_workload(0.5, 2, 1);
        w.lease_ms = 700'000;
        RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
        EXPECT_EQ(run_exit_code(r), 0) << r.summary.to_json()["verdict"].dump(2);
        int invokes = 0;
        for (const auto& e : history_of(r)) {
            if (e["f"] == "acquire" && e["type"] == "invoke") {
                ++invokes;
                EXPECT_EQ(e["value"]["lease_ms"], kEmbeddedMaxSession.count());
            }
        }
        EXPECT_GT(invokes, 0);
    }
    SCOPED_TRACE("below");
    // zk-client-partitioned on one server, asking for 50 ms: the holder cut off is expired after
    // the 100 ms the server granted, and the story tells that timeout.
    TempDir out;
    Workload w = workload_from(out.path(), R"({
        "name": "zk-lease-below-limit", "strategy": "zk_mutex",
        "clients": 4, "keys": 1, "hold_ms": 1000, "lease_ms": 50, "wait_ms": 3000,
        "duration_s": 3, "seed": 34,
        "faults": [{"fault": "partition-client", "target": "holder", "key": "k0", "at_s": 0.5,
                    "duration_ms": 2000}]})");
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    EXPECT_EQ(r.summary.to_json()["verdict"]["checks"]["mutual_exclusion"]["valid"], false)
        << r.summary.to_json()["verdict"].dump(2);
    std::map<std::int64_t, std::vector<std::int64_t>> grants_ns;
    for (const auto& e : history_of(r)) {
        if (e["f"] == "acquire" && e["type"] == "invoke") {
            EXPECT_EQ(e["value"]["lease_ms"], kEmbeddedMinSession.count());
        }
        if (e["f"] == "acquire" && e["type"] == "ok")
            grants_ns[e["process"].get<std::int64_t>()].push_back(e["time"].get<std::int64_t>());
    }
    const std::string story = testing::read_file(r.dir / "story.txt");
    EXPECT_NE(story.find("session timeout 100 ms"), std::string::npos) << story;
    EXPECT_NE(story.find("Its 100 ms session timeout ran out"), std::string::npos) << story;
    EXPECT_EQ(story.find("50 ms"), std::string::npos) << story;
    // The timeline draws each holder's timeout where it ran out: 100 ms after its grant.
    const std::string timeline = testing::read_file(r.dir / "timeline.html");
    const std::string title = "'s session timeout ran out by ";
    int drawn = 0;
    for (auto at = timeline.find(title); at != std::string::npos;
         at = timeline.find(title, at + 1)) {
        const auto process_at = timeline.rfind("process ", at) + 8;
        const std::int64_t process = std::stoll(timeline.substr(process_at, at - process_at));
        const double ran_out_s = std::stod(timeline.substr(at + title.size()));
        const auto& grants = grants_ns[process];
        const bool matches = std::any_of(grants.begin(), grants.end(), [&](std::int64_t g) {
            return std::abs(ran_out_s * 1e9 - static_cast<double>(g + 100'000'000)) < 1.5e6;
        });
        EXPECT_TRUE(matches) << "process " << process << " ran out at " << ran_out_s;
        ++drawn;
    }
    EXPECT_GT(drawn, 0) << "no hold outlived its session timeout in the timeline";
}

}  // namespace
}  // namespace lockbench
