#pragma once

// The one log-linear histogram of durations - the engine's latencies, the checker's waits and
// handoffs - in the spirit of HdrHistogram (none is packaged in Debian, and third-party code is
// not copied in): values below 256 ns are exact, above that each power of two is split in 128
// linear buckets, so any reported percentile is within 1/256 (0.4 %) of a recorded value. Fixed
// memory, no allocation when recording, mergeable across client threads.

#include <array>
#include <chrono>
#include <cstdint>
#include <string>

namespace lockbench::checker {

class LatencyHistogram {
  public:
    void record(std::chrono::nanoseconds value);
    void merge(const LatencyHistogram& other);

    std::uint64_t count() const { return count_; }
    std::chrono::nanoseconds min() const { return std::chrono::nanoseconds(count_ ? min_ : 0); }
    std::chrono::nanoseconds max() const { return std::chrono::nanoseconds(max_); }
    // The value at quantile q in [0, 1] (0.5 = median); 0 when empty.
    std::chrono::nanoseconds quantile(double q) const;

    // The whole distribution in HdrHistogram's percentile-distribution text format (`.hgrm`,
    // what Java's outputPercentileDistribution and HistogramLogProcessor print), values divided
    // by `unit_ns` (1e6: milliseconds) with `decimals` digits. The layout is HdrHistogram's with
    // 2 significant digits and a unit of 1 ns - 256 sub-buckets, the same bucket boundaries - and
    // so are the rows (percentile ticks halving towards 100 %, `ticks_per_half` per half; each
    // value the highest equivalent value of its bucket) and the footer (mean and standard
    // deviation over bucket midpoints; the max is the exact one, as hdr-histogram-js prints it),
    // so the file plots and merges with HdrHistogram's own tools.
    std::string percentile_distribution(double unit_ns = 1e6, int decimals = 6,
                                        int ticks_per_half = 5) const;

    // Bucket arithmetic, public for tests.
    static constexpr int kSubBits = 8;
    static std::size_t bucket_of(std::uint64_t ns);
    static std::uint64_t bucket_low(std::size_t index);
    static std::uint64_t bucket_width(std::size_t index);

  private:
    static constexpr std::size_t kBuckets = (64 - kSubBits + 2) << (kSubBits - 1);
    std::array<std::uint64_t, kBuckets> counts_{};
    std::uint64_t count_ = 0;
    std::uint64_t min_ = UINT64_MAX;
    std::uint64_t max_ = 0;
};

}  // namespace lockbench::checker
