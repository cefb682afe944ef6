// Every shipped demonstration (workloads/*.json) against every strategy it names, on real
// redis-servers with real faults: the checker's verdict must equal the scenario's expectation.
// A demonstration that fails to demonstrate fails here, and so does a "safe" strategy that shows
// a violation. Each run leaves no server, paused process or half-configured topology behind.

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <ostream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "run.hpp"
#include "temp_dir.hpp"
#include "workload.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

struct ScenarioCase {
    fs::path file;
    std::string scenario;
    std::string strategy;
};

std::vector<ScenarioCase> shipped_cases() {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(LOCKBENCH_WORKLOADS_DIR)) {
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<ScenarioCase> cases;
    for (const auto& f : files) {
        Workload w = Workload::load(f);
        for (const auto& [strategy, expected] : w.expect)
            cases.push_back({f, w.name, strategy});
    }
    return cases;
}

// Names the case in gtest's output instead of dumping its bytes.
void PrintTo(const ScenarioCase& c, std::ostream* os) {
    *os << c.scenario << " x " << c.strategy;
}

using testing::TempDir;

class ScenarioTest : public ::testing::TestWithParam<ScenarioCase> {};

TEST_P(ScenarioTest, VerdictEqualsTheExpectation) {
    const auto& c = GetParam();
    Workload w = Workload::load(c.file);
    w.strategy = c.strategy;
    w.validate();
    TempDir out;
    RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    const auto& s = r.summary;
    ASSERT_FALSE(r.interrupted);
    ASSERT_TRUE(s["as_expected"].is_boolean())
        << c.scenario << " x " << c.strategy << ": the verdict was unknown\n"
        << s["verdict"].dump(2);
    EXPECT_TRUE(s["as_expected"].get<bool>())
        << c.scenario << " x " << c.strategy << ": expected " << s["expected"].get<std::string>()
        << "\nverdict " << s["verdict"].dump(2).substr(0, 4000);
}

std::string case_name(const ::testing::TestParamInfo<ScenarioCase>& info) {
    std::string name = info.param.scenario + "_" + info.param.strategy;
    std::replace_if(
        name.begin(), name.end(),
        [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); }, '_');
    return name;
}

INSTANTIATE_TEST_SUITE_P(Shipped, ScenarioTest, ::testing::ValuesIn(shipped_cases()), case_name);

}  // namespace
}  // namespace lockbench
