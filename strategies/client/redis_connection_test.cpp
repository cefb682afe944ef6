#include "strategies/client/redis_connection.hpp"

#include <filesystem>
#include <unistd.h>

#include <gtest/gtest.h>
#include <hiredis/hiredis.h>

#include "engine/testing/redis_fixture.hpp"
#include "strategies/lua_scripts.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using testing::RedisTest;

class RedisConnectionTest : public RedisTest {};

TEST(EndpointTest, ParsesHostAndPort) {
    auto ep = Endpoint::parse("10.0.0.7:6380");
    EXPECT_EQ(ep.host, "10.0.0.7");
    EXPECT_EQ(ep.port, 6380);
    EXPECT_THROW(Endpoint::parse("localhost"), std::invalid_argument);
    EXPECT_THROW(Endpoint::parse("localhost:0"), std::invalid_argument);
    EXPECT_THROW(Endpoint::parse("localhost:70000"), std::invalid_argument);
    EXPECT_THROW(Endpoint::parse("localhost:12ab"), std::invalid_argument);
}

TEST(RespCommandTest, EncodesAsHiredisDoes) {
    // hiredis's formatter is the reference: a command must reach the server byte for byte as a
    // hiredis client would send it, binary and empty arguments included.
    const std::vector<std::vector<std::string>> commands{
        {"PING"},
        {"SET", "lock:k1", "client-1:1", "NX", "PX", "30000"},
        {"SET", "k", std::string("v\0w\r\n", 5), ""},
        {"EVALSHA", std::string(40, 'a'), "1", "k", std::string(70000, 'x')},
    };
    for (const auto& args : commands) {
        std::vector<const char*> argv;
        std::vector<std::size_t> argvlen;
        for (const auto& a : args) {
            argv.push_back(a.data());
            argvlen.push_back(a.size());
        }
        char* formatted = nullptr;
        const int len = redisFormatCommandArgv(&formatted, static_cast<int>(args.size()),
                                               argv.data(), argvlen.data());
        ASSERT_GT(len, 0);
        const std::string expected(formatted, static_cast<std::size_t>(len));
        redisFreeCommand(formatted);
        std::string out = "prefix";
        append_resp_command(out, args);
        EXPECT_EQ(out, "prefix" + expected) << args[0];
    }
}

TEST_F(RedisConnectionTest, RunsCommandsAndConvertsReplies) {
    RedisConnection c(loop_, server().endpoint());
    auto body = [](RedisConnection& conn) -> Task<void> {
        EXPECT_TRUE((co_await conn.command("SET", "k", std::string("v\0w", 3))).is_ok());
        auto got = co_await conn.command("GET", "k");
        EXPECT_EQ(got.as_string(), std::string("v\0w", 3));  // binary safe
        EXPECT_TRUE((co_await conn.command("GET", "missing")).is_nil());
        EXPECT_EQ((co_await conn.command("INCR", "n")).as_integer(), 1);
        auto arr = co_await conn.command("MGET", "k", "missing");
        EXPECT_TRUE(arr.is_array());
        EXPECT_EQ(arr.elements.size(), 2u);
        EXPECT_THROW(co_await conn.command("NOSUCHCOMMAND"), ReplyError);
        // An error reply does not break the connection.
        EXPECT_EQ((co_await conn.command("INCR", "n")).as_integer(), 2);
    };
    run(body(c));
}

TEST_F(RedisConnectionTest, PipelinesConcurrentCommandsInOrder) {
    RedisConnection c(loop_, server().endpoint());
    std::vector<Task<long long>> tasks;
    for (int i = 0; i < 200; ++i) {
        tasks.push_back([](RedisConnection& conn) -> Task<long long> {
            co_return (co_await conn.command("INCR", "counter")).as_integer();
        }(c));
    }
    auto results = run(when_all_settled(std::move(tasks)));
    for (std::size_t i = 0; i < results.size(); ++i) {
        ASSERT_TRUE(results[i].ok());
        EXPECT_EQ(*results[i].value, static_cast<long long>(i + 1));
    }
}

