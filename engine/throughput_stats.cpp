#include "throughput_stats.hpp"

#include <algorithm>
#include <cmath>

namespace lockbench {

double median_of(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

Throughput throughput_of(const std::vector<double>& per_second, double duration_s,
                         double cycles_per_s) {
    auto full = static_cast<std::size_t>(std::floor(duration_s));
    std::vector<double> samples(
        per_second.begin(),
        per_second.begin() + static_cast<std::ptrdiff_t>(std::min(full, per_second.size())));
    Throughput t;
    t.samples = samples.size();
    if (samples.empty()) {
        t.median = cycles_per_s;
        return t;
    }
    t.median = median_of(samples);
    std::vector<double> deviations;
    for (double s : samples)
        deviations.push_back(std::fabs(s - t.median));
    t.noise = t.median > 0 ? median_of(deviations) / t.median : 0;
    return t;
}

std::optional<Reference> reference_for(const std::vector<ScenarioRun>& runs, std::size_t judged,
                                       const std::string& reference_strategy) {
    for (const ScenarioRun& r : runs) {
        if (r.strategy == reference_strategy)
            return Reference{reference_strategy, r.throughput.median, r.throughput.noise};
    }
    std::vector<double> medians;
    std::vector<double> noises;
    for (std::size_t i = 0; i < runs.size(); ++i) {
        if (i == judged)
            continue;
        medians.push_back(runs[i].throughput.median);
        noises.push_back(runs[i].throughput.noise);
    }
    if (medians.empty())
        return std::nullopt;
    return Reference{kMedianReference, median_of(medians), median_of(noises)};
}

}  // namespace lockbench
