#include "engine/compare/wilson.hpp"

#include <algorithm>
#include <cmath>

namespace lockbench {

RateInterval wilson_interval(int k, int n, double z) {
    if (n <= 0)
        return {};
    const double trials = n;
    const double p = static_cast<double>(std::clamp(k, 0, n)) / trials;
    const double z2 = z * z;
    const double denominator = 1 + z2 / trials;
    const double centre = (p + z2 / (2 * trials)) / denominator;
    const double half =
        z * std::sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator;
    // At k = 0 (or n) the bound is 0 (or 1) exactly; rounding must not print "-0 %" or "100.0001
    // %".
    return {k <= 0 ? 0.0 : std::clamp(centre - half, 0.0, 1.0),
            k >= n ? 1.0 : std::clamp(centre + half, 0.0, 1.0)};
}

}  // namespace lockbench
