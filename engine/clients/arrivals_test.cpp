#include "engine/clients/arrivals.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using namespace std::chrono_literals;
using TimePoint = ArrivalSchedule::TimePoint;

// Every client's arrivals before `end`, merged and sorted: the stream Redis sees.
std::vector<std::chrono::nanoseconds> stream(const Rate& rate, int clients, TimePoint start,
                                             TimePoint end) {
    std::vector<std::chrono::nanoseconds> all;
    for (int i = 0; i < clients; ++i) {
        ArrivalSchedule s(rate, clients, i, start, 1000 + static_cast<std::uint64_t>(i));
        for (; s.next() < end; s.advance())
            all.push_back(s.next() - start);
    }
    std::sort(all.begin(), all.end());
    return all;
}

TEST(ArrivalScheduleTest, FixedArrivalsOfAllClientsAreEvenlySpacedAtTheRate) {
    const TimePoint start{};
    // 3 clients at 1000/s: together one arrival each millisecond, exactly, client 0 first.
    auto all = stream({.per_s = 1000, .arrivals = Rate::Arrivals::Fixed}, 3, start, start + 2s);
    ASSERT_EQ(all.size(), 2000u);
    for (std::size_t j = 0; j < all.size(); ++j)
        ASSERT_EQ(all[j], std::chrono::milliseconds(j)) << j;
    ArrivalSchedule second({.per_s = 1000}, 3, 1, start, 0);
    EXPECT_EQ(second.next() - start, 1ms);
    second.advance();
    EXPECT_EQ(second.next() - start, 4ms);
    // A rate that does not divide a second: no drift after 100,000 arrivals.
    auto odd = stream({.per_s = 7}, 2, start, start + 1000s);
    EXPECT_EQ(odd.size(), 7000u);
    EXPECT_EQ(odd.back(), std::chrono::nanoseconds(std::llround(6999 * 1e9 / 7)));
}

TEST(ArrivalScheduleTest, PoissonArrivalsHaveTheRateAndExponentialGaps) {
    const TimePoint start{};
    auto all = stream({.per_s = 2000, .arrivals = Rate::Arrivals::Poisson}, 8, start, start + 50s);
    // 100,000 expected; a Poisson count's deviation is sqrt(100,000) ~ 316: 5 deviations.
    EXPECT_NEAR(static_cast<double>(all.size()), 100'000.0, 1600.0);
    // Exponential gaps of mean 0.5 ms: about e^-2 of them exceed 1 ms (fixed spacing: none).
    std::size_t long_gaps = 0;
    for (std::size_t j = 1; j < all.size(); ++j)
        long_gaps += all[j] - all[j - 1] > 1ms;
    EXPECT_NEAR(static_cast<double>(long_gaps) / static_cast<double>(all.size()), std::exp(-2.0),
                0.01);
}

}  // namespace
}  // namespace lockbench
