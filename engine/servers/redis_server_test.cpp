#include "engine/servers/redis_server.hpp"

#include <filesystem>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using namespace std::chrono_literals;

bool process_alive(pid_t pid) {
    return ::kill(pid, 0) == 0;
}

TEST(RedisServerTest, StartsOnAFreePortAndCleansUpOnDestruction) {
    pid_t pid;
    std::filesystem::path dir;
    {
        RedisServer server;
        pid = server.pid();
        dir = server.dir();
        EXPECT_GT(server.port(), 0);
        EXPECT_TRUE(process_alive(pid));
        EXPECT_EQ(server.command({"PING"}).str, "PONG");
        EXPECT_EQ(server.command({"CONFIG", "GET", "appendonly"}).elements.at(1).str, "no");
        EXPECT_EQ(server.command({"CONFIG", "GET", "save"}).elements.at(1).str, "");
    }
    EXPECT_FALSE(std::filesystem::exists(dir));
    EXPECT_FALSE(process_alive(pid));
}

TEST(RedisServerTest, TwoServersGetDifferentPorts) {
    RedisServer a, b;
    EXPECT_NE(a.port(), b.port());
}

TEST(RedisServerTest, MissingBinaryIsAnEnvironmentError) {
    try {
        RedisServer server({.binary = "redis-server-that-does-not-exist"});
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("not found in PATH"), std::string::npos) << e.what();
    }
}

TEST(RedisServerTest, BusyPortIsAnEnvironmentError) {
    RedisServer first;
    try {
        RedisServer second({.port = first.port(), .start_timeout = 3000ms});
        FAIL() << "expected an EnvironmentError";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("busy"), std::string::npos) << e.what();
    }
}

TEST(RedisServerTest, RestartWithoutPersistenceLosesKeysAndWithAofAlwaysKeepsThem) {
    RedisServer none;
    none.command({"SET", "lock", "tok"});
    none.kill();
    EXPECT_FALSE(none.running());
    none.restart();
    EXPECT_TRUE(none.command({"GET", "lock"}).is_nil());

    RedisServer aof({.persistence = Persistence::AofAlways});
    aof.command({"SET", "lock", "tok"});
    aof.kill();
    aof.restart();
    EXPECT_EQ(aof.command({"GET", "lock"}).str, "tok");
}

TEST(RedisServerTest, PauseStopsAnsweringAndResumeAnswersAgain) {
    RedisServer server;
    server.pause();
    EXPECT_THROW(server.command({"PING"}), IoError);
    server.resume();
    EXPECT_EQ(server.command({"PING"}).str, "PONG");
}

TEST(RedisServerTest, StopsAPausedServer) {
    pid_t pid;
    {
        RedisServer server;
        pid = server.pid();
        server.pause();
    }
    EXPECT_FALSE(process_alive(pid));
}

TEST(RedisServerTest, ServesAReplica) {
    RedisServer master;
    RedisServer replica(
        {.extra_args = {"--replicaof", "127.0.0.1", std::to_string(master.port())}});
    master.command({"SET", "k", "v"});
    Reply got;
    for (int i = 0; i < 200 && !got.is_string(); ++i) {
        got = replica.command({"GET", "k"});
        if (!got.is_string())
            std::this_thread::sleep_for(20ms);
    }
    EXPECT_EQ(got.str, "v");
}

}  // namespace
}  // namespace lockbench
