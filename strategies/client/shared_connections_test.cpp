// Connections shared by many clients (`--connections`): the commands clients issue in one turn
// of the loop leave in one write, and each reply still reaches the client that asked.

#include "strategies/client/shared_connections.hpp"

#include <gtest/gtest.h>

#include "engine/testing/redis_fixture.hpp"
#include "strategies/client/session.hpp"

namespace lockbench {
namespace {

using testing::RedisTest;

class SharedConnectionsTest : public RedisTest {
  protected:
    // `clients` sessions on one shared connection to the suite's server.
    std::vector<std::unique_ptr<Session>> sessions_on(std::shared_ptr<SharedConnections> shared,
                                                      int clients) {
        std::vector<std::unique_ptr<Session>> sessions;
        for (int i = 0; i < clients; ++i) {
            sessions.push_back(make_session("c" + std::to_string(i)));
            sessions.back()->use_shared_connections(shared, static_cast<std::size_t>(i));
        }
        return sessions;
    }
    std::shared_ptr<SharedConnections> one_connection() {
        return std::make_shared<SharedConnections>(loop_,
                                                   std::vector<Endpoint>{server().endpoint()},
                                                   std::nullopt, ConnectionOptions{}, 1);
    }
};

Task<std::string> echo_own_id(Session& s) {
    co_return (co_await s.redis().command("ECHO", s.client_id())).as_string();
}

TEST_F(SharedConnectionsTest, CommandsOfOneTurnLeaveInOneWriteAndRepliesReachTheirClients) {
    auto shared = one_connection();
    auto sessions = sessions_on(shared, 50);
    RedisConnection& connection = shared->node(0, 0);
    ASSERT_EQ(run(echo_own_id(*sessions[0])), "c0");  // connected
    const std::uint64_t writes_before = connection.writes();

    std::vector<Task<std::string>> tasks;
    for (auto& s : sessions)
        tasks.push_back(echo_own_id(*s));
    auto replies = run(when_all_settled(std::move(tasks)));

    EXPECT_EQ(connection.writes() - writes_before, 1u);
    ASSERT_EQ(replies.size(), 50u);
    for (std::size_t i = 0; i < replies.size(); ++i) {
        ASSERT_TRUE(replies[i].ok()) << i;
        EXPECT_EQ(*replies[i].value, "c" + std::to_string(i));
    }
}

TEST_F(SharedConnectionsTest, ClientsKeepTheirOwnStateOverOneServerConnection) {
    auto shared = one_connection();
    auto sessions = sessions_on(shared, 20);
    // Each client counts up its own key by its own step, several commands in a row, while the
    // others interleave theirs on the same connection.
    auto count_up = [](Session& s, int step) -> Task<long long> {
        long long last = 0;
        for (int round = 0; round < 5; ++round)
            last =
                (co_await s.redis().command("INCRBY", "n:" + s.client_id(), std::to_string(step)))
                    .as_integer();
        co_return last;
    };
    std::vector<Task<long long>> tasks;
    for (std::size_t i = 0; i < sessions.size(); ++i)
        tasks.push_back(count_up(*sessions[i], static_cast<int>(i) + 1));
    auto totals = run(when_all_settled(std::move(tasks)));
    // Five commands a client, twenty clients: a write per round (the replies of a round may come
    // in more than one read), not one per command.
    EXPECT_LE(shared->node(0, 0).writes(), 10u);
    for (std::size_t i = 0; i < totals.size(); ++i) {
        ASSERT_TRUE(totals[i].ok()) << i;
        EXPECT_EQ(*totals[i].value, 5 * (static_cast<long long>(i) + 1)) << i;
    }
    // One connection on the server's side: every client's CLIENT ID is the same.
    auto client_id = [](Session& s) -> Task<long long> {
        co_return (co_await s.redis().command("CLIENT", "ID")).as_integer();
    };
    EXPECT_EQ(run(client_id(*sessions.front())), run(client_id(*sessions.back())));
}

TEST_F(SharedConnectionsTest, WithoutAutoPipeliningEachCommandIsAWriteOfItsOwn) {
    RedisConnection connection(loop_, server().endpoint());
    auto ping = [](RedisConnection& c) -> Task<std::string> {
        co_return (co_await c.command("PING")).as_string();
    };
    ASSERT_EQ(run(ping(connection)), "PONG");
    const std::uint64_t writes_before = connection.writes();
    std::vector<Task<std::string>> tasks;
    for (int i = 0; i < 50; ++i)
        tasks.push_back(ping(connection));
    run(when_all_settled(std::move(tasks)));
    EXPECT_EQ(connection.writes() - writes_before, 50u);
}

TEST_F(SharedConnectionsTest, AClientOnSharedConnectionsCannotCrashAlone) {
    auto shared = one_connection();
    auto sessions = sessions_on(shared, 2);
    EXPECT_THROW(sessions[0]->kill("crash"), std::logic_error);
    EXPECT_EQ(run(echo_own_id(*sessions[1])), "c1");
}

}  // namespace
}  // namespace lockbench
