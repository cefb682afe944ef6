// The fault proxy against a real redis-server: it forwards faithfully, and each fault does to the
// client exactly what the scenario built on it claims - a lost reply means the server DID run the
// command (T6/T7), a partition means it did not.

#include "engine/topology/fault_proxy.hpp"

#include <thread>

#include <gtest/gtest.h>

#include "engine/servers/redis_server.hpp"
#include "strategies/client/event_loop.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

class FaultProxyTest : public ::testing::Test {
  protected:
    Reply send(std::vector<std::string> args) {
        return run_sync(loop_, [](RedisConnection& c, std::vector<std::string> a) -> Task<Reply> {
            co_return co_await c.command_argv(std::move(a));
        }(client_, std::move(args)));
    }

    RedisServer server_;
    FaultProxy proxy_{server_.endpoint()};
    EventLoop loop_;
    RedisConnection client_{
        loop_, proxy_.endpoint(), {.connect_timeout = 500ms, .command_timeout = 300ms}};
};

TEST_F(FaultProxyTest, ForwardsCommandsAndReplies) {
    EXPECT_NE(proxy_.endpoint().port, server_.port());
    EXPECT_EQ(send({"SET", "k", "v"}).str, "OK");
    EXPECT_EQ(send({"GET", "k"}).str, "v");
    EXPECT_EQ(proxy_.accepted(), 1u);
}

TEST_F(FaultProxyTest, ADroppedReplyTimesOutButTheServerRanTheCommand) {
    send({"PING"});
    proxy_.set_drop_replies(true);
    EXPECT_THROW(send({"SET", "lock", "c1", "NX", "PX", "60000"}), TimeoutError);
    EXPECT_EQ(server_.command({"GET", "lock"}).str, "c1");
    proxy_.set_drop_replies(false);
    // The timed-out connection is never reused; the next command gets a fresh one.
    EXPECT_EQ(send({"GET", "lock"}).str, "c1");
}

TEST_F(FaultProxyTest, DelayedRepliesArriveLate) {
    send({"PING"});
    proxy_.set_reply_delay(150ms);
    auto start = EventLoop::now();
    EXPECT_EQ(send({"PING"}).str, "PONG");
    EXPECT_GE(EventLoop::now() - start, 150ms);
    proxy_.set_reply_delay(0ms);
}

TEST_F(FaultProxyTest, APartitionedNodeNeverSeesTheCommand) {
    send({"PING"});
    proxy_.set_blackhole(true);
    EXPECT_THROW(send({"SET", "lock", "c1"}), TimeoutError);
    EXPECT_TRUE(server_.command({"GET", "lock"}).is_nil());
    proxy_.set_blackhole(false);
    EXPECT_EQ(send({"SET", "lock", "c2"}).str, "OK");
    EXPECT_EQ(server_.command({"GET", "lock"}).str, "c2");
}

TEST_F(FaultProxyTest, ResetClosesOpenConnectionsAndNewOnesWork) {
    send({"PING"});
    proxy_.set_reply_delay(200ms);  // keep the command in flight while the reset lands
    std::exception_ptr error;
    bool done = false;
    spawn_detached(
        [](RedisConnection& c) -> Task<void> {
            Reply r = co_await c.command("PING");
            (void)r;
        }(client_),
        [&](std::exception_ptr e) {
            error = e;
            done = true;
        });
    loop_.run_once(20ms);
    proxy_.reset_connections();
    while (!done)
        loop_.run_once(10ms);
    ASSERT_TRUE(error);
    EXPECT_THROW(std::rethrow_exception(error), IoError);
    proxy_.set_reply_delay(0ms);
    EXPECT_EQ(send({"PING"}).str, "PONG");
    EXPECT_EQ(proxy_.accepted(), 2u);
}

// A frozen proxy is a stopped process on the wire: nothing crosses until the freeze ends, and
// then everything does - held, never lost (unlike a partition's blackhole).
TEST_F(FaultProxyTest, AFreezeHoldsWhatCrossesUntilItEndsAndLosesNothing) {
    send({"PING"});
    proxy_.freeze_until(std::chrono::steady_clock::now() + 150ms);
    auto start = EventLoop::now();
    EXPECT_EQ(send({"SET", "lock", "c1"}).str, "OK");
    EXPECT_GE(EventLoop::now() - start, 140ms);

    // A freeze far longer than the client's patience, ended by hand: on a loaded machine a
    // freeze that ends on its own can run out before the test looks (a CI run saw exactly that).
    proxy_.freeze_until(std::chrono::steady_clock::now() + 60s);
    EXPECT_THROW(send({"SET", "lock", "c2"}), TimeoutError);  // the client gave up at 300 ms
    EXPECT_EQ(server_.command({"GET", "lock"}).str, "c1");    // nothing crossed yet
    proxy_.freeze_until(std::chrono::steady_clock::now());
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (server_.command({"GET", "lock"}).str != "c2" &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    EXPECT_EQ(server_.command({"GET", "lock"}).str, "c2");  // and then it did
    EXPECT_EQ(send({"GET", "lock"}).str, "c2");
}

// T13's fault: one connection's next request is held on its way to the server and arrives late,
// while another connection's requests cross at once.
TEST_F(FaultProxyTest, ADelayedRequestArrivesLateAndOnlyThatConnectionsIsHeld) {
    send({"PING"});
    RedisConnection other{
        loop_, proxy_.endpoint(), {.connect_timeout = 500ms, .command_timeout = 300ms}};
    run_sync(loop_, [](RedisConnection& c) -> Task<void> { co_await c.command("PING"); }(other));
    ASSERT_NE(client_.local_port(), 0);
    proxy_.delay_next_request_from(client_.local_port(), 600ms);

    const auto start = EventLoop::now();
    bool done = false;
    std::exception_ptr error;
    spawn_detached(
        [](RedisConnection& c) -> Task<void> {
            co_await c.command("SET", "lock", "late");
        }(client_),
        [&](std::exception_ptr e) {
            error = e;
            done = true;
        });
    loop_.run_once(20ms);
    EXPECT_TRUE(server_.command({"GET", "lock"}).is_nil());  // held on the way
    EXPECT_EQ(run_sync(loop_,
                       [](RedisConnection& c) -> Task<Reply> {
                           co_return co_await c.command("SET", "other", "now");
                       }(other))
                  .str,
              "OK");
    EXPECT_EQ(server_.command({"GET", "other"}).str, "now");
    EXPECT_TRUE(server_.command({"GET", "lock"}).is_nil());
    // The client's own command timeout (300 ms) is shorter than the hold: it gives up, and the
    // write still reaches the server afterwards - delayed, not lost.
    for (auto until = EventLoop::now() + 5s; !done && EventLoop::now() < until;)
        loop_.run_once(10ms);
    ASSERT_TRUE(done);
    ASSERT_TRUE(error);
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (server_.command({"GET", "lock"}).is_nil() && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(10ms);
    EXPECT_EQ(server_.command({"GET", "lock"}).str, "late");
    EXPECT_GE(EventLoop::now() - start, 590ms);
    EXPECT_EQ(proxy_.requests_delayed(), 1u);
}

TEST_F(FaultProxyTest, ADeadUpstreamRefusesNewConnections) {
    server_.kill();
    EXPECT_THROW(send({"PING"}), IoError);
}

}  // namespace
}  // namespace lockbench
