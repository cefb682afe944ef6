#include "zk_mutex.hpp"

#include <algorithm>
#include <charconv>
#include <zookeeper/zookeeper.h>

#include "zk_client.hpp"

namespace lockbench {

namespace {

constexpr std::string_view kRoot = "/lockbench/locks";
constexpr std::string_view kLockName = "lock-";

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

}  // namespace

std::string ZkMutex::lock_path(std::string_view key) {
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

std::int64_t ZkMutex::sequence_of(std::string_view node) {
    // The server appends 10 digits to a sequential node's name.
    if (node.size() < 10)
        return -1;
    std::int64_t seq = -1;
    const char* first = node.data() + node.size() - 10;
    auto [end, ec] = std::from_chars(first, node.data() + node.size(), seq);
    return ec == std::errc() && end == node.data() + node.size() ? seq : -1;
}

Task<void> ZkMutex::delete_orphans(ZkClient& zk) {
    while (!orphans_.empty()) {
        const std::string orphan = orphans_.back();
        auto r = co_await zk.remove(orphan);
        if (r.rc != ZOK && r.rc != ZNONODE)
            throw ReplyError("ZooKeeper: cannot delete " + orphans_.back() + ": " + zerror(r.rc));
        orphans_.pop_back();
    }
}

Task<std::string> ZkMutex::create_protected(Session& session, ZkClient& zk,
                                            const std::string& dir) {
    // Curator's protected name: _c_<guid>-lock-<seq>. The token is unique in the run.
    const std::string prefix = "_c_" + session.next_token() + "-";
    const std::string path = dir + "/" + prefix + std::string(kLockName);
    const std::string empty;
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
}

Task<AcquireResult> ZkMutex::acquire(Session& session, const AcquireRequest& request) {
    ZkClient& zk = session.zookeeper(request.lease);
    co_await zk.connected();
    const std::chrono::milliseconds lease = zk.session_timeout();
    if (auto it = held_.find(request.key); it != held_.end()) {
        if (it->second.session_id == zk.session_id()) {
            ++it->second.count;
            // Each re-entry is a grant of its own in the history, so it gets a token of its own.
            co_return Grant{.key = request.key,
                            .token = it->second.path + "#" + std::to_string(it->second.count),
                            .fence = it->second.fence,
                            .lease = lease,
                            .validity = lease,
                            .reentry = true};
        }
        held_.erase(it);  // its session expired: the node went with it
    }
    co_await delete_orphans(zk);

    const std::string dir = lock_path(request.key);
    const std::string ours = co_await create_protected(session, zk, dir);
    const std::string our_name = ours.substr(dir.size() + 1);
    WaitBudget budget(session, request.wait_budget);
    std::exception_ptr error;
    bool granted = false;
    try {
        for (;;) {
            auto r = co_await zk.get_children(dir);
            if (r.rc != ZOK)
                throw ReplyError("ZooKeeper: cannot list " + dir + ": " + zerror(r.rc));
            auto& children = r.children;
            std::sort(children.begin(), children.end(),
                      [](const std::string& a, const std::string& b) {
                          return sequence_of(a) < sequence_of(b);
                      });
            auto it = std::find(children.begin(), children.end(), our_name);
            if (it == children.end())
                throw ClosedError("ZooKeeper: our lock node " + ours +
                                  " is gone (the session expired?)");
            if (it == children.begin()) {
                granted = true;
                break;
            }
            if (budget.expired())
                break;
            const std::string predecessor = dir + "/" + *(it - 1);
            auto watched = co_await zk.get_watched(predecessor);
            if (watched.rc == ZNONODE)
                continue;  // gone already: look again
            if (watched.rc != ZOK)
                throw ReplyError("ZooKeeper: cannot watch " + predecessor + ": " +
                                 zerror(watched.rc));
            // Wakes on the deletion; a slice bounds the wait should a watch event ever be missed.
            const auto slice =
                std::min<Clock::Duration>(budget.remaining(), std::chrono::milliseconds(500));
            const auto until = EventLoop::now() + session.clock().to_real(slice);
            co_await zk.wait_deleted(predecessor, until);
        }
    } catch (...) {
        error = std::current_exception();
    }
    if (!granted) {
        // Curator deletes the waiter's node whenever it did not get the lock.
        bool removed = false;
        try {
            auto r = co_await zk.remove(ours);
            removed = r.rc == ZOK || r.rc == ZNONODE;
        } catch (const RedisError&) {
        }
        if (!removed)
            orphans_.push_back(ours);
        if (error)
            std::rethrow_exception(error);
        co_return Denied{Denied::Why::Held};
    }
    const std::int64_t fence = sequence_of(our_name);
    held_[request.key] =
        Held{.path = ours, .fence = fence, .session_id = zk.session_id(), .count = 1};
    co_return Grant{
        .key = request.key, .token = ours, .fence = fence, .lease = lease, .validity = lease};
}

Task<ReleaseOutcome> ZkMutex::release(Session& session, const Grant& grant) {
    co_await session.checkpoint(kBeforeReleaseDelete);
    auto it = held_.find(grant.key);
    if (grant.token.empty() || it == held_.end() ||
        (grant.token != it->second.path && !grant.token.starts_with(it->second.path + "#")))
        co_return ReleaseOutcome::NotHeld;
    if (--it->second.count > 0)
        co_return ReleaseOutcome::StillHeld;
    const std::string path = it->second.path;
    held_.erase(it);
    ZkClient& zk = session.zookeeper(grant.lease);
    auto r = co_await zk.remove(path);
    if (r.rc == ZOK)
        co_return ReleaseOutcome::Released;
    if (r.rc == ZNONODE)
        co_return ReleaseOutcome::NotHeld;  // the session expired and took the node with it
    throw ReplyError("ZooKeeper: cannot delete " + path + ": " + zerror(r.rc));
}

}  // namespace lockbench
