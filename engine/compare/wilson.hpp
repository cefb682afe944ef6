#pragma once

// How sure k violations in n runs make us of a rate: the Wilson score interval. A plain k/n ± z·se
// says "0 of 5, so 0 %, give or take 0" and "5 of 5: 100 % exactly", both false with five samples;
// Wilson's interval stays inside [0, 1] and is honest at 0 and n (0 of 5 is 0 to 43 %).

namespace lockbench {

struct RateInterval {
    double low = 0;
    double high = 1;
};

// z for a two-sided 95 % interval.
inline constexpr double kZ95 = 1.959963984540054;

// The Wilson score interval of k successes in n trials; [0, 1] when n is 0 (nothing known).
RateInterval wilson_interval(int k, int n, double z = kZ95);

}  // namespace lockbench
