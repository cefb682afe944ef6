// Holds, nesting, crashes and overlaps on small hand-written histories, as the checker finds them,
// and the line numbers of malformed ones.

#include "dashboard/history_model.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include <gtest/gtest.h>

#include "checker/history.hpp"
#include "checker/mutual_exclusion.hpp"
#include "checker/testing/temp_dir.hpp"

namespace lockbench::dashboard {
namespace {

namespace fs = std::filesystem;

// A valid history (checker/HISTORY.md) from events given in any order: they are sorted by time
// (ties keep the order of the calls) and numbered.
class HistoryBuilder {
  public:
    HistoryBuilder& ev(const std::string& type, const std::string& process, const std::string& f,
                       const std::string& key, const std::string& value, std::int64_t time) {
        events_.push_back({time, R"(,"type":")" + type + R"(","process":)" + process + R"(,"f":")" +
                                     f + R"(","key":")" + key + R"(","value":)" + value +
                                     R"(,"time":)" + std::to_string(time) + "}"});
        return *this;
    }
    HistoryBuilder& acquire(int p, const std::string& key, std::int64_t at,
                            const std::string& mode = "exclusive") {
        const std::string proc = std::to_string(p);
        ev("invoke", proc, "acquire", key, R"({"mode":")" + mode + "\"}", at);
        return ev("ok", proc, "acquire", key,
                  R"({"token":"t)" + proc + R"(","mode":")" + mode + "\"}", at);
    }
    HistoryBuilder& release(int p, const std::string& key, std::int64_t at) {
        const std::string proc = std::to_string(p);
        ev("invoke", proc, "release", key, R"({"token":"t)" + proc + "\"}", at);
        return ev("ok", proc, "release", key, "null", at);
    }
    HistoryBuilder& hold(int p, const std::string& key, std::int64_t from, std::int64_t to,
                         const std::string& mode = "exclusive") {
        acquire(p, key, from, mode);
        return release(p, key, to);
    }
    std::vector<std::string> lines() const {
        auto sorted = events_;
        std::stable_sort(sorted.begin(), sorted.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        std::vector<std::string> out;
        for (std::size_t i = 0; i < sorted.size(); ++i)
            out.push_back(R"({"index":)" + std::to_string(i) + sorted[i].second);
        return out;
    }
    std::shared_ptr<const Timeline> timeline() const {
        HistoryModel m;
        for (const std::string& line : lines())
            m.add_line(line);
        return m.snapshot();
    }

  private:
    std::vector<std::pair<std::int64_t, std::string>> events_;
};

TEST(HistoryModelTest, ExclusiveHoldsThatOverlapAreMarkedWithTheSharedInterval) {
    auto t = HistoryBuilder()
                 .hold(0, "k0", 100, 500)
                 .hold(1, "k0", 400, 800)  // overlaps process 0 on k0 during [400, 500]
                 .hold(2, "k1", 450, 600)  // another key: no conflict
                 .hold(0, "k0", 800, 900)  // touches process 1's release: no conflict
                 .timeline();
    ASSERT_EQ(t->holds.size(), 4u);
    EXPECT_EQ(t->rows(), 3u);
    EXPECT_EQ(t->overlapped_holds, 2u);
    ASSERT_EQ(t->overlaps.size(), 1u);
    EXPECT_EQ(t->overlaps[0].start_ns, 400);
    EXPECT_EQ(t->overlaps[0].end_ns, 500);
    EXPECT_EQ(t->keys[static_cast<std::size_t>(t->overlaps[0].key)], "k0");
    EXPECT_TRUE(t->holds[t->overlaps[0].a].overlapped);
    EXPECT_TRUE(t->holds[t->overlaps[0].b].overlapped);
}

TEST(HistoryModelTest, SharedHoldsMayOverlapEachOtherButNotAWriter) {
    auto readers = HistoryBuilder()
                       .hold(0, "rw", 100, 500, "shared")
                       .hold(1, "rw", 200, 600, "shared")
                       .timeline();
    EXPECT_EQ(readers->overlap_count, 0u);
    auto writer = HistoryBuilder()
                      .hold(0, "rw", 100, 500, "shared")
                      .hold(1, "rw", 200, 600, "shared")
                      .hold(2, "rw", 300, 350)
                      .timeline();
    EXPECT_EQ(writer->overlap_count, 2u);
    EXPECT_EQ(writer->overlapped_holds, 3u);
}

TEST(HistoryModelTest, ReentrantAcquiresNestInOneHold) {
    auto t = HistoryBuilder()
                 .acquire(0, "k", 100)
                 .acquire(0, "k", 200)
                 .release(0, "k", 300)
                 .release(0, "k", 400)
                 .timeline();
    ASSERT_EQ(t->holds.size(), 1u);
    EXPECT_EQ(t->holds[0].start_ns, 100);
    EXPECT_EQ(t->holds[0].end_ns, 400);
    EXPECT_EQ(t->overlap_count, 0u);
}

