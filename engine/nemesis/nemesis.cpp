#include "engine/nemesis/nemesis.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <thread>

#include "engine/clients/client.hpp"
#include "engine/nemesis/client_faults.hpp"
#include "engine/nemesis/cluster_faults.hpp"
#include "engine/nemesis/etcd_faults.hpp"
#include "engine/nemesis/network_faults.hpp"
#include "engine/nemesis/proxy_faults.hpp"
#include "engine/nemesis/server_faults.hpp"
#include "engine/nemesis/zookeeper_faults.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

using nlohmann::json;

json FaultTarget::to_json() const {
    switch (kind) {
        case Kind::Holder:
            return json{{"holder", key}};
        case Kind::Client:
            return json{{"client", index}};
        case Kind::Random:
            return "random";
        case Kind::Node:
            return json{{"node", index}};
        case Kind::Leader:
            return "leader";
        case Kind::Network:
            return "the network";
        case Kind::SlotMaster:
            return json{{"master_of", key}};
    }
    return nullptr;
}

// ---- Fault accounting
// -----------------------------------------------------------------------------

int Fault::due_within(double elapsed_s) const {
    if (at_s >= elapsed_s)
        return 0;
    if (!every_s)
        return 1;
    const double more = std::floor((elapsed_s - at_s) / *every_s - 1e-9);
    return static_cast<int>(std::min<double>(times, 1 + std::max(0.0, more)));
}

void Fault::took_effect(const std::vector<std::int64_t>& processes) {
    std::lock_guard lock(accounting_mutex_);
    ++effects_;
    processes_.insert(processes_.end(), processes.begin(), processes.end());
}

std::vector<std::int64_t> Fault::processes() const {
    std::lock_guard lock(accounting_mutex_);
    return processes_;
}

void Fault::missed(std::string reason) {
    std::lock_guard lock(accounting_mutex_);
    miss_reason_ = std::move(reason);
}

int Fault::effects() const {
    std::lock_guard lock(accounting_mutex_);
    return effects_;
}

std::string Fault::miss_reason() const {
    std::lock_guard lock(accounting_mutex_);
    return miss_reason_;
}

// ---- ClientDirectory
// ------------------------------------------------------------------------------

void ClientDirectory::add(SimulatedClient* client, EventLoop* loop) {
    std::lock_guard lock(mutex_);
    auto index = static_cast<std::size_t>(client->index());
    if (clients_.size() <= index)
        clients_.resize(index + 1, {nullptr, nullptr});
    clients_[index] = {client, loop};
}

std::size_t ClientDirectory::size() const {
    std::lock_guard lock(mutex_);
    return clients_.size();
}

bool ClientDirectory::registered(std::size_t index, const SimulatedClient* client) const {
    std::lock_guard lock(mutex_);
    return index < clients_.size() && clients_[index].first == client;
}

bool ClientDirectory::post(std::size_t index, std::function<void(SimulatedClient&)> action) {
    std::lock_guard lock(mutex_);
    if (index >= clients_.size() || !clients_[index].first)
        return false;
    auto [client, loop] = clients_[index];
    // Posted as the loop ends, it may run after its clients are destroyed: it asks again when it
    // runs, on the client's own thread, which removes them before destroying them. (client =
    // client: clang 14, the fuzz build, cannot capture a structured binding.)
    loop->post([this, index, client = client, action = std::move(action)] {
        if (registered(index, client))
            action(*client);
    });
    return true;
}

void ClientDirectory::remove_loop(EventLoop* loop) {
    std::lock_guard lock(mutex_);
    for (auto& entry : clients_) {
        if (entry.second == loop)
            entry = {nullptr, nullptr};
    }
}

bool ClientDirectory::run_now(std::size_t index, const EventLoop* loop,
                              const std::function<void(SimulatedClient&)>& action) {
    SimulatedClient* client = nullptr;
    {
        std::lock_guard lock(mutex_);
        if (index >= clients_.size() || clients_[index].second != loop)
            return false;
        client = clients_[index].first;
    }
    // On its own loop's thread, which alone removes it: it stays while the action runs.
    if (client)
        action(*client);
    return client != nullptr;
}

