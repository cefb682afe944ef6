#include "engine/run/live_violations.hpp"

#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/run/run_steps.hpp"

namespace lockbench {
namespace {

// The history as the recorder writes it: appended to while the progress line reads it, a line
// possibly cut where the writer's buffer ended.
TEST(LiveViolations, CountsWhatTheStreamingChecksFoundInTheLinesWrittenSoFar) {
    testing::TempDir scratch;
    const auto file = scratch.path() / "history.jsonl";
    LiveViolations live(file);
    EXPECT_EQ(live.poll(), 0u);  // not written yet

    std::ofstream out(file, std::ios::binary);
    const auto append = [&](const std::string& text) { out << text << std::flush; };
    append(
        R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":1000})"
        "\n"
        R"({"index":1,"type":"ok","process":0,"f":"acquire","key":"k0","value":{"token":"a","mode":"exclusive"},"time":2000})"
        "\n"
        R"({"index":2,"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":3000})"
        "\n");
    EXPECT_EQ(live.poll(), 0u);
    // Process 1 is granted k0 while process 0 holds it; the line arrives in two pieces.
    append(R"({"index":3,"type":"ok","process":1,"f":"acquire","key":"k0",)");
    EXPECT_EQ(live.poll(), 0u);
    append(R"("value":{"token":"b","mode":"exclusive"},"time":4000})"
           "\n");
    EXPECT_EQ(live.poll(), 1u);
    EXPECT_EQ(live.poll(), 1u);  // nothing new: the same count

    // A line the checker refuses (index 9 after 3) stops the live count where it was.
    append(
        R"({"index":9,"type":"invoke","process":2,"f":"acquire","key":"k0","value":{},"time":5000})"
        "\n");
    EXPECT_EQ(live.poll(), 1u);
}

TEST(LiveViolations, TheProgressLineShowsThemBesideTheErrors) {
    EXPECT_EQ(progress_line(1.5, 5, "set_nx_px", 1234.4, 2, 0),
              "    1.5/5.0 s  set_nx_px        1234 cycles/s  errors 2  violations 0");
    EXPECT_EQ(progress_line(3.0, 5, "set_nx_px", 1000, 0, 287),
              "    3.0/5.0 s  set_nx_px        1000 cycles/s  errors 0  VIOLATIONS 287");
}

}  // namespace
}  // namespace lockbench
