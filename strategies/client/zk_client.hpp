#pragma once

// One ZooKeeper session of one simulated client, through Debian's multi-threaded C client
// (libzookeeper_mt), with its calls awaitable on the client's EventLoop.
//
// The bridge. zookeeper_mt runs two threads of its own per handle: an IO thread (the socket, the
// heartbeats every session-timeout/3, reconnects) and a completion thread that runs every
// completion and watcher callback. No callback touches a coroutine or the loop's state: each one
// copies its result into a heap record and post()s it to the client's EventLoop (thread-safe);
// the posted function, on the loop thread, stores the result and schedule()s the coroutine that
// awaits it. So a strategy reads like the Redis ones (`co_await zk.create(...)`), runs on its
// client's loop thread only, and needs no lock. Calls are issued from the loop thread; the C
// client queues them for its IO thread.
//
// Lifetime. Everything the posted functions touch lives in a Core shared with them; the handle's
// destructor marks it closed (posted functions then do nothing) and calls zookeeper_close, which
// joins the client's threads - no callback runs after it. A coroutine must not be suspended on
// this client when it is destroyed (the engine destroys sessions after their clients finished).
//
// Errors, as RedisConnection's (strategy.hpp): ZCONNECTIONLOSS and ZOPERATIONTIMEOUT are a
// TimeoutError (the request may have been applied: `info`); a session that expired or a client
// that was closed or killed is a ClosedError (also `info`); a session that never connected is a
// ConnectError (nothing was sent: `fail`). Any other code is returned to the strategy, which knows
// which ones it expects (ZNONODE, ZNODEEXISTS).
//
// Faults. kill() is a crash: every call fails from then on, and the session ends on the server
// when its timeout has passed, as a dead process's would. The C client has no way to stop its
// own heartbeats (its IO thread reconnects at once to a connection cut under it), so the session
// is ended then as Curator's tests kill one (KillSession, zk_client.cpp); until then the handle
// lives on unused, beyond this object's destruction if need be. A worker pause (the
// engine's pause fault) does not stop the IO thread: its heartbeats go on, so a paused holder keeps
// its session.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "strategies/client/event_loop.hpp"
#include "strategies/client/task.hpp"

typedef struct _zhandle zhandle_t;

namespace lockbench {

class ZkClient {
  public:
    // Starts connecting to `hosts` ("HOST:PORT,…") at once, asking for `session_timeout`.
    ZkClient(EventLoop& loop, std::string hosts, std::chrono::milliseconds session_timeout,
             std::chrono::milliseconds connect_timeout);
    ~ZkClient();
    ZkClient(const ZkClient&) = delete;
    ZkClient& operator=(const ZkClient&) = delete;

    const std::string& hosts() const { return hosts_; }
    // Waits until the session is connected; throws ConnectError after the connect timeout, or
    // ClosedError once the session expired or the client was killed.
    Task<void> connected();
    bool expired() const;
    // The session timeout the server granted (0 before the first connect).
    std::chrono::milliseconds session_timeout() const;
    std::int64_t session_id() const;

    struct Result {
        int rc = 0;                         // ZOK or the C client's error code
        std::string value;                  // create: the created path; get: the data
        std::vector<std::string> children;  // get_children
        std::int64_t czxid = 0;             // get
    };
    // Each throws as above for connection and session errors; other codes are in Result::rc.
    // Pass named strings, not temporaries (zk_client.cpp says why).
    Task<Result> create(std::string path, std::string data, int flags);
    Task<Result> remove(std::string path);  // any version
    Task<Result> get_children(std::string path);
    // With a watch: wait_deleted() wakes when `path` is deleted (or the session is lost).
    Task<Result> get_watched(std::string path);
    // Waits until a watch set on `path` fires or the session changes state; false at `deadline`.
    Task<bool> wait_deleted(std::string path, EventLoop::TimePoint deadline);

    // A crash: see the header comment. Every call from now on throws ClosedError.
    void kill(const std::string& reason);
    // After kill(): whether the session was ended on the server yet (false until its timeout has
    // passed, or if the server could not be reached).
    bool session_ended() const;
    // Waits up to `limit` until every killed client's session has been ended and its handle
    // closed (the engine calls it when a run's clients are gone: a process that exits meanwhile
    // would leave the handles, and the sessions, behind). True when none is left.
    static bool wait_for_undertakers(std::chrono::milliseconds limit);

    struct Core;

  private:
    Task<Result> call(int kind, const std::string& path, const std::string& data, int flags,
                      bool watch);
    void check_usable() const;

    EventLoop& loop_;
    std::string hosts_;
    std::chrono::milliseconds connect_timeout_;
    std::shared_ptr<Core> core_;
    zhandle_t* zh_ = nullptr;

    // Ends a killed client's session after its timeout, then closes the handle - once both that
    // is done and the ZkClient is gone, whichever comes last.
    struct Undertaker {
        Undertaker(zhandle_t* h, std::shared_ptr<Core> c) : zh(h), core(std::move(c)) {}
        void release();  // the ZkClient is gone
        void bury();     // the session was ended
        void close_now(std::unique_lock<std::mutex>& lock);
        std::mutex mutex;
        zhandle_t* zh;
        std::shared_ptr<Core> core;  // the handle's watcher context must outlive it
        bool owner_gone = false, buried_wanted = false;
        std::atomic<bool> ended{false};
    };
    std::shared_ptr<Undertaker> undertaker_;
};

}  // namespace lockbench
