#pragma once

#include "strategy.hpp"

namespace lockbench {

// Placeholder until the strategy lands.
class Rwlock final : public Strategy {
  public:
    explicit Rwlock(const StrategyOptions&) {}
    std::string_view name() const override { return "rwlock"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() { return Capabilities{}; }
    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
};

}  // namespace lockbench
