// Every strategy against a real redis-server: the contract all of them share (exclusion, release
// by the owner, expiry, a dead server is an error and not a hang), then what makes each one
// distinct, flaws included (T8, T9) - a demonstration that does not demonstrate fails here.

#include <deque>
#include <thread>
#include <zookeeper/zookeeper.h>

#include <gtest/gtest.h>

#include "engine/servers/zookeeper_server.hpp"
#include "engine/testing/redis_fixture.hpp"
#include "engine/testing/zookeeper_fixture.hpp"
#include "engine/topology/fault_proxy.hpp"
#include "strategies/client/zk_client.hpp"
#include "strategies/fenced.hpp"
#include "strategies/redlock.hpp"
#include "strategies/reentrant_hash.hpp"
#include "strategies/registry.hpp"
#include "strategies/rwlock.hpp"
#include "strategies/setnx_getset.hpp"
#include "strategies/zk_mutex.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using testing::RedisTest;

const Grant* as_grant(const AcquireResult& r) {
    return std::get_if<Grant>(&r);
}

struct Client {
    std::unique_ptr<Session> session;
    std::unique_ptr<Strategy> strategy;

    Task<AcquireResult> acquire(std::string key, std::chrono::milliseconds lease,
                                LockMode mode = LockMode::Exclusive,
                                std::chrono::milliseconds wait = 0ms) {
        AcquireRequest req{
            .key = std::move(key), .mode = mode, .lease = lease, .wait_budget = wait};
        co_return co_await strategy->acquire(*session, req);
    }
    // The client's hold of `key` and, at once, its re-entry: the first acquire and the second.
    Task<std::pair<AcquireResult, AcquireResult>> acquire_and_reenter(
        std::string key, std::chrono::milliseconds lease, LockMode mode = LockMode::Exclusive) {
        AcquireResult hold = co_await acquire(key, lease, mode);
        AcquireResult reentry = co_await acquire(key, lease, mode);
        co_return std::pair{std::move(hold), std::move(reentry)};
    }
    Task<ReleaseOutcome> release(Grant g) { co_return co_await strategy->release(*session, g); }
    EventLoop::SleepAwaiter loop_sleep(std::chrono::milliseconds d) {
        return session->loop().sleep_for(d);
    }
};

class StrategyContractTest : public RedisTest, public ::testing::WithParamInterface<std::string> {
  protected:
    static bool uses_zookeeper() { return find_strategy(GetParam())->capabilities.zookeeper; }
    // ZooKeeper strategies: one real server for the binary (a JVM takes a second to start), or
    // a new one after a test killed it.
    static ZooKeeperServer& zookeeper() {
        if (!zookeeper_ || !zookeeper_->alive())
            zookeeper_ = std::make_unique<ZooKeeperServer>();
        return *zookeeper_;
    }
    static void TearDownTestSuite() {
        zookeeper_.reset();
        replica_.reset();
        RedisTest::TearDownTestSuite();
    }
    // Strategies that count a grant once a replica acknowledged it: a replica of the suite's
    // server, waited for until it acknowledges (a killed and restarted server gets it back).
    void ensure_replica() {
        if (!replica_ || !replica_->alive()) {
            replica_ = std::make_unique<RedisServer>(RedisServerOptions{
                .extra_args = {"--replicaof", "127.0.0.1", std::to_string(server().port())}});
        }
        RedisConnection probe(loop_, server().endpoint());
        for (auto until = EventLoop::now() + 10s; EventLoop::now() < until;) {
            const long long acks = run([](RedisConnection& c) -> Task<long long> {
                co_await c.command("PUBLISH", "probe", "1");
                co_return (co_await c.command("WAIT", "1", "100")).as_integer();
            }(probe));
            if (acks >= 1)
                return;
        }
        FAIL() << "the replica never acknowledged a write";
    }
    Client client(const std::string& name, Clock clock = Clock(), ConnectionOptions options = {},
                  StrategyOptions strategy_options = {}) {
        auto session = make_session(name, std::move(clock), options);
        if (uses_zookeeper())
            session->set_zookeeper_hosts(zookeeper().hosts());
        if (find_strategy(GetParam())->capabilities.needs_replicas)
            ensure_replica();
        return Client{std::move(session), make_strategy(GetParam(), strategy_options)};
    }
    void TearDown() override {
        for (auto* c : {&a_, &b_}) {
            if (c->strategy)
                run(c->strategy->shutdown(*c->session));
        }
    }
    Client a_, b_;
    static inline std::unique_ptr<ZooKeeperServer> zookeeper_;
    static inline std::unique_ptr<RedisServer> replica_;
};

TEST_P(StrategyContractTest, ExcludesASecondClientUntilTheOwnerReleases) {
    a_ = client("a");
    b_ = client("b");
    auto first = run(a_.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(first), nullptr);
    auto second = run(b_.acquire("orders", 5000ms));
    ASSERT_TRUE(std::holds_alternative<Denied>(second));
    // Redlock cannot tell a holder's keys from a failed attempt's: it never claims "held".
    EXPECT_EQ(std::get<Denied>(second).why,
              GetParam() == "redlock" ? Denied::Why::NoQuorum : Denied::Why::Held);

    EXPECT_EQ(run(a_.release(*as_grant(first))), ReleaseOutcome::Released);
    auto third = run(b_.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(third), nullptr);
    EXPECT_NE(as_grant(third)->token, as_grant(first)->token);
    EXPECT_EQ(run(b_.release(*as_grant(third))), ReleaseOutcome::Released);
}

TEST_P(StrategyContractTest, AWaiterGetsTheLockOnceItIsReleased) {
    a_ = client("a");
    b_ = client("b");
    auto first = run(a_.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(first), nullptr);
    // Release from a timer while b waits with a budget.
    Grant g = *as_grant(first);
    bool released = false;
    spawn_detached(
        [](Client& c, EventLoop& loop, Grant grant) -> Task<void> {
            co_await loop.sleep_for(150ms);
            co_await c.release(grant);
        }(a_, loop_, g),
        [&released](std::exception_ptr) { released = true; });
    auto start = EventLoop::now();
    auto second = run(b_.acquire("orders", 5000ms, LockMode::Exclusive, 3000ms));
    // b can be granted before a's release has read all its replies (redlock asks every node);
    // drive the loop until the release is done so no coroutine frame outlives the test.
    while (!released)
        loop_.run_once(10ms);
    ASSERT_NE(as_grant(second), nullptr) << to_string(std::get<Denied>(second).why);
    EXPECT_GE(EventLoop::now() - start, 140ms);
}

// What a lease does when nothing renews it. A watchdog would renew it for as long as the client
// runs - that is its purpose, tested on its own below - so this case turns it off.
TEST_P(StrategyContractTest, ALockExpiresAfterItsLease) {
    a_ = client("a", Clock(), {}, {.watchdog = false});
    b_ = client("b", Clock(), {}, {.watchdog = false});
    auto first = run(a_.acquire("orders", 200ms));
    ASSERT_NE(as_grant(first), nullptr);
    if (uses_zookeeper()) {
        // The lease is the session's timeout, and a live client's session is renewed by the C
        // client's own heartbeats: the lock lasts while the holder lives, and passes on once its
        // session is gone - for a crashed holder, when its timeout has passed (zk_client.hpp).
        std::this_thread::sleep_for(350ms);
        EXPECT_TRUE(std::holds_alternative<Denied>(run(b_.acquire("orders", 5000ms))));
        a_.session->kill("crashed");
        const auto crashed = EventLoop::now();
        auto after = run(b_.acquire("orders", 5000ms, LockMode::Exclusive, 3000ms));
        ASSERT_NE(as_grant(after), nullptr);
        EXPECT_GE(EventLoop::now() - crashed, 190ms);
        // The dead handle is closed after its session ended; leaving before that leaks its
        // threads (TSan says so).
        EXPECT_TRUE(ZkClient::wait_for_undertakers(5s));
        return;
    }
    std::this_thread::sleep_for(350ms);
    auto second = run(b_.acquire("orders", 5000ms));
    if (find_strategy(GetParam())->capabilities.expires) {
        EXPECT_NE(as_grant(second), nullptr);
    } else {
        // rwlock_seed has no expiry: a holder that never releases blocks everyone (seed 001).
        EXPECT_TRUE(std::holds_alternative<Denied>(second));
    }
}

