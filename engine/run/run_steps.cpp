#include "engine/run/run_steps.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <sys/resource.h>
#include <thread>

#include "engine/nemesis/server_faults.hpp"
#include "engine/run/live_violations.hpp"
#include "engine/run/story_files.hpp"
#include "engine/topology/cluster.hpp"
#include "engine/topology/sentinel.hpp"
#include "strategies/client/zk_client.hpp"

namespace lockbench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string random_hex(std::size_t n) {
    static constexpr char hex[] = "0123456789abcdef";
    std::random_device rd;
    std::string out;
    for (std::size_t i = 0; i < n; ++i)
        out.push_back(hex[rd() % 16]);
    return out;
}

double cpu_seconds() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    auto secs = [](timeval tv) {
        return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6;
    };
    return secs(u.ru_utime) + secs(u.ru_stime);
}

}  // namespace

std::vector<Endpoint> external_servers(const RunOptions& options) {
    if (!options.inventory)
        return options.redis;
    if (!options.redis.empty())
        throw WorkloadError("--redis and --inventory both name the servers: give one");
    return options.inventory->master_endpoints();
}

void check_external(const Workload& w, const std::vector<std::unique_ptr<Fault>>& faults,
                    const RunOptions& options, std::size_t external) {
    if (external > 0 &&
        (w.topology.kind == TopologyKind::Replicated || w.topology.in_namespaces())) {
        throw WorkloadError("topology: '" + std::string(to_string(w.topology.kind)) +
                            "' starts servers of its own; " +
                            (options.inventory ? "--inventory" : "--redis") +
                            " names servers that are already there");
    }
    std::vector<const InventoryNode*> masters;
    if (options.inventory)
        masters = options.inventory->masters();
    const auto unix_socket = std::find_if(options.redis.begin(), options.redis.end(),
                                          [](const Endpoint& ep) { return ep.is_unix_socket(); });
    for (const auto& f : faults) {
        if (f->needs_proxy() && unix_socket != options.redis.end()) {
            throw WorkloadError("faults: '" + f->kind() +
                                "' acts through a TCP proxy in front of each server, and --redis "
                                "names a unix socket (" +
                                unix_socket->to_string() + "): give the server's TCP address");
        }
        if (f->only_through_host_control() && !options.inventory) {
            throw WorkloadError("faults: '" + f->kind() +
                                "' acts on a node's host through an --inventory's control "
                                "(iptables there; lockbench never touches its own machine's "
                                "firewall) - on servers lockbench starts, use 'partition'");
        }
        if (f->needs_embedded_servers() && external > 0) {
            if (!options.inventory || !f->acts_through_host_control()) {
                throw WorkloadError(
                    "faults: '" + f->kind() + "' acts on a server process and needs embedded " +
                    "servers, not " + (options.inventory ? "--inventory" : "--redis") +
                    (f->acts_through_host_control()
                         ? " (an --inventory that gives the node's host a control can act on it)"
                         : ""));
            }
            const auto index = static_cast<std::size_t>(f->target().index);
            if (index >= masters.size()) {
                throw WorkloadError("faults: '" + f->kind() + "' targets node " +
                                    std::to_string(index) + " but " + options.inventory->origin +
                                    " names " + std::to_string(masters.size()) + " master(s)");
            }
            const InventoryNode& node = *masters[index];
            if (!node.control) {
                throw WorkloadError("faults: '" + f->kind() + "' acts on node " + node.name +
                                    "'s process, and " + options.inventory->origin +
                                    " gives no control for its host (\"control\": {\"ssh\": "
                                    "\"user@host\"} or {\"local\": true})");
            }
            const auto* kill = dynamic_cast<const KillServer*>(f.get());
            if (kill && kill->restarts() && node.restart.empty()) {
                throw WorkloadError("faults: '" + f->kind() + "' restarts node " + node.name +
                                    ", and " + options.inventory->origin +
                                    " gives no \"restart\" command for it (or set "
                                    "restart_after_ms to null)");
            }
            continue;
        }
        if (f->needs_embedded_zookeeper() && !options.zookeeper.empty()) {
            throw WorkloadError("faults: '" + f->kind() +
                                "' acts on a ZooKeeper server process and needs the embedded "
                                "ZooKeeper, not --zookeeper");
        }
        if (f->needs_embedded_etcd() && !options.etcd.empty()) {
            throw WorkloadError("faults: '" + f->kind() +
                                "' acts on an etcd member and needs the embedded etcd, not --etcd");
        }
    }
}

