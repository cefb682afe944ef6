#pragma once

// One simulated client: a logical process with its own session (connections, identity, Clock)
// looping acquire -> critical section on the protected resource -> release -> think, and
// recording every step in the history. A timed-out step is `info`, and the process id that
// recorded it never issues anything again (Jepsen's rule): the rest of the cycle - the cleanup
// release, a retried unlock - runs under a fresh id.

#include <array>
#include <atomic>
#include <coroutine>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "checker/latency_histogram.hpp"
#include "engine/clients/history_recorder.hpp"
#include "engine/clients/resource.hpp"
#include "engine/results/op_counts.hpp"
#include "engine/run/workload.hpp"
#include "strategies/strategy.hpp"

namespace lockbench {

using checker::LatencyHistogram;

class Fault;
class Nemesis;

// Thrown at a checkpoint of a client the nemesis crashed: the process ends where it stands.
struct ClientCrashed {};

// The named points of a cycle where a fault may act. Strategies add their own inside a call
// (release.before_delete, T8); these are the client's.
inline constexpr std::string_view kAfterAcquire = "client.after_acquire";
// The end of the critical section: the value was read, the hold is over, the write (if any) is
// next. A holder paused here writes what it read before its lease ran out (T1).
inline constexpr std::string_view kBeforeWrite = "client.before_write";
// Just after a release ran on the server, before its reply reaches the client (T7).
inline constexpr std::string_view kReleaseReply = "client.release_reply";
// Not a place: the next checkpoint the client reaches, whichever it is.
inline constexpr std::string_view kAnyPoint = "any";

enum class Op { Acquire, Release, Read, Write, Count };
std::string_view to_string(Op op);

// How an error from Redis goes into the history - one mapping for every operation, in Jepsen's
// terms: `info` when the command may have run (a timeout, a reset: a paused server runs it
// later), `fail` when it certainly did not (the server refused it, or it was never sent because
// the connection was never made).
struct Failure {
    EventType type;
    std::string error;
};
Failure failure_of(const RedisError& e);

// Statistics of the clients of one event-loop thread; merged after the run.
struct ClientStats {
    LatencyHistogram acquire_latency;  // granted acquires, invoke -> ok
    LatencyHistogram release_latency;  // every completed release
    // Open loop (a workload rate): every started arrival, from when it was due to its first
    // acquire's outcome - a grant, a refusal, a failure or a timeout (in doubt), or the client's
    // crash - (coordinated omission corrected); acquire_latency still runs from the invoke.
    LatencyHistogram acquire_latency_corrected;
    std::uint64_t arrivals_due = 0;      // arrivals scheduled before the run ended
    std::uint64_t arrivals_started = 0;  // of them, cycles the clients started
    std::uint64_t clients_due = 0;       // clients that had at least one arrival due
    std::array<OpCounts, static_cast<std::size_t>(Op::Count)> ops{};
    std::uint64_t cycles = 0;  // acquire granted and released
    std::vector<std::uint64_t> cycles_per_second;
    std::vector<std::uint64_t> cycles_per_client;  // by client index: fairness
    std::vector<std::uint64_t> errors_per_second;
    // Clients (not process ids) that got at least one definite answer (ok or fail) from Redis:
    // a run in which most clients never did measured nothing.
    std::uint64_t clients_answered = 0;

    void count(Op op, EventType outcome);
    void add_cycle(std::size_t second, std::size_t client);
    void add_error(std::size_t second);
    void merge(const ClientStats& other);
};

// Holds a loop's clients after they connected until the run starts: the measured run begins
// with every client connected, as memtier_benchmark's does, instead of with thousands of
// connects racing the first acquires (and the server's accept backlog). Loop thread only.
class StartGate {
  public:
    struct Awaiter {
        StartGate& gate;
        bool await_ready() const noexcept { return gate.open_; }
        void await_suspend(std::coroutine_handle<> h) { gate.waiters_.push_back(h); }
        void await_resume() const noexcept {}
    };
    explicit StartGate(EventLoop& loop) : loop_(loop) {}
    Awaiter wait() { return Awaiter{*this}; }
    void open() {
        open_ = true;
        for (auto h : waiters_)
            loop_.schedule(h);
        waiters_.clear();
    }