TEST_P(StrategyContractTest, ADeadServerIsAnErrorNotAHang) {
    a_ = client("a", Clock(), {.connect_timeout = 300ms, .command_timeout = 300ms});
    if (uses_zookeeper())
        zookeeper().stop();  // where the lock lives
    else
        server().kill();
    auto start = EventLoop::now();
    EXPECT_THROW(run(a_.acquire("orders", 5000ms, LockMode::Exclusive, 2000ms)), IoError);
    EXPECT_LT(EventLoop::now() - start, 1500ms);
}

INSTANTIATE_TEST_SUITE_P(Strategies, StrategyContractTest,
                         ::testing::Values("setnx_getset", "set_nx_px", "set_nx_px_del",
                                           "set_nx_px_wait", "reentrant_hash", "rwlock_seed",
                                           "rwlock", "fenced", "redlock", "zk_mutex", "zk_rwlock"),
                         [](const auto& param_info) { return param_info.param; });

// ---- what distinguishes them
// ---------------------------------------------------------------------

class StrategyTest : public RedisTest {
  protected:
    Client client(const std::string& strategy, const std::string& name, Clock clock = Clock()) {
        return Client{make_session(name, std::move(clock)), make_strategy(strategy)};
    }
};

// T8: a holder whose lease ran out releases late. The Lua compare-and-delete refuses; plain DEL
// deletes the new holder's lock and lets a third client in beside it.
TEST_F(StrategyTest, SetNxPxRefusesANonOwnerReleaseWhileSetNxPxDelDeletesAnothersLock) {
    for (std::string name : {"set_nx_px", "set_nx_px_del"}) {
        SCOPED_TRACE(name);
        server().command({"FLUSHALL"});
        Client a = client(name, "a"), b = client(name, "b"), c = client(name, "c");
        auto late = run(a.acquire("orders", 100ms));
        ASSERT_NE(as_grant(late), nullptr);
        std::this_thread::sleep_for(200ms);
        auto current = run(b.acquire("orders", 5000ms));
        ASSERT_NE(as_grant(current), nullptr);

        auto outcome = run(a.release(*as_grant(late)));
        auto third = run(c.acquire("orders", 5000ms));
        if (name == "set_nx_px") {
            EXPECT_EQ(outcome, ReleaseOutcome::NotHeld);
            EXPECT_EQ(server().command({"GET", "orders"}).str, as_grant(current)->token);
            EXPECT_TRUE(std::holds_alternative<Denied>(third));
        } else {
            EXPECT_EQ(outcome, ReleaseOutcome::Released);
            ASSERT_NE(as_grant(third), nullptr) << "c should get in beside b";
        }
    }
}

