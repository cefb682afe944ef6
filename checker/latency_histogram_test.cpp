#include "checker/latency_histogram.hpp"

#include <algorithm>
#include <random>
#include <sstream>
#include <vector>

#include <gtest/gtest.h>

namespace lockbench::checker {
namespace {

using std::chrono::nanoseconds;

TEST(LatencyHistogramTest, BucketsAreContiguousAndNarrowRelativeToTheirValue) {
    for (std::size_t i = 1; i < 3000; ++i) {
        ASSERT_EQ(LatencyHistogram::bucket_low(i),
                  LatencyHistogram::bucket_low(i - 1) + LatencyHistogram::bucket_width(i - 1))
            << "bucket " << i;
    }
    for (std::uint64_t v :
         {0ULL, 1ULL, 127ULL, 128ULL, 129ULL, 1000ULL, 123456789ULL, 1ULL << 40}) {
        auto b = LatencyHistogram::bucket_of(v);
        EXPECT_LE(LatencyHistogram::bucket_low(b), v);
        EXPECT_LT(v, LatencyHistogram::bucket_low(b) + LatencyHistogram::bucket_width(b));
        EXPECT_LE(static_cast<double>(LatencyHistogram::bucket_width(b)),
                  std::max(1.0, static_cast<double>(v) / 128.0));
    }
}

TEST(LatencyHistogramTest, SmallValuesAreExactAndLargeOnesWithinAFewPerMille) {
    LatencyHistogram h;
    for (std::int64_t v : {3, 1, 2, 200})
        h.record(nanoseconds(v));
    EXPECT_EQ(h.quantile(0.25), nanoseconds(1));
    EXPECT_EQ(h.quantile(0.5), nanoseconds(2));
    EXPECT_EQ(h.quantile(0.75), nanoseconds(3));
    EXPECT_EQ(h.quantile(1.0), nanoseconds(200));
    LatencyHistogram big;
    for (std::int64_t v = 1; v <= 1000; ++v)
        big.record(nanoseconds(v * 1'234'567));
    EXPECT_NEAR(static_cast<double>(big.quantile(0.5).count()), 500 * 1'234'567.0,
                500 * 1'234'567.0 * 0.004);
    EXPECT_EQ(big.max(), nanoseconds(1000 * 1'234'567));
}

TEST(LatencyHistogramTest, EmptyHistogramReportsZero) {
    LatencyHistogram h;
    EXPECT_EQ(h.quantile(0.99), nanoseconds(0));
    EXPECT_EQ(h.count(), 0u);
}

// Percentiles against the exact order statistics of known distributions, seeded.
void expect_matches_exact(std::vector<std::int64_t> values, std::uint64_t seed) {
    LatencyHistogram h;
    for (auto v : values)
        h.record(nanoseconds(v));
    std::sort(values.begin(), values.end());
    for (double q : {0.5, 0.9, 0.99, 0.999, 1.0}) {
        auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(values.size())));
        auto exact = static_cast<double>(values[std::max<std::size_t>(rank, 1) - 1]);
        auto got = static_cast<double>(h.quantile(q).count());
        EXPECT_NEAR(got, exact, exact / 100.0 + 1) << "q=" << q << " seed=" << seed;
    }
    EXPECT_EQ(h.max().count(), values.back());
    EXPECT_EQ(h.min().count(), values.front());
}