void ClientDirectory::post_all(std::function<void(SimulatedClient&)> action) {
    std::lock_guard lock(mutex_);
    for (std::size_t index = 0; index < clients_.size(); ++index) {
        auto [client, loop] = clients_[index];
        if (client) {
            loop->post([this, index, client = client, action] {
                if (registered(index, client))
                    action(*client);
            });
        }
    }
}

// ---- NemesisContext
// -------------------------------------------------------------------------------

double NemesisContext::log(std::string_view f, json value) {
    HistoryEvent e;
    e.type = EventType::Info;
    e.process = HistoryEvent::kNemesis;
    e.f = f;
    e.value = value.dump();
    return static_cast<double>(history_.record(std::move(e))) / 1e9;
}

std::size_t NemesisContext::open_window(std::string fault, json target, double start_s) {
    std::lock_guard lock(windows_mutex_);
    windows_.push_back(FaultWindow{std::move(fault), std::move(target), start_s, std::nullopt});
    return windows_.size() - 1;
}

void NemesisContext::close_window(std::size_t id, double end_s) {
    std::lock_guard lock(windows_mutex_);
    if (id < windows_.size())
        windows_[id].end_s = end_s;
}

std::vector<FaultWindow> NemesisContext::windows() const {
    std::lock_guard lock(windows_mutex_);
    return windows_;
}

void NemesisContext::later(EventLoop::TimePoint when, std::function<void()> action) {
    pending_.emplace_back(when, std::move(action));
}

