#include "strategies/zk_lock_internals.hpp"

#include <algorithm>
#include <charconv>
#include <exception>
#include <zookeeper/zookeeper.h>

#include "strategies/client/zk_client.hpp"

namespace lockbench {

namespace {

constexpr std::string_view kRoot = "/lockbench/locks";

// The lock's node and its parents, persistent; an existing one is fine.
Task<void> create_parents(ZkClient& zk, const std::string& dir) {
    for (std::size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
        const std::string path = slash == std::string::npos ? dir : dir.substr(0, slash);
        const std::string empty;
        auto r = co_await zk.create(path, empty, 0);
        if (r.rc != ZOK && r.rc != ZNODEEXISTS)
            throw ReplyError("ZooKeeper: cannot create " + path + ": " + zerror(r.rc));
        if (slash == std::string::npos)
            co_return;
    }
}

// After a create whose node may exist, any failure leaves the acquire in doubt: the node may
// have held the lock meanwhile (first in the queue), so the history must say `info`, never `fail`
// (which claims nothing changed - and a waiter denied as "held" would then be unexplainable).
// Likewise a release whose delete never reached the server: the node stays behind, holding the
// lock, until this client deletes it as an orphan - the lock is freed later, not never. A
// TimeoutError is what the engine records as `info` (client.cpp, failure_of).
[[noreturn]] void rethrow_in_doubt(std::exception_ptr error, std::string_view why) {
    try {
        std::rethrow_exception(error);
    } catch (const ConnectError& e) {
        throw TimeoutError(std::string(e.what()) + " (" + std::string(why) + ")");
    } catch (const ReplyError& e) {
        throw TimeoutError(std::string(e.what()) + " (" + std::string(why) + ")");
    }
}

constexpr std::string_view kCreateInDoubt = "after a create whose node may exist";

// The lock's queue: its children in the order the server numbered them.
void sort_by_sequence(std::vector<std::string>& children) {
    std::sort(children.begin(), children.end(), [](const std::string& a, const std::string& b) {
        return ZkLockInternals::sequence_of(a) < ZkLockInternals::sequence_of(b);
    });
}

}  // namespace

std::string ZkLockInternals::lock_path(std::string_view key) {
    std::string out(kRoot);
    out += '/';
    for (char c : key) {
        if (c == '/' || c == '%')
            out += c == '/' ? "%2F" : "%25";
        else
            out += c;
    }
    return out;
}

std::int64_t ZkLockInternals::sequence_of(std::string_view node) {
    // The server appends 10 digits to a sequential node's name.
    if (node.size() < 10)
        return -1;
    std::int64_t seq = -1;
    const char* first = node.data() + node.size() - 10;
    auto [end, ec] = std::from_chars(first, node.data() + node.size(), seq);
    return ec == std::errc() && end == node.data() + node.size() ? seq : -1;
}

Task<std::chrono::milliseconds> ZkLockInternals::session_lease(
    Session& session, std::chrono::milliseconds requested) {
    ZkClient& zk = session.zookeeper(requested);
    co_await zk.connected();
    // The C client reads the negotiated timeout from the server's answer to its connect; before
    // that it reports the requested one.
    co_return zk.session_timeout();
}

Task<bool> ZkLockInternals::holds_now(ZkClient& zk, const Orphan& orphan) {
    const std::size_t slash = orphan.path.rfind('/');
    const std::string dir = orphan.path.substr(0, slash);
    const std::string name = orphan.path.substr(slash + 1);
    auto r = co_await zk.get_children(dir);
    if (r.rc == ZNONODE)
        co_return false;
    if (r.rc != ZOK)
        throw ReplyError("ZooKeeper: cannot list " + dir + ": " + zerror(r.rc));
    auto& children = r.children;
    sort_by_sequence(children);
    const auto it = std::find(children.begin(), children.end(), name);
    co_return it != children.end() &&
        orphan.acquire->predicate(children, static_cast<std::size_t>(it - children.begin()))
            .granted;
}

Task<void> ZkLockInternals::delete_orphans(Session& session, ZkClient& zk) {
    while (!maybe_created_.empty()) {
        const MaybeCreated maybe = maybe_created_.back();
        auto children = co_await zk.get_children(maybe.dir);
        if (children.rc != ZOK && children.rc != ZNONODE)
            throw ReplyError("ZooKeeper: cannot list " + maybe.dir + ": " + zerror(children.rc));
        for (const auto& child : children.children) {
            if (child.starts_with(maybe.prefix))
                orphans_.push_back({.path = maybe.dir + "/" + child, .acquire = maybe.acquire});
        }
        maybe_created_.pop_back();
    }
    while (!orphans_.empty()) {
        // A copy: reporting runs the engine's code, and the list is ours only between awaits.
        Orphan orphan = orphans_.back();
        // A node first in the queue has held the lock for nobody since it got there (a node only
        // moves up); one further back never held it, and deleting it frees nothing. Between this
        // look and the delete it may reach the front: one round trip, not reported.
        if (orphan.acquire && !orphan.grant_reported && co_await holds_now(zk, orphan)) {
            orphan.grant_reported = orphans_.back().grant_reported = true;
            session.report_late_grant(orphan.acquire->key, "granted", true, orphan.path);
        }
        auto r = co_await zk.remove(orphan.path);
        if (r.rc != ZOK && r.rc != ZNONODE)
            throw ReplyError("ZooKeeper: cannot delete " + orphan.path + ": " + zerror(r.rc));
        // ZNONODE: the session that held it ended meanwhile and took it along - freed either way.
        if (orphan.grant_reported)
            session.report_late_grant(orphan.acquire->key, "released", true, orphan.path);
        orphans_.pop_back();
    }
}

Task<std::string> ZkLockInternals::create_protected(Session& session, ZkClient& zk,
                                                    const std::string& dir, std::string_view name,
                                                    const InDoubtAcquire& acquire) {
    // Curator's protected name: _c_<guid>-<name><seq>. The token is unique in the run.
    const std::string prefix = "_c_" + session.next_token() + "-";
    const std::string path = dir + "/" + prefix + std::string(name);
    const std::string empty;
    bool sent = false;  // a create was sent whose outcome is unknown
    try {
        for (int attempt = 1;; ++attempt) {
            bool lost = false;
            try {
                auto r = co_await zk.create(path, empty, ZOO_EPHEMERAL_SEQUENTIAL);
                if (r.rc == ZOK)
                    co_return r.value;
                if (r.rc != ZNONODE)
                    throw ReplyError("ZooKeeper: cannot create a node under " + dir + ": " +
                                     zerror(r.rc));
            } catch (const TimeoutError&) {
                sent = true;
                if (attempt >= 3)
                    throw;
                lost = true;
            }
            if (!lost) {
                co_await create_parents(zk, dir);
                continue;
            }
            // The create may have run: find our node by its guid before creating another.
            auto children = co_await zk.get_children(dir);
            if (children.rc == ZOK) {
                for (const auto& child : children.children) {
                    if (child.starts_with(prefix))
                        co_return dir + "/" + child;
                }
            }
        }
    } catch (const RedisError&) {
        // Given up with a create in doubt: its node, if it exists, lives as long as our session
        // and would block everyone queued behind it.
        if (!sent)
            throw;
        maybe_created_.push_back({dir, prefix, acquire});
        rethrow_in_doubt(std::current_exception(), kCreateInDoubt);
    }
}

Task<std::optional<std::string>> ZkLockInternals::attempt(Session& session, ZkClient& zk,
                                                          const std::string& key,
                                                          std::string_view name,
                                                          Predicate predicate,
                                                          std::chrono::milliseconds wait_budget) {
    co_await delete_orphans(session, zk);
    const std::string dir = lock_path(key);
    const InDoubtAcquire in_doubt{key, predicate};
    const std::string ours = co_await create_protected(session, zk, dir, name, in_doubt);
    const std::string our_name = ours.substr(dir.size() + 1);
    WaitBudget budget(session, wait_budget);
    std::exception_ptr error;
    bool granted = false;
    try {
        co_await session.checkpoint(kQueued);
        for (;;) {
            auto r = co_await zk.get_children(dir);
            if (r.rc != ZOK)
                throw ReplyError("ZooKeeper: cannot list " + dir + ": " + zerror(r.rc));
            auto& children = r.children;
            sort_by_sequence(children);
            auto it = std::find(children.begin(), children.end(), our_name);
            if (it == children.end())
                throw ClosedError("ZooKeeper: our lock node " + ours +
                                  " is gone (the session expired?)");
            const Verdict verdict =
                predicate(children, static_cast<std::size_t>(it - children.begin()));
            if (verdict.granted) {
                granted = true;
                break;
            }
            if (budget.expired())
                break;
            const std::string earlier = dir + "/" + verdict.wait_for;
            auto watched = co_await zk.get_watched(earlier);
            if (watched.rc == ZNONODE)
                continue;  // gone already: look again
            if (watched.rc != ZOK)
                throw ReplyError("ZooKeeper: cannot watch " + earlier + ": " + zerror(watched.rc));
            // Wakes on the deletion; a slice bounds the wait should a watch event ever be missed.
            const auto slice =
                std::min<Clock::Duration>(budget.remaining(), std::chrono::milliseconds(500));
            const auto until = EventLoop::now() + session.clock().to_real(slice);
            co_await zk.wait_deleted(earlier, until);
        }
    } catch (...) {
        error = std::current_exception();
    }
    if (granted)
        co_return ours;
    try {
        auto r = co_await zk.remove(ours);
        if (r.rc != ZOK && r.rc != ZNONODE)
            throw ReplyError("ZooKeeper: cannot delete " + ours + ": " + zerror(r.rc));
    } catch (const ClosedError&) {
        // The session is over (expired, or the client crashed): the node went with it.
    } catch (const RedisError&) {
        // Our node stays in the queue, and may reach its front before this client deletes it: the
        // acquire is in doubt, even when only the wait ran out (a `held` would say nothing was
        // left that could hold the lock).
        orphans_.push_back({.path = ours, .acquire = in_doubt});
        rethrow_in_doubt(error ? error : std::current_exception(), kCreateInDoubt);
    }
    if (error)
        rethrow_in_doubt(error, kCreateInDoubt);
    co_return std::nullopt;
}

std::optional<Grant> ZkLockInternals::reenter(const std::string& slot,
                                              const AcquireRequest& request,
                                              std::int64_t session_id,
                                              std::chrono::milliseconds lease) {
    if (!holds(slot, session_id))
        return std::nullopt;
    Held& h = held_[slot];
    ++h.count;
    return Grant{.key = request.key,
                 .mode = request.mode,
                 .token = h.path + "#" + std::to_string(h.count),
                 .fence = h.fence,
                 .lease = lease,
                 .validity = lease,
                 .reentry = true};
}

bool ZkLockInternals::holds(const std::string& slot, std::int64_t session_id) {
    auto it = held_.find(slot);
    if (it == held_.end())
        return false;
    if (it->second.session_id != session_id) {
        held_.erase(it);  // its session expired: the node went with it
        return false;
    }
    return true;
}

Grant ZkLockInternals::granted(const std::string& slot, const AcquireRequest& request,
                               const std::string& path, std::int64_t session_id,
                               std::chrono::milliseconds lease) {
    const std::int64_t fence = sequence_of(path);
    held_[slot] = Held{.path = path, .fence = fence, .session_id = session_id, .count = 1};
    return Grant{.key = request.key,
                 .mode = request.mode,
                 .token = path,
                 .fence = fence,
                 .lease = lease,
                 .validity = lease};
}

Task<ReleaseOutcome> ZkLockInternals::release(Session& session, std::string slot,
                                              const Grant& grant) {
    co_await session.checkpoint(kBeforeReleaseDelete);
    auto it = held_.find(slot);
    if (grant.token.empty() || it == held_.end() ||
        (grant.token != it->second.path && !grant.token.starts_with(it->second.path + "#")))
        co_return ReleaseOutcome::NotHeld;
    if (--it->second.count > 0)
        co_return ReleaseOutcome::StillHeld;
    const std::string path = it->second.path;
    const std::int64_t session_id = it->second.session_id;
    held_.erase(it);
    ZkClient& zk = session.zookeeper(grant.lease);
    ZkClient::Result r;
    try {
        r = co_await zk.remove(path);
    } catch (const ClosedError&) {
        throw;  // the session is over (expired, or the client crashed): the node goes with it
    } catch (const RedisError&) {
        // The delete may not have run - lost on the way, or never sent because the server could
        // not be reached (restarting) - and our session lives on: the node would hold the lock
        // for nobody. Curator's guaranteed delete retries it; so does our next attempt.
        if (zk.session_id() == session_id)
            orphans_.push_back({.path = path});
        rethrow_in_doubt(std::current_exception(),
                         "release in doubt: the lock node stays until this client deletes it");
    }
    if (r.rc == ZOK)
        co_return ReleaseOutcome::Released;
    if (r.rc == ZNONODE)
        co_return ReleaseOutcome::NotHeld;  // the session expired and took the node with it
    throw ReplyError("ZooKeeper: cannot delete " + path + ": " + zerror(r.rc));
}

}  // namespace lockbench
