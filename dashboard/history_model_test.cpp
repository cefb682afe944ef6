// Holds, nesting, crashes and the overlap sweep on small hand-written histories, and the line
// numbers of malformed ones.

#include "history_model.hpp"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "temp_dir.hpp"

namespace lockbench::dashboard {
namespace {

namespace fs = std::filesystem;

// One event per call, in HISTORY.md's shape.
class HistoryBuilder {
  public:
    HistoryBuilder& ev(const std::string& type, const std::string& process, const std::string& f,
                       const std::string& key, const std::string& value, std::int64_t time) {
        lines_ << R"({"index":)" << index_++ << R"(,"type":")" << type << R"(","process":)"
               << process << R"(,"f":")" << f << R"(","key":")" << key << R"(","value":)" << value
               << R"(,"time":)" << time << "}\n";
        return *this;
    }
    HistoryBuilder& hold(int p, const std::string& key, std::int64_t from, std::int64_t to,
                         const std::string& mode = "exclusive") {
        std::string proc = std::to_string(p);
        ev("ok", proc, "acquire", key, R"({"token":"t)" + proc + R"(","mode":")" + mode + "\"}",
           from);
        return ev("invoke", proc, "release", key, R"({"token":"t)" + proc + "\"}", to);
    }
    std::shared_ptr<const Timeline> timeline() const {
        HistoryModel m;
        std::istringstream in(lines_.str());
        std::size_t n = 0;
        for (std::string line; std::getline(in, line);)
            m.add_line(line, ++n);
        return m.snapshot();
    }

  private:
    std::ostringstream lines_;
    int index_ = 0;
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
                 .ev("ok", "0", "acquire", "k", R"({"token":"a","mode":"exclusive"})", 100)
                 .ev("ok", "0", "acquire", "k", R"({"token":"a","mode":"exclusive"})", 200)
                 .ev("invoke", "0", "release", "k", R"({"token":"a"})", 300)
                 .ev("invoke", "0", "release", "k", R"({"token":"a"})", 400)
                 .timeline();
    ASSERT_EQ(t->holds.size(), 1u);
    EXPECT_EQ(t->holds[0].start_ns, 100);
    EXPECT_EQ(t->holds[0].end_ns, 400);
    EXPECT_EQ(t->overlap_count, 0u);
}

TEST(HistoryModelTest, CrashEndsHoldsAndTheEndOfHistoryCutsOpenOnes) {
    auto t = HistoryBuilder()
                 .ev("ok", "0", "acquire", "k", R"({"token":"a","mode":"exclusive"})", 100)
                 .ev("info", R"("nemesis")", "crash", "", R"({"target":0})", 250)
                 .ev("ok", "1", "acquire", "k", R"({"token":"b","mode":"exclusive"})", 300)
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

TEST(HistoryModelTest, MalformedLinesNameTheirLineNumber) {
    HistoryModel m;
    m.add_line(R"({"type":"invoke","process":0,"f":"read","key":"k","value":null,"time":1})", 1);
    m.add_line("", 2);
    auto message = [&](std::string_view line) {
        try {
            m.add_line(line, 3);
        } catch (const HistoryError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(message(R"({"type":"ok","process":0,"f":"rea)").rfind("history.jsonl:3: not JSON", 0),
              0u);
    EXPECT_EQ(message(R"({"type":"ok","process":0,"f":"read","time":"x"})"),
              "history.jsonl:3: \"time\" must be an integer (ns since run start)");
    EXPECT_EQ(message(R"({"type":"ok","process":"p","f":"read","time":3})"),
              "history.jsonl:3: \"process\" must be an integer or \"nemesis\"");
}

TEST(HistoryFollowerTest, FeedsOnlyCompleteLinesUntilTheEnd) {
    lockbench::testing::TempDir scratch;
    const fs::path p = scratch.path() / "history.jsonl";
    const std::string a =
        R"({"type":"ok","process":0,"f":"acquire","key":"k","value":{"token":"a"},"time":10})";
    const std::string b =
        R"({"type":"invoke","process":0,"f":"release","key":"k","value":null,"time":20})";
    std::ofstream(p) << a << "\n" << b.substr(0, 20);
    HistoryModel m;
    HistoryFollower f(p);
    EXPECT_EQ(f.poll(m, false), 1u);
    EXPECT_TRUE(m.snapshot()->holds.at(0).open_ended);
    std::ofstream(p, std::ios::app) << b.substr(20) << "\n";
    EXPECT_EQ(f.poll(m, false), 1u);
    EXPECT_FALSE(m.snapshot()->holds.at(0).open_ended);
    std::ofstream(p, std::ios::app) << R"({"type":"ok","pro)";
    EXPECT_EQ(f.poll(m, false), 0u);
    try {
        f.poll(m, true);
        FAIL() << "truncated line accepted";
    } catch (const HistoryError& e) {
        EXPECT_EQ(std::string(e.what()).rfind("history.jsonl:3: ", 0), 0u) << e.what();
    }
    fs::remove(p);
}

}  // namespace
}  // namespace lockbench::dashboard