void NemesisContext::run_due(EventLoop::TimePoint now) {
    // Actions may schedule more; take the due ones out first.
    std::vector<std::function<void()>> due;
    for (auto it = pending_.begin(); it != pending_.end();) {
        if (it->first <= now) {
            due.push_back(std::move(it->second));
            it = pending_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& a : due)
        a();
}

void NemesisContext::run_all_pending() {
    // What was pending heals now, however late it was due (a resume, a restart). What those
    // actions schedule in turn - a check polling every 100 ms for a promotion - runs when it is
    // due: run at once, such a poll repeated back to back for seconds.
    run_due(EventLoop::TimePoint::max());
    while (!pending_.empty()) {
        auto next = pending_.front().first;
        for (const auto& [when, action] : pending_)
            next = std::min(next, when);
        std::this_thread::sleep_until(next);
        run_due(EventLoop::now());
    }
}

// ---- parsing
// --------------------------------------------------------------------------------------

namespace {

using FaultConstructor = std::unique_ptr<Fault> (*)(ObjectReader&);

template <class F>
std::unique_ptr<Fault> construct(ObjectReader& r) {
    return std::make_unique<F>(r);
}

// Every fault a workload can name, in the order the error for an unknown one lists them.
constexpr std::pair<std::string_view, FaultConstructor> kFaultKinds[] = {
    {"pause-client", construct<PauseClient>},
    {"crash-client", construct<CrashClient>},
    {"clock-skew", construct<SkewClientClock>},
    {"stall", construct<StallClient>},
    {"lose-release-reply", construct<LoseReleaseReply>},
    {"partition-client", construct<PartitionClient>},
    {"delay-write", construct<DelayWrite>},
    {"pause-server", construct<PauseServer>},
    {"kill-server", construct<KillServer>},
    {"isolate-node", construct<IsolateNode>},
    {"clock-jump", construct<JumpServerClock>},
    {"failover", construct<Failover>},
    {"drop-replies", construct<DropReplies>},
    {"delay-replies", construct<DelayReplies>},
    {"reset-connections", construct<ResetConnections>},
    {"partition", construct<PartitionNode>},
    {"kill-zookeeper", construct<KillZooKeeper>},
    {"pause-zookeeper", construct<PauseZooKeeper>},
    {"kill-etcd", construct<KillEtcd>},
    {"pause-etcd", construct<PauseEtcd>},
    {"partition-etcd", construct<PartitionEtcd>},
    {"partition-hosts", construct<PartitionHosts>},
    {"sentinel-failover", construct<SentinelFailover>},
    {"cluster-failover", construct<ClusterFailover>},
    {"kill-cluster-master", construct<KillClusterMaster>},
};

std::unique_ptr<Fault> construct_fault(ObjectReader& r, const std::string& kind) {
    std::string known;
    for (const auto& [name, construct_kind] : kFaultKinds) {
        if (name == kind)
            return construct_kind(r);
        known += (known.empty() ? "" : "|") + std::string(name);
    }
    r.fail(r.at("fault"), "must be one of " + known + ", not \"" + kind + "\"");
}

void read_schedule(ObjectReader& r, Fault& f) {
    f.at_s = r.number("at_s", 0, 0, 86'400);
    if (r.find("every_s"))
        f.every_s = r.number("every_s", 1, 0.001, 86'400);
    f.times = static_cast<int>(r.integer("times", f.every_s ? 1'000'000 : 1, 1, 1'000'000));
}

std::string default_target(const Fault& f) {
    return f.targets_clients()            ? "random"
           : f.needs_embedded_zookeeper() ? "leader"
           : f.needs_embedded_etcd()      ? "leader"
           : f.needs_cluster()            ? "master-of:k0"
                                          : "node:0";
}

FaultTarget parse_client_target(ObjectReader& r, const std::string& target) {
    FaultTarget t;
    if (target == "holder") {
        t.kind = FaultTarget::Kind::Holder;
        t.key = r.string("key", "k0");
    } else if (target == "random") {
        t.kind = FaultTarget::Kind::Random;
    } else if (target.rfind("client:", 0) == 0) {
        t.kind = FaultTarget::Kind::Client;
        try {
            t.index = std::stoi(target.substr(7));
        } catch (const std::exception&) {
            r.fail(r.at("target"), "client:N needs a number");
        }
    } else {
        r.fail(r.at("target"),
               "must be holder|random|client:N for a client fault, not \"" + target + "\"");
    }
    return t;
}

FaultTarget parse_slot_master_target(const ObjectReader& r, const std::string& target) {
    if (target.rfind("master-of:", 0) != 0 || target.size() == 10)
        r.fail(r.at("target"),
               "must be master-of:KEY or master-of:shard:N for a cluster fault (the "
               "master serving the key's slot, or shard N's, when it fires), not \"" +
                   target + "\"");
    FaultTarget t;
    t.kind = FaultTarget::Kind::SlotMaster;
    t.key = target.substr(10);
    return t;
}

// A server fault's target: a node by number, Redis's master, or a ZooKeeper or etcd member
// chosen when it fires (the leader, or for etcd a random one).
FaultTarget parse_server_target(const ObjectReader& r, const Fault& f, const std::string& target) {
    FaultTarget t;
    t.kind = FaultTarget::Kind::Node;
    const bool member_fault = f.needs_embedded_zookeeper() || f.needs_embedded_etcd();
    if (target == "master" && !member_fault) {
        t.index = 0;
    } else if (target == "leader" && member_fault) {
        t.kind = FaultTarget::Kind::Leader;
    } else if (target == "random" && f.needs_embedded_etcd()) {
        t.kind = FaultTarget::Kind::Random;
    } else if (target.rfind("node:", 0) == 0) {
        try {
            t.index = std::stoi(target.substr(5));
        } catch (const std::exception&) {
            r.fail(r.at("target"), "node:N needs a number");
        }
    } else if (f.needs_embedded_zookeeper()) {
        r.fail(r.at("target"),
               "must be leader|node:N for a ZooKeeper fault, not \"" + target + "\"");
    } else if (f.needs_embedded_etcd()) {
        r.fail(r.at("target"),
               "must be leader|random|node:N for an etcd fault, not \"" + target + "\"");
    } else {
        r.fail(r.at("target"), "must be master|node:N for a server fault, not \"" + target + "\"");
    }
    return t;
}

FaultTarget parse_target(ObjectReader& r, const json& spec, const Fault& f) {
    const std::string target = r.string("target", default_target(f));
    if (f.targets_clients())
        return parse_client_target(r, target);
    if (f.needs_cluster())
        return parse_slot_master_target(r, target);
    if (f.needs_network_lab()) {
        if (spec.contains("target"))
            r.fail(r.at("target"),
                   "a fault of the network names its hosts (hosts, shape), not a "
                   "target");
        FaultTarget t;
        t.kind = FaultTarget::Kind::Network;
        return t;
    }
    return parse_server_target(r, f, target);
}

}  // namespace

std::unique_ptr<Fault> make_fault(const json& spec, const std::string& origin,
                                  const std::string& path) {
    ObjectReader r(spec, origin, path);
    const std::string kind = r.string("fault", "");
    std::unique_ptr<Fault> f = construct_fault(r, kind);
    f->kind_ = kind;
    read_schedule(r, *f);
    f->target_ = parse_target(r, spec, *f);
    r.finish();
    return f;
}

std::vector<std::unique_ptr<Fault>> Nemesis::parse(const json& faults, const std::string& origin) {
    std::vector<std::unique_ptr<Fault>> out;
    for (std::size_t i = 0; i < faults.size(); ++i) {
        out.push_back(make_fault(faults[i], origin, "/faults/" + std::to_string(i)));
    }
    return out;
}

// ---- Nemesis
// --------------------------------------------------------------------------------------

Nemesis::Nemesis(std::vector<std::unique_ptr<Fault>> faults, NemesisContext& ctx,
                 EventLoop::TimePoint start)
    : faults_(std::move(faults)), ctx_(ctx) {
    for (auto& f : faults_) {
        if (f->hears_grants())
            hearing_grants_.push_back(f.get());
        schedule_.push_back(
            Scheduled{f.get(), start + std::chrono::duration_cast<EventLoop::SteadyClock::duration>(
                                           std::chrono::duration<double>(f->at_s))});
    }
}

void Nemesis::tick(EventLoop::TimePoint now) {
    for (auto& s : schedule_) {
        if (s.fired >= s.fault->times || now < s.next)
            continue;
        ++s.fired;
        s.next = s.fault->every_s
                     ? now + std::chrono::duration_cast<EventLoop::SteadyClock::duration>(
                                 std::chrono::duration<double>(*s.fault->every_s))
                     : EventLoop::TimePoint::max();
        fire(*s.fault);
    }
    ctx_.run_due(now);
}

void Nemesis::fire(Fault& fault) {
    if (!fault.targets_clients()) {
        fault.apply(ctx_);
        return;
    }
    const auto& t = fault.target();
    switch (t.kind) {
        case FaultTarget::Kind::Holder: {
            std::lock_guard lock(armed_mutex_);
            armed_.push_back(&fault);
            armed_count_.store(static_cast<int>(armed_.size()));
            break;
        }
        case FaultTarget::Kind::Client:
        case FaultTarget::Kind::Random: {
            const auto n = ctx_.clients().size();
            const std::size_t index =
                t.kind == FaultTarget::Kind::Client
                    ? static_cast<std::size_t>(t.index)
                    : (n == 0 ? 0
                              : std::uniform_int_distribution<std::size_t>(0, n - 1)(ctx_.rng()));
            if (!ctx_.clients().post(index, [this, &fault](SimulatedClient& c) {
                    fault.apply_to_client(ctx_, c);
                })) {
                fault.missed("client " + std::to_string(index) + " was not running");
            }
            break;
        }
        case FaultTarget::Kind::Node:
        case FaultTarget::Kind::Leader:
        case FaultTarget::Kind::Network:
        case FaultTarget::Kind::SlotMaster:
            break;
    }
}

void Nemesis::on_grant(SimulatedClient& client, const std::string& key) {
    for (Fault* fault : hearing_grants_)
        fault->on_grant(client, key);
    if (armed_count_.load(std::memory_order_relaxed) == 0)
        return;
    Fault* chosen = nullptr;
    {
        std::lock_guard lock(armed_mutex_);
        for (auto it = armed_.begin(); it != armed_.end(); ++it) {
            if ((*it)->target().key == key) {
                chosen = *it;
                armed_.erase(it);
                break;
            }
        }
        armed_count_.store(static_cast<int>(armed_.size()));
    }
    if (chosen)
        chosen->apply_to_client(ctx_, client);
}

void Nemesis::rearm(Fault& fault) {
    std::lock_guard lock(armed_mutex_);
    armed_.push_back(&fault);
    armed_count_.store(static_cast<int>(armed_.size()));
}

void Nemesis::heal() {
    ctx_.run_all_pending();
}

// ---- validation: each check throws for a fault that could never fire as meant
// --------------------------------------------------------------------------------------------

namespace {

void check_fires_before_the_end(const Fault& f, const Workload& w, const std::string& at) {
    if (f.at_s >= w.duration_s) {
        char text[96];
        std::snprintf(text, sizeof text, "at_s %g is not before the end of the run (duration_s %g)",
                      f.at_s, w.duration_s);
        throw WorkloadError(at + text + ": it could never fire");
    }
}

void check_target_key(const FaultTarget& t, const Workload& w, const std::string& at) {
    if (t.kind == FaultTarget::Kind::SlotMaster && t.key.rfind("shard:", 0) == 0) {
        const std::string n = t.key.substr(6);
        const bool number =
            !n.empty() && n.size() < 4 && n.find_first_not_of("0123456789") == std::string::npos;
        if (!number || std::stoi(n) >= w.topology.masters) {
            throw WorkloadError(at + "the cluster's shards are shard:0 to shard:" +
                                std::to_string(w.topology.masters - 1) + ", not '" + t.key +
                                "': it could never fire");
        }
    } else if (t.kind == FaultTarget::Kind::Holder || t.kind == FaultTarget::Kind::SlotMaster) {
        bool known = false;
        for (int k = 0; k < w.keys && !known; ++k)
            known = t.key == "k" + std::to_string(k);
        if (!known) {
            throw WorkloadError(at + "no client ever locks '" + t.key + "' (keys are k0 to k" +
                                std::to_string(w.keys - 1) + "): it could never fire");
        }
    }
}

void check_zookeeper_fault(const Fault& f, const Workload& w, const std::string& at) {
    if (!f.needs_zookeeper())
        return;
    const StrategyInfo* info = find_strategy(w.strategy);
    if (info && !info->capabilities.zookeeper) {
        throw WorkloadError(at + "'" + f.kind() + "' acts on ZooKeeper, and " + w.strategy +
                            " uses none: it could never fire (a ZooKeeper strategy: "
                            "zk_mutex, zk_rwlock)");
    }
}

void check_etcd_fault(const Fault& f, const Workload& w, const std::string& at) {
    if (!f.needs_embedded_etcd())
        return;
    const auto& t = f.target();
    const StrategyInfo* info = find_strategy(w.strategy);
    if (info && !info->capabilities.etcd) {
        throw WorkloadError(at + "'" + f.kind() + "' acts on etcd, and " + w.strategy +
                            " uses none: it could never fire (an etcd strategy)");
    }
    if (t.kind == FaultTarget::Kind::Node && t.index >= w.topology.etcd_servers) {
        throw WorkloadError(at + "node:" + std::to_string(t.index) + " does not exist (" +
                            std::to_string(w.topology.etcd_servers) +
                            " etcd member(s), topology's etcd_servers): it could never "
                            "fire");
    }
    if (f.kind() == "partition-etcd" && w.topology.etcd_servers < 3) {
        throw WorkloadError(at +
                            "'partition-etcd' cuts a member from the others and needs a "
                            "cluster (topology's etcd_servers 3, 5 or 7): it could "
                            "never fire");
    }
}

void check_client_connection_and_resource(const Fault& f, const Workload& w,
                                          const std::string& at) {
    if (f.needs_own_connection() && w.shares_connections()) {
        throw WorkloadError(at + "'" + f.kind() + "' acts on one client's own connection and " +
                            std::to_string(w.clients) + " clients share " +
                            std::to_string(w.connections) +
                            " (--connections): it needs one connection per client");
    }
    if (f.needs_separate_resource() && !w.resource_server_separate) {
        throw WorkloadError(at + "'" + f.kind() +
                            "' delays writes on the way to the resource's own server and "
                            "needs resource_server 'separate': it could never fire");
    }
}

void check_topology_kind(const Fault& f, const Workload& w, const std::string& at) {
    const bool cluster = w.topology.kind == TopologyKind::Cluster;
    if ((f.needs_cluster() && !cluster) ||
        (cluster && !f.needs_cluster() && !f.targets_clients() && !f.needs_network_lab())) {
        throw WorkloadError(at + "'" + f.kind() + "' " +
                            (f.needs_cluster()
                                 ? "acts on a Redis Cluster and needs topology kind 'cluster'"
                                 : "acts on one server and a Redis Cluster's nodes change "
                                   "roles under it (use kill-cluster-master or "
                                   "cluster-failover)") +
                            ": it could never fire as meant");
    }
    if (f.needs_network_lab() && !w.topology.in_namespaces()) {
        throw WorkloadError(
            at + "'" + f.kind() +
            "' acts on hosts in network namespaces and needs topology kind "
            "'sentinel', or 'cluster' with namespaces or isolated_clients: it could "
            "never fire");
    }
    if (f.needs_sentinels() && w.topology.kind != TopologyKind::Sentinel) {
        throw WorkloadError(at + "'" + f.kind() +
                            "' asks the sentinels and needs topology kind 'sentinel': it "
                            "could never fire");
    }
}

void check_target_exists(const Fault& f, const Workload& w, const std::string& at) {
    const auto& t = f.target();
    if (f.needs_embedded_zookeeper() && t.kind == FaultTarget::Kind::Node &&
        t.index >= w.topology.zookeeper_servers) {
        throw WorkloadError(at + "node:" + std::to_string(t.index) + " does not exist (" +
                            std::to_string(w.topology.zookeeper_servers) +
                            " ZooKeeper server(s), topology's zookeeper_servers): it could "
                            "never fire");
    }
    if (t.kind == FaultTarget::Kind::Client && t.index >= w.clients) {
        throw WorkloadError(at + "client:" + std::to_string(t.index) + " does not exist (" +
                            std::to_string(w.clients) + " clients): it could never fire");
    }
}

}  // namespace

void Nemesis::validate(const std::vector<std::unique_ptr<Fault>>& faults, const Workload& w) {
    for (std::size_t i = 0; i < faults.size(); ++i) {
        const Fault& f = *faults[i];
        const std::string at = w.name + ": /faults/" + std::to_string(i) + ": ";
        check_fires_before_the_end(f, w, at);
        check_target_key(f.target(), w, at);
        check_zookeeper_fault(f, w, at);
        check_etcd_fault(f, w, at);
        check_client_connection_and_resource(f, w, at);
        check_topology_kind(f, w, at);
        check_target_exists(f, w, at);
    }
}

std::vector<FaultFiring> Nemesis::report(double end_s) const {
    std::vector<const Fault*> still_armed;
    {
        std::lock_guard lock(armed_mutex_);
        still_armed = {armed_.begin(), armed_.end()};
    }
    std::vector<FaultFiring> out;
    for (const auto& s : schedule_) {
        const Fault& f = *s.fault;
        const int due = f.due_within(end_s);
        const int effects = f.effects();
        FaultFiring entry{.fault = f.kind(),
                          .target = f.target().to_json(),
                          .at_s = f.at_s,
                          .due = due,
                          .took_effect = effects};
        if (!f.point().empty())
            entry.point = f.point();
        if (f.targets_clients())
            entry.processes = f.processes();
        if (effects < due) {
            std::string why = f.miss_reason();
            if (why.empty() &&
                std::find(still_armed.begin(), still_armed.end(), &f) != still_armed.end()) {
                why = "no client was granted " + f.target().key + " after it was armed";
            }
            if (why.empty())
                why = "it was triggered but never reached a client before the run ended";
            entry.missed = std::to_string(due - effects) + " of " + std::to_string(due) +
                           " firing(s) never took effect: " + why;
        }
        out.push_back(std::move(entry));
    }
    return out;
}

}  // namespace lockbench