// T9: the legacy lock trusts client clocks. A client whose clock runs 10 s ahead judges a live
// 5 s lock expired and takes it with GETSET while the owner still works.
TEST_F(StrategyTest, SetnxGetsetWithASkewedClockStealsALiveLock) {
    Client owner = client("setnx_getset", "owner");
    auto held = run(owner.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(held), nullptr);

    Client honest = client("setnx_getset", "honest");
    EXPECT_TRUE(std::holds_alternative<Denied>(run(honest.acquire("orders", 5000ms))));

    Clock fast;
    fast.set_offset(10'000ms);
    Client skewed = client("setnx_getset", "skewed", std::move(fast));
    auto stolen = run(skewed.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(stolen), nullptr) << "the skewed client should steal the live lock";
    EXPECT_NE(as_grant(stolen)->token, as_grant(held)->token);
}

// T8 for the legacy unlock: GET, compare with now, DEL - a pause between GET and DEL lets the
// lock change hands, and the DEL removes the new holder's lock.
TEST_F(StrategyTest, SetnxGetsetUnlockDeletesTheNextHoldersLockAfterAPauseBetweenGetAndDel) {
    Client a = client("setnx_getset", "a"), b = client("setnx_getset", "b");
    auto first = run(a.acquire("orders", 300ms));
    ASSERT_NE(as_grant(first), nullptr);
    bool stalled = false;  // the hook is asked again after a stall: stall once
    a.session->set_checkpoint_hook([&stalled](std::string_view point) {
        if (point != SetnxGetset::kBetweenGetAndDel || stalled)
            return 0ms;
        stalled = true;
        return 600ms;
    });
    Grant g = *as_grant(first);
    std::optional<AcquireResult> second;
    spawn_detached([](Client& c, EventLoop& loop, std::optional<AcquireResult>& out) -> Task<void> {
        co_await loop.sleep_for(450ms);  // a's lease (300 ms) is over, a sits between GET and DEL
        out = co_await c.acquire("orders", 5000ms);
    }(b, loop_, second));
    EXPECT_EQ(run(a.release(g)), ReleaseOutcome::Released);
    ASSERT_TRUE(second.has_value());
    ASSERT_NE(as_grant(*second), nullptr);
    // b believes it holds the lock, but a's late DEL removed it.
    EXPECT_TRUE(server().command({"GET", "orders"}).is_nil());
}

TEST_F(StrategyTest, FencedNumbersStrictlyIncreaseAndDeniedAttemptsIssueNone) {
    Client a = client("fenced", "a"), b = client("fenced", "b");
    std::int64_t last = 0;
    for (int i = 0; i < 6; ++i) {
        Client& c = i % 2 ? a : b;
        Client& other = i % 2 ? b : a;
        auto g = run(c.acquire("orders", 5000ms));
        ASSERT_NE(as_grant(g), nullptr);
        ASSERT_TRUE(as_grant(g)->fence.has_value());
        EXPECT_GT(*as_grant(g)->fence, last);
        last = *as_grant(g)->fence;
        EXPECT_TRUE(std::holds_alternative<Denied>(run(other.acquire("orders", 5000ms))));
        EXPECT_EQ(run(c.release(*as_grant(g))), ReleaseOutcome::Released);
    }
    EXPECT_EQ(last, 6);
    EXPECT_EQ(server().command({"GET", Fenced::fence_key("orders")}).str, "6");
}

// Independent masters on loopback, and one client's session and Redlock over them.
class RedlockTest : public ::testing::Test {
  protected:
    void start_masters(int n) {
        std::vector<Endpoint> endpoints;
        for (int i = 0; i < n; ++i) {
            masters.push_back(std::make_unique<RedisServer>());
            endpoints.push_back(masters.back()->endpoint());
        }
        session = std::make_unique<Session>(
            loop, endpoints, ConnectionOptions{.connect_timeout = 200ms, .command_timeout = 200ms},
            "r1");
    }
    AcquireResult acquire(const AcquireRequest& request) {
        return run_sync(loop, redlock->acquire(*session, request));
    }
    ReleaseOutcome release(const Grant& grant) {
        return run_sync(loop, redlock->release(*session, grant));
    }
    // Three masters up and "orders" granted on them all, as `held`: where the release tests start.
    void hold_orders_on_three_masters() {
        start_masters(3);
        const AcquireResult result = acquire({.key = "orders", .lease = 5000ms});
        ASSERT_NE(as_grant(result), nullptr);
        held = *as_grant(result);
    }
    // A PING to one node; its error, if any, only leaves the connection knowing it failed.
    void ping(std::size_t node) {
        try {
            run_sync(loop, [](RedisConnection& c) -> Task<void> {
                co_await c.command("PING");
            }(session->redis(node)));
        } catch (const RedisError&) {
        }
    }

    std::vector<std::unique_ptr<RedisServer>> masters;
    EventLoop loop;
    std::unique_ptr<Session> session;
    std::unique_ptr<Strategy> redlock = make_strategy("redlock");
    Grant held;
};

TEST_F(RedlockTest, GrantsWithThreeOfFiveMastersUpAndRefusesWithTwo) {
    start_masters(5);
    AcquireRequest req{.key = "orders", .lease = 5000ms};

    auto all_up = acquire(req);
    ASSERT_NE(as_grant(all_up), nullptr);
    EXPECT_GT(as_grant(all_up)->validity, 4800ms);
    EXPECT_LE(as_grant(all_up)->validity, 4950ms);  // lease - elapsed - (1 % + 2 ms)
    EXPECT_EQ(release(*as_grant(all_up)), ReleaseOutcome::Released);

    masters[0]->kill();
    masters[1]->kill();
    auto three_up = acquire(req);
    ASSERT_NE(as_grant(three_up), nullptr);
    for (int i = 2; i < 5; ++i) {
        EXPECT_EQ(masters[i]->command({"GET", "orders"}).str, as_grant(three_up)->token);
    }
    EXPECT_EQ(release(*as_grant(three_up)), ReleaseOutcome::Released);

    masters[2]->kill();
    auto two_up = acquire(req);
    ASSERT_TRUE(std::holds_alternative<Denied>(two_up));
    EXPECT_EQ(std::get<Denied>(two_up).why, Denied::Why::NoQuorum);
    // A refused attempt unlocks the nodes it did get.
    EXPECT_TRUE(masters[3]->command({"GET", "orders"}).is_nil());
    EXPECT_TRUE(masters[4]->command({"GET", "orders"}).is_nil());
}

TEST_F(RedlockTest, AReleaseThatCannotTellIsUnknownNotNotHeld) {
    ASSERT_NO_FATAL_FAILURE(hold_orders_on_three_masters());
    // Two of three nodes stop answering: the one that does shows the token was there, the
    // others may still hold it. "not-held" would be a claim nobody saw (an `info` instead).
    masters[1]->pause();
    masters[2]->pause();
    EXPECT_THROW(release(held), IoError);
    masters[1]->resume();
    masters[2]->resume();
    // With every node answering and none holding the token, it is not held.
    for (auto& m : masters)
        m->command({"DEL", "orders"});
    EXPECT_EQ(release(held), ReleaseOutcome::NotHeld);
}

TEST_F(RedlockTest, AReleaseThatReachedSomeNodesIsInDoubtThoughTheOthersRefusedTheConnection) {
    ASSERT_NO_FATAL_FAILURE(hold_orders_on_three_masters());
    // Two masters crash and their connections drop: the release deletes the key on the third and
    // cannot reconnect to the others. A refused connection sent nothing, but the release as a
    // whole did act - "it failed" (a ConnectError, recorded `fail`) would tell the checker the
    // lock was never released anywhere.
    masters[1]->kill();
    masters[2]->kill();
    ping(1);  // their dropped connections noticed, as after idling
    ping(2);
    try {
        release(held);
        ADD_FAILURE() << "a release without a quorum's answer returned";
    } catch (const ConnectError& e) {
        ADD_FAILURE() << "recorded as not having happened: " << e.what();
    } catch (const IoError&) {
    }
    EXPECT_EQ(masters[0]->command({"EXISTS", "orders"}).integer, 0);
}

TEST_F(RedlockTest, AnAcquireEveryNodeRefusedWithAnErrorReplyDidNotHappen) {
    start_masters(3);
    for (std::size_t i = 0; i < masters.size(); ++i)  // connected before the refusals start
        ping(i);
    // Every master refuses writes with an error reply (OOM, as CLUSTERDOWN would): nothing ran,
    // so the acquire failed - an in-doubt error would retire the client for nothing.
    for (auto& m : masters)
        m->command({"CONFIG", "SET", "maxmemory", "1"});
    EXPECT_THROW(acquire({.key = "orders", .lease = 5000ms}), ReplyError);
    for (auto& m : masters)
        EXPECT_EQ(m->command({"EXISTS", "orders"}).integer, 0);
}

// ---- reentrant_hash and rwlock (Redisson's RLock and RReadWriteLock) ------------------------

// Every client is shut down at the end (its watchdog loops end) and the loop drained, so no
// coroutine frame outlives the test.
class RedissonLockTest : public RedisTest {
  protected:
    Client& client(const std::string& strategy, const std::string& name,
                   StrategyOptions options = {}, ConnectionOptions connection = {}) {
        clients_.push_back(
            Client{make_session(name, Clock(), connection), make_strategy(strategy, options)});
        return clients_.back();
    }
    void TearDown() override {
        for (auto& c : clients_)
            run(c.strategy->shutdown(*c.session));
    }
    // Lets the loop run (watchdogs, waiters) for `d`.
    void run_for(std::chrono::milliseconds d) {
        run([](EventLoop& loop, std::chrono::milliseconds t) -> Task<void> {
            co_await loop.sleep_for(t);
        }(loop_, d));
    }
    long long pttl(const std::string& key) { return server().command({"PTTL", key}).integer; }
    bool exists(const std::string& key) { return server().command({"EXISTS", key}).integer == 1; }
    std::string hget(const std::string& key, const std::string& field) {
        auto r = server().command({"HGET", key, field});
        return r.is_nil() ? "nil" : r.str;
    }
    static std::size_t watchdogs(Client& c) {
        return dynamic_cast<RedissonLock&>(*c.strategy).watchdogs_running();
    }

    std::deque<Client> clients_;
};

TEST_F(RedissonLockTest, ReentrantHashCountsReentriesAndFreesOnTheLastRelease) {
    Client& a = client("reentrant_hash", "a");
    Client& b = client("reentrant_hash", "b");
    auto [outer, inner] = run(a.acquire_and_reenter("orders", 5000ms));
    ASSERT_NE(as_grant(outer), nullptr);
    ASSERT_NE(as_grant(inner), nullptr);
    EXPECT_FALSE(as_grant(outer)->reentry);
    EXPECT_TRUE(as_grant(inner)->reentry);
    EXPECT_NE(as_grant(inner)->token, as_grant(outer)->token);
    EXPECT_EQ(hget("orders", "a"), "2");
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms))));

    EXPECT_EQ(run(a.release(*as_grant(inner))), ReleaseOutcome::StillHeld);
    EXPECT_EQ(hget("orders", "a"), "1");
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms))));
    EXPECT_EQ(watchdogs(a), 1u);

    EXPECT_EQ(run(a.release(*as_grant(outer))), ReleaseOutcome::Released);
    EXPECT_FALSE(exists("orders"));
    EXPECT_EQ(watchdogs(a), 0u);
    auto next = run(b.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(next), nullptr);
    // Not b's to release twice, and never a's: owner-bound.
    EXPECT_EQ(run(a.release(*as_grant(outer))), ReleaseOutcome::Released);  // latched answer
    EXPECT_EQ(run(a.release(Grant{.key = "orders"})), ReleaseOutcome::NotHeld);
    EXPECT_EQ(hget("orders", "b"), "1");
}

