// A run's .hgrm file read back: the rows as points, everything else skipped, a broken row named.

#include "dashboard/percentile_distribution.hpp"

#include <fstream>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"

namespace lockbench::dashboard {
namespace {

// What the engine writes (checker/latency_histogram_test.cpp has the exact format).
constexpr const char* kHgrm =
    "       Value     Percentile TotalCount 1/(1-Percentile)\n"
    "\n"
    "       1.003 0.000000000000          1           1.00\n"
    "       2.007 0.500000000000          2           2.00\n"
    "       4.015 0.775000000000          4           4.44\n"
    "       4.015 1.000000000000          4\n"
    "#[Mean    =        2.503, StdDeviation   =        1.120]\n"
    "#[Max     =        4.000, Total count    =            4]\n"
    "#[Buckets =           57, SubBuckets     =          256]\n";

TEST(PercentileDistributionTest, ReadsEveryRowAndSkipsHeaderAndFooter) {
    auto points = parse_percentile_distribution(kHgrm);
    ASSERT_EQ(points.size(), 4u);
    EXPECT_DOUBLE_EQ(points[1].value_ms, 2.007);
    EXPECT_DOUBLE_EQ(points[1].percentile, 0.5);
    EXPECT_DOUBLE_EQ(points[1].total_count, 2);
    EXPECT_DOUBLE_EQ(points[3].percentile, 1.0);
    EXPECT_DOUBLE_EQ(points[3].total_count, 4);
    EXPECT_TRUE(parse_percentile_distribution("").empty());
}

TEST(PercentileDistributionTest, ABrokenRowIsNamedByItsLine) {
    try {
        parse_percentile_distribution("       Value     Percentile TotalCount\n\n  1.0 zero 3\n");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(),
                     "line 3: not a percentile row (value percentile count):   1.0 zero 3");
    }
    EXPECT_THROW(parse_percentile_distribution("1.0 1.5 3\n"), std::runtime_error);
}

TEST(PercentileDistributionTest, AMissingFileIsNoDistributionAndABrokenOneNamesTheFile) {
    testing::TempDir dir;
    EXPECT_FALSE(load_percentile_distribution(dir.path() / "latency-acquire.hgrm"));
    std::ofstream(dir.path() / "good.hgrm") << kHgrm;
    EXPECT_EQ(load_percentile_distribution(dir.path() / "good.hgrm")->size(), 4u);
    std::ofstream(dir.path() / "bad.hgrm") << "x y z\n";
    try {
        load_percentile_distribution(dir.path() / "bad.hgrm");
        FAIL() << "no error";
    } catch (const std::runtime_error& e) {
        EXPECT_EQ(std::string(e.what()).rfind((dir.path() / "bad.hgrm").string() + ": line 1: ", 0),
                  0u)
            << e.what();
    }
}

}  // namespace
}  // namespace lockbench::dashboard
