#pragma once

// One fault of the nemesis: parsed from a workload's `faults` list, fired on schedule, logged as
// `nemesis` history events that mark its window. A new fault = one class deriving from Fault +
// one line in kFaultKinds (nemesis.cpp).

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

#include "engine/clients/history_recorder.hpp"
#include "engine/results/fault_records.hpp"
#include "engine/run/json_reader.hpp"
#include "strategies/client/event_loop.hpp"

namespace lockbench {

class SimulatedClient;
struct Deployment;

// Who a fault hits. Client faults: the next client granted `key` (holder), client N, or a random
// one. Server faults: a node of the deployment (0 = the master); ZooKeeper faults: a member of
// the ensemble, or whichever member leads when the fault fires; network faults between hosts:
// the network (the hosts are the fault's own parameters).
struct FaultTarget {
    enum class Kind { Holder, Client, Random, Node, Leader, Network, SlotMaster };
    Kind kind = Kind::Node;
    std::string key;  // Holder; SlotMaster: the master serving this key's slot in a cluster
    int index = 0;    // Client, Node
    nlohmann::json to_json() const;
};

// Reaches the clients from the nemesis thread: actions run on each client's own loop thread.
class ClientDirectory {
  public:
    void add(SimulatedClient* client, EventLoop* loop);
    std::size_t size() const;
    // False when client `index` is not there (never registered, or its loop ended): the action
    // is dropped, and the caller must say so. An action whose client's loop ends before it runs
    // is dropped too (without a word: the run is over for that client).
    bool post(std::size_t index, std::function<void(SimulatedClient&)> action);
    void post_all(std::function<void(SimulatedClient&)> action);
    // Runs `action` on client `index` at once when it runs on `loop`, the caller's own (clients
    // packed into one adapter process share a loop); false otherwise.
    bool run_now(std::size_t index, const EventLoop* loop,
                 const std::function<void(SimulatedClient&)>& action);
    // The loop's clients are gone: later posts to them are dropped, and so are posts queued on
    // the loop that have not run yet. Call it on the loop's thread, before destroying them.
    void remove_loop(EventLoop* loop);

  private:
    bool registered(std::size_t index, const SimulatedClient* client) const;

    mutable std::mutex mutex_;
    std::vector<std::pair<SimulatedClient*, EventLoop*>> clients_;
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
    // The end of a run: runs every pending action now, and what they schedule when it is due,
    // until nothing is pending.
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
    // The history event it logs when it takes effect ("pause"); kind() is the workload's name
    // for it ("pause-client").
    virtual std::string_view name() const = 0;
    const std::string& kind() const { return kind_; }
    virtual bool needs_embedded_servers() const { return false; }
    // A server fault that can also act on a node of the user's deployment through the control
    // its inventory gives (controlled_server.hpp): a signal to its process, a restart command.
    virtual bool acts_through_host_control() const { return false; }
    // ... and only so: it needs an inventory (iptables on the user's host, never on ours).
    virtual bool only_through_host_control() const { return false; }
    // Acts on a server of the embedded ZooKeeper (not on --zookeeper's), so it needs a ZooKeeper
    // strategy; its target is a member of the ensemble, or the leader.
    virtual bool needs_embedded_zookeeper() const { return false; }
    // Acts on a member of the embedded etcd (not on --etcd's), so it needs an etcd strategy; its
    // target is a member, the leader, or a random member.
    virtual bool needs_embedded_etcd() const { return false; }
    // Acts on the path to the resource's own server (resource_server 'separate').
    virtual bool needs_separate_resource() const { return false; }
    // Acts on a Redis Cluster's masters and replicas, so it needs topology kind 'cluster'.
    virtual bool needs_cluster() const { return false; }
    // Acts on hosts in network namespaces (Topology::in_namespaces).
    virtual bool needs_network_lab() const { return false; }
    // Asks Redis Sentinel, so it needs topology kind 'sentinel'.
    virtual bool needs_sentinels() const { return false; }
    // Acts on a client's ZooKeeper session, so it needs a ZooKeeper strategy.
    virtual bool needs_zookeeper() const { return needs_embedded_zookeeper(); }
    // Network faults act through a FaultProxy the run puts in front of every node.
    virtual bool needs_proxy() const { return false; }
    // Acts on one client's own connection (drops it, loses or delays a reply on it, cuts it):
    // with connections shared among clients (`--connections`) it would act on other clients
    // too, so a run in shared mode refuses it.
    virtual bool needs_own_connection() const { return false; }
    // Client faults act on one client, on that client's loop thread.
    virtual bool targets_clients() const { return false; }
    virtual void apply_to_client(NemesisContext&, SimulatedClient&) {}
    // Server faults act from the nemesis thread.
    virtual void apply(NemesisContext&) {}

    const FaultTarget& target() const { return target_; }
    // Where on a client it acts (client faults that wait for a checkpoint); empty: at once.
    virtual std::string point() const { return {}; }
    // Faults that hear of every grant (client threads; `key` as the history names it).
    virtual bool hears_grants() const { return false; }
    virtual void on_grant(SimulatedClient& /*client*/, const std::string& /*key*/) {}

    // Schedule: first at `at_s`, then every `every_s` (if set) up to `times` firings.
    double at_s = 0;
    std::optional<double> every_s;
    int times = 1;
    // How many firings were due in a run that lasted `elapsed_s`.
    int due_within(double elapsed_s) const;

    // A verdict is only as good as its faults: every firing ends in took_effect() or in missed()
    // with the reason, and the run reports a firing that never took effect. Thread-safe.
    // `processes`: the client processes it hit (client faults), so an expectation can ask
    // whether a violation involved the faulted holder.
    void took_effect(const std::vector<std::int64_t>& processes = {});
    void missed(std::string reason);
    int effects() const;
    std::string miss_reason() const;
    std::vector<std::int64_t> processes() const;

  protected:
    FaultTarget target_;
    std::string kind_;
    friend std::unique_ptr<Fault> make_fault(const nlohmann::json&, const std::string&,
                                             const std::string&);

  private:
    mutable std::mutex accounting_mutex_;
    int effects_ = 0;
    std::string miss_reason_;
    std::vector<std::int64_t> processes_;
};

// Parses one entry of `faults` strictly (errors name /faults/<i>/<field>).
std::unique_ptr<Fault> make_fault(const nlohmann::json& spec, const std::string& origin,
                                  const std::string& path);

}  // namespace lockbench
