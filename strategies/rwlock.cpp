#include "rwlock.hpp"

#include <stdexcept>

namespace lockbench {

Task<AcquireResult> Rwlock::acquire(Session&, const AcquireRequest&) {
    throw std::logic_error("rwlock is not implemented yet");
    co_return Denied{};
}

Task<ReleaseOutcome> Rwlock::release(Session&, const Grant&) {
    throw std::logic_error("rwlock is not implemented yet");
    co_return ReleaseOutcome::NotHeld;
}

}  // namespace lockbench
