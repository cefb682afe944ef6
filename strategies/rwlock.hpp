#pragma once

#include "strategies/redisson_lock.hpp"

namespace lockbench {

// Redisson's RReadWriteLock. One hash `key`: field `mode` (read|write), one field per reader
// (owner -> read count) and the writer's field (owner:write -> write count). Every read hold also
// gets a timeout key of its own, `{key}:<owner>:rwlock_timeout:<n>`, with its own lease, so one
// reader's expiry never shortens another reader's hold (Redisson #2144); a read release makes the
// hash live exactly as long as its longest remaining reader. Re-entry by the same owner in either
// mode; the writer may take read holds (downgrade: when its write count reaches 0 the lock stays
// a read lock); there is no upgrade, and readers are admitted whenever the mode is read, so a
// stream of readers starves writers (T12). Releases publish on the key's channel (waiters
// SUBSCRIBE), are retry-safe through the unlock latch (T7), and a watchdog renews whatever the
// client holds on a key every lease/3, as reentrant_hash does.
class Rwlock final : public RedissonLock {
  public:
    explicit Rwlock(StrategyOptions options);
    std::string_view name() const override { return "rwlock"; }
    Capabilities capabilities() const override { return static_capabilities(); }
    static Capabilities static_capabilities() {
        return Capabilities{.reentrant = true,
                            .shared_mode = true,
                            .auto_renewal = true,
                            .renew = true,
                            .pubsub_wakeup = true};
    }

    // The timeout key of `owner`'s n-th read hold is this prefix + ":<n>".
    static std::string reader_timeout_prefix(std::string_view key, std::string_view owner) {
        return hash_tagged(key) + ":" + std::string(owner) + ":rwlock_timeout";
    }
    static std::string writer_field(std::string_view owner) {
        return std::string(owner) + ":write";
    }

  private:
    // Exclusive = the write lock, Shared = the read lock.
    Task<Reply> run_acquire_script(Session& session, const AcquireRequest& request) override;
    // Released when the grant's mode is no longer held by the client, StillHeld while re-entries
    // of that mode remain.
    Task<Reply> run_release_script(Session& session, const Grant& grant, const std::string& latch,
                                   const std::string& latch_ttl) override;
    // Extends everything the client holds on the key (its write hold, its live read holds).
    Task<bool> renew_owner(Session& session, std::string key,
                           std::chrono::milliseconds lease) override;

    Script read_acquire_{"rwlock_read_acquire"};
    Script write_acquire_{"rwlock_write_acquire"};
    Script read_release_{"rwlock_read_release"};
    Script write_release_{"rwlock_write_release"};
    Script renew_{"rwlock_renew"};
};

}  // namespace lockbench
