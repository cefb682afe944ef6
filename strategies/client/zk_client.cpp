#include "strategies/client/zk_client.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <netinet/in.h>
#include <poll.h>
#include <set>
#include <stdexcept>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <zookeeper/zookeeper.h>

#include "strategies/client/redis_connection.hpp"  // the error classes every strategy maps to the history

namespace lockbench {

// Loop-side state, shared with the functions the C client's threads post to the loop.
struct ZkClient::Core : std::enable_shared_from_this<ZkClient::Core> {
    explicit Core(EventLoop& l) : loop(l), target(&l) {}
    EventLoop& loop;
    // Where the C client's threads post; null once the ZkClient is gone (a crashed client's
    // handle outlives it until its session is ended: kill()).
    std::mutex target_mutex;
    EventLoop* target;
    void post(std::function<void()> fn) {
        std::lock_guard lock(target_mutex);
        if (target)
            target->post(std::move(fn));
    }
    void detach() {
        std::lock_guard lock(target_mutex);
        target = nullptr;
    }
    bool closed = false;                                  // loop thread only
    std::vector<WakeEvent*> state_waiters;                // connected()
    std::multimap<std::string, WakeEvent*> path_waiters;  // wait_deleted()
    // Watches that fired while nobody waited on their path (a deletion can beat the waiter).
    std::set<std::string> fired;
    std::optional<std::string> killed;

