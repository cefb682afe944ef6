#include "reentrant_hash.hpp"

#include <stdexcept>

namespace lockbench {

Task<AcquireResult> ReentrantHash::acquire(Session&, const AcquireRequest&) {
    throw std::logic_error("reentrant_hash is not implemented yet");
    co_return Denied{};
}

Task<ReleaseOutcome> ReentrantHash::release(Session&, const Grant&) {
    throw std::logic_error("reentrant_hash is not implemented yet");
    co_return ReleaseOutcome::NotHeld;
}

}  // namespace lockbench