void WorkloadRun::deploy() {
    external = external_servers(options);
    if (options.inventory)
        inventory_masters = options.inventory->masters();
    w = workload_as_run(options);
    w.resolve(external.size());
    w.validate();
    faults = Nemesis::parse(w.faults, w.name);
    Nemesis::validate(faults, w);
    strategy = find_strategy(w.strategy);
    check_external(w, faults, options, external.size());
    proxied =
        std::any_of(faults.begin(), faults.end(), [](const auto& f) { return f->needs_proxy(); });
    const std::size_t nodes =
        external.empty() ? static_cast<std::size_t>(
                               w.topology.kind == TopologyKind::Masters ? w.topology.masters : 1)
                         : external.size();
    reserve_file_descriptors(w, nodes, proxied);
    dir.emplace(options.out_dir,
                utc_stamp() + "-" + safe_name(options.label.empty() ? w.name : options.label));
    deployment = Deployment::start(w, external, options.zookeeper, options.etcd);
    for (const InventoryNode* node : inventory_masters) {
        deployment.controlled.push_back(node->control ? std::make_unique<ControlledServer>(*node)
                                                      : nullptr);
    }
    if (proxied)
        deployment.add_proxies();
    check_deployment();
}

void WorkloadRun::check_deployment() {
    deployment.check_reachable(max_connections_per_node(w) - 32);
    cluster = w.topology.kind == TopologyKind::Cluster;
    // A cluster's masters each have their replicas by construction (embedded) or not (the
    // user's): WAIT's count in each grant tells, where a single master's probe would ask one node.
    if (strategy->capabilities.needs_replicas && !cluster)
        deployment.check_replicas(StrategyOptions{}.wait_replicas);
    // Redlock over a cluster: its lock key once in each shard, on that shard's master - the
    // Redlock-over-replication case, where a failover to a lagging replica loses a vote.
    if (cluster && strategy->capabilities.multi_node) {
        const auto view = read_cluster_nodes(deployment.endpoints, 2s);
        if (!view)
            throw EnvironmentError("cannot read CLUSTER NODES from any of the cluster's nodes");
        shard_tags = shard_hash_tags(*view);
        if (shard_tags.size() < static_cast<std::size_t>(kMinRedlockMasters)) {
            throw WorkloadError("topology: " + w.strategy + " is a quorum over masters and needs " +
                                std::to_string(kMinRedlockMasters) + "; the cluster has " +
                                std::to_string(shard_tags.size()) + " masters serving slots");
        }
    }
    deployment.check_zookeeper_reachable();
    deployment.check_etcd_reachable();
    for (const auto& f : faults) {
        if (f->needs_proxy() &&
            static_cast<std::size_t>(f->target().index) >= deployment.proxies.size()) {
            throw WorkloadError("faults: '" + f->kind() + "' targets node " +
                                std::to_string(f->target().index) + " but the deployment has " +
                                std::to_string(deployment.proxies.size()));
        }
        if (f->needs_embedded_servers() && deployment.controlled.empty() &&
            static_cast<std::size_t>(f->target().index) >= deployment.servers.size()) {
            throw WorkloadError("faults: '" + f->kind() + "' targets node " +
                                std::to_string(f->target().index) + " but the topology has " +
                                std::to_string(deployment.servers.size()));
        }
    }
}

