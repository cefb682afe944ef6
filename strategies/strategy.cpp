#include "strategies/strategy.hpp"

#include <stdexcept>

namespace lockbench {

std::string_view to_string(LockMode mode) {
    return mode == LockMode::Exclusive ? "exclusive" : "shared";
}

std::string_view to_string(Denied::Why why) {
    return why == Denied::Why::Held ? "held" : "no-quorum";
}

std::string_view to_string(ReleaseOutcome outcome) {
    switch (outcome) {
        case ReleaseOutcome::Released:
            return "released";
        case ReleaseOutcome::StillHeld:
            return "still-held";
        case ReleaseOutcome::NotHeld:
            return "not-held";
    }
    return "?";
}

std::string describe(const Capabilities& caps) {
    std::string out;
    auto add = [&](bool on, std::string_view what) {
        if (!on)
            return;
        if (!out.empty())
            out += ',';
        out += what;
    };
    add(caps.reentrant, "reentrant");
    add(caps.shared_mode, "shared-mode");
    add(caps.fencing, "fencing");
    add(caps.auto_renewal, "watchdog");
    add(caps.renew, "renew");
    add(caps.needs_client_clock, "client-clock");
    add(caps.multi_node, "multi-node");
    add(!caps.expires, "no-expiry");
    add(!caps.owner_bound_release, "unowned-release");
    add(caps.pubsub_wakeup, "pubsub-wakeup");
    add(caps.zookeeper, "zookeeper");
    add(caps.etcd, "etcd");
    add(caps.needs_replicas, "replica-ack");
    return out.empty() ? "-" : out;
}

Task<bool> Strategy::renew(Session&, const Grant&) {
    throw std::logic_error(std::string(name()) + " cannot renew a lease");
    co_return false;
}

Task<void> Strategy::shutdown(Session&) {
    co_return;
}

Task<std::optional<std::chrono::milliseconds>> Strategy::applied_lease(Session&,
                                                                       std::chrono::milliseconds) {
    co_return std::nullopt;
}

}  // namespace lockbench
