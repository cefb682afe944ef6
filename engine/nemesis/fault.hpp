#pragma once

// One fault of the nemesis: parsed from a workload's `faults` list, fired on schedule, logged as
// `nemesis` history events that mark its window. A new fault = one class deriving from Fault +
// one line in make_fault() (nemesis.cpp).

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "event_loop.hpp"
#include "history_recorder.hpp"
#include "json_reader.hpp"

namespace lockbench {

class SimulatedClient;
struct Deployment;

// Who a fault hits. Client faults: the next client granted `key` (holder), client N, or a random
// one. Server faults: a node of the deployment (0 = the master).
struct FaultTarget {
    enum class Kind { Holder, Client, Random, Node };
    Kind kind = Kind::Node;
    std::string key;  // Holder
    int index = 0;    // Client, Node
    nlohmann::json to_json() const;
};

// Reaches the clients from the nemesis thread: actions run on each client's own loop thread.
class ClientDirectory {
  public:
    void add(SimulatedClient* client, EventLoop* loop);
    std::size_t size() const;
    void post(std::size_t index, std::function<void(SimulatedClient&)> action);
    void post_all(std::function<void(SimulatedClient&)> action);
    // The loop's clients are gone: later posts to them are dropped.
    void remove_loop(EventLoop* loop);

  private:
    mutable std::mutex mutex_;
    std::vector<std::pair<SimulatedClient*, EventLoop*>> clients_;
};

// A fault window for summary.json's `faults`.
struct FaultWindow {
    std::string fault;
    nlohmann::json target;
    double start_s = 0;
    std::optional<double> end_s;
};

class NemesisContext {
  public:
    NemesisContext(HistoryRecorder& history, Deployment& deployment, ClientDirectory& clients,
                   std::uint64_t seed)
        : history_(history), deployment_(deployment), clients_(clients), rng_(seed) {}

    HistoryRecorder& history() { return history_; }
    Deployment& deployment() { return deployment_; }
    ClientDirectory& clients() { return clients_; }
    std::mt19937_64& rng() { return rng_; }

    // Records a nemesis event (thread-safe) and returns its time in seconds since the start.
    double log(std::string_view f, nlohmann::json value);
    // Opens a window; close it with the returned id.
    std::size_t open_window(std::string fault, nlohmann::json target, double start_s);
    void close_window(std::size_t id, double end_s);
    std::vector<FaultWindow> windows() const;

    // Runs `action` on the nemesis thread at `when` (server faults heal this way).
    void later(EventLoop::TimePoint when, std::function<void()> action);
    void run_due(EventLoop::TimePoint now);
    bool has_pending() const { return !pending_.empty(); }
    void run_all_pending();

  private:
    HistoryRecorder& history_;
    Deployment& deployment_;
    ClientDirectory& clients_;
    std::mt19937_64 rng_;
    mutable std::mutex windows_mutex_;
    std::vector<FaultWindow> windows_;
    std::vector<std::pair<EventLoop::TimePoint, std::function<void()>>> pending_;
};

class Fault {
  public:
    virtual ~Fault() = default;
    virtual std::string_view name() const = 0;
    virtual bool needs_embedded_servers() const { return false; }
    // Network faults act through a FaultProxy the run puts in front of every node.
    virtual bool needs_proxy() const { return false; }
    // Client faults act on one client, on that client's loop thread.
    virtual bool targets_clients() const { return false; }
    virtual void apply_to_client(NemesisContext&, SimulatedClient&) {}
    // Server faults act from the nemesis thread.
    virtual void apply(NemesisContext&) {}

    const FaultTarget& target() const { return target_; }

    // Schedule: first at `at_s`, then every `every_s` (if set) up to `times` firings.
    double at_s = 0;
    std::optional<double> every_s;
    int times = 1;

  protected:
    FaultTarget target_;
    friend std::unique_ptr<Fault> make_fault(const nlohmann::json&, const std::string&,
                                             const std::string&);
};

// Parses one entry of `faults` strictly (errors name /faults/<i>/<field>).
std::unique_ptr<Fault> make_fault(const nlohmann::json& spec, const std::string& origin,
                                  const std::string& path);

}  // namespace lockbench