TEST(LatencyHistogramTest, MatchesUniformExponentialAndBimodalDistributions) {
    std::uint64_t seed = std::random_device{}();
    std::mt19937_64 rng(seed);
    std::vector<std::int64_t> uniform, exponential, bimodal;
    std::uniform_int_distribution<std::int64_t> u(50'000, 2'000'000);
    std::exponential_distribution<double> e(1.0 / 300'000.0);
    for (int i = 0; i < 100'000; ++i) {
        uniform.push_back(u(rng));
        exponential.push_back(static_cast<std::int64_t>(e(rng)) + 1);
        bimodal.push_back(i % 100 == 0 ? 50'000'000 + u(rng) : 100'000 + u(rng) / 100);
    }
    expect_matches_exact(uniform, seed);
    expect_matches_exact(exponential, seed);
    expect_matches_exact(bimodal, seed);
}

TEST(LatencyHistogramTest, MergeEqualsRecordingEverythingInOne) {
    LatencyHistogram a, b, all;
    for (int i = 1; i <= 1000; ++i) {
        (i % 2 ? a : b).record(nanoseconds(i * 1000));
        all.record(nanoseconds(i * 1000));
    }
    a.merge(b);
    EXPECT_EQ(a.count(), all.count());
    for (double q : {0.1, 0.5, 0.99})
        EXPECT_EQ(a.quantile(q), all.quantile(q));
}

// HdrHistogram's percentile-distribution text, row by row, worked out by hand from Java's
// PercentileIterator (5 ticks per half distance): 1000, 2000, 3000 and 4000 ns fall in buckets
// whose highest equivalent values are 1003, 2007, 3007 and 4015 ns (widths 4, 8, 16, 16), and
// the levels step by 10 % up to 50 %, by 5 % up to 75 %, then by 2.5 %. Checked once against
// hdr-histogram-js 3.0.1 (a 2-significant-digit histogram has the same buckets): the same rows,
// mean 2503.5 ns and deviation 1119.6 ns; it also prints the exact max.
TEST(LatencyHistogramTest, PercentileDistributionIsHdrHistogramsTextFormat) {
    LatencyHistogram h;
    for (std::int64_t v : {3000, 1000, 4000, 2000})
        h.record(nanoseconds(v));
    EXPECT_EQ(h.percentile_distribution(1000.0, 3),
              "       Value     Percentile TotalCount 1/(1-Percentile)\n"
              "\n"
              "       1.003 0.000000000000          1           1.00\n"
              "       1.003 0.100000000000          1           1.11\n"
              "       1.003 0.200000000000          1           1.25\n"
              "       2.007 0.300000000000          2           1.43\n"
              "       2.007 0.400000000000          2           1.67\n"
              "       2.007 0.500000000000          2           2.00\n"
              "       3.007 0.550000000000          3           2.22\n"
              "       3.007 0.600000000000          3           2.50\n"
              "       3.007 0.650000000000          3           2.86\n"
              "       3.007 0.700000000000          3           3.33\n"
              "       3.007 0.750000000000          3           4.00\n"
              "       4.015 0.775000000000          4           4.44\n"
              "       4.015 1.000000000000          4\n"
              "#[Mean    =        2.503, StdDeviation   =        1.120]\n"
              "#[Max     =        4.000, Total count    =            4]\n"
              "#[Buckets =           57, SubBuckets     =          256]\n");
}

TEST(LatencyHistogramTest, PercentileDistributionOfOneValueAndOfNone) {
    LatencyHistogram one;
    one.record(nanoseconds(1'500'000));  // 1.5 ms: bucket [1'499'136, 1'507'328)
    EXPECT_EQ(one.percentile_distribution(),
              "       Value     Percentile TotalCount 1/(1-Percentile)\n"
              "\n"
              "    1.507327 0.000000000000          1           1.00\n"
              "    1.507327 1.000000000000          1\n"
              "#[Mean    =     1.503232, StdDeviation   =     0.000000]\n"
              "#[Max     =     1.500000, Total count    =            1]\n"
              "#[Buckets =           57, SubBuckets     =          256]\n");
    EXPECT_EQ(LatencyHistogram().percentile_distribution(),
              "       Value     Percentile TotalCount 1/(1-Percentile)\n"
              "\n"
              "#[Mean    =     0.000000, StdDeviation   =     0.000000]\n"
              "#[Max     =     0.000000, Total count    =            0]\n"
              "#[Buckets =           57, SubBuckets     =          256]\n");
}

// Every row's count is the running count at its value, rows never go back, percentiles rise
// towards 1, and the last row holds every sample at the maximum.
TEST(LatencyHistogramTest, PercentileDistributionRowsAreConsistentForManySamples) {
    LatencyHistogram h;
    std::mt19937_64 rng(7);
    std::exponential_distribution<double> e(1.0 / 300'000.0);
    for (int i = 0; i < 50'000; ++i)
        h.record(nanoseconds(static_cast<std::int64_t>(e(rng)) + 1));
    std::istringstream in(h.percentile_distribution());
    std::string line;
    std::getline(in, line);
    std::getline(in, line);
    EXPECT_EQ(line, "");
    double last_value = 0, last_percentile = -1, value = 0, percentile = 0;
    std::uint64_t last_count = 0, count = 0, rows = 0;
    while (std::getline(in, line) && line[0] != '#') {
        std::istringstream row(line);
        ASSERT_TRUE(row >> value >> percentile >> count) << line;
        EXPECT_GE(value, last_value);
        EXPECT_GT(percentile, last_percentile);
        EXPECT_GE(count, last_count);
        last_value = value;
        last_percentile = percentile;
        last_count = count;
        ++rows;
    }
    EXPECT_GT(rows, 50u);
    EXPECT_EQ(percentile, 1.0);
    EXPECT_EQ(count, 50'000u);
    EXPECT_NEAR(value, static_cast<double>(h.max().count()) / 1e6,
                static_cast<double>(h.max().count()) / 1e6 / 128);
    EXPECT_EQ(line.rfind("#[Mean    = ", 0), 0u) << line;
}

}  // namespace
}  // namespace lockbench::checker