// The watchdog renews every lease/3 while the worker does anything - or is stalled at a
// checkpoint, as a worker-only pause holds it (T1) - and stops with a whole-client pause (T10).
TEST_F(RedissonLockTest, ReentrantHashWatchdogOutlivesAWorkerPauseButNotAWholeClientPause) {
    Client& a = client("reentrant_hash", "a");
    Client& b = client("reentrant_hash", "b");
    auto held = run(a.acquire("orders", 300ms));
    ASSERT_NE(as_grant(held), nullptr);

    run_for(1000ms);  // more than 3 leases
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 300ms))));
    EXPECT_GT(pttl("orders"), 0);
    EXPECT_LE(pttl("orders"), 300);

    // The worker stalls 1 s at a checkpoint: the watchdog goes on.
    a.session->set_checkpoint_hook([stalled = false](std::string_view) mutable {
        if (std::exchange(stalled, true))
            return 0ms;
        return 1000ms;
    });
    run([](Session& s) -> Task<void> { co_await s.checkpoint("client.before_write"); }(*a.session));
    EXPECT_EQ(hget("orders", "a"), "1");
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 300ms))));

    // The whole client stops for 1 s: nothing renews, the lease runs out, b gets in; when a
    // resumes, its watchdog finds the lock gone and stops rather than touching b's.
    a.session->pause_until(EventLoop::now() + 1000ms);
    run_for(600ms);
    EXPECT_FALSE(exists("orders"));
    auto taken = run(b.acquire("orders", 5000ms, LockMode::Exclusive));
    ASSERT_NE(as_grant(taken), nullptr);
    run_for(600ms);
    EXPECT_EQ(watchdogs(a), 0u);
    EXPECT_EQ(hget("orders", "b"), "1");
    EXPECT_EQ(hget("orders", "a"), "nil");
    EXPECT_EQ(run(a.release(*as_grant(held))), ReleaseOutcome::NotHeld);
}

// Redisson #7272: after the final release nothing may refresh the key's TTL. A hold of a's that
// reappears under the same key (as the race in #7272 leaves it) must simply expire.
TEST_F(RedissonLockTest, ReentrantHashWatchdogStopsRenewingAfterTheFinalRelease) {
    Client& a = client("reentrant_hash", "a");
    auto [outer, inner] = run(a.acquire_and_reenter("orders", 300ms));
    ASSERT_NE(as_grant(outer), nullptr);
    ASSERT_NE(as_grant(inner), nullptr);
    run_for(150ms);
    EXPECT_EQ(run(a.release(*as_grant(inner))), ReleaseOutcome::StillHeld);
    EXPECT_EQ(watchdogs(a), 1u);
    run_for(400ms);  // still renewed after the inner release
    EXPECT_EQ(hget("orders", "a"), "1");
    EXPECT_EQ(run(a.release(*as_grant(outer))), ReleaseOutcome::Released);
    EXPECT_EQ(watchdogs(a), 0u);

    server().command({"HSET", "orders", "a", "1"});
    server().command({"PEXPIRE", "orders", "300"});
    run_for(600ms);
    EXPECT_FALSE(exists("orders")) << "a's watchdog renewed after the release";
}

// The waiter sleeps on the channel, not in a poll: with a 5 s holder TTL and a 2 s poll interval,
// only the unlock message can get it in ~200 ms after it started waiting.
TEST_F(RedissonLockTest, ReentrantHashWaiterIsWokenByTheUnlockMessage) {
    Client& a = client("reentrant_hash", "a");
    Client& b = client("reentrant_hash", "b", {.retry_delay = 2000ms});
    auto held = run(a.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(held), nullptr);
    bool released = false;
    spawn_detached(
        [](Client& c, EventLoop& loop, Grant grant) -> Task<void> {
            co_await loop.sleep_for(200ms);
            co_await c.release(grant);
        }(a, loop_, *as_grant(held)),
        [&released](std::exception_ptr) { released = true; });
    auto start = EventLoop::now();
    auto waited = run(b.acquire("orders", 5000ms, LockMode::Exclusive, 4000ms));
    auto elapsed = EventLoop::now() - start;
    while (!released)
        loop_.run_once(10ms);
    ASSERT_NE(as_grant(waited), nullptr);
    EXPECT_GE(elapsed, 190ms);
    EXPECT_LT(elapsed, 600ms);
    EXPECT_EQ(hget("orders", "b"), "1");
    // The waiter unsubscribed: the channel has no subscriber left.
    auto numsub = server().command(
        {"PUBSUB", "NUMSUB", dynamic_cast<RedissonLock&>(*b.strategy).release_channel("orders")});
    ASSERT_EQ(numsub.elements.size(), 2u);
    EXPECT_EQ(numsub.elements[1].integer, 0);
}

// T7: the same release sent twice (its reply was lost) must not free the outer re-entry.
TEST_F(RedissonLockTest, ReentrantHashRetriedReleaseDoesNotFreeTheOuterReentry) {
    Client& a = client("reentrant_hash", "a");
    Client& b = client("reentrant_hash", "b");
    auto [outer, inner] = run(a.acquire_and_reenter("orders", 5000ms));
    ASSERT_NE(as_grant(inner), nullptr);
    EXPECT_EQ(run(a.release(*as_grant(inner))), ReleaseOutcome::StillHeld);
    EXPECT_EQ(run(a.release(*as_grant(inner))), ReleaseOutcome::StillHeld);
    EXPECT_EQ(hget("orders", "a"), "1");
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms))));
    EXPECT_EQ(run(a.release(*as_grant(outer))), ReleaseOutcome::Released);
}

// T7 for real: the server is stopped while the inner release is in flight, so its first attempt
// times out; the server runs it on resume, and release() sends it again with the same request id.
TEST_F(RedissonLockTest, ReentrantHashReleaseRetriedAfterATimeoutAppliesOnce) {
    Client& a = client("reentrant_hash", "a", {.watchdog = false, .unlock_attempts = 6},
                       {.connect_timeout = 150ms, .command_timeout = 150ms});
    Client& b = client("reentrant_hash", "b");
    auto [outer, inner] = run(a.acquire_and_reenter("orders", 5000ms));
    ASSERT_NE(as_grant(inner), nullptr);
    server().pause();
    auto resume = loop_.add_timer(EventLoop::now() + 400ms, [] { server().resume(); });
    auto start = EventLoop::now();
    auto outcome = run(a.release(*as_grant(inner)));
    loop_.cancel_timer(resume);
    if (server().paused())
        server().resume();
    EXPECT_GE(EventLoop::now() - start, 390ms) << "the first attempt should have timed out";
    EXPECT_EQ(outcome, ReleaseOutcome::StillHeld);
    EXPECT_EQ(hget("orders", "a"), "1");
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms))));
    EXPECT_EQ(run(a.release(*as_grant(outer))), ReleaseOutcome::Released);
}

