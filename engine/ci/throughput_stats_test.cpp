#include "engine/ci/throughput_stats.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

TEST(Fairness, EqualSharesAreFairAndOneHogIsOneOverN) {
    const Fairness equal = fairness_of({10, 10, 10, 10});
    EXPECT_EQ(equal.clients, 4u);
    EXPECT_EQ(equal.min, 10u);
    EXPECT_EQ(equal.max, 10u);
    EXPECT_DOUBLE_EQ(equal.median, 10);
    ASSERT_TRUE(equal.jain);
    EXPECT_DOUBLE_EQ(*equal.jain, 1.0);

    const Fairness hog = fairness_of({40, 0, 0, 0});
    EXPECT_EQ(hog.min, 0u);
    EXPECT_EQ(hog.max, 40u);
    EXPECT_DOUBLE_EQ(hog.median, 0);
    EXPECT_DOUBLE_EQ(*hog.jain, 0.25);

    // python-redis-lock's benchmark: one process starved to 311 while three got ~3,000 each.
    const Fairness starved = fairness_of({311, 3000, 3100, 2900});
    EXPECT_DOUBLE_EQ(*starved.jain, (9311.0 * 9311.0) / (4.0 * (311.0 * 311 + 3000.0 * 3000 +
                                                                3100.0 * 3100 + 2900.0 * 2900)));
    EXPECT_DOUBLE_EQ(starved.median, 2950);
}

TEST(Fairness, NobodyCompletingHasNoIndex) {
    EXPECT_FALSE(fairness_of({0, 0, 0}).jain);
    EXPECT_FALSE(fairness_of({}).jain);
    EXPECT_EQ(fairness_of({}).clients, 0u);
}

}  // namespace
}  // namespace lockbench
