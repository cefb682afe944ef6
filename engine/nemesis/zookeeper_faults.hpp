#pragma once

// Faults of the embedded ZooKeeper ensemble (topology's zookeeper_servers): a member, or the one
// that leads when the fault fires, is killed or paused. Each runs on the nemesis thread. A
// ZooKeeper that lockbench did not start (--zookeeper) is not touched: these faults are refused
// there before anything starts.

#include "engine/nemesis/fault.hpp"

namespace lockbench {

class ZooKeeperServer;

class ZooKeeperFault : public Fault {
  public:
    bool needs_embedded_zookeeper() const override { return true; }

  protected:
    // The member the target names now: node N, or the leader (waiting up to 5 s for one while an
    // election runs). Null, with missed() said, when there is none to act on.
    ZooKeeperServer* member(NemesisContext& ctx, std::size_t& index, std::string& role);
};

// kill -9 of a member (the leader: the others elect a new one), then, unless restart_after_ms is
// null, a restart on the same ports and data: it rejoins the ensemble.
class KillZooKeeper final : public ZooKeeperFault {
  public:
    explicit KillZooKeeper(ObjectReader& r);
    std::string_view name() const override { return "kill-zookeeper"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::optional<std::chrono::milliseconds> restart_after_;
};

// SIGSTOP of a member for `duration_ms`, then SIGCONT: a leader stopped past the followers'
// patience (1 s) is replaced, and it finds itself a follower when it wakes.
class PauseZooKeeper final : public ZooKeeperFault {
  public:
    explicit PauseZooKeeper(ObjectReader& r);
    std::string_view name() const override { return "pause-zookeeper"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds duration_;
};

}  // namespace lockbench