TEST_F(RedissonLockTest, RwlockReadersShareAndAWriterExcludesBoth) {
    Client& a = client("rwlock", "a");
    Client& b = client("rwlock", "b");
    Client& c = client("rwlock", "c");
    auto ra = run(a.acquire("orders", 5000ms, LockMode::Shared));
    auto rb = run(b.acquire("orders", 5000ms, LockMode::Shared));
    ASSERT_NE(as_grant(ra), nullptr);
    ASSERT_NE(as_grant(rb), nullptr);
    EXPECT_EQ(as_grant(ra)->mode, LockMode::Shared);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(c.acquire("orders", 5000ms))));
    EXPECT_EQ(run(a.release(*as_grant(ra))), ReleaseOutcome::Released);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(c.acquire("orders", 5000ms))));
    EXPECT_EQ(run(b.release(*as_grant(rb))), ReleaseOutcome::Released);
    EXPECT_FALSE(exists("orders"));

    auto w = run(c.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(w), nullptr);
    EXPECT_EQ(as_grant(w)->mode, LockMode::Exclusive);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(a.acquire("orders", 5000ms, LockMode::Shared))));
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms))));
    // A reader cannot release the writer's hold, nor a writer a reader's it does not have.
    EXPECT_EQ(run(a.release(Grant{.key = "orders", .mode = LockMode::Exclusive})),
              ReleaseOutcome::NotHeld);
    EXPECT_EQ(run(c.release(Grant{.key = "orders", .mode = LockMode::Shared})),
              ReleaseOutcome::NotHeld);
    EXPECT_EQ(hget("orders", "mode"), "write");
    EXPECT_EQ(run(c.release(*as_grant(w))), ReleaseOutcome::Released);
    EXPECT_FALSE(exists("orders"));
}

// Redisson #2144: reader B (3 s) then reader A (300 ms), no watchdog. A's lease running out - or
// A releasing - must not cut B's hold short: the writer stays out until B releases.
TEST_F(RedissonLockTest, RwlockOneReadersExpiryDoesNotShortenAnothers) {
    Client& a = client("rwlock", "a", {.watchdog = false});
    Client& b = client("rwlock", "b", {.watchdog = false});
    Client& w = client("rwlock", "w", {.watchdog = false});
    auto rb = run(b.acquire("orders", 3000ms, LockMode::Shared));
    auto ra = run(a.acquire("orders", 300ms, LockMode::Shared));
    ASSERT_NE(as_grant(rb), nullptr);
    ASSERT_NE(as_grant(ra), nullptr);

    run_for(500ms);
    EXPECT_FALSE(exists(Rwlock::reader_timeout_prefix("orders", "a") + ":1"));
    EXPECT_GT(pttl(Rwlock::reader_timeout_prefix("orders", "b") + ":1"), 2000);
    EXPECT_GT(pttl("orders"), 2000);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(w.acquire("orders", 3000ms))));

    // B's release finds no live reader left (A's field is stale): the lock goes.
    EXPECT_EQ(run(b.release(*as_grant(rb))), ReleaseOutcome::Released);
    EXPECT_FALSE(exists("orders"));
    auto wg = run(w.acquire("orders", 3000ms));
    ASSERT_NE(as_grant(wg), nullptr);
    EXPECT_EQ(run(w.release(*as_grant(wg))), ReleaseOutcome::Released);
}

TEST_F(RedissonLockTest, RwlockAShortReadersReleaseKeepsALongReadersTtl) {
    Client& a = client("rwlock", "a", {.watchdog = false});
    Client& b = client("rwlock", "b", {.watchdog = false});
    auto rb = run(b.acquire("orders", 3000ms, LockMode::Shared));
    auto ra = run(a.acquire("orders", 300ms, LockMode::Shared));
    ASSERT_NE(as_grant(ra), nullptr);
    EXPECT_EQ(run(a.release(*as_grant(ra))), ReleaseOutcome::Released);
    EXPECT_GT(pttl("orders"), 2500);
    EXPECT_EQ(hget("orders", "a"), "nil");
    EXPECT_EQ(hget("orders", "b"), "1");
    EXPECT_EQ(run(b.release(*as_grant(rb))), ReleaseOutcome::Released);
    EXPECT_FALSE(exists("orders"));
}

// The writer takes the read lock while it writes, then drops the write lock: the lock stays a
// read lock (other readers may join, writers may not) until its read hold ends too.
TEST_F(RedissonLockTest, RwlockWriterDowngradesToARead) {
    Client& a = client("rwlock", "a");
    Client& b = client("rwlock", "b");
    Client& c = client("rwlock", "c");
    auto wa = run(a.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(wa), nullptr);
    auto ra = run(a.acquire("orders", 5000ms, LockMode::Shared));
    ASSERT_NE(as_grant(ra), nullptr);
    EXPECT_TRUE(as_grant(ra)->reentry);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms, LockMode::Shared))));

    EXPECT_EQ(run(a.release(*as_grant(wa))), ReleaseOutcome::Released);
    EXPECT_EQ(hget("orders", "mode"), "read");
    EXPECT_EQ(watchdogs(a), 1u);  // the read hold is still renewed
    auto rb = run(b.acquire("orders", 5000ms, LockMode::Shared));
    ASSERT_NE(as_grant(rb), nullptr);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(c.acquire("orders", 5000ms))));
    // No upgrade: a reader asking for the write lock waits like anyone else (T12 b).
    EXPECT_TRUE(std::holds_alternative<Denied>(run(a.acquire("orders", 5000ms))));

    EXPECT_EQ(run(a.release(*as_grant(ra))), ReleaseOutcome::Released);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(c.acquire("orders", 5000ms))));
    EXPECT_EQ(run(b.release(*as_grant(rb))), ReleaseOutcome::Released);
    auto wc = run(c.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(wc), nullptr);
}

TEST_F(RedissonLockTest, RwlockReentryInBothModesWithRetrySafeReleases) {
    Client& a = client("rwlock", "a");
    Client& b = client("rwlock", "b");
    auto [w1, w2] = run(a.acquire_and_reenter("orders", 5000ms));
    ASSERT_NE(as_grant(w2), nullptr);
    EXPECT_TRUE(as_grant(w2)->reentry);
    EXPECT_EQ(hget("orders", Rwlock::writer_field("a")), "2");
    EXPECT_EQ(run(a.release(*as_grant(w2))), ReleaseOutcome::StillHeld);
    EXPECT_EQ(run(a.release(*as_grant(w2))), ReleaseOutcome::StillHeld);  // T7: a retry
    EXPECT_EQ(hget("orders", Rwlock::writer_field("a")), "1");
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms, LockMode::Shared))));
    EXPECT_EQ(run(a.release(*as_grant(w1))), ReleaseOutcome::Released);

    auto [r1, r2] = run(a.acquire_and_reenter("orders", 5000ms, LockMode::Shared));
    ASSERT_NE(as_grant(r2), nullptr);
    EXPECT_TRUE(as_grant(r2)->reentry);
    EXPECT_TRUE(exists(Rwlock::reader_timeout_prefix("orders", "a") + ":2"));
    EXPECT_EQ(run(a.release(*as_grant(r2))), ReleaseOutcome::StillHeld);
    EXPECT_EQ(run(a.release(*as_grant(r2))), ReleaseOutcome::StillHeld);
    EXPECT_EQ(hget("orders", "a"), "1");
    EXPECT_FALSE(exists(Rwlock::reader_timeout_prefix("orders", "a") + ":2"));
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms))));
    EXPECT_EQ(run(a.release(*as_grant(r1))), ReleaseOutcome::Released);
    EXPECT_FALSE(exists("orders"));
}

