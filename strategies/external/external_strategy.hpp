#pragma once

// A lock library driven through its adapter process (PROTOCOL.md). Each client's process is
// started on the client's first call (its connect phase), lives in the client's Session, and is
// replaced by a new one after it broke the protocol or died: the client's successor talks to a
// new process. Answers map to the strategy interface as PROTOCOL.md's error table says: `held`
// is a Denied (Held), `refused` a Denied (NoQuorum: refused, no holder seen), `not-held` a
// NotHeld / false, `unsupported` a ReplyError (`fail`), anything else - `timeout`, an unknown
// code, a broken adapter - an IoError (`info`, in doubt).

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "strategies/client/redis_connection.hpp"
#include "strategies/external/adapter_process.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/strategy.hpp"

namespace lockbench {

// A client's skewed wall clock (fault clock-skew): `offset` ahead of the real one from `since`
// on, and running `drift` fast from then (0.5: 1.5 s a second), as lockbench's Clock does.
struct AdapterClockSkew {
    std::chrono::milliseconds offset{0};
    double drift = 0;
    std::chrono::system_clock::time_point since;
};

// Clients packed into one adapter process (--clients-per-process): pack g serves clients
// g*N … g*N+N-1, all on one loop thread (ClientThreads places them so), which alone touches it.
// The process belongs to the sessions using it; the pack only finds it for the others.
struct AdapterPack {
    int number = 0;
    std::weak_ptr<AdapterProcess> process;
    // A client of the pack is starting the process and waits for its init: the others wait too.
    bool starting = false;
    std::chrono::system_clock::time_point started_at{};
    int processes_started = 0;
    std::optional<std::chrono::milliseconds> applied_lease;
    std::optional<std::filesystem::path> faketime_file;
    // Each client's current id (a successor after a crash has a new one), by client index.
    std::map<int, std::string> members;
};

// What the engine hands every client's adapter in a run (Session extension kAdapterRunKey,
// shared by all clients; thread-safe where it says so). Without one (a test driving the strategy
// directly), adapters log to lockbench's stderr and use the namespace "lockbench".
struct AdapterRun {
    std::filesystem::path log_dir;  // adapters/<client>.log; empty: lockbench's stderr
    std::string name_space = "lockbench";
    // Set when the run may skew a client's clock: every process starts under libfaketime,
    // reading its offset from <dir>/<client>.faketime (kept across the client's processes).
    std::optional<std::filesystem::path> faketime_dir;
    // Topology 'sentinel': the sentinels and the name they monitor the master under, sent in init
    // beside the master, so that a library that can find the master through them follows a
    // failover (lockbench's own clients do; an adapter only knows what init tells it).
    std::vector<Endpoint> sentinels;
    std::string sentinel_master_name;
    // A library's own "lock lost" message, with the client's id (any loop thread).
    std::function<void(const std::string& client, const nlohmann::json& message)> on_lost;
    // The library granted an acquire the adapter had answered in doubt, and the adapter released
    // that grant itself (PROTOCOL.md, `late_grant`), with the client's id (any loop thread). The
    // message's `id`, when it has one, is tied to its process as AdapterClient's
    // acquire_request_id is.
    std::function<void(const std::string& client, const nlohmann::json& message)> on_late_grant;

    // Clients per adapter process (Workload::clients_per_process) of the run's `clients`.
    int clients_per_process = 1;
    int clients = 0;

    // Clients whose adapter broke (thread-safe): most of them lost makes the run unknown.
    void note_broken(const std::string& client, const std::string& reason);
    std::size_t clients_lost() const;
    std::string last_loss() const;
    // An adapter's definite refusal of its init (`unsupported`, with its text), the first one
    // (thread-safe): no retry changes it, so the run stops with it instead of waiting out its
    // connect deadline.
    void note_refused_init(const std::string& what);
    std::optional<std::string> refused_init() const;

    // The pack of client `client_id` ("c3.1-9f3a2b"), which it joins under that id; nothing when
    // clients are not packed (thread-safe).
    std::shared_ptr<AdapterPack> pack_of(const std::string& client_id);
    // A process fault that hit every client of a packed process: one line for summary.json's
    // notes (thread-safe).
    void note_process_fault(const std::string& line);
    std::vector<std::string> process_fault_notes() const;
    // The skew set on the clock that `faketime_file` fakes (a client's, or a pack's), which
    // every later process reading that file gets, whoever starts it (thread-safe).
    void set_clock_skew(const std::filesystem::path& faketime_file, const AdapterClockSkew& skew);
    std::optional<AdapterClockSkew> clock_skew(const std::filesystem::path& faketime_file) const;

