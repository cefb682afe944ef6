// The fault proxy against a real redis-server: it forwards faithfully, and each fault does to the
// client exactly what the scenario built on it claims - a lost reply means the server DID run the
// command (T6/T7), a partition means it did not.

#include "engine/topology/fault_proxy.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/time.h>
#include <thread>
#include <unistd.h>

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

// A client that keeps its connection after a command timed out (ioredis does; lockbench's own
// clients and redis-py do not), on a raw socket: it reads replies in order, as RESP matches them.
class KeptConnection {
  public:
    explicit KeptConnection(const Endpoint& at) {
        fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(static_cast<std::uint16_t>(at.port));
        ::inet_pton(AF_INET, "127.0.0.1", &addr.sin_addr);
        EXPECT_EQ(::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
        timeval patience{.tv_sec = 0, .tv_usec = 300'000};
        ::setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
    }
    ~KeptConnection() { ::close(fd_); }
    KeptConnection(const KeptConnection&) = delete;
    KeptConnection& operator=(const KeptConnection&) = delete;

    // A connection already reset refuses it; receive() then says so.
    void send(const std::string& inline_command) {
        const std::string line = inline_command + "\r\n";
        [[maybe_unused]] const ssize_t sent = ::send(fd_, line.data(), line.size(), MSG_NOSIGNAL);
    }
    // What arrived within the patience: bytes, "" when nothing did, "closed" when the connection
    // ended (EOF or reset).
    std::string receive() {
        char buf[256];
        const ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n > 0)
            return std::string(buf, static_cast<std::size_t>(n));
        return n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK) ? "closed" : "";
    }

  private:
    int fd_ = -1;
};

// TCP never loses bytes and goes on. A connection whose reply was dropped is broken from then on
// and reset when the fault ends: a client that kept it must never read the reply of a later
// command as the answer to the lost one.
TEST_F(FaultProxyTest, AConnectionThatLostAReplyIsResetNotShifted) {
    KeptConnection kept(proxy_.endpoint());
    kept.send("PING");
    EXPECT_EQ(kept.receive(), "+PONG\r\n");
    proxy_.set_drop_replies(true);
    kept.send("SET lock c1");
    EXPECT_EQ(kept.receive(), "");  // timed out: the reply is lost
    EXPECT_EQ(server_.command({"GET", "lock"}).str, "c1");
    proxy_.set_drop_replies(false);
    kept.send("GET lock");
    std::string after;
    for (int i = 0; i < 30 && after.empty(); ++i)
        after = kept.receive();
    EXPECT_EQ(after, "closed");  // not "$2\r\nc1\r\n", which the client would take for SET's
    EXPECT_EQ(send({"GET", "lock"}).str, "c1");  // a new connection works
}

// The same for a partition: what the client sent meanwhile is gone, so the stream is broken.
TEST_F(FaultProxyTest, AConnectionThatLostARequestIsResetWhenThePartitionEnds) {
    KeptConnection kept(proxy_.endpoint());
    kept.send("PING");
    EXPECT_EQ(kept.receive(), "+PONG\r\n");
    proxy_.set_blackhole(true);
    kept.send("SET lock c1");
    EXPECT_EQ(kept.receive(), "");
    proxy_.set_blackhole(false);
    kept.send("GET lock");
    std::string after;
    for (int i = 0; i < 30 && after.empty(); ++i)
        after = kept.receive();
    EXPECT_EQ(after, "closed");
    EXPECT_TRUE(server_.command({"GET", "lock"}).is_nil());
}

// Only a connection that lost bytes is broken: one that carried nothing while replies were lost
// goes on after the fault, as an idle TCP connection outlives a brief outage.
TEST_F(FaultProxyTest, AConnectionThatLostNothingGoesOnAfterTheFault) {
    KeptConnection idle(proxy_.endpoint());
    idle.send("PING");
    EXPECT_EQ(idle.receive(), "+PONG\r\n");
    KeptConnection busy(proxy_.endpoint());
    busy.send("PING");
    EXPECT_EQ(busy.receive(), "+PONG\r\n");
    proxy_.set_drop_replies(true);
    busy.send("SET lock c1");
    EXPECT_EQ(busy.receive(), "");
    proxy_.set_drop_replies(false);
    busy.send("GET lock");
    std::string after;
    for (int i = 0; i < 30 && after.empty(); ++i)
        after = busy.receive();
    ASSERT_EQ(after, "closed");  // the proxy has acted on the fault's end
    idle.send("GET lock");
    EXPECT_EQ(idle.receive(), "$2\r\nc1\r\n");
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
