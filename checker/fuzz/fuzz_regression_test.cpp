// Every input the fuzzers started from (seeds/) or found a bug with (regressions/), replayed
// through the fuzzers' own entry points in the ordinary build: a bug a fuzzer found once stays
// found without clang. An input passes when it is judged or rejected as bad input; any other
// exception fails here, and a crash takes the test down.

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/fuzz/fuzz_targets.hpp"
#include "checker/testing/input_files.hpp"

namespace lockbench::checker::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_in(const std::string& folder) {
    return lockbench::testing::files_in(fs::path(LOCKBENCH_FUZZ_INPUTS) / folder);
}
using lockbench::testing::contents;

// How many of `folder`'s inputs were judged; fails on any that escaped the contract.
std::size_t replay(const std::string& folder, bool (*target)(std::string_view)) {
    const std::vector<fs::path> files = inputs_in(folder);
    EXPECT_FALSE(files.empty()) << folder << " has no inputs: the test would prove nothing";
    std::size_t judged = 0;
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        EXPECT_NO_THROW(judged += target(contents(file)) ? 1 : 0);
    }
    return judged;
}

TEST(FuzzRegressionTest, EveryEdnInputIsJudgedOrRejectedAsBadInput) {
    // The seeds are real histories: each is judged.
    EXPECT_EQ(replay("seeds/edn", check_edn_history), inputs_in("seeds/edn").size());
    replay("regressions/edn", check_edn_history);
}

TEST(FuzzRegressionTest, EveryJsonlInputIsJudgedOrRejectedAsBadInput) {
    EXPECT_EQ(replay("seeds/jsonl", check_jsonl_history), inputs_in("seeds/jsonl").size());
    replay("regressions/jsonl", check_jsonl_history);
}

}  // namespace
}  // namespace lockbench::checker::fuzz
