#pragma once

#include "strategies/set_nx_px.hpp"

namespace lockbench {

// set_nx_px plus a fencing number issued in the same script as the grant (Kleppmann; Redisson
// RFencedLock). A resource that checks the number (resource 'fenced') refuses a write older than
// one it has accepted: a paused holder's late write that lands after the next holder's (T1, T13).
// One that lands first is accepted, and the next holder, which read before it landed, overwrites
// it - a fence orders writes, it does not make a read-modify-write atomic. And only as long as
// the counter itself survives (T14: a failover can reissue a number).
class Fenced final : public SetNxPx {
  public:
    using SetNxPx::SetNxPx;
    std::string_view name() const override { return "fenced"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.fencing = true, .renew = true};
    }
    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;

    // Where the fencing counter of lock `key` lives.
    static std::string fence_key(const std::string& key) { return key + ":fence"; }

  private:
    Script fenced_acquire_{"fenced_acquire"};
};

}  // namespace lockbench
