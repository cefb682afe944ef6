#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/strategy.hpp"

namespace lockbench {

class ZkClient;

// What ZooKeeper's lock recipes share, as Apache Curator's LockInternals does for its mutex and
// its read-write lock: a protected ephemeral sequential node under the lock's path, the lock's
// children sorted by sequence number, a predicate that says whether the node's place in that
// order holds the lock and, if not, which earlier node to wait for, and a watch on that one node.
class ZkLockInternals {
  public:
    // A checkpoint an attempt passes once its node is in the lock's queue, before it looks for
    // its place: a client stopped or cut off here has a node that may reach the front of the
    // queue without it knowing.
    static constexpr std::string_view kQueued = "acquire.queued";

    // Where the lock on `key` keeps its queue.
    static std::string lock_path(std::string_view key);
    // The sequence number at the end of a sequential node's name; -1 if it has none.
    static std::int64_t sequence_of(std::string_view node);

    // The lease a ZooKeeper lock lives by: the session timeout the server negotiated for a session
    // that asked for `requested` (clamped to the server's minSessionTimeout..maxSessionTimeout,
    // by default 2..20 tick times). Connects the session to learn it.
    static Task<std::chrono::milliseconds> session_lease(Session& session,
                                                         std::chrono::milliseconds requested);

    // Given the lock's children in sequence order and the index of ours: granted, or the name of
    // the earlier child to wait for.
    struct Verdict {
        bool granted = false;
        std::string wait_for;
    };
    using Predicate =
        std::function<Verdict(const std::vector<std::string>& sorted, std::size_t ours)>;

    // Creates lock_path(`key`)/_c_<guid>-`name`<seq> (protection mode: a create whose reply was
    // lost finds its node by the guid before it tries again) and waits, within `wait_budget`,
    // until the predicate grants it. The node's full path, or nullopt when the budget ran out (the
    // node is deleted then, as Curator deletes a waiter's node whenever it did not get the lock).
    // First it deletes what this client's earlier attempts left behind.
    Task<std::optional<std::string>> attempt(Session& session, ZkClient& zk, const std::string& key,
                                             std::string_view name, Predicate predicate,
                                             std::chrono::milliseconds wait_budget);

    // The nodes this client holds, as Curator's per-thread lock data: by `slot` (the lock's key,
    // and its mode where there are two), counted for re-entry, and tied to the session that
    // created them - a session that expired took its nodes along.
    //
    // A re-entry of a lock this session holds in `slot`: counted, with a token of its own (each
    // re-entry is a grant of its own in the history), the same node and fence.
    std::optional<Grant> reenter(const std::string& slot, const AcquireRequest& request,
                                 std::int64_t session_id, std::chrono::milliseconds lease);
    bool holds(const std::string& slot, std::int64_t session_id);
    // Records the node `attempt` was granted; token = its path, fence = its sequence number.
    Grant granted(const std::string& slot, const AcquireRequest& request, const std::string& path,
                  std::int64_t session_id, std::chrono::milliseconds lease);
    // The last release of `slot` deletes the node: Released, or NotHeld when the session expired
    // and took it along (or the grant is not this client's).
    Task<ReleaseOutcome> release(Session& session, std::string slot, const Grant& grant);

  private:
    struct Held {
        std::string path;
        std::int64_t fence = 0;
        std::int64_t session_id = 0;
        int count = 0;
    };
    std::map<std::string, Held> held_;

    // The acquire answered in doubt that left a node behind: its key as the strategy got it, and
    // what says whether the node's place in the queue holds the lock.
    struct InDoubtAcquire {
        std::string key;
        Predicate predicate;
    };
    struct Orphan {
        std::string path;
        // Set for an acquire's node (a release's node belongs to a grant of record).
        std::optional<InDoubtAcquire> acquire;
        bool grant_reported = false;
    };

    Task<std::string> create_protected(Session& session, ZkClient& zk, const std::string& dir,
                                       std::string_view name, const InDoubtAcquire& acquire);
    Task<void> delete_orphans(Session& session, ZkClient& zk);
    // Whether an in-doubt acquire's node holds the lock now (first in the queue, as its predicate
    // says); false when it is gone.
    Task<bool> holds_now(ZkClient& zk, const Orphan& orphan);

    // Nodes a delete could not remove (the connection was lost): deleted before the next attempt,
    // or they would block the queue for as long as the session lives. An acquire's node found
    // holding the lock then is reported to the session as a late grant, and its deletion as that
    // grant's release: the history must show when the lock it held for nobody was freed.
    std::vector<Orphan> orphans_;
    // Creates whose reply never came and whose node could not be looked for (the connection was
    // lost each time): the node may exist, known only by its protected prefix - found and deleted
    // before the next attempt, as Curator deletes a protected node in the background.
    struct MaybeCreated {
        std::string dir;
        std::string prefix;
        InDoubtAcquire acquire;
    };
    std::vector<MaybeCreated> maybe_created_;
};

}  // namespace lockbench
