#pragma once

#include "strategies/lua_scripts.hpp"
#include "strategies/strategy.hpp"

namespace lockbench {

// redis.io's single-instance lock (seed 002): SET key token NX PX lease; release and renew are
// Lua compare-and-delete / compare-and-pexpire, so only the owner can free or extend the lock.
class SetNxPx : public Strategy {
  public:
    explicit SetNxPx(StrategyOptions options) : options_(options) {}
    std::string_view name() const override { return "set_nx_px"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() { return Capabilities{.renew = true}; }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
    Task<bool> renew(Session& session, const Grant& grant) override;

  protected:
    StrategyOptions options_;
    Script compare_and_delete_{"compare_and_delete"};

  private:
    Script compare_and_pexpire_{"compare_and_pexpire"};
};

}  // namespace lockbench
