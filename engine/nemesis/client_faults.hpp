#pragma once

// Faults of one simulated client. Each runs on the client's own event-loop thread.

#include <atomic>

#include "engine/clients/client.hpp"
#include "engine/nemesis/fault.hpp"

namespace lockbench {

// Reads a fault's `point` field: a checkpoint name a client passes, or "any" (the next one).
// Throws WorkloadError naming the known points.
std::string read_point(ObjectReader& r, const std::string& fallback);

// A stop-the-world pause (GC, page fault, SIGSTOP) of a client for `duration_ms`, starting when
// it reaches `point` - by default client.before_write, so a holder paused past its lease wakes
// to write a value it read while it still held the lock (T1). With scope "worker" only the
// client's worker stops and its watchdog keeps renewing; with scope "client" the watchdog stops
// too, as in a real process pause (T10).
class PauseClient final : public Fault {
  public:
    explicit PauseClient(ObjectReader& r);
    std::string_view name() const override { return "pause"; }
    bool targets_clients() const override { return true; }
    std::string point() const override { return point_; }
    void apply_to_client(NemesisContext& ctx, SimulatedClient& client) override;

  private:
    std::chrono::milliseconds duration_;
    bool whole_client_;
    std::string point_;
};

// The client process dies: no release, connections dropped, its process id retired; a successor
// with a new id and a new identity takes its place.
class CrashClient final : public Fault {
  public:
    explicit CrashClient(ObjectReader&) {}
    std::string_view name() const override { return "crash"; }
    bool targets_clients() const override { return true; }
    bool needs_own_connection() const override { return true; }
    void apply_to_client(NemesisContext& ctx, SimulatedClient& client) override;
};

// Steps the client's clock by `offset_ms` and/or lets it drift (T9).
class SkewClientClock final : public Fault {
  public:
    explicit SkewClientClock(ObjectReader& r);
    std::string_view name() const override { return "clock"; }
    bool targets_clients() const override { return true; }
    void apply_to_client(NemesisContext& ctx, SimulatedClient& client) override;

  private:
    // A lock library's client: libfaketime's offset in its adapter process, proven by the
    // adapter's own `time` answer before the fault is logged as fired.
    DetachedTask skew_adapter(NemesisContext& ctx, SimulatedClient& client);

    std::int64_t offset_ms_;
    double drift_;
};

// Holds the client at a named checkpoint for `duration_ms` the next time it gets there, e.g.
// between the GET and the DEL of setnx_getset's unlock (T8). With `resume` "at-next-grant" it
// stays past that until another client is next granted a lock (of the key whose holder it
// targets), at most 10 s more: its late step then lands at the start of that hold, never between
// two holds where it would find nothing to break.
class StallClient final : public Fault {
  public:
    explicit StallClient(ObjectReader& r);
    std::string_view name() const override { return "stall"; }
    bool targets_clients() const override { return true; }
    std::string point() const override { return point_; }
    void apply_to_client(NemesisContext& ctx, SimulatedClient& client) override;
    bool hears_grants() const override { return resume_at_next_grant_; }
    void on_grant(SimulatedClient& client, const std::string& key) override;

  private:
    std::string point_;
    std::chrono::milliseconds duration_;
    bool resume_at_next_grant_ = false;
    std::atomic<std::int64_t> last_grant_ns_{0};  // EventLoop's clock, since its epoch
};

// A network partition between one client and ZooKeeper for `duration_ms`, from when the client
// reaches `point` (by default just after it was granted a lock): nothing crosses between its
// session and any server, in either direction, while the client itself runs on - a holder cut off
// past its session timeout is expired by the ensemble, which then grants its lock to the next
// waiter while the cut-off holder still works under it. The client's ZooKeeper connections pass
// proxies of its own (as for a whole-client pause), so the ensemble and the other clients are not
// touched. ZooKeeper strategies only: a Redis client's protected resource shares its connection.
class PartitionClient final : public Fault {
  public:
    explicit PartitionClient(ObjectReader& r);
    std::string_view name() const override { return "partition-client"; }
    bool targets_clients() const override { return true; }
    bool needs_own_connection() const override { return true; }
    bool needs_zookeeper() const override { return true; }
    std::string point() const override { return point_; }
    void apply_to_client(NemesisContext& ctx, SimulatedClient& client) override;

  private:
    std::chrono::milliseconds duration_;
    std::string point_;
};

// T13: the holder's write leaves in time - inside its lease - and reaches storage `delay_ms`
// late, held on the network path between the client and the resource's own server (topology's
// resource_server 'separate'). Meanwhile the lease runs out and the lock passes on; the late write
// then lands over the next holder's, unless a fence refuses it. The client itself keeps running:
// a watchdog keeps renewing its lease while it waits for the write's reply.
class DelayWrite final : public Fault {
  public:
    explicit DelayWrite(ObjectReader& r);
    std::string_view name() const override { return "delay-write"; }
    bool targets_clients() const override { return true; }
    bool needs_own_connection() const override { return true; }
    bool needs_separate_resource() const override { return true; }
    std::string point() const override { return std::string(kBeforeWrite); }
    void apply_to_client(NemesisContext& ctx, SimulatedClient& client) override;

  private:
    std::chrono::milliseconds delay_;
};

// The client's next release runs on the server but its reply never arrives (T7): the client
// waits out its command timeout and records `info`. With `retry_ambiguous_release` it then sends
// the release again - harmless for an idempotent unlock, a second decrement for a counter.
class LoseReleaseReply final : public Fault {
  public:
    explicit LoseReleaseReply(ObjectReader&) {}
    std::string_view name() const override { return "lose-release-reply"; }
    bool targets_clients() const override { return true; }
    bool needs_own_connection() const override { return true; }
    std::string point() const override { return std::string(kReleaseReply); }
    void apply_to_client(NemesisContext& ctx, SimulatedClient& client) override;
};

}  // namespace lockbench