void WorkloadRun::wire() {
    make_environment();
    ClientThreads::Placement where = placement();
    wire_adapter();
    clients.emplace(
        *env, directory,
        [this](EventLoop& loop, int index, int incarnation, Clock clock) {
            return make_session(loop, index, incarnation, std::move(clock));
        },
        std::move(where));
    wait_connected();
}

void WorkloadRun::make_environment() {
    // On someone else's server (Redis, ZooKeeper or etcd), keys carry a per-run prefix so runs
    // never meet old state.
    nonce = random_hex(6);
    const bool all_embedded = deployment.embedded &&
                              (deployment.zookeeper_hosts.empty() || deployment.zookeeper) &&
                              (deployment.etcd_endpoints.empty() || deployment.etcd);
    key_prefix = all_embedded ? "" : "lockbench:" + nonce + ":";
    // A lock library behind an adapter keeps its keys under this namespace (PROTOCOL.md's init).
    adapter_namespace = "lockbench-" + nonce;
    clean_up_on_failure.emplace(w, deployment, external, key_prefix, adapter_namespace);
    connection =
        ConnectionOptions{.connect_timeout = std::chrono::milliseconds(w.connect_timeout_ms),
                          .command_timeout = std::chrono::milliseconds(w.command_timeout_ms)};

    keys.emplace(w.keys, w.key_distribution);
    next_process.store(w.clients);
    endpoints = deployment.endpoints;
    resource_endpoint = deployment.resource_proxy
                            ? std::optional(deployment.resource_proxy->endpoint())
                            : std::nullopt;
    zookeeper_hosts = deployment.zookeeper_hosts;
    etcd_endpoints = deployment.etcd_endpoints;
    env.emplace(ClientEnvironment{w, *keys, stop, next_process, live_cycles, live_errors, connected,
                                  connect_error_mutex, connect_error});
    env->key_prefix = key_prefix;
    env->record_lease = strategy->capabilities.expires;
    if (const char* delay = std::getenv("LOCKBENCH_TEST_CYCLE_DELAY_MS"))
        env->test_cycle_delay = std::chrono::microseconds(
            static_cast<std::int64_t>(std::max(0.0, std::atof(delay)) * 1000));

    // A whole-client pause stops a process, and a stopped process's ZooKeeper session hears
    // nothing from it: the C client's own threads do not stop with ours, so each client's
    // ZooKeeper connections pass a proxy of its own that the pause freezes (FaultProxy). A
    // partition of one client from ZooKeeper cuts the same proxies.
    for (const auto& fault : w.faults) {
        own_zookeeper_proxies |= (fault.value("fault", "") == "pause-client" &&
                                  fault.value("scope", "worker") == "client") ||
                                 fault.value("fault", "") == "partition-client";
    }
}

// Topology 'sentinel': isolated clients run in a namespace of their own, and every client
// thread finds the master through the sentinels it can reach (sentinel.hpp).
// A cluster's clients follow its redirects themselves (cluster_routing.hpp).
ClientThreads::Placement WorkloadRun::placement() {
    ClientThreads::Placement placement;
    if (deployment.clients_host) {
        placement.isolated = w.topology.isolated_clients;
        placement.enter_isolated = [&deployment = deployment] {
            deployment.lab->enter(*deployment.clients_host);
        };
    }
    if (!deployment.sentinels.empty()) {
        placement.companion =
            [&env = *env, sentinels = deployment.sentinels, master = deployment.endpoints.at(0)](
                EventLoop& loop, std::vector<SimulatedClient*> mine, bool isolated) {
                return follow_sentinel_master(loop, env, sentinels, master, std::move(mine),
                                              isolated ? "clients" : "root", 100ms);
            };
    }
    return placement;
}

