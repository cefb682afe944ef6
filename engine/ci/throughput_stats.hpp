#pragma once

// The gate's statistics, computed in one place: a run's throughput as the median of its full
// per-second samples with its relative median absolute deviation as noise (robust to one stalled
// or bursty second on a shared host), and the reference a run is normalised by.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace lockbench {

double median_of(std::vector<double> v);  // 0 for none

struct Throughput {
    double median = 0;
    double noise = 0;  // relative MAD: 0.05 is 5%
    std::size_t samples = 0;
};

// per_second: cycles completed in each second of the run; the last, partial second is left out
// (a 2.5 s run has 3 entries: the third would read as a drop). Under one full second, the median
// is the run's average and there is no noise to measure.
Throughput throughput_of(const std::vector<double>& per_second, double duration_s,
                         double cycles_per_s);

inline constexpr const char* kMedianReference = "median";

// What a run's throughput is divided by, so that a uniformly slower machine changes nothing.
struct Reference {
    std::string name;  // the reference strategy, or kMedianReference
    double median = 0;
    double noise = 0;
};

// One fault-free run of a scenario.
struct ScenarioRun {
    std::string strategy;
    Throughput throughput;
};

// The reference for runs[judged] among the fault-free runs of its scenario: the strategy named
// `reference_strategy` when it ran, else the median of the *other* strategies - never a median
// that includes the judged run, which would halve a drop in a two-strategy scenario. The median
// of their noises overstates the median's noise, which errs towards passing. nullopt when
// nothing else ran.
std::optional<Reference> reference_for(const std::vector<ScenarioRun>& runs, std::size_t judged,
                                       const std::string& reference_strategy);

// How evenly the clients shared the lock: cycles per client (every client, those that completed
// none included). Jain's index is (sum x)^2 / (n * sum x^2): 1 when all got the same, 1/n when
// one got everything; nullopt when nobody completed a cycle.
struct Fairness {
    std::size_t clients = 0;
    std::uint64_t min = 0;
    double median = 0;
    std::uint64_t max = 0;
    std::optional<double> jain;
};

Fairness fairness_of(const std::vector<std::uint64_t>& cycles_per_client);

}  // namespace lockbench
