#pragma once

// One simulated client: a logical process with its own session (connections, identity, Clock)
// looping acquire -> critical section on the protected resource -> release -> think, and
// recording every step in the history. A timed-out step is `info`; after a cycle with an `info`
// the client continues under a new process id (Jepsen's convention for crashed processes).

#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "history_recorder.hpp"
#include "latency_histogram.hpp"
#include "resource.hpp"
#include "strategy.hpp"
#include "workload.hpp"

namespace lockbench {

class Nemesis;

// Thrown at a checkpoint of a client the nemesis crashed: the process ends where it stands.
struct ClientCrashed {};

enum class Op { Acquire, Release, Read, Write, Count };
std::string_view to_string(Op op);

struct OpCounts {
    std::uint64_t ok = 0, fail = 0, info = 0;
};

// Statistics of the clients of one event-loop thread; merged after the run.
struct ClientStats {
    LatencyHistogram acquire_latency;  // granted acquires, invoke -> ok
    LatencyHistogram release_latency;  // every completed release
    std::array<OpCounts, static_cast<std::size_t>(Op::Count)> ops{};
    std::uint64_t cycles = 0;  // acquire granted and released
    std::vector<std::uint64_t> cycles_per_second;
    std::vector<std::uint64_t> errors_per_second;

    void count(Op op, EventType outcome);
    void add_cycle(std::size_t second);
    void add_error(std::size_t second);
    void merge(const ClientStats& other);
};

// What all clients of a run share. Counters are atomics read by the progress line only.
struct ClientEnvironment {
    const Workload& workload;
    HistoryRecorder& history;
    const KeyPicker& keys;
    EventLoop::TimePoint start;
    std::atomic<bool>& stop;
    std::atomic<std::int64_t>& next_process;
    std::atomic<std::uint64_t>& live_cycles;
    std::atomic<std::uint64_t>& live_errors;
    // A fresh session for client `index` in its `incarnation` (0, then 1 after a crash, ...).
    std::function<std::unique_ptr<Session>(int index, int incarnation)> make_session;
    Nemesis* nemesis = nullptr;
};

class SimulatedClient {
  public:
    SimulatedClient(ClientEnvironment& env, int index, ClientStats& stats, std::uint64_t seed);

    // Loops until the environment's stop flag is set, then stops its background work.
    Task<void> run();

    // On a shared server keys are prefixed per run (run.cpp); empty on an embedded one.
    void set_key_prefix(std::string prefix) { key_prefix_ = std::move(prefix); }
    Session& session() { return *session_; }

    // Faults (nemesis/client_faults.cpp), called on this client's loop thread.
    // Stops the worker at its next checkpoint until `until`; with `whole_client` its background
    // work (watchdog) stops too.
    void pause(EventLoop::TimePoint until, bool whole_client);
    // Drops every connection now; the process never records again and a successor takes over.
    void crash();
    // Stalls once at the named checkpoint.
    void stall_at(std::string point, std::chrono::milliseconds duration);
    // T7: the next release runs, but its reply is treated as lost (a timeout, `info`).
    void lose_next_release_reply() { lose_release_reply_ = true; }
    // Connects to `endpoint` from now on (failover).
    void redirect(const Endpoint& endpoint);
    std::int64_t process() const { return process_; }
    int index() const { return index_; }

  private:
    Task<void> cycle();
    Task<void> reincarnate();
    void start_incarnation();
    std::chrono::milliseconds on_checkpoint(std::string_view point);
    Task<void> critical_section(const Grant& grant);
    Task<void> release(const Grant& grant, bool retried = false);
    void record(EventType type, std::string_view f, const std::string& key, std::string value,
                std::string error = {}, std::optional<std::int64_t> fence = std::nullopt);
    void note_error();
    std::size_t second() const;

    ClientEnvironment& env_;
    int index_;
    std::int64_t process_;
    bool retire_after_cycle_ = false;
    std::unique_ptr<Session> session_;
    std::unique_ptr<Strategy> strategy_;
    ClientStats& stats_;
    std::mt19937_64 rng_;
    ProtectedResource resource_;
    std::string key_prefix_;
    int incarnation_ = 0;
    int consecutive_errors_ = 0;
    bool lose_release_reply_ = false;
    bool crashed_ = false;
    EventLoop::TimePoint worker_paused_until_{};
    std::vector<std::pair<std::string, std::chrono::milliseconds>> stalls_;
    std::optional<Endpoint> redirected_to_;
};

}  // namespace lockbench
