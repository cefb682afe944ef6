#pragma once

// A loopback TCP proxy between clients and one Redis server that can lose, delay or cut what
// crosses it - toxiproxy's vocabulary, since this kernel has no `tc netem`. It is how lockbench
// reproduces an acquire or unlock whose reply is lost after the server ran it (T6, T7), slow
// replies (T11, T13) and a partitioned node (Redlock, T3). One thread, poll(2), no allocation per
// byte; faults switch on and off atomically from the nemesis thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "strategies/client/redis_connection.hpp"

namespace lockbench {

class FaultProxy {
  public:
    // Listens on a free 127.0.0.1 port and forwards every connection to `upstream`. Throws
    // EnvironmentError when no socket can be had.
    explicit FaultProxy(Endpoint upstream);
    ~FaultProxy();
    FaultProxy(const FaultProxy&) = delete;
    FaultProxy& operator=(const FaultProxy&) = delete;

    // Where clients connect instead of the server (the upstream's password carries over).
    Endpoint endpoint() const;

    // Replies are held this long before they reach the client (0: none).
    void set_reply_delay(std::chrono::milliseconds delay);
    // Replies are discarded: the server ran the command, the client never hears of it (T6, T7).
    // A connection that lost bytes to this or to a blackhole is broken - nothing more crosses it -
    // and reset when the fault ends, as TCP would break it: going on would hand a client that
    // keeps its connection after a timeout the reply of one command as another's.
    void set_drop_replies(bool on);
    // Nothing crosses in either direction: a partition of this node.
    void set_blackhole(bool on);
    // The same until `until`, then everything crosses again (what was sent meanwhile is lost, and
    // the connections it was lost on are reset).
    void blackhole_until(std::chrono::steady_clock::time_point until);
    // Resets (RST) every open connection; new connections are accepted as before.
    void reset_connections();
    // Nothing is read, written or accepted until `until`: what either side sends waits in the
    // kernel's buffers and crosses afterwards - the network view of a process that was stopped
    // (a whole-client pause of a client whose library runs threads of its own, as ZooKeeper's).
    void freeze_until(std::chrono::steady_clock::time_point until);

    // The next bytes the client connecting from `client_port` sends are held `delay` before they
    // go on (and whatever it sends meanwhile queues behind them): a message delayed in the network
    // on its way to the server, e.g. a holder's write that reaches storage late (T13).
    void delay_next_request_from(int client_port, std::chrono::milliseconds delay);
    // Requests held that way so far.
    std::uint64_t requests_delayed() const { return requests_delayed_.load(); }

    // For tests: connections accepted so far.
    std::uint64_t accepted() const { return accepted_.load(); }

  private:
    void serve();
    // The hold delay_next_request_from() set for this client's next request, taken once.
    std::optional<std::chrono::milliseconds> take_request_delay(int client_port);
    bool frozen_now() const;
    bool blackholed_now() const;

    Endpoint upstream_;
    int listen_fd_ = -1;
    int wake_fd_ = -1;  // eventfd: stop and reset requests interrupt poll()
    int port_ = 0;
    std::atomic<std::int64_t> reply_delay_ms_{0};
    std::atomic<bool> drop_replies_{false};
    std::atomic<bool> blackhole_{false};
    std::atomic<bool> reset_requested_{false};
    std::atomic<std::int64_t> frozen_until_ns_{0};     // steady clock, since its epoch
    std::atomic<std::int64_t> blackhole_until_ns_{0};  // the same
    std::atomic<bool> stopping_{false};
    std::atomic<std::uint64_t> accepted_{0};
    std::mutex delays_mutex_;
    std::map<int, std::chrono::milliseconds> delays_;  // client port -> hold of its next request
    std::atomic<int> delays_pending_{0};
    std::atomic<std::uint64_t> requests_delayed_{0};
    std::thread thread_;
};

}  // namespace lockbench