  private:
    EventLoop& loop_;
    bool open_ = false;
    std::vector<std::coroutine_handle<>> waiters_;
};

// What all clients of a run share. Counters are atomics read by the progress line only.
struct ClientEnvironment {
    const Workload& workload;
    const KeyPicker& keys;
    std::atomic<bool>& stop;
    std::atomic<std::int64_t>& next_process;
    std::atomic<std::uint64_t>& live_cycles;
    std::atomic<std::uint64_t>& live_errors;
    // Clients that reached every node in the connect phase, and the last reason one could not.
    std::atomic<int>& connected;
    std::mutex& connect_error_mutex;
    std::string& connect_error;
    // A fresh session for client `index` in its `incarnation` (0, then 1 after a crash, ...),
    // keeping `clock`: a crash restarts the process, not the machine's clock (T9).
    std::function<std::unique_ptr<Session>(int index, int incarnation, Clock clock)> make_session;
    // Set once every client is connected, before the start gates open.
    HistoryRecorder* history = nullptr;
    Nemesis* nemesis = nullptr;
    EventLoop::TimePoint start{};
    // When the run ends: a client at a rate takes no arrival due at or after it.
    EventLoop::TimePoint deadline = EventLoop::TimePoint::max();
    // On a shared server every Redis key carries a per-run prefix (run.cpp); the history, the
    // workload and the faults name keys without it.
    std::string key_prefix;
    // Recorded on acquire invokes only where the strategy's lock really expires (HISTORY.md:
    // a lease bounds the grant); a lock without expiry has none to record.
    bool record_lease = true;
    // Test-only, never documented to users: every cycle takes this much longer, so that a test
    // can make "the engine" uniformly slower and show the gate catching it
    // (LOCKBENCH_TEST_CYCLE_DELAY_MS, read in run.cpp).
    std::chrono::microseconds test_cycle_delay{0};
};

class SimulatedClient {
  public:
    SimulatedClient(ClientEnvironment& env, int index, ClientStats& stats, std::uint64_t seed);

    // Connects to every node, waits at `gate`, then loops until the environment's stop flag is
    // set and stops its background work. Faults still armed when it ends are reported as never
    // having taken effect.
    Task<void> run(StartGate& gate);

    Session& session() { return *session_; }

    // Faults (nemesis/client_faults.cpp), called on this client's loop thread.
    // Runs `effect` the next time the client reaches `point` (a checkpoint name, or kAnyPoint);
    // the effect returns how long to stall there. A fault aimed at a holder is tied to the hold:
    // if the hold ends before the point, the fault goes back to the nemesis for the next holder.
    using FaultEffect = std::function<std::chrono::milliseconds(SimulatedClient&)>;
    void arm(std::string point, Fault& fault, FaultEffect effect);
    // Stops the worker until `until`; with `whole_client` its background work (watchdog) too.
    void pause(EventLoop::TimePoint until, bool whole_client);
    // Once a checkpoint's stall is over, keeps the client there (a millisecond at a time) until
    // `resume()` says so or `deadline` passes; a crash forgets it.
    void stall_until(std::function<bool()> resume, EventLoop::TimePoint deadline) {
        stalled_until_ = std::move(resume);
        stalled_deadline_ = deadline;
    }
    // Drops every connection now; the process never records again and a successor takes over.
    void crash();
    // T7: the release being answered now ran on the server, but its reply is lost.
    void lose_release_reply() { lose_release_reply_ = true; }
    // Connects to `endpoint` from now on (failover).
    void redirect(const Endpoint& endpoint);
    std::int64_t process() const { return process_; }
    // The lock library told this client (its adapter's `lost`) that it lost the grant `token` of
    // `key` (the key as the library got it, with the run's prefix): recorded as a "library"
    // event (HISTORY.md) naming the process that holds that grant. False before the run started
    // (there is no history yet).
    bool record_library_lost(const std::string& key, const std::string& token,
                             const std::string& text);
    // The lock library granted an acquire of `key` that this client's adapter had answered in
    // doubt (`phase` "granted"), or the adapter's own release of that grant ended ("released",
    // `ok` or not), or the library gave that acquire up and whatever it held is gone
    // ("abandoned"): recorded as a "library" `late-grant` event (HISTORY.md) naming the process
    // of that in-doubt acquire. False when nothing was recorded (no history yet, a phase the
    // protocol does not have, an abandoned acquire that was not in doubt).
    // `request`, when the adapter named it, is the id of the acquire request it answered in
    // doubt: that acquire exactly, where the key alone would take the oldest one in doubt.
    bool record_library_late_grant(const std::string& key, const std::string& phase, bool ok,
                                   const std::string& token, const std::string& text,
                                   std::optional<std::int64_t> request = std::nullopt);
    int index() const { return index_; }
    // Every process id whose grants this client still holds, the current one first: a crash
    // ends them all (a grant taken before an `info` is released under a later id).
    std::vector<std::int64_t> processes_holding() const;

