#pragma once

// GoogleTest support for tests that need Redis: a real redis-server per test suite (hiredis's
// test.sh pattern as a fixture), a seeded PRNG whose seed is printed on failure, and helpers to
// run strategy coroutines to completion.

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/servers/redis_server.hpp"
#include "strategies/client/event_loop.hpp"
#include "strategies/client/session.hpp"

namespace lockbench::testing {

// A test that runs client coroutines to completion on an event loop of its own.
class EventLoopTest : public ::testing::Test {
  protected:
    template <typename T>
    T run(Task<T> task) {
        return run_sync(loop_, std::move(task));
    }

    EventLoop loop_;
};

// One redis-server for every test of the suite; FLUSHALL before each test keeps them independent.
class RedisTest : public EventLoopTest {
  protected:
    static void SetUpTestSuite() { server_ = std::make_unique<RedisServer>(); }
    static void TearDownTestSuite() { server_.reset(); }
    void SetUp() override {
        if (!server_->running())
            server_->restart();
        server_->command({"FLUSHALL"});
    }

    static RedisServer& server() { return *server_; }

    // A session of a client named `name` on the suite's server.
    std::unique_ptr<Session> make_session(const std::string& name, Clock clock = Clock(),
                                          ConnectionOptions options = {}) {
        return std::make_unique<Session>(loop_, std::vector<Endpoint>{server_->endpoint()}, options,
                                         name, std::move(clock));
    }

  private:
    static inline std::unique_ptr<RedisServer> server_;
};

// Servers a run is given as the user's own (--redis): `count` redis-servers of the test's (three
// for Redlock's masters) and their endpoints, in the same order; or as many as `strategy` drives
// (Redlock's three, any other strategy's one).
struct UsersRedisServers {
    explicit UsersRedisServers(const std::string& strategy)
        : UsersRedisServers(strategy == "redlock" ? 3 : 1) {}
    explicit UsersRedisServers(int count) {
        for (int i = 0; i < count; ++i) {
            servers.push_back(std::make_unique<RedisServer>());
            endpoints.push_back(servers.back()->endpoint());
        }
    }

    std::vector<std::unique_ptr<RedisServer>> servers;
    std::vector<Endpoint> endpoints;
};

// A seed per test, printed when the test fails, so a failure can be replayed with
// LOCKBENCH_TEST_SEED=<n>.
inline std::uint64_t test_seed() {
    if (const char* env = std::getenv("LOCKBENCH_TEST_SEED"))
        return std::stoull(env);
    return std::random_device{}();
}

}  // namespace lockbench::testing
