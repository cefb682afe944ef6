#pragma once

// Faults of the embedded etcd (topology's etcd_servers): a member - the one that leads when the
// fault fires, a random one, or node N - is killed, paused, or cut off from the other members.
// Each runs on the nemesis thread, and its event carries the proof that it took effect: the
// killed process is gone (reaped), the paused one is in state T, the partition's rules are in
// place. An etcd that lockbench did not start (--etcd) is not touched: these faults are refused
// there before anything starts.

#include "engine/nemesis/fault.hpp"

namespace lockbench {

class EtcdServer;

class EtcdFault : public Fault {
  public:
    bool needs_embedded_etcd() const override { return true; }

  protected:
    // The member the target names now: node N, a random running one, or the leader (waiting up
    // to 5 s for one while an election runs). Null, with missed() said, when there is none to act
    // on. `role`: "leader", "follower", "no leader" (it knows none) or "paused"/"not answering".
    EtcdServer* member(NemesisContext& ctx, std::size_t& index, std::string& role);
    // After a fault on the leader at `fault_s`: watches (up to 10 s) for a leader of a newer term
    // than `term` and logs `leases-renewed` when one leads; with `old_leader_may_stay` (a pause),
    // it stops when the old leader leads on in its term. etcd renews every lease when a new
    // leader takes over - to its full TTL plus an election timeout - so a lock whose holder's
    // release was lost around the fault may rightly outlive its lease: the liveness check reads
    // the event (checker/HISTORY.md) instead of calling that lock a deadlock.
    static void watch_for_new_leader(NemesisContext& ctx, double fault_s, std::uint64_t term,
                                     bool old_leader_may_stay);
    // The newest raft term a running member reports (0 when none answers).
    static std::uint64_t newest_term(NemesisContext& ctx);
};

// kill -9 of a member (the leader: the others elect a new one), then, unless restart_after_ms is
// null, a restart on the same ports and data: it rejoins the cluster.
class KillEtcd final : public EtcdFault {
  public:
    explicit KillEtcd(ObjectReader& r);
    std::string_view name() const override { return "kill-etcd"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::optional<std::chrono::milliseconds> restart_after_;
};

// SIGSTOP of a member for `duration_ms`, then SIGCONT: a leader stopped past the election
// timeout (1 s) is replaced, and steps down when it wakes.
class PauseEtcd final : public EtcdFault {
  public:
    explicit PauseEtcd(ObjectReader& r);
    std::string_view name() const override { return "pause-etcd"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds duration_;
};

// A member cut off from every other member for `duration_ms` (each member runs in a host of a
// network lab for it), while clients still reach it: a cut-off leader loses its quorum (etcd's
// CheckQuorum steps it down), the majority elects another, and what the cut-off member answers
// meanwhile is what a client on the wrong side of a partition sees.
class PartitionEtcd final : public EtcdFault {
  public:
    explicit PartitionEtcd(ObjectReader& r);
    std::string_view name() const override { return "partition-etcd"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds duration_;
};

}  // namespace lockbench
