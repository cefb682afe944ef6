#pragma once

// Faults of the embedded redis-server(s). Each runs on the nemesis thread.

#include "engine/nemesis/fault.hpp"

namespace lockbench {

// SIGSTOP for `duration_ms`, then SIGCONT: commands sent meanwhile time out (info) and are
// applied after the resume.
class PauseServer final : public Fault {
  public:
    explicit PauseServer(ObjectReader& r);
    std::string_view name() const override { return "pause-server"; }
    bool needs_embedded_servers() const override { return true; }
    bool acts_through_host_control() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds duration_;
};

// kill -9, then (unless restart_after_ms is null) a restart on the same port with the topology's
// persistence: without AOF every lock is gone (T4).
class KillServer final : public Fault {
  public:
    explicit KillServer(ObjectReader& r);
    std::string_view name() const override { return "kill-server"; }
    bool needs_embedded_servers() const override { return true; }
    bool acts_through_host_control() const override { return true; }
    void apply(NemesisContext& ctx) override;
    bool restarts() const { return restart_after_.has_value(); }

  private:
    std::optional<std::chrono::milliseconds> restart_after_;
};

// A node of the user's deployment cut off on its own host (iptables, as Jepsen's nemesis cuts
// one): every packet to its port is dropped for `duration_ms` - clients, replicas and sentinels
// alike - and the host deletes the rule itself should lockbench not get to. Needs an inventory
// that gives the node's host a control; lockbench never touches its own machine's firewall (on
// embedded servers, use `partition`).
class IsolateNode final : public Fault {
  public:
    explicit IsolateNode(ObjectReader& r);
    std::string_view name() const override { return "isolate-node"; }
    bool needs_embedded_servers() const override { return true; }
    bool acts_through_host_control() const override { return true; }
    bool only_through_host_control() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds duration_;
};

// A forward jump of the server's wall clock by `jump_ms` (T3), emulated by its effect: every key
// with a TTL loses `jump_ms` of it at once (keys with less left expire). Debian's redis-server
// cannot run under libfaketime, and Redis expiry follows gettimeofday().
class JumpServerClock final : public Fault {
  public:
    explicit JumpServerClock(ObjectReader& r);
    std::string_view name() const override { return "clock-jump"; }
    bool needs_embedded_servers() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    std::int64_t jump_ms_;
};

// Failover to a replica that missed the latest lock writes (T5, T14): the replica stops
// replicating (REPLICAOF NO ONE) while clients keep locking on the master for `lag_ms`, then the
// master dies and every client is redirected to the promoted replica.
class Failover final : public Fault {
  public:
    explicit Failover(ObjectReader& r);
    std::string_view name() const override { return "failover"; }
    bool needs_embedded_servers() const override { return true; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds lag_;
};

}  // namespace lockbench
