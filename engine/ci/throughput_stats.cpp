#include "engine/ci/throughput_stats.hpp"

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

Fairness fairness_of(const std::vector<std::uint64_t>& cycles_per_client) {
    Fairness f;
    f.clients = cycles_per_client.size();
    if (cycles_per_client.empty())
        return f;
    f.min = *std::min_element(cycles_per_client.begin(), cycles_per_client.end());
    f.max = *std::max_element(cycles_per_client.begin(), cycles_per_client.end());
    f.median = median_of(std::vector<double>(cycles_per_client.begin(), cycles_per_client.end()));
    double sum = 0, squares = 0;
    for (std::uint64_t x : cycles_per_client) {
        sum += static_cast<double>(x);
        squares += static_cast<double>(x) * static_cast<double>(x);
    }
    if (squares > 0)
        f.jain = sum * sum / (static_cast<double>(f.clients) * squares);
    return f;
}

}  // namespace lockbench
