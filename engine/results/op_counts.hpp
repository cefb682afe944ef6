#pragma once

// One operation's outcomes as the clients count them (ClientStats) and summary.json writes them
// (`ops`): here, below the clients, so that the summary's readers need not link the clients.

#include <cstdint>

namespace lockbench {

struct OpCounts {
    std::uint64_t ok = 0, fail = 0, info = 0;
};

}  // namespace lockbench
