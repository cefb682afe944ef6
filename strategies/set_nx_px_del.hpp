#pragma once

#include "strategies/set_nx_px.hpp"

namespace lockbench {

// T8's demonstration: set_nx_px's acquire with a plain DEL release. A holder whose lease ran out
// deletes whoever holds the lock now, and a third client walks in while the second still works.
class SetNxPxDel final : public SetNxPx {
  public:
    using SetNxPx::SetNxPx;
    std::string_view name() const override { return "set_nx_px_del"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.renew = true, .owner_bound_release = false};
    }
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
};

}  // namespace lockbench