TEST(HistoryModelTest, CrashEndsHoldsAndTheEndOfHistoryCutsOpenOnes) {
    auto t = HistoryBuilder()
                 .acquire(0, "k", 100)
                 .ev("info", R"("nemesis")", "crash", "", R"({"target":0})", 250)
                 .acquire(1, "k", 300)
                 .ev("invoke", "1", "read", "k", "null", 900)
                 .timeline();
    ASSERT_EQ(t->holds.size(), 2u);
    EXPECT_TRUE(t->holds[0].crashed);
    EXPECT_EQ(t->holds[0].end_ns, 250);
    EXPECT_TRUE(t->holds[1].open_ended);
    EXPECT_EQ(t->holds[1].end_ns, 900);
    ASSERT_EQ(t->nemesis.size(), 1u);
    EXPECT_EQ(t->nemesis[0].f, "crash");
    EXPECT_EQ(t->nemesis[0].target, "0");
    EXPECT_EQ(t->overlap_count, 0u);
}

TEST(HistoryModelTest, AShortUpgradeOfASharedHoldConflictsWithTheOtherReaders) {
    // Re-entering a shared hold in exclusive mode makes it a writer from then on.
    auto t = HistoryBuilder()
                 .acquire(0, "rw", 100, "shared")
                 .acquire(1, "rw", 200, "shared")
                 .acquire(0, "rw", 300)  // process 0 upgrades while process 1 reads
                 .release(0, "rw", 400)
                 .release(0, "rw", 500)
                 .release(1, "rw", 600)
                 .timeline();
    EXPECT_EQ(t->overlap_count, 1u);
    ASSERT_EQ(t->overlaps.size(), 1u);
    EXPECT_EQ(t->overlaps[0].start_ns, 300);
    EXPECT_EQ(t->overlaps[0].end_ns, 500);
    EXPECT_EQ(t->overlapped_holds, 2u);
}

TEST(HistoryModelTest, OverlapsAreTheCheckersAndTheirCountIsAll) {
    // Ten writers on one key at once: every pair is a violation (45), as the checker counts.
    HistoryBuilder b;
    for (int p = 0; p < 10; ++p)
        b.hold(p, "k", 100 + p, 1000 + p);
    auto t = b.timeline();
    EXPECT_EQ(t->overlap_count, 45u);
    EXPECT_EQ(t->overlaps.size(), 45u);
    EXPECT_EQ(t->overlapped_holds, 10u);
    checker::MutualExclusionCheck check;
    checker::HistoryParser parser;
    checker::Event e;
    for (std::string line : b.lines()) {
        line.push_back('\0');
        if (parser.parse(line.data(), line.data() + line.size() - 1, e))
            check.on_event(e);
    }
    EXPECT_EQ(check.violation_count(), t->overlap_count);
}

// The message for a third line after two good ones.
std::string message_of_third_line(std::string_view line) {
    HistoryModel m;
    m.add_line(
        R"({"index":0,"type":"invoke","process":0,"f":"read","key":"k","value":null,"time":1})");
    m.add_line(R"({"index":1,"type":"ok","process":0,"f":"read","key":"k","value":3,"time":2})");
    try {
        m.add_line(line);
    } catch (const HistoryError& e) {
        return e.what();
    }
    return "no error";
}

TEST(HistoryModelTest, MalformedLinesNameTheirLineNumberInTheCheckersWords) {
    EXPECT_EQ(message_of_third_line(R"({"index":2,"type":"ok","process":0,"f":"rea)"),
              "history.jsonl:3: not valid JSON: unterminated string at column 44");
    EXPECT_EQ(message_of_third_line(R"({"index":2,"type":"ok","process":0,"f":"read","time":"x"})"),
              "history.jsonl:3: field `time` must be an integer");
    EXPECT_EQ(
        message_of_third_line(R"({"index":2,"type":"ok","process":"p","f":"read","time":3})"),
        "history.jsonl:3: field `process` must be an integer >= 0, \"nemesis\" or \"library\"");
    EXPECT_EQ(
        message_of_third_line(R"({"index":5,"type":"invoke","process":0,"f":"read","time":3})"),
        "history.jsonl:3: `index` is 5, expected 2");
    EXPECT_EQ(message_of_third_line(R"({"index":2,"type":"ok","process":0,"f":"read","time":3})"),
              "history.jsonl:3: process 0 completes `read` but has no operation in flight");
    EXPECT_EQ(message_of_third_line(""), "no error");  // a blank line at the end is fine
}

TEST(HistoryFollowerTest, FeedsOnlyCompleteLinesUntilTheEnd) {
    lockbench::testing::TempDir scratch;
    const fs::path p = scratch.path() / "history.jsonl";
    const auto lines = HistoryBuilder().hold(0, "k", 10, 20).lines();
    const std::string& release = lines[2];
    std::ofstream(p) << lines[0] << "\n" << lines[1] << "\n" << release.substr(0, 20);
    HistoryModel m;
    HistoryFollower f(p);
    EXPECT_EQ(f.poll(m, false), 2u);
    EXPECT_TRUE(m.snapshot()->holds.at(0).open_ended);
    std::ofstream(p, std::ios::app) << release.substr(20) << "\n";
    EXPECT_EQ(f.poll(m, false), 1u);
    EXPECT_FALSE(m.snapshot()->holds.at(0).open_ended);
    std::ofstream(p, std::ios::app) << R"({"index":3,"type":"ok","pro)";
    EXPECT_EQ(f.poll(m, false), 0u);
    try {
        f.poll(m, true);
        FAIL() << "truncated line accepted";
    } catch (const HistoryError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("history.jsonl:4: ", 0), 0u) << e.what();
        EXPECT_NE(std::string(e.what()).find("(truncated last line?)"), std::string::npos);
    }
    fs::remove(p);
}

}  // namespace
}  // namespace lockbench::dashboard
