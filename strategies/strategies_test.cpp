// Every strategy against a real redis-server: the contract all of them share (exclusion, release
// by the owner, expiry, a dead server is an error and not a hang), then what makes each one
// distinct, flaws included (T8, T9) - a demonstration that does not demonstrate fails here.

#include <thread>

#include <gtest/gtest.h>

#include "fenced.hpp"
#include "redis_fixture.hpp"
#include "redlock.hpp"
#include "registry.hpp"
#include "setnx_getset.hpp"

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
    Task<ReleaseOutcome> release(Grant g) { co_return co_await strategy->release(*session, g); }
};

class StrategyContractTest : public RedisTest, public ::testing::WithParamInterface<std::string> {
  protected:
    Client client(const std::string& name, Clock clock = Clock(), ConnectionOptions options = {}) {
        return Client{make_session(name, std::move(clock), options), make_strategy(GetParam())};
    }
    void TearDown() override {
        for (auto* c : {&a_, &b_}) {
            if (c->strategy)
                run(c->strategy->shutdown(*c->session));
        }
    }
    Client a_, b_;
};

TEST_P(StrategyContractTest, ExcludesASecondClientUntilTheOwnerReleases) {
    a_ = client("a");
    b_ = client("b");
    auto first = run(a_.acquire("orders", 5000ms));
    ASSERT_NE(as_grant(first), nullptr);
    auto second = run(b_.acquire("orders", 5000ms));
    ASSERT_TRUE(std::holds_alternative<Denied>(second));
    EXPECT_EQ(std::get<Denied>(second).reason, "held");

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
    ASSERT_NE(as_grant(second), nullptr) << std::get<Denied>(second).reason;
    EXPECT_GE(EventLoop::now() - start, 140ms);
}

TEST_P(StrategyContractTest, ALockExpiresAfterItsLease) {
    a_ = client("a");
    b_ = client("b");
    auto first = run(a_.acquire("orders", 200ms));
    ASSERT_NE(as_grant(first), nullptr);
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
    server().kill();
    auto start = EventLoop::now();
    EXPECT_THROW(run(a_.acquire("orders", 5000ms, LockMode::Exclusive, 2000ms)), IoError);
    EXPECT_LT(EventLoop::now() - start, 1500ms);
}

INSTANTIATE_TEST_SUITE_P(Strategies, StrategyContractTest,
                         ::testing::Values("setnx_getset", "set_nx_px", "set_nx_px_del",
                                           "rwlock_seed", "fenced", "redlock"),
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

TEST(RedlockTest, GrantsWithThreeOfFiveMastersUpAndRefusesWithTwo) {
    std::vector<std::unique_ptr<RedisServer>> masters;
    std::vector<Endpoint> endpoints;
    for (int i = 0; i < 5; ++i) {
        masters.push_back(std::make_unique<RedisServer>());
        endpoints.push_back(masters.back()->endpoint());
    }
    EventLoop loop;
    Session session(loop, endpoints, {.connect_timeout = 200ms, .command_timeout = 200ms}, "r1");
    auto redlock = make_strategy("redlock");
    AcquireRequest req{.key = "orders", .lease = 5000ms};

    auto all_up = run_sync(loop, redlock->acquire(session, req));
    ASSERT_NE(as_grant(all_up), nullptr);
    EXPECT_GT(as_grant(all_up)->validity, 4800ms);
    EXPECT_LE(as_grant(all_up)->validity, 4950ms);  // lease - elapsed - (1 % + 2 ms)
    EXPECT_EQ(run_sync(loop, redlock->release(session, *as_grant(all_up))),
              ReleaseOutcome::Released);

    masters[0]->kill();
    masters[1]->kill();
    auto three_up = run_sync(loop, redlock->acquire(session, req));
    ASSERT_NE(as_grant(three_up), nullptr);
    for (int i = 2; i < 5; ++i) {
        EXPECT_EQ(masters[i]->command({"GET", "orders"}).str, as_grant(three_up)->token);
    }
    EXPECT_EQ(run_sync(loop, redlock->release(session, *as_grant(three_up))),
              ReleaseOutcome::Released);

    masters[2]->kill();
    auto two_up = run_sync(loop, redlock->acquire(session, req));
    ASSERT_TRUE(std::holds_alternative<Denied>(two_up));
    EXPECT_EQ(std::get<Denied>(two_up).reason, "no-quorum");
    // A refused attempt unlocks the nodes it did get.
    EXPECT_TRUE(masters[3]->command({"GET", "orders"}).is_nil());
    EXPECT_TRUE(masters[4]->command({"GET", "orders"}).is_nil());
}

}  // namespace
}  // namespace lockbench
