// The clean-up of a run on the user's servers, on a real redis-server: every key carrying the
// run's prefix goes, wherever the prefix stands in it, and so does every key an adapter's library
// wrote under the run's namespace, and nothing else does; a server that does not answer is named
// with what was left on it.

#include "engine/topology/server_cleanup.hpp"

#include <gtest/gtest.h>

#include "engine/servers/redis_server.hpp"

namespace lockbench {
namespace {

using nlohmann::json;

constexpr const char* kPrefix = "lockbench:0a1b2c3d4e5f:";

TEST(ServerCleanupTest, DeletesEveryKeyWithTheRunsPrefixAndNothingElse) {
    RedisServer server;
    const std::string prefix = kPrefix;
    // Every shape a strategy gives its keys: the lock key, a fence or resource counter after it,
    // rwlock_seed's names and a cluster's hash tag before it.
    for (const std::string& key : {prefix + "k0", prefix + "k0:counter", prefix + "k0:fence",
                                   "LOCK:LOCK:" + prefix + "k1:W_LOCK",
                                   "LOCK:LOCK:" + prefix + "k1:R_LOCK", "{s3}" + prefix + "k2"}) {
        server.command({"SET", key, "1"});
    }
    // Many of them, so SCAN takes more than one page.
    for (int i = 0; i < 2500; ++i)
        server.command({"SET", prefix + "k" + std::to_string(i + 3), "1"});
    for (const std::string& mine : {std::string("orders"), std::string("lockbench:ffffffffffff:k0"),
                                    std::string("LOCK:LOCK:k0:W_LOCK")})
        server.command({"SET", mine, "theirs"});

    Deployment users;
    users.embedded = false;
    users.endpoints = {server.endpoint()};
    const json report = clean_up_user_servers(Workload{}, users, users.endpoints, prefix);
    EXPECT_EQ(report, json::parse(R"({"left": [], "redis": [{"server": ")" +
                                  server.endpoint().to_string() + R"(", "deleted": 2506}]})"));
    EXPECT_EQ(server.command({"DBSIZE"}).integer, 3);
    EXPECT_EQ(server.command({"GET", "lockbench:ffffffffffff:k0"}).str, "theirs");
}

TEST(ServerCleanupTest, DeletesWhatAnAdaptersLibraryWroteUnderTheRunsNamespace) {
    RedisServer server;
    // A library names its keys itself: under the namespace, the key prefix need not be there.
    for (const std::string& key :
         {std::string("lockbench-0a1b2c3d4e5f:mutex:") + kPrefix + "k0",
          std::string("lockbench-0a1b2c3d4e5f:fence-counter"), std::string(kPrefix) + "k0:counter"})
        server.command({"SET", key, "1"});
    for (const std::string& theirs : {std::string("lockbench-ffffffffffff:fence-counter"),
                                      std::string("lockbench-0a1b2c3d4e5f")})
        server.command({"SET", theirs, "theirs"});

    Deployment users;
    users.embedded = false;
    users.endpoints = {server.endpoint()};
    const json report = clean_up_user_servers(Workload{}, users, users.endpoints, kPrefix,
                                              "lockbench-0a1b2c3d4e5f");
    EXPECT_EQ(report, json::parse(R"({"left": [], "redis": [{"server": ")" +
                                  server.endpoint().to_string() + R"(", "deleted": 3}]})"));
    EXPECT_EQ(server.command({"DBSIZE"}).integer, 2);
}

TEST(ServerCleanupTest, AServerThatDoesNotAnswerIsNamedWithWhatWasLeftOnIt) {
    const Endpoint gone{"127.0.0.1", pick_free_port()};  // nothing listens there
    Deployment users;
    users.embedded = false;
    users.endpoints = {gone};
    ::testing::internal::CaptureStderr();
    const json report = clean_up_user_servers(Workload{}, users, users.endpoints, kPrefix);
    const std::string stderr_text = ::testing::internal::GetCapturedStderr();
    ASSERT_EQ(report["left"].size(), 1u) << report.dump();
    const std::string left = report["left"][0];
    EXPECT_EQ(
        left.rfind("keys matching *" + std::string(kPrefix) + "* on " + gone.to_string() + ": ", 0),
        0u)
        << left;
    EXPECT_EQ(report["redis"], json::array());
    EXPECT_EQ(stderr_text, "lockbench: left on your servers: " + left + "\n");
}

TEST(ServerCleanupTest, AllEmbeddedIsNothingToCleanUp) {
    Deployment ours;
    EXPECT_TRUE(clean_up_user_servers(Workload{}, ours, {}, "").is_null());
}

}  // namespace
}  // namespace lockbench
