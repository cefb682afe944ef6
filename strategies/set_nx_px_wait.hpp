#pragma once

#include "strategies/set_nx_px.hpp"

namespace lockbench {

// set_nx_px, then WAIT numreplicas timeout: a grant counts only when that many replicas
// acknowledged the lock (Redisson's replica sync, which its maintainers recommend over Redlock).
// When fewer did, the lock is given back (compare-and-delete) and the acquire is in doubt
// (UnconfirmedError, recorded `info`): it existed on the master and may survive on a replica.
//
// What it buys: a failover to a replica that missed a grant cannot happen for a grant the client
// was told about - every counted grant is on a replica. What it does not: WAIT is not consensus.
// The master still applies the SET at once, so a client partitioned with an old master is denied
// (no replica answers) but so is everyone else there; a replica that acknowledged may not be the
// one promoted; and a holder paused past its lease breaks mutual exclusion as with set_nx_px.
class SetNxPxWait : public SetNxPx {
  public:
    using SetNxPx::SetNxPx;
    std::string_view name() const override { return "set_nx_px_wait"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.renew = true, .needs_replicas = true};
    }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
};

}  // namespace lockbench