    void wake_all() {
        for (auto* w : state_waiters)
            w->set();
        for (auto& [path, w] : path_waiters)
            w->set();
    }
};

namespace {

enum Kind { kCreate, kDelete, kChildren, kGet };

struct OpState {
    ZkClient::Result result;
    std::coroutine_handle<> waiter;
};

// What a completion callback gets as its `data`: freed by the callback (called exactly once).
struct Pending {
    std::shared_ptr<ZkClient::Core> core;
    std::shared_ptr<OpState> op;
};

// On the C client's completion thread: hand the result to the loop.
void finish(const void* data, int rc, const std::function<void(ZkClient::Result&)>& fill) {
    std::unique_ptr<Pending> p(static_cast<Pending*>(const_cast<void*>(data)));
    p->op->result.rc = rc;
    if (rc == ZOK && fill)
        fill(p->op->result);
    auto core = p->core;
    auto op = p->op;
    core->post([core, op] {
        if (core->closed || !op->waiter)
            return;
        core->loop.schedule(std::exchange(op->waiter, {}));
    });
}

void on_string(int rc, const char* value, const void* data) {
    finish(data, rc, [value](ZkClient::Result& r) {
        if (value)
            r.value = value;
    });
}
void on_void(int rc, const void* data) {
    finish(data, rc, {});
}
void on_strings(int rc, const String_vector* strings, const void* data) {
    finish(data, rc, [strings](ZkClient::Result& r) {
        for (int i = 0; strings && i < strings->count; ++i)
            r.children.emplace_back(strings->data[i]);
    });
}
void on_data(int rc, const char* value, int len, const Stat* stat, const void* data) {
    finish(data, rc, [value, len, stat](ZkClient::Result& r) {
        if (value && len > 0)
            r.value.assign(value, static_cast<std::size_t>(len));
        if (stat)
            r.czxid = stat->czxid;
    });
}

// The handle's watcher, on the completion thread: session state changes and fired watches.
void on_watch(zhandle_t*, int type, int /*state*/, const char* path, void* ctx) {
    auto core = static_cast<ZkClient::Core*>(ctx)->shared_from_this();
    std::string p = path ? path : "";
    const bool session = type == ZOO_SESSION_EVENT;
    core->post([core, p = std::move(p), session] {
        if (core->closed)
            return;
        if (session) {
            core->wake_all();  // connected() and waiters re-check the session's state
            return;
        }
        auto [first, last] = core->path_waiters.equal_range(p);
        if (first == last) {
            if (core->fired.size() > 10'000)  // watches whose waiter gave up long ago
                core->fired.clear();
            core->fired.insert(p);
        }
        for (auto it = first; it != last; ++it)
            it->second->set();
    });
}

std::string describe_rc(int rc) {
    const char* s = zerror(rc);
    return s ? s : std::to_string(rc);
}

}  // namespace

ZkClient::ZkClient(EventLoop& loop, std::string hosts, std::chrono::milliseconds session_timeout,
                   std::chrono::milliseconds connect_timeout)
    : loop_(loop),
      hosts_(std::move(hosts)),
      connect_timeout_(connect_timeout),
      core_(std::make_shared<Core>(loop)) {
    // The C client logs to stderr by default (every reconnect); level 0 turns it off.
    static std::once_flag quiet;
    std::call_once(quiet, [] { zoo_set_debug_level(static_cast<ZooLogLevel>(0)); });
    zh_ = zookeeper_init(hosts_.c_str(), on_watch, static_cast<int>(session_timeout.count()),
                         nullptr, core_.get(), 0);
    if (!zh_)
        throw ConnectError("ZooKeeper: cannot create a client for " + hosts_);
}

ZkClient::~ZkClient() {
    core_->closed = true;
    core_->detach();
    if (undertaker_) {
        // Killed: closing the handle would end the session at once. The undertaker ends it when
        // the session timeout has passed, then closes the handle.
        undertaker_->release();
        return;
    }
    // Joins the client's threads: no callback runs after this, and completions still pending
    // are called with ZCLOSING (their posted functions find the core closed).
    if (zh_)
        zookeeper_close(zh_);
}

bool ZkClient::expired() const {
    return zoo_state(zh_) == ZOO_EXPIRED_SESSION_STATE;
}

std::chrono::milliseconds ZkClient::session_timeout() const {
    return std::chrono::milliseconds(zoo_recv_timeout(zh_));
}

std::int64_t ZkClient::session_id() const {
    const clientid_t* id = zoo_client_id(zh_);
    return id ? id->client_id : 0;
}

void ZkClient::check_usable() const {
    if (core_->killed)
        throw ClosedError(*core_->killed);
    if (expired())
        throw ClosedError("ZooKeeper session expired");
}

Task<void> ZkClient::connected() {
    const auto deadline = EventLoop::now() + connect_timeout_;
    for (;;) {
        check_usable();
        if (zoo_state(zh_) == ZOO_CONNECTED_STATE)
            co_return;
        if (EventLoop::now() >= deadline) {
            throw ConnectError("cannot connect to ZooKeeper at " + hosts_ + " within " +
                               std::to_string(connect_timeout_.count()) + " ms");
        }
        // A session event wakes us; the short slice covers one that came before we waited.
        WakeEvent ev(loop_);
        core_->state_waiters.push_back(&ev);
        co_await ev.wait_until(
            std::min(deadline, EventLoop::now() + std::chrono::milliseconds(50)));
        std::erase(core_->state_waiters, &ev);
    }
}

Task<ZkClient::Result> ZkClient::call(int kind, const std::string& path, const std::string& data,
                                      int flags, bool watch) {
    co_await connected();
    struct Awaiter {
        ZkClient& self;
        int kind;
        const std::string& path;
        const std::string& data;
        int flags;
        bool watch;
        std::shared_ptr<OpState> op = std::make_shared<OpState>();
        bool await_ready() const noexcept { return false; }
        bool await_suspend(std::coroutine_handle<> h) {
            op->waiter = h;
            auto* p = new Pending{self.core_, op};
            int rc = ZOK;
            switch (kind) {
                case kCreate:
                    rc = zoo_acreate(self.zh_, path.c_str(), data.data(),
                                     static_cast<int>(data.size()), &ZOO_OPEN_ACL_UNSAFE, flags,
                                     on_string, p);
                    break;
                case kDelete:
                    rc = zoo_adelete(self.zh_, path.c_str(), -1, on_void, p);
                    break;
                case kChildren:
                    rc = zoo_aget_children(self.zh_, path.c_str(), 0, on_strings, p);
                    break;
                default:
                    rc = zoo_aget(self.zh_, path.c_str(), watch ? 1 : 0, on_data, p);
                    break;
            }
            if (rc != ZOK) {  // not queued: no completion will come
                delete p;
                op->waiter = {};
                op->result.rc = rc;
                return false;
            }
            return true;
        }
        Result await_resume() { return std::move(op->result); }
    };
    Awaiter awaiter{*this, kind, path, data, flags, watch};
    Result r = co_await awaiter;
    if (core_->killed)
        throw ClosedError(*core_->killed);
    if (r.rc == ZCONNECTIONLOSS || r.rc == ZOPERATIONTIMEOUT)
        throw TimeoutError("ZooKeeper: " + describe_rc(r.rc) + " (" + path + ")");
    if (r.rc == ZSESSIONEXPIRED || r.rc == ZCLOSING || r.rc == ZINVALIDSTATE || r.rc == ZAUTHFAILED)
        throw ClosedError("ZooKeeper: " + describe_rc(r.rc) + " (" + path + ")");
    co_return r;
}

bool ZkClient::session_ended() const {
    return undertaker_ && undertaker_->ended;
}

void ZkClient::Undertaker::release() {
    std::unique_lock lock(mutex);
    owner_gone = true;
    if (buried_wanted)
        close_now(lock);
}

void ZkClient::Undertaker::bury() {
    std::unique_lock lock(mutex);
    buried_wanted = true;
    if (owner_gone)
        close_now(lock);
}

void ZkClient::Undertaker::close_now(std::unique_lock<std::mutex>& lock) {
    zhandle_t* handle = std::exchange(zh, nullptr);
    lock.unlock();
    if (handle)
        zookeeper_close(handle);  // the session is over: nothing is deleted by this
}

// Every argument of a co_await-ed call is a named object, never a temporary: GCC 12 destroys a
// temporary argument of a co_await-ed coroutine call twice (client.cpp has the same rule).
Task<ZkClient::Result> ZkClient::create(std::string path, std::string data, int flags) {
    co_return co_await call(kCreate, path, data, flags, false);
}

Task<ZkClient::Result> ZkClient::remove(std::string path) {
    const std::string none;
    co_return co_await call(kDelete, path, none, 0, false);
}

Task<ZkClient::Result> ZkClient::get_children(std::string path) {
    const std::string none;
    co_return co_await call(kChildren, path, none, 0, false);
}

Task<ZkClient::Result> ZkClient::get_watched(std::string path) {
    const std::string none;
    co_return co_await call(kGet, path, none, 0, true);
}

Task<bool> ZkClient::wait_deleted(std::string path, EventLoop::TimePoint deadline) {
    if (core_->fired.erase(path) > 0)
        co_return true;
    WakeEvent ev(loop_);
    auto it = core_->path_waiters.emplace(path, &ev);
    const bool woken = co_await ev.wait_until(deadline);
    core_->path_waiters.erase(it);
    co_return woken;
}

namespace {
// Killed clients whose undertaker has not finished yet. Never destroyed: an undertaker is a
// detached thread, and one may still be finishing (or not yet waited for) when the process exits
// and would otherwise signal a condition variable that exit is tearing down.
struct Undertakers {
    std::mutex mutex;
    std::condition_variable done;
    int running = 0;
};
Undertakers& undertakers() {
    static auto* const all = new Undertakers;
    return *all;
}
}  // namespace

bool ZkClient::wait_for_undertakers(std::chrono::milliseconds limit) {
    auto& all = undertakers();
    std::unique_lock lock(all.mutex);
    return all.done.wait_for(lock, limit, [&all] { return all.running == 0; });
}

void ZkClient::kill(const std::string& reason) {
    if (core_->killed)
        return;
    core_->killed = reason;
    // The C client cannot stop its own heartbeats: its IO thread reconnects at once to a
    // connection cut under it, even after zoo_set_servers, so the handle lives on, unused. When
    // the session timeout has passed - when the server would have expired a silent session - the
    // session is ended on the server as Curator's tests kill one (KillSession): a second handle
    // joins it with its id and password and closes it, and the server deletes its ephemeral
    // nodes. Until then the lock stays held by the dead process, as it would be.
    const clientid_t id = *zoo_client_id(zh_);
    const auto at = std::chrono::steady_clock::now() + session_timeout();
    undertaker_ = std::make_shared<Undertaker>(zh_, core_);
    {
        std::lock_guard lock(undertakers().mutex);
        ++undertakers().running;
    }
    std::thread([u = undertaker_, hosts = hosts_, id, at, timeout = zoo_recv_timeout(zh_),
                 connect_timeout = connect_timeout_] {
        std::this_thread::sleep_until(at);
        // The dead handle's IO thread reconnects as soon as the killer takes the session over,
        // and may take it back before the killer's close arrives (the close then fails as
        // SESSIONMOVED and the session lives on: a crashed holder's lock held forever). So the
        // killer joins again after each close, until the server says the session is gone.
        const auto deadline = std::chrono::steady_clock::now() + 4 * connect_timeout;
        while (id.client_id != 0 && std::chrono::steady_clock::now() < deadline) {
            zhandle_t* killer = zookeeper_init(hosts.c_str(), nullptr, timeout, &id, nullptr, 0);
            if (!killer)
                break;
            const auto joined_by = std::chrono::steady_clock::now() + connect_timeout;
            int state = zoo_state(killer);
            while (state != ZOO_CONNECTED_STATE && state != ZOO_EXPIRED_SESSION_STATE &&
                   std::chrono::steady_clock::now() < joined_by) {
                std::this_thread::sleep_for(std::chrono::milliseconds(2));
                state = zoo_state(killer);
            }
            zookeeper_close(killer);  // connected: ends the session, unless it was taken back
            if (state == ZOO_EXPIRED_SESSION_STATE) {
                u->ended = true;
                break;
            }
            if (state != ZOO_CONNECTED_STATE)
                break;  // the server cannot be reached: it will expire the session itself
        }
        u->bury();
        auto& all = undertakers();
        std::lock_guard lock(all.mutex);
        --all.running;
        all.done.notify_all();
    }).detach();
    core_->wake_all();
}

}  // namespace lockbench
