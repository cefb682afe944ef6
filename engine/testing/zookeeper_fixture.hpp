#pragma once

// GoogleTest support for tests of ZooKeeper locks: RedisTest with one ZooKeeper server beside its
// redis-server for the whole suite - the locks on ZooKeeper, the resource on Redis, as a run of a
// ZooKeeper strategy has them.

#include <memory>
#include <string>

#include "engine/servers/zookeeper_server.hpp"
#include "engine/testing/redis_fixture.hpp"

namespace lockbench::testing {

class RedisAndZooKeeperTest : public RedisTest {
  protected:
    static void SetUpTestSuite() {
        RedisTest::SetUpTestSuite();
        zookeeper_ = std::make_unique<ZooKeeperServer>();
    }
    static void TearDownTestSuite() {
        zookeeper_.reset();
        RedisTest::TearDownTestSuite();
    }
    // A session of a client named `name` whose locks are on the suite's ZooKeeper.
    std::unique_ptr<Session> zk_session(const std::string& name) {
        auto session = make_session(name);
        session->set_zookeeper_hosts(zookeeper_->hosts());
        return session;
    }
    static inline std::unique_ptr<ZooKeeperServer> zookeeper_;
};

}  // namespace lockbench::testing