// A writer's release wakes every waiting reader at once; the readers' releases wake the writer.
TEST_F(RedissonLockTest, RwlockWaitersAreWokenByUnlockMessages) {
    Client& w = client("rwlock", "w");
    Client& r1 = client("rwlock", "r1", {.retry_delay = 2000ms});
    Client& r2 = client("rwlock", "r2", {.retry_delay = 2000ms});
    Client& w2 = client("rwlock", "w2", {.retry_delay = 2000ms});
    auto held = run(w.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(held), nullptr);

    struct Waiter {
        std::optional<AcquireResult> result;
        EventLoop::TimePoint at;
    };
    auto wait = [](Client& c, LockMode mode, Waiter& out) -> Task<void> {
        out.result = co_await c.acquire("orders", 5000ms, mode, 4000ms);
        out.at = EventLoop::now();
    };
    auto release_later = [](Client& c, EventLoop& loop, Grant g) -> Task<void> {
        co_await loop.sleep_for(200ms);
        co_await c.release(g);
    };
    Waiter first, second;
    int done = 0;
    auto count = [&done](std::exception_ptr) { ++done; };
    auto start = EventLoop::now();
    spawn_detached(wait(r1, LockMode::Shared, first), count);
    spawn_detached(wait(r2, LockMode::Shared, second), count);
    spawn_detached(release_later(w, loop_, *as_grant(held)), count);
    while (done < 3)
        loop_.run_once(10ms);
    for (auto* waiter : {&first, &second}) {
        ASSERT_TRUE(waiter->result.has_value());
        ASSERT_NE(as_grant(*waiter->result), nullptr);
        EXPECT_GE(waiter->at - start, 190ms);
        EXPECT_LT(waiter->at - start, 600ms);
    }

    // Now a writer waits for both readers.
    Waiter writer;
    done = 0;
    start = EventLoop::now();
    spawn_detached(wait(w2, LockMode::Exclusive, writer), count);
    spawn_detached(release_later(r1, loop_, *as_grant(*first.result)), count);
    spawn_detached(release_later(r2, loop_, *as_grant(*second.result)), count);
    while (done < 3)
        loop_.run_once(10ms);
    ASSERT_TRUE(writer.result.has_value());
    ASSERT_NE(as_grant(*writer.result), nullptr);
    EXPECT_GE(writer.at - start, 190ms);
    EXPECT_LT(writer.at - start, 600ms);
}

TEST_F(RedissonLockTest, RwlockWatchdogRenewsReadHoldsAndStopsAfterRelease) {
    Client& a = client("rwlock", "a");
    Client& b = client("rwlock", "b");
    auto ra = run(a.acquire("orders", 300ms, LockMode::Shared));
    ASSERT_NE(as_grant(ra), nullptr);
    run_for(1000ms);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 300ms))));
    EXPECT_GT(pttl(Rwlock::reader_timeout_prefix("orders", "a") + ":1"), 0);
    EXPECT_EQ(run(a.release(*as_grant(ra))), ReleaseOutcome::Released);
    EXPECT_FALSE(exists("orders"));
    EXPECT_EQ(watchdogs(a), 0u);
    auto wb = run(b.acquire("orders", 300ms));
    ASSERT_NE(as_grant(wb), nullptr);
    EXPECT_EQ(run(b.release(*as_grant(wb))), ReleaseOutcome::Released);
}

// ---- zk_mutex: Curator's recipe on a real ZooKeeper
// ------------------------------------------------------

TEST(ZkMutexNamesTest, LockNodesAreNamedAsCuratorNamesThem) {
    EXPECT_EQ(ZkLockInternals::lock_path("orders"), "/lockbench/locks/orders");
    EXPECT_EQ(ZkLockInternals::lock_path("a/b%c"), "/lockbench/locks/a%2Fb%25c");
    EXPECT_EQ(ZkLockInternals::sequence_of("_c_c1-x:3-lock-0000000042"), 42);
    EXPECT_EQ(ZkLockInternals::sequence_of("lock-"), -1);
    EXPECT_EQ(ZkLockInternals::sequence_of("_c_c1-x:3-lock-00000000x2"), -1);
}

class ZkMutexTest : public testing::RedisAndZooKeeperTest {
  protected:
    Client client(const std::string& name, const std::string& strategy = "zk_mutex") {
        return Client{zk_session(name), make_strategy(strategy)};
    }
    // A zk_mutex client whose ZooKeeper connection goes through `proxy`, which cuts it or drops
    // what crosses it.
    Client client_through(const FaultProxy& proxy, const std::string& name) {
        auto session = make_session(name);
        session->set_zookeeper_hosts(proxy.endpoint().to_string());
        return Client{std::move(session), make_strategy("zk_mutex")};
    }
    // `c` acquires `key` once and releases it, so that the lock's parent nodes exist before a
    // fault begins.
    void create_lock_parents(Client& c, const std::string& key, std::chrono::milliseconds lease) {
        auto warm = run(c.acquire(key, lease));
        ASSERT_NE(as_grant(warm), nullptr);
        ASSERT_EQ(run(c.release(*as_grant(warm))), ReleaseOutcome::Released);
    }
    // The session lives on across a cut; its client reconnects on its own once packets cross
    // again, which may take it longer than one connect timeout (a loaded machine: more).
    void wait_until_reconnected(Client& c) {
        for (auto until = EventLoop::now() + 20s; EventLoop::now() < until;) {
            try {
                run(c.session->zookeeper(6000ms).connected());
                return;
            } catch (const ConnectError&) {
            }
        }
        FAIL() << "the client never reconnected";
    }
    // After an acquire in doubt left (or did not leave) a node of `c`'s own: `c`, reconnected,
    // is granted `key` on a node of its own at once, the only node of the lock, and releases it.
    void expect_no_wait_behind_its_own_orphan(Client& c, const std::string& key);
};

// Reentrant per client, as one InterProcessMutex shared by a process's threads: a re-entry only
// counts (its own token, the same node and fence), and the lock is free after the last release.
TEST_F(ZkMutexTest, ReentersPerClientAndFreesOnTheLastRelease) {
    Client a = client("a");
    Client b = client("b");
    auto [first, again] = run(a.acquire_and_reenter("orders", 5000ms));
    ASSERT_NE(as_grant(first), nullptr);
    ASSERT_NE(as_grant(again), nullptr);
    EXPECT_FALSE(as_grant(first)->reentry);
    EXPECT_TRUE(as_grant(again)->reentry);
    EXPECT_NE(as_grant(again)->token, as_grant(first)->token);
    EXPECT_EQ(as_grant(again)->fence, as_grant(first)->fence);
    EXPECT_EQ(run(a.release(*as_grant(again))), ReleaseOutcome::StillHeld);
    EXPECT_TRUE(std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms))));
    EXPECT_EQ(run(a.release(*as_grant(first))), ReleaseOutcome::Released);
    auto third = run(b.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(third), nullptr);
    // The fence is the node's sequence number: it grows with every node of the lock (b's denied
    // attempt took one too).
    EXPECT_GT(*as_grant(third)->fence, *as_grant(first)->fence);
    EXPECT_EQ(run(a.release(*as_grant(first))), ReleaseOutcome::NotHeld);
    EXPECT_EQ(run(b.release(*as_grant(third))), ReleaseOutcome::Released);
}

// A fair queue: waiters are granted in the order they asked, each woken by its predecessor's
// deletion alone.
TEST_F(ZkMutexTest, WaitersAreGrantedInTheOrderTheyAsked) {
    Client holder = client("holder");
    auto held = run(holder.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(held), nullptr);
    std::vector<Client> waiters;
    for (int i = 0; i < 3; ++i)
        waiters.push_back(client("w" + std::to_string(i)));
    std::vector<int> order;
    int done = 0;
    for (int i = 0; i < 3; ++i) {
        spawn_detached(
            [](Client& c, int index, std::vector<int>& granted) -> Task<void> {
                auto r = co_await c.acquire("orders", 5000ms, LockMode::Exclusive, 3000ms);
                if (const Grant* g = std::get_if<Grant>(&r)) {
                    granted.push_back(index);
                    co_await c.loop_sleep(20ms);
                    co_await c.release(*g);
                }
            }(waiters[static_cast<std::size_t>(i)], i, order),
            [&done](std::exception_ptr) { ++done; });
        // Each waiter's node is in the queue before the next one asks.
        for (auto until = EventLoop::now() + 100ms; EventLoop::now() < until;)
            loop_.run_once(5ms);
    }
    EXPECT_EQ(run(holder.release(*as_grant(held))), ReleaseOutcome::Released);
    for (auto until = EventLoop::now() + 5s; done < 3 && EventLoop::now() < until;)
        loop_.run_once(10ms);
    ASSERT_EQ(done, 3);
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2}));
}

