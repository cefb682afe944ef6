#pragma once

#include "strategies/lua_scripts.hpp"
#include "strategies/strategy.hpp"

namespace lockbench {

// Seed 001's read-write lock, as written: a writer key and a shared reader counter changed by
// Lua, with no expiry (a crashed holder blocks the lock until someone deletes it by hand) and an
// unlock that is not bound to its owner (seed 001's own "risk 1": an unlock in a `finally` after
// a failed acquire releases another instance's read hold). The seed polls every 100 ms.
class RwlockSeed final : public Strategy {
  public:
    explicit RwlockSeed(const StrategyOptions&) {}
    std::string_view name() const override { return "rwlock_seed"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.shared_mode = true, .expires = false, .owner_bound_release = false};
    }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;

    // Seed 001's key names: LOCK:LOCK:<key>:W_LOCK and LOCK:LOCK:<key>:R_LOCK.
    static std::string writer_key(const std::string& key) { return "LOCK:LOCK:" + key + ":W_LOCK"; }
    static std::string reader_key(const std::string& key) { return "LOCK:LOCK:" + key + ":R_LOCK"; }

  private:
    Script acquire_{"rwlock_seed_acquire"};
    Script release_{"rwlock_seed_release"};
};

}  // namespace lockbench
