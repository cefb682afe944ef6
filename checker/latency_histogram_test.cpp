#include "latency_histogram.hpp"

#include <algorithm>
#include <random>
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

}  // namespace
}  // namespace lockbench::checker
