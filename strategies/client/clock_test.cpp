#include "strategies/client/clock.hpp"

#include <thread>

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using namespace std::chrono_literals;

TEST(ClockTest, ManualClockOnlyMovesWhenAdvanced) {
    Clock c = Clock::manual(1'000'000);
    EXPECT_EQ(c.wall_ms(), 1'000'000);
    std::this_thread::sleep_for(5ms);
    EXPECT_EQ(c.wall_ms(), 1'000'000);
    c.advance(250ms);
    EXPECT_EQ(c.wall_ms(), 1'000'250);
    EXPECT_EQ(c.steady(), Clock::Duration(250ms));
}

TEST(ClockTest, OffsetShiftsWallTimeButNotElapsedTime) {
    Clock c = Clock::manual(5'000);
    c.set_offset(3'000ms);
    EXPECT_EQ(c.wall_ms(), 8'000);
    EXPECT_EQ(c.steady(), Clock::Duration(0));
    c.set_offset(-1'000ms);
    EXPECT_EQ(c.wall_ms(), 4'000);
}

TEST(ClockTest, DriftScalesElapsedTimeFromTheMomentItIsSet) {
    Clock c = Clock::manual(0);
    c.advance(1'000ms);
    c.set_drift(0.5);  // 50 % fast from here on
    EXPECT_EQ(c.wall_ms(), 1'000);
    c.advance(1'000ms);
    EXPECT_EQ(c.wall_ms(), 2'500);
    EXPECT_EQ(c.steady(), Clock::Duration(2'500ms));
    // A fast clock's second is shorter in real time.
    EXPECT_EQ(c.to_real(Clock::Duration(1'500ms)), Clock::Duration(1'000ms));
}

TEST(ClockTest, SystemClockFollowsTheMachine) {
    Clock c;
    auto system_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                         std::chrono::system_clock::now().time_since_epoch())
                         .count();
    EXPECT_NEAR(static_cast<double>(c.wall_ms()), static_cast<double>(system_ms), 50.0);
    auto before = c.steady();
    std::this_thread::sleep_for(20ms);
    EXPECT_GE(c.steady() - before, Clock::Duration(20ms));
}

TEST(ClockTest, ManualSleepWakesWhenTimeIsAdvancedPastIt) {
    EventLoop loop;
    Clock c = Clock::manual(0);
    bool woke = false;
    auto sleeper = [](Clock& clock, EventLoop& l, bool& flag) -> Task<void> {
        co_await clock.sleep_for(l, 100ms);
        flag = true;
    };
    spawn_detached(sleeper(c, loop, woke));
    loop.run_once(0ms);
    EXPECT_FALSE(woke);
    c.advance(99ms);
    loop.run_once(0ms);
    EXPECT_FALSE(woke);
    c.advance(1ms);
    loop.run_once(0ms);
    EXPECT_TRUE(woke);
}

TEST(ClockTest, DriftedSleepLastsLessRealTime) {
    EventLoop loop;
    Clock c;
    c.set_drift(1.0);  // twice as fast
    auto start = EventLoop::now();
    run_sync(loop, [](Clock& clock, EventLoop& l) -> Task<void> {
        co_await clock.sleep_for(l, 200ms);
    }(c, loop));
    auto real = EventLoop::now() - start;
    EXPECT_GE(real, 95ms);
    EXPECT_LT(real, 190ms);
}

}  // namespace
}  // namespace lockbench
