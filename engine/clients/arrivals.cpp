#include "engine/clients/arrivals.hpp"

#include <cmath>

namespace lockbench {

ArrivalSchedule::ArrivalSchedule(const Rate& rate, int clients, int index, TimePoint start,
                                 std::uint64_t seed)
    : rate_(rate), clients_(clients), index_(index), start_(start), rng_(seed), next_(start) {
    if (rate_.arrivals == Rate::Arrivals::Fixed)
        next_ = at(0);
    else
        advance();  // the first gap from the start is exponential too (memoryless)
}

ArrivalSchedule::TimePoint ArrivalSchedule::at(std::uint64_t slot) const {
    // Arrival j of the whole stream, computed from j rather than summed up gap by gap: no drift.
    const double j = static_cast<double>(slot) * clients_ + index_;
    return start_ +
           std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(j * 1e9 / rate_.per_s)));
}

void ArrivalSchedule::advance() {
    if (rate_.arrivals == Rate::Arrivals::Fixed) {
        next_ = at(++taken_);
        return;
    }
    const double mean_s = static_cast<double>(clients_) / rate_.per_s;
    const double gap_s = std::exponential_distribution<double>(1.0 / mean_s)(rng_);
    next_ += std::chrono::nanoseconds(static_cast<std::int64_t>(std::llround(gap_s * 1e9)));
}

}  // namespace lockbench