  private:
    mutable std::mutex mutex_;
    std::set<std::string> lost_;
    std::string last_loss_;
    std::map<int, std::shared_ptr<AdapterPack>> packs_;
    std::vector<std::string> process_fault_notes_;
    std::optional<std::string> refused_init_;
    std::map<std::filesystem::path, AdapterClockSkew> clock_skews_;
};
inline constexpr const char* kAdapterRunKey = "adapter.run";

// libfaketime's preload library, where Debian installs it; nothing when it is not installed.
std::optional<std::filesystem::path> libfaketime_path();

// The line of libfaketime's timestamp file ("+5.000", "+4.250 x1.500") that shows `skew` to a
// process whose libfaketime started at `process_start`: libfaketime counts its rate from the
// process's start, so the offset takes back the drift of the time before `since`, or adds the
// drift since `since` that a successor started later did not run.
std::string faketime_line(const AdapterClockSkew& skew,
                          std::chrono::system_clock::time_point process_start);

// One client's adapter state (Session extension kAdapterClientKey).
struct AdapterClient {
    // Shared by the clients of a pack (AdapterPack); the client's own otherwise.
    std::shared_ptr<AdapterProcess> process;
    std::optional<std::filesystem::path> faketime_file;
    // The skew the nemesis set, kept for the client's successors: a drift's line depends on when
    // each process started (faketime_line).
    std::optional<AdapterClockSkew> clock_skew;
    std::chrono::system_clock::time_point process_started_at{};
    int processes_started = 0;
    // The run's lease, sent in every init of this client's processes (options.lease_ms): the
    // library may set its session timeout or lease TTL from it before its first grant.
    std::optional<std::chrono::milliseconds> requested_lease;
    // The lease the library says it applies (init_ok's lease_ms), from the latest init.
    std::optional<std::chrono::milliseconds> applied_lease;
    // The id of this client's latest acquire request, which a `late_grant` names, tied to the
    // process it went to (the engine's on_late_grant gets the message's id so tied).
    std::optional<std::int64_t> acquire_request_id;
};
inline constexpr const char* kAdapterClientKey = "adapter.client";

// The client's current adapter process, or null (not an adapter strategy, or none running).
AdapterProcess* adapter_process(Session& session);
AdapterClient* adapter_client(Session& session);
// The id this client's latest acquire request carried to its adapter, which a `late_grant` names
// (PROTOCOL.md): with two acquires of one key in doubt, the key alone cannot tell which one the
// library granted. Nothing when the client has no adapter.
std::optional<std::int64_t> adapter_acquire_request(Session& session);
// The indices of the other clients in the client's adapter process (packed runs), whom a fault
// of that process hits too; none when each client has a process of its own.
std::vector<int> adapter_pack_mates(Session& session);
// Records, in a packed run, that `fault` on the client's process hit all its clients (the
// run's notes say so); nothing otherwise.
void note_adapter_process_fault(Session& session, const std::string& fault);
// A crash killed the client's packed process, and with it every client of the pack: each has a
// successor, and the pack's next process serves them, also those that have not asked it for
// anything yet (its init lists them). Nothing when clients are not packed.
void expect_adapter_pack_successors(Session& session);
// The id of the successor of client `client_id` after a crash: "c3.1-9f3a2b" after "c3-9f3a2b",
// "c3.2-9f3a2b" after that (make_session names them so).
std::string successor_client_id(const std::string& client_id);
// Skews the clock of the client's adapter process (its faketime file), and of every process
// that file will start: the client's successors, and a pack's next process whichever client
// starts it (a drift's line depends on when each process started: faketime_line).
void skew_adapter_clock(Session& session, const AdapterClockSkew& skew);
// Asks the client's adapter for its wall clock (`time`): Unix milliseconds. Throws IoError.
Task<std::int64_t> adapter_time(Session& session);

class ExternalStrategy : public Strategy {
  public:
    ExternalStrategy(AdapterSpec spec, AdapterProbe probe, const StrategyOptions& options);

    std::string_view name() const override { return spec_.name; }
    Capabilities capabilities() const override { return probe_.capabilities; }
    const AdapterProbe& probe() const { return probe_; }

    Task<AcquireResult> acquire(Session& session, const AcquireRequest& request) override;
    Task<ReleaseOutcome> release(Session& session, const Grant& grant) override;
    Task<bool> renew(Session& session, const Grant& grant) override;
    Task<void> shutdown(Session& session) override;
    // Starts the client's process and sends its init (with the requested lease), in the connect
    // phase: the run's first acquire must not pay for a runtime's start. Answers init_ok's
    // lease_ms, the lease the library applies (a negotiated ZooKeeper session timeout, an etcd
    // TTL in whole seconds raised to the server's minimum), or nothing where it did not say.
    Task<std::optional<std::chrono::milliseconds>> applied_lease(
        Session& session, std::chrono::milliseconds requested) override;

    // init's `servers`, for the services the library asked for.
    nlohmann::json init_servers(Session& session) const;

  private:
    // The client's running process, started and initialised if there is none or it broke; in
    // a packed run, the pack's, which the first of its clients to need it starts for them all.
    Task<AdapterProcess*> ensure_process(Session& session);
    Task<AdapterProcess*> start_process(Session& session, AdapterClient& client, AdapterPack* pack);
    // init's request: the clients the process serves, the run's namespace, the servers, options.
    nlohmann::json init_request(Session& session, const AdapterClient& client,
                                const std::vector<std::string>& clients,
                                const AdapterRun* run) const;
    std::chrono::milliseconds answer_timeout(Session& session,
                                             std::chrono::milliseconds wait = {}) const;

    AdapterSpec spec_;
    AdapterProbe probe_;
    StrategyOptions options_;
};

}  // namespace lockbench
