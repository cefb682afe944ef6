#include "checker/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>

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

std::string LatencyHistogram::percentile_distribution(double unit_ns, int decimals,
                                                      int ticks_per_half) const {
    std::string out;
    char line[160];
    auto add = [&](const char* format, auto... args) {
        std::snprintf(line, sizeof line, format, args...);
        out += line;
    };
    add("%12s %14s %10s %14s\n\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)");
    // The last bucket holding a count, and HdrHistogram's "highest equivalent value" of a bucket.
    std::size_t last = 0;
    for (std::size_t i = 0; i < kBuckets; ++i) {
        if (counts_[i])
            last = i;
    }
    auto highest = [](std::size_t i) { return bucket_low(i) + bucket_width(i) - 1; };
    auto scaled = [&](std::uint64_t ns) { return static_cast<double>(ns) / unit_ns; };
    // Java's PercentileIterator: a row each time the running count reaches the next percentile
    // level (several levels may fall on one bucket), the levels stepping by 100 / ticks, where
    // ticks doubles each time half of the remaining distance to 100 % is covered; then one last
    // row at 100 %.
    double level = 0;
    std::uint64_t running = 0;
    for (std::size_t i = 0; count_ > 0 && i <= last; ++i) {
        if (counts_[i] == 0)
            continue;
        running += counts_[i];
        while (level < 100) {
            const double percentile =
                100.0 * static_cast<double>(running) / static_cast<double>(count_);
            if (percentile < level)
                break;
            add("%12.*f %2.12f %10llu %14.2f\n", decimals, scaled(highest(i)), level / 100.0,
                static_cast<unsigned long long>(running), 1.0 / (1.0 - level / 100.0));
            const auto ticks = static_cast<std::int64_t>(
                ticks_per_half *
                static_cast<std::int64_t>(std::pow(
                    2.0,
                    static_cast<double>(static_cast<std::int64_t>(
                                            std::log(100.0 / (100.0 - level)) / std::log(2.0)) +
                                        1))));
            level += 100.0 / static_cast<double>(ticks);
            if (running == count_)
                break;  // every count seen: only the 100 % row is left
        }
    }
    if (count_ > 0) {
        add("%12.*f %2.12f %10llu\n", decimals, scaled(highest(last)), 1.0,
            static_cast<unsigned long long>(count_));
    }
    // Mean and standard deviation over each bucket's midpoint, as HdrHistogram computes them.
    double mean = 0, deviation = 0;
    if (count_ > 0) {
        auto mid = [](std::size_t i) {
            return static_cast<double>(bucket_low(i) + bucket_width(i) / 2);
        };
        double total = 0;
        for (std::size_t i = 0; i <= last; ++i)
            total += mid(i) * static_cast<double>(counts_[i]);
        mean = total / static_cast<double>(count_);
        double squares = 0;
        for (std::size_t i = 0; i <= last; ++i) {
            if (counts_[i])
                squares += (mid(i) - mean) * (mid(i) - mean) * static_cast<double>(counts_[i]);
        }
        deviation = std::sqrt(squares / static_cast<double>(count_));
    }
    add("#[Mean    = %12.*f, StdDeviation   = %12.*f]\n", decimals, mean / unit_ns, decimals,
        deviation / unit_ns);
    add("#[Max     = %12.*f, Total count    = %12llu]\n", decimals, scaled(max_),
        static_cast<unsigned long long>(count_));
    add("#[Buckets = %12d, SubBuckets     = %12d]\n", static_cast<int>(kBuckets / kHalf - 1),
        static_cast<int>(2 * kHalf));
    return out;
}

}  // namespace lockbench::checker
