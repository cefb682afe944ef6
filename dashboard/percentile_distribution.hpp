#pragma once

// A run's `.hgrm` file (HdrHistogram's percentile-distribution text, written by the engine beside
// summary.json) read back as points: the whole latency distribution, not four percentiles.
// Qt-free, so it is tested without a display.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace lockbench::dashboard {

struct PercentilePoint {
    double value_ms = 0;
    double percentile = 0;  // 0 .. 1
    double total_count = 0;
};

// The rows of a percentile distribution, in file order; the header, blank lines and the `#[...]`
// footer are skipped. Throws std::runtime_error naming the line of a row that is not
// "value percentile count [1/(1-percentile)]".
std::vector<PercentilePoint> parse_percentile_distribution(const std::string& text);

// The file's points, or nullopt when there is no such file (a run from before .hgrm files).
// Throws std::runtime_error naming the file when it is there but malformed.
std::optional<std::vector<PercentilePoint>> load_percentile_distribution(
    const std::filesystem::path& file);

}  // namespace lockbench::dashboard
