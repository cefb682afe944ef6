#include "latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace lockbench::checker {

namespace {
constexpr std::uint64_t kHalf = 1ULL << (LatencyHistogram::kSubBits - 1);  // buckets per octave
}  // namespace

std::size_t LatencyHistogram::bucket_of(std::uint64_t ns) {
    if (ns < 2 * kHalf)
        return static_cast<std::size_t>(ns);
    int msb = 63 - std::countl_zero(ns);
    int shift = msb - (kSubBits - 1);
    return static_cast<std::size_t>((static_cast<std::uint64_t>(shift) << (kSubBits - 1)) +
                                    (ns >> shift));
}

std::uint64_t LatencyHistogram::bucket_low(std::size_t index) {
    if (index < 2 * kHalf)
        return index;
    std::uint64_t shift = index / kHalf - 1;
    std::uint64_t mantissa = index - shift * kHalf;
    return mantissa << shift;
}

std::uint64_t LatencyHistogram::bucket_width(std::size_t index) {
    if (index < 2 * kHalf)
        return 1;
    return 1ULL << (index / kHalf - 1);
}

void LatencyHistogram::record(std::chrono::nanoseconds value) {
    auto ns = static_cast<std::uint64_t>(std::max<std::int64_t>(0, value.count()));
    ++counts_[std::min(bucket_of(ns), kBuckets - 1)];
    ++count_;
    min_ = std::min(min_, ns);
    max_ = std::max(max_, ns);
}

void LatencyHistogram::merge(const LatencyHistogram& other) {
    for (std::size_t i = 0; i < kBuckets; ++i)
        counts_[i] += other.counts_[i];
    count_ += other.count_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
}

std::chrono::nanoseconds LatencyHistogram::quantile(double q) const {
    if (count_ == 0)
        return std::chrono::nanoseconds(0);
    q = std::clamp(q, 0.0, 1.0);
    auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
    rank = std::clamp<std::uint64_t>(rank, 1, count_);
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
        seen += counts_[i];
        if (seen >= rank) {
            // The bucket's midpoint, kept inside what was actually recorded.
            std::uint64_t mid = bucket_low(i) + bucket_width(i) / 2;
            return std::chrono::nanoseconds(std::clamp(mid, min_, max_));
        }
    }
    return std::chrono::nanoseconds(max_);
}

}  // namespace lockbench::checker
