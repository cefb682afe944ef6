// The client threads' ends: a fault the nemesis posts to a client's thread just as that thread's
// clients end must not run on them once they are destroyed (the order is forced with the threads'
// own companion hook, not with sleeps).

#include "engine/clients/client_threads.hpp"

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/testing/redis_fixture.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

class ClientThreadsTest : public testing::RedisTest {};

class NeverReached : public Fault {
  public:
    std::string_view name() const override { return "never-reached"; }
};

// Sets `flag` when the session holding it is destroyed, with its client.
struct DestroyedWith {
    std::atomic<bool>& flag;
    ~DestroyedWith() { flag = true; }
};

TEST_F(ClientThreadsTest, AFaultPostedAsTheClientsEndIsDroppedNotRunOnDestroyedClients) {
    Workload w;
    w.clients = 1;
    w.threads = 1;
    KeyPicker keys(w.keys, w.key_distribution);
    std::atomic<bool> stop{false};
    std::atomic<std::int64_t> next_process{w.clients};
    std::atomic<std::uint64_t> live_cycles{0}, live_errors{0};
    std::atomic<int> connected{0};
    std::mutex connect_error_mutex;
    std::string connect_error;
    ClientEnvironment env{w,
                          keys,
                          stop,
                          next_process,
                          live_cycles,
                          live_errors,
                          connected,
                          connect_error_mutex,
                          connect_error};
    ClientDirectory directory;
    std::atomic<bool> client_destroyed{false};
    std::atomic<int> ran{0}, ran_on_destroyed{0};
    std::atomic<bool> posted{false};
    NeverReached fault;

    ClientThreads::Placement placement;
    placement.companion = [&](EventLoop& loop, std::vector<SimulatedClient*> mine,
                              bool) -> Task<void> {
        mine.at(0)->arm("a point no cycle reaches", fault,
                        [](SimulatedClient&) { return std::chrono::milliseconds(0); });
        // The client reports the fault it never reached as the last thing its run does (its
        // strategy's shutdown does not wait), so once that is seen, the client's task is over
        // and this companion is the loop's last: its return ends the loop.
        while (fault.miss_reason().empty())
            co_await loop.sleep_for(1ms);
        posted = directory.post(0, [&](SimulatedClient&) {
            ++ran;
            if (client_destroyed)
                ++ran_on_destroyed;
        });
    };
    ClientThreads threads(
        env, directory,
        [&](EventLoop& loop, int, int, Clock clock) {
            auto session =
                std::make_unique<Session>(loop, std::vector<Endpoint>{server().endpoint()},
                                          ConnectionOptions{}, "c0", std::move(clock));
            session->set_on_whole_pause([guard = std::make_shared<DestroyedWith>(client_destroyed)](
                                            EventLoop::TimePoint) {});
            return session;
        },
        std::move(placement));
    threads.wait_registered();
    threads.stop();  // the client ends without a cycle: nothing to record
    threads.join();

    EXPECT_EQ(threads.failure(), "");
    EXPECT_NE(fault.miss_reason(), "");
    EXPECT_TRUE(posted) << "the client was still registered when the fault was posted";
    EXPECT_TRUE(client_destroyed);
    EXPECT_EQ(ran_on_destroyed.load(), 0) << "a fault ran on a destroyed client";
    EXPECT_EQ(ran.load(), 0) << "a fault posted as its client ended was not dropped";
}

}  // namespace
}  // namespace lockbench
