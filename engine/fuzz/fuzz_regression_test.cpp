// Every shipped workload (the fuzzer's seeds) and every input the fuzzer found a bug with
// (regressions/), replayed through its entry point in the ordinary build: a bug found once stays
// found without clang. An input passes when it is a workload or a WorkloadError; any other
// exception fails here, and a crash takes the test down.

#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/testing/input_files.hpp"
#include "engine/fuzz/fuzz_targets.hpp"

namespace lockbench::fuzz {
namespace {

namespace fs = std::filesystem;

using lockbench::testing::contents;
using lockbench::testing::files_in;

TEST(WorkloadFuzzRegressionTest, EveryShippedWorkloadLoads) {
    const auto files = files_in(LOCKBENCH_WORKLOADS_DIR, ".json");
    ASSERT_FALSE(files.empty());
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        bool loaded = false;
        EXPECT_NO_THROW(loaded = load_workload(contents(file)));
        EXPECT_TRUE(loaded);
    }
}

TEST(WorkloadFuzzRegressionTest, EveryFoundInputIsAWorkloadOrRejectedAsBadInput) {
    const auto files = files_in(fs::path(LOCKBENCH_FUZZ_INPUTS) / "regressions/workload", "");
    ASSERT_FALSE(files.empty()) << "no regression inputs: the test would prove nothing";
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        EXPECT_NO_THROW(load_workload(contents(file)));
    }
}

}  // namespace
}  // namespace lockbench::fuzz
