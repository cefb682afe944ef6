// history.jsonl's file keeps every byte in order whichever way it is written - past the page
// cache in whole blocks with the last partial one at the end, or through it - and a full disk is
// an error the run reports, never a shorter history.

#include "engine/clients/history_file.hpp"

#include <string>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/clients/history_recorder.hpp"
#include "engine/servers/embedded_server.hpp"  // EnvironmentError

namespace lockbench {
namespace {

// Pieces that straddle, fill and fall short of 4096-byte blocks, each byte telling its place.
std::string appended_in_pieces(HistoryFile& file) {
    std::string all;
    for (const std::size_t size : {1, 4095, 4097, 10'000, 3, 8192, 0, 70'001}) {
        std::string piece(size, '\0');
        for (char& c : piece)
            c = static_cast<char>('a' +
                                  (all.size() + static_cast<std::size_t>(&c - piece.data())) % 26);
        EXPECT_TRUE(file.append(piece)) << file.error();
        all += piece;
    }
    return all;
}

TEST(HistoryFileTest, WritesEveryByteInOrderWhereverItCanGoPastThePageCache) {
    testing::TempDir dir;
    const auto path = dir.path() / "history.jsonl";
    HistoryFile file(path);
    const std::string all = appended_in_pieces(file);
    ASSERT_TRUE(file.close()) << file.error();
    EXPECT_EQ(testing::read_file(path), all);
}

TEST(HistoryFileTest, WritesEveryByteInOrderThroughThePageCache) {
    testing::TempDir dir;
    const auto path = dir.path() / "history.jsonl";
    HistoryFile file(path, HistoryFile::Writes::ThroughThePageCache);
    EXPECT_FALSE(file.direct());
    const std::string all = appended_in_pieces(file);
    ASSERT_TRUE(file.close()) << file.error();
    EXPECT_EQ(testing::read_file(path), all);
}

TEST(HistoryFileTest, AFullDiskIsAnErrorNotAShorterHistory) {
    HistoryFile file("/dev/full");
    EXPECT_FALSE(file.append(std::string(3 * 4096, 'x')) && file.close());
    EXPECT_EQ(file.error(), "No space left on device");
}

TEST(HistoryFileTest, TheRecorderReportsAFullDiskWhenItFinishes) {
    HistoryRecorder recorder("/dev/full", EventLoop::now());
    recorder.record(
        HistoryEventView{.type = EventType::Invoke, .process = 0, .f = "acquire", .key = "k1"});
    try {
        recorder.finish();
        FAIL() << "finish() reported success over a history the disk never took";
    } catch (const EnvironmentError& e) {
        EXPECT_STREQ(e.what(), "writing the history failed: No space left on device");
    }
}

}  // namespace
}  // namespace lockbench
