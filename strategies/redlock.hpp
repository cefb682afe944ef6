#pragma once

#include "strategies/lua_scripts.hpp"
#include "strategies/strategy.hpp"

namespace lockbench {

// Redlock (redis.io) over the session's N independent masters: SET NX PX on all at once; the
// lock is held iff a majority said yes AND validity = lease - elapsed - drift is still positive
// (elapsed on the client's monotonic clock; drift = lease x factor + 2 ms). On failure it unlocks
// every node, "even the instances it believed it was not able to lock" (a reply may be lost).
// Measuring elapsed after the replies rejects T2's pause-during-acquire; it cannot help with a
// pause after the grant (T1), a restarted node without persistence (T4) or a server clock jump
// (T3).
class Redlock final : public Strategy {
  public:
    explicit Redlock(StrategyOptions options) : options_(options) {}
    std::string_view name() const override { return "redlock"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.renew = true, .multi_node = true};
    }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    // Released if a majority still held our token, NotHeld if the nodes that answered show it
    // cannot have; when too many did not answer to tell, the outcome is unknown (IoError, an
    // `info`): "not-held" would claim what nobody saw.
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
    // Extends on every node; true only if a majority extended within the validity.
    Task<bool> renew(Session& session, const Grant& grant) override;

    static std::size_t quorum(std::size_t nodes) { return nodes / 2 + 1; }

  private:
    struct Unlocked {
        std::size_t released = 0;             // nodes that deleted our token
        std::size_t silent = 0;               // nodes that did not answer (down, paused, cut off)
        std::vector<Settled<Reply>> results;  // per node
    };
    Task<Unlocked> unlock_all(Session& session, const std::string& key, const std::string& token);
    StrategyOptions options_;
    Script compare_and_delete_{"compare_and_delete"};
    Script compare_and_pexpire_{"compare_and_pexpire"};
};

}  // namespace lockbench
