#pragma once

// Open-loop load (a workload's `rate`): arrivals at a fixed rate over all clients, each client
// taking its share, as wrk2 spreads its rate over connections. A client starts a cycle when its
// next arrival is due - or at once when it is behind - and its latency is measured from when the
// arrival was due as well as from when the request was sent: a stalled server delays every
// arrival that falls due meanwhile, which a closed loop (each client waiting for its previous
// cycle) never sends and so never measures (coordinated omission).

#include <chrono>
#include <cstdint>
#include <random>

#include "engine/run/workload.hpp"

namespace lockbench {

class ArrivalSchedule {
  public:
    using TimePoint = std::chrono::steady_clock::time_point;

    // Client `index` of `clients`: `fixed` gives arrival j of the whole stream at start + j / rate
    // (client i takes j = i, i + clients, ...), so together they are exactly evenly spaced;
    // `poisson` gives each client exponential gaps of mean clients / rate, so together they are a
    // Poisson stream of the rate.
    ArrivalSchedule(const Rate& rate, int clients, int index, TimePoint start, std::uint64_t seed);

    // When the client's next arrival is due.
    TimePoint next() const { return next_; }
    // Moves on to the arrival after it.
    void advance();

  private:
    TimePoint at(std::uint64_t slot) const;

    Rate rate_;
    int clients_;
    int index_;
    TimePoint start_;
    std::mt19937_64 rng_;
    std::uint64_t taken_ = 0;  // fixed: arrivals this client already took
    TimePoint next_;
};

}  // namespace lockbench
