// The timeline's level of detail on a synthetic 1 M-event history: bounded bars per row at any
// zoom, exact holds when zoomed in, and a violation that stays red when merged away.

#include "dashboard/level_of_detail.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace lockbench::dashboard {
namespace {

// 16 processes, process p always on key p % 4, 4 events per hold (acquire invoke/ok, release
// invoke/ok): 250 k holds. One pair of holds on k0 overlaps in the middle.
std::shared_ptr<const Timeline> million_events(std::int64_t& overlap_at) {
    const int processes = 16;
    const std::int64_t slot = 10'000;  // 10 µs per hold
    struct Pending {
        std::int64_t time;
        const char* type;
        int p;
        const char* f;
        int key;
    };
    std::vector<Pending> events;
    events.reserve(1'000'000);
    auto add = [&](const char* type, int p, const char* f, int key, std::int64_t time) {
        events.push_back({time, type, p, f, key});
    };
    const int holds = 250'000;
    overlap_at = 0;
    for (int i = 0; i < holds; ++i) {
        int p = i % processes;
        int key = i % 4;
        std::int64_t start = static_cast<std::int64_t>(i / 4) * slot + key;
        std::int64_t end = start + slot / 2;
        if (i == holds / 2) {
            end += 2 * slot;  // runs over its key's next holder
            overlap_at = start;
        }
        add("invoke", p, "acquire", key, start - 1);
        add("ok", p, "acquire", key, start);
        add("invoke", p, "release", key, end);
        add("ok", p, "release", key, end + 1);
    }
    // A history is in time order: the overlap only shows if the late release comes after the
    // next grant.
    std::stable_sort(events.begin(), events.end(),
                     [](const Pending& a, const Pending& b) { return a.time < b.time; });
    HistoryModel m;
    std::string buf;
    for (std::size_t i = 0; i < events.size(); ++i) {
        const Pending& e = events[i];
        buf = R"({"index":)" + std::to_string(i) + R"(,"type":")" + e.type + R"(","process":)" +
              std::to_string(e.p) + R"(,"f":")" + e.f + R"(","key":"k)" + std::to_string(e.key) +
              R"(","value":{"token":"t","mode":"exclusive"},"time":)" + std::to_string(e.time) +
              "}";
        m.add_line(buf);
    }
    return m.snapshot();
}

TEST(LevelOfDetailTest, AMillionEventsStayBoundedAndKeepTheViolation) {
    auto t0 = std::chrono::steady_clock::now();
    std::int64_t overlap_at = 0;
    auto t = million_events(overlap_at);
    auto loaded = std::chrono::steady_clock::now();
    ASSERT_EQ(t->events, 1'000'000u);
    ASSERT_EQ(t->holds.size(), 250'000u);
    ASSERT_GE(t->overlap_count, 1u);

    const int pixels = 1000;
    std::size_t total = 0;
    bool red = false;
    for (std::size_t r = 0; r < t->rows(); ++r) {
        auto bars = visible_bars(*t, r, 0, t->end_ns, pixels);
        EXPECT_LE(bars.size(), 2 * (static_cast<std::size_t>(pixels) + 1));
        for (const auto& b : bars)
            red = red || b.overlapped;
        total += bars.size();
    }
    auto drawn = std::chrono::steady_clock::now();
    EXPECT_TRUE(red) << "the overlap vanished at full zoom-out";
    EXPECT_GT(total, t->rows()) << "rows with an overlap must not turn into one red bar";
    EXPECT_LE(total, 16u * 2 * (pixels + 1));
    // A frame of the full-range view must be interactive; the budget is generous for CI.
    EXPECT_LT(std::chrono::duration<double>(drawn - loaded).count(), 0.5);
    std::printf("1M events: load %.2f s, full-range LOD %.4f s, %zu bars\n",
                std::chrono::duration<double>(loaded - t0).count(),
                std::chrono::duration<double>(drawn - loaded).count(), total);

    // Zoomed to 100 µs around the overlap, every hold is its own bar.
    std::size_t row = t->row_of(t->holds[t->overlaps[0].a].process);
    auto bars = visible_bars(*t, row, overlap_at - 50'000, overlap_at + 50'000, pixels);
    ASSERT_FALSE(bars.empty());
    for (const auto& b : bars)
        EXPECT_EQ(b.holds, 1u);
}

TEST(LevelOfDetailTest, HoldsStartingBeforeTheWindowStillShow) {
    HistoryModel m;
    m.add_line(R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"k","time":0})");
    m.add_line(R"({"index":1,"type":"ok","process":0,"f":"acquire","key":"k","time":0})");
    m.add_line(R"({"index":2,"type":"invoke","process":0,"f":"release","key":"k","time":1000})");
    m.add_line(R"({"index":3,"type":"ok","process":0,"f":"release","key":"k","time":1000})");
    m.add_line(R"({"index":4,"type":"invoke","process":0,"f":"acquire","key":"k","time":1001})");
    m.add_line(R"({"index":5,"type":"ok","process":0,"f":"acquire","key":"k","time":1001})");
    m.add_line(R"({"index":6,"type":"invoke","process":0,"f":"release","key":"k","time":1002})");
    auto t = m.snapshot();
    auto bars = visible_bars(*t, 0, 500, 600, 100);
    ASSERT_EQ(bars.size(), 1u);
    EXPECT_EQ(bars[0].start_ns, 0);
    EXPECT_TRUE(visible_bars(*t, 0, 2000, 3000, 100).empty());
    EXPECT_TRUE(visible_bars(*t, 5, 0, 3000, 100).empty());
}

}  // namespace
}  // namespace lockbench::dashboard
