// The nemesis at the end of a run: what is still in effect heals at once, and what the heals
// schedule in turn (a check polling for a promotion) runs at its own pace, not back to back.

#include "engine/nemesis/nemesis.hpp"

#include <functional>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/clients/history_recorder.hpp"
#include "engine/topology/deployment.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

TEST(NemesisHealTest, HealsAtOnceAndRunsThePollsItSchedulesAtTheirOwnPace) {
    testing::TempDir dir;
    HistoryRecorder history(dir.path() / "history.jsonl", EventLoop::now());
    Deployment deployment;
    ClientDirectory clients;
    NemesisContext ctx(history, deployment, clients, 1);
    // A restart due in an hour, which then polls every 50 ms until its fourth check, as a
    // cluster's promotion is waited for.
    std::vector<EventLoop::TimePoint> polls;
    std::function<void()> poll = [&] {
        polls.push_back(EventLoop::now());
        if (polls.size() < 4)
            ctx.later(EventLoop::now() + 50ms, poll);
    };
    std::optional<EventLoop::TimePoint> healed;
    ctx.later(EventLoop::now() + 1h, [&] {
        healed = EventLoop::now();
        ctx.later(EventLoop::now() + 50ms, poll);
    });
    const auto heal_started = EventLoop::now();
    ctx.run_all_pending();
    ASSERT_TRUE(healed.has_value());
    EXPECT_LT(*healed - heal_started, 10min) << "the restart waited for when it was due";
    EXPECT_FALSE(ctx.has_pending());
    ASSERT_EQ(polls.size(), 4u);
    EXPECT_GE(polls[0] - *healed, 50ms);
    for (std::size_t i = 1; i < polls.size(); ++i)
        EXPECT_GE(polls[i] - polls[i - 1], 50ms) << "poll " << i << " ran back to back";
    history.finish();
}

}  // namespace
}  // namespace lockbench