// Curator's protection mode: the create ran on the server but its reply was lost with the
// connection. The guid in the node's name finds it again after the reconnect, so the client is
// granted its own node and leaves no orphan in the queue (an orphan would block the lock for as
// long as the session lives).
TEST_F(ZkMutexTest, ACreateWhoseReplyWasLostFindsItsNodeByItsGuid) {
    FaultProxy proxy(Endpoint{"127.0.0.1", zookeeper_->port()});
    Client a = client_through(proxy, "a");
    ASSERT_NO_FATAL_FAILURE(create_lock_parents(a, "orders", 4000ms));
    const auto connections = proxy.accepted();

    proxy.set_drop_replies(true);
    std::optional<AcquireResult> result;
    bool done = false;
    spawn_detached(
        [](Client& c, std::optional<AcquireResult>& out) -> Task<void> {
            out = co_await c.acquire("orders", 4000ms);
        }(a, result),
        [&done](std::exception_ptr e) {
            done = true;
            EXPECT_FALSE(e) << "the acquire failed";
        });
    for (auto until = EventLoop::now() + 150ms; EventLoop::now() < until;)
        loop_.run_once(5ms);  // the create reaches the server; its reply does not come back
    ASSERT_FALSE(done);
    proxy.set_drop_replies(false);
    proxy.reset_connections();
    for (auto until = EventLoop::now() + 5s; !done && EventLoop::now() < until;)
        loop_.run_once(10ms);
    ASSERT_TRUE(done);
    EXPECT_GT(proxy.accepted(), connections);  // it did reconnect
    ASSERT_TRUE(result.has_value());
    const Grant* g = as_grant(*result);
    ASSERT_NE(g, nullptr);

    EventLoop loop;
    ZkClient zk(loop, zookeeper_->hosts(), 4000ms, 5000ms);
    const std::string dir = ZkLockInternals::lock_path("orders");
    auto children = run_sync(loop, zk.get_children(dir));
    ASSERT_EQ(children.rc, ZOK);
    ASSERT_EQ(children.children.size(), 1u);  // one create ran, and it is the grant's
    EXPECT_EQ(g->token, dir + "/" + children.children[0]);
    EXPECT_EQ(run(a.release(*g)), ReleaseOutcome::Released);
}

// ---- zk_rwlock: Curator's read-write recipe, on the same server

TEST_F(ZkMutexTest, ZkRwlockReadersShareAndAWriterExcludesBoth) {
    Client a = client("a", "zk_rwlock"), b = client("b", "zk_rwlock");
    Client c = client("c", "zk_rwlock"), d = client("d", "zk_rwlock");
    auto ra = run(a.acquire("orders", 5000ms, LockMode::Shared));
    auto rb = run(b.acquire("orders", 5000ms, LockMode::Shared));
    ASSERT_NE(as_grant(ra), nullptr);
    ASSERT_NE(as_grant(rb), nullptr);
    EXPECT_EQ(as_grant(ra)->mode, LockMode::Shared);
    EXPECT_NE(as_grant(ra)->token.find("/lockbench/locks/orders/_c_"), std::string::npos);
    EXPECT_NE(as_grant(ra)->token.find("-__READ__"), std::string::npos) << as_grant(ra)->token;
    EXPECT_LT(as_grant(ra)->fence, as_grant(rb)->fence);
    EXPECT_TRUE(std::holds_alternative<Denied>(
        run(c.acquire("orders", 5000ms, LockMode::Exclusive, 300ms))));
    EXPECT_EQ(run(a.release(*as_grant(ra))), ReleaseOutcome::Released);
    EXPECT_EQ(run(b.release(*as_grant(rb))), ReleaseOutcome::Released);
    auto wc = run(c.acquire("orders", 5000ms, LockMode::Exclusive));
    ASSERT_NE(as_grant(wc), nullptr);
    EXPECT_NE(as_grant(wc)->token.find("-__WRIT__"), std::string::npos) << as_grant(wc)->token;
    EXPECT_TRUE(
        std::holds_alternative<Denied>(run(d.acquire("orders", 5000ms, LockMode::Shared, 300ms))));
    // Nobody but the holder releases it, in either mode.
    EXPECT_EQ(run(d.release(Grant{.key = "orders", .mode = LockMode::Shared})),
              ReleaseOutcome::NotHeld);
    EXPECT_EQ(run(c.release(*as_grant(wc))), ReleaseOutcome::Released);
    EXPECT_NE(as_grant(run(d.acquire("orders", 5000ms, LockMode::Shared))), nullptr);
}

// What Redis's read-write locks get wrong in t12: a writer that asked while readers held the
// lock is not overtaken by readers that ask after it - they queue behind it.
TEST_F(ZkMutexTest, ZkRwlockAReaderAskingAfterAWaitingWriterQueuesBehindIt) {
    Client first = client("first", "zk_rwlock"), writer = client("writer", "zk_rwlock");
    Client later = client("later", "zk_rwlock");
    auto r1 = run(first.acquire("orders", 5000ms, LockMode::Shared));
    ASSERT_NE(as_grant(r1), nullptr);
    std::optional<AcquireResult> written;
    bool done = false;
    spawn_detached(
        [](Client& c, std::optional<AcquireResult>& out) -> Task<void> {
            out = co_await c.acquire("orders", 5000ms, LockMode::Exclusive, 4000ms);
        }(writer, written),
        [&done](std::exception_ptr) { done = true; });
    for (auto until = EventLoop::now() + 150ms; EventLoop::now() < until;)
        loop_.run_once(5ms);  // the writer's node is in the queue
    ASSERT_FALSE(done);
    EXPECT_TRUE(std::holds_alternative<Denied>(
        run(later.acquire("orders", 5000ms, LockMode::Shared, 300ms))));
    EXPECT_EQ(run(first.release(*as_grant(r1))), ReleaseOutcome::Released);
    for (auto until = EventLoop::now() + 3s; !done && EventLoop::now() < until;)
        loop_.run_once(10ms);
    ASSERT_TRUE(done);
    ASSERT_TRUE(written.has_value());
    ASSERT_NE(as_grant(*written), nullptr);
    EXPECT_EQ(run(writer.release(*as_grant(*written))), ReleaseOutcome::Released);
    EXPECT_NE(as_grant(run(later.acquire("orders", 5000ms, LockMode::Shared))), nullptr);
}