  private:
    struct Held {
        Grant grant;
        std::string key;  // as the history names it (no prefix)
        std::int64_t process;
    };
    struct Armed {
        std::string point;
        Fault* fault;
        FaultEffect effect;
    };

    // The connect phase: PING every node until it answers (or the run is stopped), and learn the
    // lease the lock service applies (Strategy::applied_lease). Not in the history: the run has
    // not started.
    Task<void> connect();
    // `due`: when the cycle's arrival was due (open loop), or nothing (closed loop).
    Task<void> cycle(std::optional<EventLoop::TimePoint> due);
    // The steps of a cycle that do not wait, kept out of its coroutine frame.
    AcquireRequest acquire_request(const std::string& key);
    void record_denial(const std::string& key, const Denied& denied);
    void record_grant(const std::string& key, Grant& grant, EventLoop::TimePoint started,
                      std::int64_t acquiring);
    // An acquire's ok value: {"token", "fence", "mode", "lease_ms"}, built in value_scratch_.
    const std::string& grant_value(const Grant& grant);
    // The hold is released: its faults that never fired go back, and the cycle counts.
    void finish_cycle(const std::string& key);
    Task<void> reincarnate();
    void start_incarnation(Clock clock);
    std::chrono::milliseconds on_checkpoint(std::string_view point);
    // An acquire's invoke value: {"mode": …} (and lease_ms when the run records leases).
    const std::string& acquire_invoke_value(LockMode mode);
    // Faults armed for the hold that ended without reaching their point go back to the nemesis.
    // `why` is only built when there is one (most holds have none).
    void disarm_hold_faults(const std::function<std::string()>& why);
    Task<void> critical_section(const Held& held);
    Task<void> release(const Held& held, bool retried = false);
    // Returns the event's time (now, if a crashed process records nothing).
    // The strings are only read while recording (the recorder copies them into the line).
    EventLoop::TimePoint record(EventType type, std::string_view f, const std::string& key,
                                std::string_view value, std::string_view error = {},
                                std::optional<std::int64_t> fence = std::nullopt);
    // Returns the event's time, as record().
    EventLoop::TimePoint record_failure(Op op, std::string_view f, const std::string& key,
                                        std::string_view value, const Failure& failure,
                                        std::optional<std::int64_t> fence = std::nullopt);
    // The arrival in progress (open loop) ends at `at`: its corrected latency is recorded.
    void finish_arrival(EventLoop::TimePoint at);
    void note_answer();
    void note_error();
    std::size_t second(EventLoop::TimePoint at) const;  // of the run

    ClientEnvironment& env_;
    int index_;
    std::int64_t process_;
    bool info_in_cycle_ = false;
    bool answered_ = false;
    std::unique_ptr<Session> session_;
    std::unique_ptr<Strategy> strategy_;
    ClientStats& stats_;
    std::mt19937_64 rng_;
    ProtectedResource resource_;
    int incarnation_ = 0;
    int consecutive_errors_ = 0;
    bool lose_release_reply_ = false;
    bool crashed_ = false;
    EventLoop::TimePoint worker_paused_until_{};
    std::function<bool()> stalled_until_;
    EventLoop::TimePoint stalled_deadline_{};
    std::vector<Armed> armed_;
    std::vector<Held> held_;
    struct InDoubtAcquire {
        std::string key;  // as the history names it
        std::int64_t process;
        std::string token;  // set by its late grant, when the adapter gave one
        // The id its request carried to the library (adapter_acquire_request).
        std::optional<std::int64_t> request;
    };
    // Acquires answered in doubt (oldest first), which a library may still grant: its adapter's
    // late grant names the key, and the history's event must name the acquire's process.
    static constexpr std::size_t kInDoubtAcquiresKept = 64;
    std::vector<InDoubtAcquire> in_doubt_acquires_;
    // Late grants whose adapter's release has not ended yet.
    std::vector<InDoubtAcquire> late_grants_;
    // The process and key of the acquire in flight, if any.
    std::optional<InDoubtAcquire> acquire_in_flight_;
    std::array<std::string, 2> acquire_invoke_values_;  // exclusive, shared
    // An event's value being built (an acquire's ok, a release's invoke): one buffer per client
    // instead of an allocation per event.
    std::string value_scratch_;
    // The lease the server applies when it differs from the workload's (Strategy::applied_lease).
    std::optional<std::chrono::milliseconds> applied_lease_;
    std::optional<Endpoint> redirected_to_;
    // When the arrival whose first acquire has not ended yet was due (open loop only).
    std::optional<EventLoop::TimePoint> arrival_due_;
    EventLoop::TimePoint last_recorded_at_{};  // the time of this client's last event
};

}  // namespace lockbench