// A lock library's strategy: every client's adapter process logs into the run folder, keys
// live under the run's namespace, and a run that may skew a client's clock starts each
// process under libfaketime.
void WorkloadRun::wire_adapter() {
    adapter_spec = find_adapter(w.strategy);
    if (!adapter_spec)
        return;
    adapter_run = std::make_shared<AdapterRun>();
    adapter_run->log_dir = dir->tmp() / "adapters";
    adapter_run->name_space = adapter_namespace;
    adapter_run->sentinels = deployment.sentinels;
    adapter_run->sentinel_master_name = std::string(kSentinelMasterName);
    adapter_run->clients_per_process = w.clients_per_process;
    adapter_run->clients = w.clients;
    const bool skews = std::any_of(w.faults.begin(), w.faults.end(), [](const auto& f) {
        return f.value("fault", "") == "clock-skew";
    });
    if (skews)
        adapter_run->faketime_dir = dir->tmp() / "adapters" / "faketime";
    // A library's own "you lost the lock" goes into the history (HISTORY.md: "library"),
    // recorded on the client's thread with the process that held the grant.
    adapter_run->on_lost = [&directory = directory, &library_lost_signals = library_lost_signals](
                               const std::string& client, const nlohmann::json& message) {
        const auto text_of = [&message](const char* field) {
            const auto it = message.find(field);
            return it != message.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        // "c3.1-9f3a2b": client 3 (make_session names them).
        const std::size_t index =
            std::strtoul(client.c_str() + (client.empty() ? 0 : 1), nullptr, 10);
        directory.post(index,
                       [&library_lost_signals, key = text_of("key"), token = text_of("token"),
                        text = text_of("text")](SimulatedClient& c) {
                           if (c.record_library_lost(key, token, text))
                               library_lost_signals.fetch_add(1, std::memory_order_relaxed);
                       });
    };
    // An acquire the library granted after its adapter answered it in doubt, released by the
    // adapter: the history's late-grant events, which the linearizability check places.
    adapter_run->on_late_grant = [&directory = directory,
                                  &library_late_grants = library_late_grants](
                                     const std::string& client, const nlohmann::json& message) {
        const auto text_of = [&message](const char* field) {
            const auto it = message.find(field);
            return it != message.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        const auto ok = message.find("ok");
        const bool released_ok = ok != message.end() && ok->is_boolean() && ok->get<bool>();
        const auto id = message.find("id");
        const std::optional<std::int64_t> request =
            id != message.end() && id->is_number_integer()
                ? std::optional<std::int64_t>(id->get<std::int64_t>())
                : std::nullopt;
        const std::size_t index =
            std::strtoul(client.c_str() + (client.empty() ? 0 : 1), nullptr, 10);
        directory.post(index, [&library_late_grants, key = text_of("key"), phase = text_of("phase"),
                               token = text_of("token"), text = text_of("text"), released_ok,
                               request](SimulatedClient& c) {
            if (c.record_library_late_grant(key, phase, released_ok, token, text, request) &&
                phase == "granted")
                library_late_grants.fetch_add(1, std::memory_order_relaxed);
        });
    };
}

std::unique_ptr<Session> WorkloadRun::make_session(EventLoop& loop, int index, int incarnation,
                                                   Clock clock) {
    // A successor after a crash is a new process with a new identity.
    std::string id = "c" + std::to_string(index) +
                     (incarnation ? "." + std::to_string(incarnation) : "") + "-" + nonce;
    auto session = std::make_unique<Session>(loop, endpoints, connection, id, std::move(clock));
    if (cluster)
        session->use_cluster(shard_tags);
    if (w.shares_connections())
        share_connections(*session, loop, index);
    if (resource_endpoint)
        session->set_resource_endpoint(*resource_endpoint);
    if (adapter_run)
        session->set_extension(kAdapterRunKey, adapter_run);
    if (!etcd_endpoints.empty())
        session->set_etcd_endpoints(etcd_endpoints);
    if (!zookeeper_hosts.empty()) {
        std::string hosts = zookeeper_hosts;
        if (own_zookeeper_proxies) {
            hosts.clear();
            std::vector<FaultProxy*> mine;
            std::stringstream list(zookeeper_hosts);
            for (std::string host; std::getline(list, host, ',');) {
                auto proxy = std::make_unique<FaultProxy>(Endpoint::parse(host));
                hosts += (hosts.empty() ? "" : ",") + proxy->endpoint().to_string();
                mine.push_back(proxy.get());
                std::lock_guard lock(zookeeper_proxies_mutex);
                zookeeper_proxies.push_back(std::move(proxy));
            }
            session->set_on_whole_pause([mine](EventLoop::TimePoint until) {
                for (FaultProxy* proxy : mine)
                    proxy->freeze_until(until);
            });
            session->set_on_partition([mine](EventLoop::TimePoint until) {
                for (FaultProxy* proxy : mine)
                    proxy->blackhole_until(until);
            });
        }
        // Connects now, while the clients connect to Redis: the session timeout is the
        // lease every acquire records (HISTORY.md). A lock library's client is its adapter
        // process, which opens its own session to these hosts: one of ours would be a second,
        // idle session per client that the ensemble must keep alive for nothing.
        session->set_zookeeper_hosts(hosts);
        if (!adapter_run)
            session->zookeeper(std::chrono::milliseconds(w.lease_ms));
    }
    return session;
}

// The service whose connection the clients wait for, in a message: each connects to Redis (the
// lock's nodes, the resource), then to the lock's own service, the one that fails when Redis
// answered.
std::string WorkloadRun::lock_service_name() const {
    if (adapter_run)
        return "the lock library (its adapter process)";
    if (!zookeeper_hosts.empty())
        return "ZooKeeper";
    if (!etcd_endpoints.empty())
        return "etcd";
    return "Redis";
}

// Client i runs on thread i % threads (client_threads.hpp), whose loop holds its share of the
// N connections per server: N / threads, one more on the first N % threads threads. Its
// clients take them in turn.
void WorkloadRun::share_connections(Session& session, EventLoop& loop, int index) {
    const auto threads = static_cast<std::size_t>(w.threads);
    const auto total = static_cast<std::size_t>(w.connections);
    const auto thread = static_cast<std::size_t>(index) % threads;
    const std::size_t on_this_thread = total / threads + (thread < total % threads ? 1 : 0);
    std::shared_ptr<SharedConnections> shared;
    {
        std::lock_guard lock(shared_connections_mutex);
        auto& slot = shared_connections[&loop];
        shared = slot.lock();
        if (!shared) {
            shared = std::make_shared<SharedConnections>(loop, endpoints, resource_endpoint,
                                                         connection, on_this_thread);
            slot = shared;
        }
    }
    session.use_shared_connections(std::move(shared), static_cast<std::size_t>(index) / threads);
}

// The nemesis starts once every client is registered (a fault for client N at 0 s must find
// client N there), and the run once every client is connected.
void WorkloadRun::wait_connected() {
    clients->wait_registered();
    const auto connect_deadline = EventLoop::now() + 10s + std::chrono::milliseconds(w.clients);
    const auto adapter_command = [this] {
        std::string adapter = adapter_spec->name;
        if (adapter.starts_with(kCommandPrefix))
            adapter.erase(0, kCommandPrefix.size());
        return adapter;
    };
    while (connected.load() < w.clients && !stop &&
           !(options.interrupt && options.interrupt->load())) {
        if (const auto refusal =
                adapter_run && adapter_spec ? adapter_run->refused_init() : std::nullopt) {
            clients->stop_and_join();
            throw EnvironmentError("the adapter (" + adapter_command() +
                                   ") refused its init: " + *refusal);
        }
        if (EventLoop::now() >= connect_deadline) {
            // Counted before the stop: a client told to stop leaves its connect loop as if it
            // had connected (it said "only 3 of 3").
            const int connected_in_time = connected.load();
            clients->stop_and_join();
            std::lock_guard lock(connect_error_mutex);
            const std::string within =
                std::to_string(std::chrono::duration_cast<std::chrono::seconds>(
                                   10s + std::chrono::milliseconds(w.clients))
                                   .count()) +
                " s";
            const std::string count =
                "only " + std::to_string(connected_in_time) + " of " + std::to_string(w.clients);
            // A client of a lock library connects through its adapter, whose init answer is
            // the error that tells the user what to fix (a server it cannot reach yet, say).
            if (adapter_spec && connect_error.starts_with("adapter: ")) {
                throw EnvironmentError(count + " clients could start their adapter (" +
                                       adapter_command() + ") within " + within + ": " +
                                       connect_error.substr(std::string("adapter: ").size()));
            }
            throw EnvironmentError(count + " clients could connect to " + lock_service_name() +
                                   " within " + within + " (last error: " + connect_error + ")");
        }
        std::this_thread::sleep_for(5ms);
    }
}

void WorkloadRun::drive() {
    start_measuring();
    drive_to_deadline();
    stop_and_heal();
}

void WorkloadRun::start_measuring() {
    // The servers' own accounting, read while no client runs a cycle yet (summary's server_cost).
    metered = metered_servers(deployment, external);
    servers_before = read_servers(metered, 2s);
    metered_from = EventLoop::now();

    // The run starts now: every client is connected and waits at its loop's gate.
    start = EventLoop::now();
    cpu_start = cpu_seconds();
    try {
        history.emplace(dir->tmp() / "history.jsonl", start);
    } catch (...) {
        clients->stop_and_join();
        throw;
    }
    nemesis_context.emplace(*history, deployment, directory, w.seed ^ 0x6e656d657369ULL);
    nemesis.emplace(std::move(faults), *nemesis_context, start);
    env->history = &*history;
    env->nemesis = &*nemesis;
    env->start = start;
    env->deadline = start + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                std::chrono::duration<double>(w.duration_s));
    // Faults due at 0 s act before any client does: a server or network fault at once, a client
    // fault posted to its loop ahead of the gate's opening.
    try {
        nemesis->tick(start);
    } catch (const std::exception& e) {
        clients->stop_and_join();
        throw EnvironmentError(std::string("fault injection failed: ") + e.what());
    }
    clients->open_gates();
}

void WorkloadRun::drive_to_deadline() {
    const auto deadline = env->deadline;
    auto last_progress = start;
    nemesis_until = deadline;
    // On a terminal only: reading the history back costs a little CPU the run measures.
    std::optional<LiveViolations> live_violations;
    if (options.progress)
        live_violations.emplace(dir->tmp() / "history.jsonl");
    while (!stop) {
        // Woken at the deadline itself: a closed-loop client starts cycles until it is stopped.
        std::this_thread::sleep_until(
            std::min(EventLoop::now() + (w.faults.empty() ? 20ms : 2ms), deadline));
        auto now = EventLoop::now();
        if (options.interrupt && options.interrupt->load()) {
            interrupted = true;
            nemesis_until = now;
            break;
        }
        try {
            // Up to the deadline exactly: a fault due just before it still fires.
            nemesis->tick(std::min(now, deadline - 1ns));
            deployment.check_alive();
        } catch (const EnvironmentError& e) {
            environment_failure = e.what();
            break;
        } catch (const std::exception& e) {
            environment_failure = std::string("fault injection failed: ") + e.what();
            break;
        }
        if (now >= deadline)
            break;
        if (options.progress && now - last_progress >= 500ms) {
            last_progress = now;
            double elapsed = std::chrono::duration<double>(now - start).count();
            std::fprintf(
                stderr, "\r\x1b[K%s",
                progress_line(elapsed, w.duration_s, w.strategy,
                              static_cast<double>(live_cycles.load()) / std::max(elapsed, 1e-9),
                              live_errors.load(), live_violations->poll())
                    .c_str());
        }
    }
}

std::string progress_line(double elapsed_s, double duration_s, const std::string& strategy,
                          double cycles_per_s, std::uint64_t errors, std::uint64_t violations) {
    char line[256];
    std::snprintf(
        line, sizeof line, "  %5.1f/%.1f s  %s  %10.0f cycles/s  errors %llu  %s %llu", elapsed_s,
        duration_s, strategy.c_str(), cycles_per_s, static_cast<unsigned long long>(errors),
        violations > 0 ? "VIOLATIONS" : "violations", static_cast<unsigned long long>(violations));
    return line;
}

void WorkloadRun::stop_and_heal() {
    // The engine's CPU over the measured window: closing thousands of connections afterwards is
    // not a cost of the cycles (engine_bench.sh divides this by them).
    cpu_used = cpu_seconds() - cpu_start;
    // The run ends here: no client starts another cycle. Then heal (resume paused servers,
    // restart killed ones), so that an operation still in flight finishes promptly instead of
    // timing out against a stopped server; a heal that takes seconds (a promotion polled for)
    // no longer runs while the clients go on, after the deadline.
    const auto stopped = EventLoop::now();
    clients->stop();
    try {
        nemesis->heal();
    } catch (const std::exception& e) {
        if (environment_failure.empty())
            environment_failure = std::string("healing faults failed: ") + e.what();
    }
    clients->join();
    // Read again once the last command of any client was answered: every call the run made is in.
    metered_until = EventLoop::now();
    servers_after = read_servers(metered, 2s);
    if (options.progress)
        std::fprintf(stderr, "\r\x1b[K");
    // The clients ran until they were stopped, or until the last operation in flight then ended:
    // not while they slept out a back-off, nor while the faults healed.
    end = std::max(stopped, start + std::chrono::nanoseconds(history->last_client_event_ns()));
    // A crashed ZooKeeper client's session is ended once its timeout has passed: wait for that
    // (not part of the run's time), or the server - the user's, with --zookeeper - keeps the
    // session, and an exiting process its handle.
    if (!zookeeper_hosts.empty())
        ZkClient::wait_for_undertakers(std::chrono::milliseconds(w.lease_ms) + 5s);

    history->finish();
    if (!environment_failure.empty())
        throw EnvironmentError(environment_failure);
    if (const std::string failure = clients->failure(); !failure.empty())
        throw InternalError(failure);
}

RunOutcome WorkloadRun::finish() {
    const ClientStats total = clients->total_stats();
    const SummaryInputs in = summary_inputs(total);
    RunOutcome outcome;
    outcome.summary = make_summary(in, dir->tmp() / "history.jsonl");
    const double machine_cores =
        static_cast<double>(std::max(1U, std::thread::hardware_concurrency()));
    outcome.summary.server_cost = server_cost_json(
        metered, servers_before, servers_after,
        std::chrono::duration<double>(metered_until - metered_from).count(),
        EngineCost{.cpu_s = cpu_used,
                   .elapsed_s = in.elapsed_s,
                   .cores = std::min(static_cast<double>(w.threads), machine_cores),
                   .cycles = total.cycles});
    describe_deployment(outcome.summary);
    outcome.interrupted = interrupted;
    outcome.summary.cleanup =
        clean_up_user_servers(w, deployment, external, key_prefix, adapter_namespace);
    clean_up_on_failure->dismiss();
    write_files(outcome.summary, total);
    outcome.dir = dir->commit();
    return outcome;
}

SummaryInputs WorkloadRun::summary_inputs(const ClientStats& total) {
    SummaryInputs in{
        .workload = w,
        .stats = total,
        .elapsed_s = std::chrono::duration<double>(end - start).count(),
        .engine_cpu_s = cpu_used,
        .history_events = history->events(),
        .interrupted = interrupted,
        .deployment_embedded = deployment.embedded,
        .endpoints = deployment.endpoints,
        .key_prefix = key_prefix,
        .faults = nemesis_context->windows(),
        .nemesis = nemesis->report(std::chrono::duration<double>(nemesis_until - start).count())};
    if (adapter_run) {
        // An adapter that broke is a client that measured nothing from then on: with most of
        // them lost, a "valid" would be a silent pass.
        const std::size_t lost = adapter_run->clients_lost();
        if (lost * 2 > static_cast<std::size_t>(w.clients)) {
            in.unknown_reasons.push_back(
                std::to_string(lost) + " of " + std::to_string(w.clients) +
                " clients lost their adapter process (last: " + adapter_run->last_loss() + ")");
        }
        const AdapterProbe& probe = probe_adapter(*adapter_spec);
        in.adapter = {{"library", probe.library},
                      {"version", probe.version},
                      {"command", adapter_spec->argv},
                      {"clients_per_process", w.clients_per_process},
                      {"clients_lost", lost},
                      {"lost_signals", library_lost_signals.load()},
                      {"late_grants", library_late_grants.load()}};
        in.notes = adapter_run->process_fault_notes();
    }
    return in;
}

// What the run ran on beside the lock nodes: ZooKeeper, etcd, the inventory's controlled hosts,
// the network lab's hosts, the machine.
void WorkloadRun::describe_deployment(RunSummary& summary) const {
    if (!zookeeper_hosts.empty()) {
        summary.zookeeper = nlohmann::json{
            {"mode", deployment.zookeeper ? "embedded" : "external"},
            {"servers", deployment.zookeeper ? nlohmann::json(deployment.zookeeper->size())
                                             : nlohmann::json(nullptr)},
            {"hosts", zookeeper_hosts}};
    }
    if (!etcd_endpoints.empty()) {
        nlohmann::json members = nlohmann::json::array();
        for (const auto& ep : etcd_endpoints)
            members.push_back(ep.to_string());
        summary.etcd =
            nlohmann::json{{"mode", deployment.etcd ? "embedded" : "external"},
                           {"servers", deployment.etcd ? nlohmann::json(deployment.etcd->size())
                                                       : nlohmann::json(nullptr)},
                           {"endpoints", members}};
    }
    if (options.inventory) {
        nlohmann::json controlled = nlohmann::json::array();
        for (const auto& c : deployment.controlled) {
            if (c)
                controlled.push_back(c->node().name + " (" + c->node().control->describe() + ")");
        }
        summary.inventory = nlohmann::json{{"name", options.inventory->name},
                                           {"file", options.inventory->origin},
                                           {"controlled", controlled}};
    }
    if (deployment.lab) {
        nlohmann::json hosts = nlohmann::json::object();
        for (std::size_t i = 0; i < deployment.lab->size(); ++i)
            hosts[deployment.lab->name(i)] = deployment.lab->address(static_cast<int>(i));
        nlohmann::json sentinels = nlohmann::json::array();
        for (const auto& s : deployment.sentinels)
            sentinels.push_back(s.to_string());
        summary.topology = nlohmann::json{{"hosts", hosts},
                                          {"root", deployment.lab->address(NetworkLab::kRoot)},
                                          {"sentinels", sentinels}};
    }
    if (options.machine) {
        summary.yardstick = options.machine->to_json();
    } else if (!options.machine_not_measured.empty()) {
        summary.yardstick = nlohmann::json{{"not_measured", options.machine_not_measured}};
    }
}

void WorkloadRun::write_files(const RunSummary& summary, const ClientStats& total) const {
    write_atomically(dir->tmp() / "workload.json", w.to_json().dump(2) + "\n");
    write_atomically(dir->tmp() / "summary.json", summary.to_json().dump(2) + "\n");
    write_atomically(dir->tmp() / "report.txt", make_report(summary));
    write_story_files(dir->tmp(), summary, w);
    // The full distributions, in HdrHistogram's text format (milliseconds): docs/results.md.
    write_atomically(dir->tmp() / "latency-acquire.hgrm",
                     total.acquire_latency.percentile_distribution());
    write_atomically(dir->tmp() / "latency-release.hgrm",
                     total.release_latency.percentile_distribution());
    if (w.rate) {
        write_atomically(dir->tmp() / "latency-acquire-corrected.hgrm",
                         total.acquire_latency_corrected.percentile_distribution());
    }
}

}  // namespace lockbench