// Curator's downgrade: the write holder takes the read lock at once and keeps it after the write
// release; readers may join then, writers may not. No upgrade: a reader asking to write waits.
TEST_F(ZkMutexTest, ZkRwlockTheWriterDowngradesToAReadAndAReaderCannotUpgrade) {
    Client a = client("a", "zk_rwlock"), b = client("b", "zk_rwlock");
    auto w = run(a.acquire("orders", 5000ms, LockMode::Exclusive));
    ASSERT_NE(as_grant(w), nullptr);
    auto r = run(a.acquire("orders", 5000ms, LockMode::Shared, 0ms));
    ASSERT_NE(as_grant(r), nullptr);
    EXPECT_FALSE(as_grant(r)->reentry);  // a node of its own
    EXPECT_TRUE(
        std::holds_alternative<Denied>(run(b.acquire("orders", 5000ms, LockMode::Shared, 300ms))));
    EXPECT_EQ(run(a.release(*as_grant(w))), ReleaseOutcome::Released);
    EXPECT_TRUE(std::holds_alternative<Denied>(
        run(b.acquire("orders", 5000ms, LockMode::Exclusive, 300ms))));
    auto rb = run(b.acquire("orders", 5000ms, LockMode::Shared));
    ASSERT_NE(as_grant(rb), nullptr);
    EXPECT_TRUE(std::holds_alternative<Denied>(
        run(b.acquire("orders", 5000ms, LockMode::Exclusive, 300ms))));
    EXPECT_EQ(run(a.release(*as_grant(r))), ReleaseOutcome::Released);
    EXPECT_EQ(run(b.release(*as_grant(rb))), ReleaseOutcome::Released);
}

// The nodes of a lock, as a second client sees them.
std::vector<std::string> lock_nodes(ZooKeeperServer& server, const std::string& key) {
    EventLoop loop;
    ZkClient zk(loop, server.hosts(), 4000ms, 5000ms);
    auto children = run_sync(loop, zk.get_children(ZkLockInternals::lock_path(key)));
    EXPECT_EQ(children.rc, ZOK);
    return children.children;
}

void ZkMutexTest::expect_no_wait_behind_its_own_orphan(Client& c, const std::string& key) {
    wait_until_reconnected(c);
    auto again = run(c.acquire(key, 6000ms));
    ASSERT_NE(as_grant(again), nullptr) << "the client queued behind its own orphan";
    const auto nodes = lock_nodes(*zookeeper_, key);
    ASSERT_EQ(nodes.size(), 1u);
    EXPECT_EQ(as_grant(again)->token, ZkLockInternals::lock_path(key) + "/" + nodes[0]);
    EXPECT_EQ(run(c.release(*as_grant(again))), ReleaseOutcome::Released);
}

// Runs `task` on the test's loop until it ends or `limit` passes; its exception, if any.
template <typename T>
std::exception_ptr run_to_end(EventLoop& loop, Task<T> task, std::chrono::milliseconds limit,
                              bool& done) {
    std::exception_ptr error;
    spawn_detached(std::move(task), [&](std::exception_ptr e) {
        error = e;
        done = true;
    });
    for (auto until = EventLoop::now() + limit; !done && EventLoop::now() < until;)
        loop.run_once(10ms);
    return error;
}

// A release whose delete never reached the server (the connection was cut) leaves the node of a
// session that lives on: it would hold the lock for nobody, for as long as the session lives.
// Curator's guaranteed delete retries it; ours is retried before the client's next attempt.
TEST_F(ZkMutexTest, ADeleteThatNeverArrivedIsRetriedBeforeTheNextAttempt) {
    FaultProxy proxy(Endpoint{"127.0.0.1", zookeeper_->port()});
    Client a = client_through(proxy, "a");
    auto held = run(a.acquire("ledger", 6000ms));
    ASSERT_NE(as_grant(held), nullptr);

    // The delete is lost on the way (nothing crosses), then the connection is reset: the client
    // learns of the loss at once and reconnects well within its session's timeout.
    proxy.set_blackhole(true);
    bool done = false;
    std::exception_ptr error;
    spawn_detached(
        [](Client& c, Grant g) -> Task<void> { co_await c.release(g); }(a, *as_grant(held)),
        [&](std::exception_ptr e) {
            error = e;
            done = true;
        });
    for (auto until = EventLoop::now() + 200ms; EventLoop::now() < until;)
        loop_.run_once(5ms);
    ASSERT_FALSE(done);
    proxy.set_blackhole(false);
    proxy.reset_connections();
    for (auto until = EventLoop::now() + 10s; !done && EventLoop::now() < until;)
        loop_.run_once(10ms);
    ASSERT_TRUE(done);
    ASSERT_TRUE(error);
    EXPECT_THROW(std::rethrow_exception(error), TimeoutError);
    ASSERT_EQ(lock_nodes(*zookeeper_, "ledger").size(), 1u);  // still there, of a live session
    expect_no_wait_behind_its_own_orphan(a, "ledger");
}

// A create that ran on the server while every reply was lost, the lookup by its guid too: the
// acquire ends in doubt (`info`), and the node - if there is one - is found by its guid and
// deleted before the client's next attempt, as Curator deletes a protected node in the background.
TEST_F(ZkMutexTest, ACreateInDoubtIsFoundByItsGuidAndDeletedBeforeTheNextAttempt) {
    FaultProxy proxy(Endpoint{"127.0.0.1", zookeeper_->port()});
    Client a = client_through(proxy, "a");
    ASSERT_NO_FATAL_FAILURE(create_lock_parents(a, "journal", 6000ms));

    proxy.set_drop_replies(true);  // the server hears everything, the client nothing
    bool done = false;
    auto error = run_to_end(
        loop_, [](Client& c) -> Task<void> { co_await c.acquire("journal", 6000ms); }(a), 20s,
        done);
    ASSERT_TRUE(done);
    ASSERT_TRUE(error);
    EXPECT_THROW(std::rethrow_exception(error), TimeoutError);
    proxy.set_drop_replies(false);
    ASSERT_EQ(lock_nodes(*zookeeper_, "journal").size(), 1u);  // the create in doubt did run
    expect_no_wait_behind_its_own_orphan(a, "journal");
}

// set_nx_px_wait counts a grant once a replica acknowledged it. A replica that stopped
// replicating acknowledges nothing: the lock is given back, and the acquire is in doubt
// (UnconfirmedError: recorded `info`, since the SET ran on the master).
TEST_F(StrategyTest, SetNxPxWaitCountsAGrantOnlyOnceAReplicaAcknowledgedIt) {
    RedisServer replica(RedisServerOptions{
        .extra_args = {"--replicaof", "127.0.0.1", std::to_string(server().port())}});
    auto session = make_session("a");
    Client a{std::move(session), make_strategy("set_nx_px_wait", {.wait_timeout = 100ms})};
    std::optional<AcquireResult> first;
    for (auto until = EventLoop::now() + 10s; !first && EventLoop::now() < until;) {
        try {  // until the replica's first acknowledgement after its full sync
            first = run(a.acquire("orders", 5000ms));
        } catch (const UnconfirmedError&) {
        }
    }
    ASSERT_TRUE(first.has_value());
    ASSERT_NE(as_grant(*first), nullptr);
    EXPECT_EQ(replica.command({"GET", "orders"}).str, as_grant(*first)->token);  // on the replica
    EXPECT_EQ(run(a.release(*as_grant(*first))), ReleaseOutcome::Released);
    // The release's DEL reaches the replica asynchronously: cut the link only once it has, or the
    // replica keeps the old grant and the "never replicated" check below reads a stale key.
    for (auto until = EventLoop::now() + 10s;
         !replica.command({"GET", "orders"}).is_nil() && EventLoop::now() < until;) {
    }
    ASSERT_TRUE(replica.command({"GET", "orders"}).is_nil());

    replica.command({"REPLICAOF", "NO", "ONE"});
    const auto start = EventLoop::now();
    EXPECT_THROW(run(a.acquire("orders", 5000ms)), UnconfirmedError);
    EXPECT_GE(EventLoop::now() - start, 90ms);  // WAIT waited for an acknowledgement
    EXPECT_TRUE(server().command({"GET", "orders"}).is_nil());  // given back
    EXPECT_TRUE(replica.command({"GET", "orders"}).is_nil());   // and never replicated
}

}  // namespace
}  // namespace lockbench
