// Every shipped workload (the fuzzer's seeds) and every input the fuzzer found a bug with
// (regressions/), replayed through its entry point in the ordinary build: a bug found once stays
// found without clang. An input passes when it is a workload or a WorkloadError; any other
// exception fails here, and a crash takes the test down.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "engine/fuzz/fuzz_targets.hpp"

namespace lockbench::fuzz {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> inputs_in(const fs::path& folder, const std::string& extension) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder)) {
        if (entry.is_regular_file() && (extension.empty() || entry.path().extension() == extension))
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

std::string contents(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

TEST(WorkloadFuzzRegressionTest, EveryShippedWorkloadLoads) {
    const auto files = inputs_in(LOCKBENCH_WORKLOADS_DIR, ".json");
    ASSERT_FALSE(files.empty());
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        bool loaded = false;
        EXPECT_NO_THROW(loaded = load_workload(contents(file)));
        EXPECT_TRUE(loaded);
    }
}

TEST(WorkloadFuzzRegressionTest, EveryFoundInputIsAWorkloadOrRejectedAsBadInput) {
    const auto files = inputs_in(fs::path(LOCKBENCH_FUZZ_INPUTS) / "regressions/workload", "");
    ASSERT_FALSE(files.empty()) << "no regression inputs: the test would prove nothing";
    for (const fs::path& file : files) {
        SCOPED_TRACE(file.string());
        EXPECT_NO_THROW(load_workload(contents(file)));
    }
}

}  // namespace
}  // namespace lockbench::fuzz