TEST_F(RedisConnectionTest, PausedServerTimesOutAndTheCommandStillRunsLater) {
    RedisConnection c(loop_, server().endpoint(), {.command_timeout = 200ms});
    run([](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(c));
    server().pause();
    auto start = EventLoop::now();
    EXPECT_THROW(run([](RedisConnection& conn) -> Task<void> {
                     co_await conn.command("SET", "lock", "tok", "NX", "PX", "5000");
                 }(c)),
                 TimeoutError);
    EXPECT_LT(EventLoop::now() - start, 1500ms);
    server().resume();
    // The timed-out SET was applied after SIGCONT: a timeout is `info`, never `fail`.
    Reply got;
    for (int i = 0; i < 50 && !got.is_string(); ++i) {
        got = server().command({"GET", "lock"});
        if (!got.is_string())
            std::this_thread::sleep_for(10ms);
    }
    EXPECT_EQ(got.str, "tok");
    // A failed connection is never reused: the next command works on a fresh socket.
    auto gen = c.generation();
    EXPECT_EQ(run([](RedisConnection& conn) -> Task<std::string> {
                  co_return (co_await conn.command("GET", "lock")).as_string();
              }(c)),
              "tok");
    EXPECT_GT(c.generation(), gen);
}

TEST_F(RedisConnectionTest, ACommandThatReconnectsKeepsItsOwnTimeout) {
    // A stopped server's kernel still accepts the connection at once: the command is sent and
    // unanswered. Its deadline is its own 200 ms from the call, not the connect timeout on top
    // (a holder's resource read on a reconnected connection outlived its lease that way).
    RedisConnection c(loop_, server().endpoint(),
                      {.connect_timeout = 3'000ms, .command_timeout = 200ms});
    server().pause();
    auto start = EventLoop::now();
    EXPECT_THROW(run([](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(c)),
                 TimeoutError);
    EXPECT_GE(EventLoop::now() - start, 200ms);
    EXPECT_LT(EventLoop::now() - start, 2'000ms);
    server().resume();
}

TEST_F(RedisConnectionTest, ACommandsOwnTimeoutHoldsBehindALongerOne) {
    // Redlock's 50 ms per node beside the connection's 10 s: the first command (connecting,
    // with the long deadline) has completed, but its deadline must not decide the second's.
    RedisConnection c(loop_, server().endpoint(), {.command_timeout = 10'000ms});
    run([](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(c));
    server().pause();
    auto start = EventLoop::now();
    EXPECT_THROW(run([](RedisConnection& conn) -> Task<void> {
                     co_await conn.command_argv(strings("PING"), 50ms);
                 }(c)),
                 TimeoutError);
    EXPECT_LT(EventLoop::now() - start, 5'000ms);
    server().resume();
}

TEST_F(RedisConnectionTest, DeadServerFailsFastWithAnIoError) {
    RedisConnection c(loop_, server().endpoint(),
                      {.connect_timeout = 300ms, .command_timeout = 300ms});
    run([](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(c));
    server().kill();
    auto start = EventLoop::now();
    EXPECT_THROW(run([](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(c)),
                 IoError);
    EXPECT_THROW(run([](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(c)),
                 ConnectError);
    EXPECT_LT(EventLoop::now() - start, 1000ms);
}

TEST_F(RedisConnectionTest, DropFailsCommandsInFlightWithClosedError) {
    RedisConnection c(loop_, server().endpoint());
    server().pause();
    bool closed = false;
    spawn_detached([](RedisConnection& conn, bool& flag) -> Task<void> {
        try {
            co_await conn.command("PING");
        } catch (const ClosedError&) {
            flag = true;
        }
    }(c, closed));
    loop_.run_once(10ms);
    c.drop("client crashed");
    loop_.run_once(0ms);
    server().resume();
    EXPECT_TRUE(closed);
}

TEST_F(RedisConnectionTest, AuthenticatesWhenAPasswordIsSet) {
    RedisServer secured({.password = "s3cret"});
    RedisConnection good(loop_, secured.endpoint());
    EXPECT_EQ(run([](RedisConnection& conn) -> Task<std::string> {
                  co_return (co_await conn.command("PING")).as_string();
              }(good)),
              "PONG");
    Endpoint wrong = secured.endpoint();
    wrong.password = "nope";
    RedisConnection bad(loop_, wrong);
    EXPECT_THROW(
        run([](RedisConnection& conn) -> Task<void> { co_await conn.command("PING"); }(bad)),
        RedisError);
}

// Redis 6 ACL users (managed services hand out a user, not the default one): AUTH user password.
TEST_F(RedisConnectionTest, AuthenticatesAsAnAclUser) {
    RedisServer server;
    command_once(server.endpoint(),
                 strings("ACL", "SETUSER", "alice", "on", ">alice-pw", "~*", "&*", "+@all"),
                 2000ms);
    Endpoint alice = server.endpoint();
    alice.user = "alice";
    alice.password = "alice-pw";
    EXPECT_EQ(command_once(alice, strings("ACL", "WHOAMI"), 2000ms).as_string(), "alice");
    Endpoint stranger = alice;
    stranger.user = "bob";
    try {
        command_once(stranger, strings("PING"), 2000ms);
        ADD_FAILURE() << "bob was let in";
    } catch (const ReplyError& e) {
        EXPECT_EQ(std::string(e.what()), "AUTH as bob to " + stranger.to_string() +
                                             " failed: WRONGPASS invalid username-password pair "
                                             "or user is disabled.");
    }
}

TEST_F(RedisConnectionTest, ConnectsThroughAUnixSocket) {
    const auto dir = std::filesystem::temp_directory_path() /
                     ("lockbench-unix-test-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string socket = (dir / "redis.sock").string();
    {
        RedisServer server({.extra_args = {"--unixsocket", socket, "--unixsocketperm", "700"}});
        Endpoint through_socket{.host = socket, .port = 0};
        EXPECT_EQ(through_socket.to_string(), "unix:" + socket);
        RedisConnection conn(loop_, through_socket);
        EXPECT_EQ(run([](RedisConnection& c) -> Task<std::string> {
                      co_await c.command("SET", "k", "v");
                      co_return (co_await c.command("GET", "k")).as_string();
                  }(conn)),
                  "v");
        EXPECT_EQ(conn.local_port(), 0);
        // The same server's TCP port sees the key: it was the server, not something else.
        EXPECT_EQ(command_once(server.endpoint(), strings("GET", "k"), 2000ms).as_string(), "v");
    }
    // The server is gone: its socket refuses at once, as a dead TCP port does.
    RedisConnection gone(loop_, Endpoint{.host = socket, .port = 0});
    EXPECT_THROW(run([](RedisConnection& c) -> Task<void> { co_await c.command("PING"); }(gone)),
                 ConnectError);
    std::filesystem::remove_all(dir);
}

TEST_F(RedisConnectionTest, ScriptsRunByShaAndFallBackToEvalAfterAFlush) {
    RedisConnection c(loop_, server().endpoint());
    Script del("compare_and_delete");
    server().command({"SCRIPT", "FLUSH"});
    server().command({"SET", "lock", "mine"});
    EXPECT_EQ(run(run_script(c, del, strings("lock"), strings("theirs"))).as_integer(), 0);
    EXPECT_EQ(run(run_script(c, del, strings("lock"), strings("mine"))).as_integer(), 1);
    // The fallback cached the script: it is known by its SHA-1 now.
    auto exists = server().command({"SCRIPT", "EXISTS", del.sha1()});
    ASSERT_EQ(exists.elements.size(), 1u);
    EXPECT_EQ(exists.elements[0].integer, 1);
}

TEST_F(RedisConnectionTest, PubSubDeliversMessagesAndTimesOut) {
    RedisConnection sub(loop_, server().endpoint());
    run([](RedisConnection& s) -> Task<void> { co_await s.command("SUBSCRIBE", "ch"); }(sub));
    auto none = run([](RedisConnection& s) -> Task<std::optional<PubSubMessage>> {
        co_return co_await s.next_message(EventLoop::now() + 50ms);
    }(sub));
    EXPECT_FALSE(none.has_value());
    server().command({"PUBLISH", "ch", "hello"});
    auto got = run([](RedisConnection& s) -> Task<std::optional<PubSubMessage>> {
        co_return co_await s.next_message(EventLoop::now() + 2000ms);
    }(sub));
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->channel, "ch");
    EXPECT_EQ(got->payload, "hello");
}

}  // namespace
}  // namespace lockbench
