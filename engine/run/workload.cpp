#include "engine/run/workload.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>

#include "engine/nemesis/nemesis.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/json_reader.hpp"
#include "strategies/external/adapter_process.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

Distribution parse_distribution(const json* v, Distribution fallback, const ObjectReader& parent,
                                const std::string& path) {
    if (!v)
        return fallback;
    // A day at most: a larger time overflows the clock types a client sleeps with (1e300 ms
    // wrapped to a short hold and ran a benchmark nobody asked for).
    constexpr double kMaxMs = 86'400'000;
    if (v->is_number()) {
        double d = v->get<double>();
        if (!(d >= 0 && d <= kMaxMs))
            parent.fail(path, "must be between 0 and 86400000 ms");
        return Distribution::constant(d);
    }
    ObjectReader r(*v, parent.origin(), path);
    Distribution d;
    int kinds = 0;
    if (const json* c = r.find("constant")) {
        ++kinds;
        if (!c->is_number() || !(c->get<double>() >= 0 && c->get<double>() <= kMaxMs))
            r.fail(path + "/constant", "must be a number between 0 and 86400000");
        d = Distribution::constant(c->get<double>());
    }
    if (const json* u = r.find("uniform")) {
        ++kinds;
        if (!u->is_array() || u->size() != 2 || !(*u)[0].is_number() || !(*u)[1].is_number() ||
            !((*u)[0].get<double>() >= 0) || !((*u)[1].get<double>() >= (*u)[0].get<double>()) ||
            !((*u)[1].get<double>() <= kMaxMs)) {
            r.fail(path + "/uniform", "must be [low, high] with 0 <= low <= high <= 86400000");
        }
        d = {Distribution::Kind::Uniform, (*u)[0].get<double>(), (*u)[1].get<double>()};
    }
    if (const json* e = r.find("exponential")) {
        ++kinds;
        if (!e->is_number() || !(e->get<double>() >= 0 && e->get<double>() <= kMaxMs))
            r.fail(path + "/exponential", "must be a mean between 0 and 86400000");
        d = {Distribution::Kind::Exponential, e->get<double>(), 0};
    }
    r.finish();
    if (kinds != 1)
        r.fail(path, "must be a number or exactly one of {constant|uniform|exponential}");
    return d;
}

void read_names_and_scale(ObjectReader& r, Workload& w) {
    w.name = r.string("name", w.name);
    w.description = r.string("description", w.description);
    w.summary = r.string("summary", w.summary);
    w.strategy = r.string("strategy", w.strategy);
    w.clients = static_cast<int>(r.integer("clients", w.clients, 1, 100'000));
    w.threads = static_cast<int>(r.integer("threads", w.threads, 1, 64));
    w.connections = static_cast<int>(r.integer("connections", w.connections, 0, 100'000));
    w.clients_per_process =
        static_cast<int>(r.integer("clients_per_process", w.clients_per_process, 1, 100'000));
    w.keys = static_cast<int>(r.integer("keys", w.keys, 1, 10'000'000));
}

KeyDistribution parse_key_distribution(const json& kd, const std::string& origin) {
    KeyDistribution parsed;
    if (kd.is_string() && kd.get<std::string>() == "uniform") {
        parsed.kind = KeyDistribution::Kind::Uniform;
    } else {
        ObjectReader z(kd, origin, "/key_distribution");
        parsed.kind = KeyDistribution::Kind::Zipf;
        parsed.zipf_s = z.number("zipf", 0.99, 0.01, 10);
        z.finish();
    }
    return parsed;
}

Rate parse_rate(const json& rate, const ObjectReader& r) {
    if (!rate.is_object())
        r.fail("/rate",
               "must be {\"per_s\": N, \"arrivals\": \"fixed\"|\"poisson\"} or null, not " +
                   type_name(rate));
    ObjectReader rr(rate, r.origin(), "/rate");
    Rate parsed;
    parsed.per_s = rr.required_number("per_s");
    if (!(parsed.per_s > 0) || parsed.per_s > 10'000'000) {
        std::ostringstream why;
        why << "must be arrivals per second, more than 0 and at most 10000000, not "
            << parsed.per_s;
        rr.fail("/rate/per_s", why.str());
    }
    parsed.arrivals = rr.choice<Rate::Arrivals>(
        "arrivals", parsed.arrivals,
        {{"fixed", Rate::Arrivals::Fixed}, {"poisson", Rate::Arrivals::Poisson}});
    rr.finish();
    return parsed;
}

void read_lock_and_client_settings(ObjectReader& r, Workload& w) {
    w.lease_ms = r.integer("lease_ms", w.lease_ms, 1, 86'400'000);
    w.wait_ms = r.integer("wait_ms", w.wait_ms, 0, 86'400'000);
    w.shared_ratio = r.number("shared_ratio", w.shared_ratio, 0, 1);
    w.reentry_depth = static_cast<int>(r.integer("reentry_depth", w.reentry_depth, 1, 16));
    w.release_on_failed_acquire =
        r.boolean("release_on_failed_acquire", w.release_on_failed_acquire);
    w.retry_ambiguous_release = r.boolean("retry_ambiguous_release", w.retry_ambiguous_release);
    w.resource = r.choice<ResourceKind>("resource", w.resource,
                                        {{"none", ResourceKind::None},
                                         {"counter", ResourceKind::Counter},
                                         {"fenced", ResourceKind::Fenced}});
    w.resource_server_separate = r.choice<bool>("resource_server", w.resource_server_separate,
                                                {{"shared", false}, {"separate", true}});
    w.seed = static_cast<std::uint64_t>(r.integer("seed", static_cast<std::int64_t>(w.seed), 0,
                                                  std::numeric_limits<std::int64_t>::max()));
    w.duration_s = r.number("duration_s", w.duration_s, 0.01, 86'400);
    w.connect_timeout_ms = r.integer("connect_timeout_ms", w.connect_timeout_ms, 1, 600'000);
    w.command_timeout_ms = r.integer("command_timeout_ms", w.command_timeout_ms, 1, 600'000);
}

void read_topology_sizes_and_timing(ObjectReader& tr, Topology& topology) {
    topology.masters = static_cast<int>(tr.integer("masters", topology.masters, 1, 15));
    topology.persistence = tr.choice<std::string>(
        "persistence", topology.persistence,
        {{"none", "none"}, {"aof-everysec", "aof-everysec"}, {"aof-always", "aof-always"}});
    topology.zookeeper_servers =
        static_cast<int>(tr.integer("zookeeper_servers", topology.zookeeper_servers, 1, 7));
    topology.etcd_servers =
        static_cast<int>(tr.integer("etcd_servers", topology.etcd_servers, 1, 7));
    topology.replicas = static_cast<int>(tr.integer("replicas", topology.replicas, 1, 6));
    topology.min_replicas_to_write =
        static_cast<int>(tr.integer("min_replicas_to_write", topology.min_replicas_to_write, 0, 6));
    topology.min_replicas_max_lag_s = static_cast<int>(
        tr.integer("min_replicas_max_lag_s", topology.min_replicas_max_lag_s, 1, 3600));
    topology.down_after_ms =
        static_cast<int>(tr.integer("down_after_ms", topology.down_after_ms, 100, 600'000));
    topology.failover_timeout_ms = static_cast<int>(
        tr.integer("failover_timeout_ms", topology.failover_timeout_ms, 500, 3'600'000));
    topology.isolated_clients =
        static_cast<int>(tr.integer("isolated_clients", topology.isolated_clients, 0, 100'000));
    topology.node_timeout_ms =
        static_cast<int>(tr.integer("node_timeout_ms", topology.node_timeout_ms, 100, 600'000));
    topology.namespaces = tr.boolean("namespaces", topology.namespaces);
    topology.require_full_coverage =
        tr.boolean("require_full_coverage", topology.require_full_coverage);
}

// Settings one kind of deployment ignores fail here, so a workload never runs believing it set
// something the chosen topology does not have.
void reject_settings_the_kind_does_not_have(const ObjectReader& tr, const Topology& topology) {
    if (!topology.require_full_coverage && topology.kind != TopologyKind::Cluster)
        tr.fail(tr.at("require_full_coverage"), "is a Redis Cluster setting (kind 'cluster')");
    if (topology.namespaces && topology.kind != TopologyKind::Cluster) {
        tr.fail(tr.at("namespaces"),
                "only a 'cluster' chooses: 'sentinel' always runs in namespaces, the other "
                "kinds on loopback");
    }
    if (topology.kind == TopologyKind::Cluster && topology.masters < 3) {
        tr.fail(tr.at("masters"), "a Redis Cluster needs at least 3 masters, not " +
                                      std::to_string(topology.masters));
    }
    if (topology.zookeeper_servers % 2 == 0) {
        tr.fail(tr.at("zookeeper_servers"),
                "must be 1 (standalone) or an odd ensemble of 3, 5 or 7, not " +
                    std::to_string(topology.zookeeper_servers));
    }
    if (topology.etcd_servers % 2 == 0) {
        tr.fail(tr.at("etcd_servers"), "must be 1 or an odd cluster of 3, 5 or 7, not " +
                                           std::to_string(topology.etcd_servers));
    }
}

Topology parse_topology(const json& t, const std::string& origin, Topology topology) {
    ObjectReader tr(t, origin, "/topology");
    topology.kind = tr.choice<TopologyKind>("kind", topology.kind,
                                            {{"single", TopologyKind::Single},
                                             {"replicated", TopologyKind::Replicated},
                                             {"masters", TopologyKind::Masters},
                                             {"sentinel", TopologyKind::Sentinel},
                                             {"cluster", TopologyKind::Cluster}});
    if (topology.kind == TopologyKind::Cluster) {
        // A cluster's own defaults: the smallest Redis accepts, one replica per master.
        topology.masters = 3;
        topology.replicas = 1;
    }
    read_topology_sizes_and_timing(tr, topology);
    reject_settings_the_kind_does_not_have(tr, topology);
    tr.finish();
    return topology;
}

CheckSettings parse_check_settings(const json& c, const std::string& origin, CheckSettings checks) {
    ObjectReader cr(c, origin, "/checks");
    checks.liveness_bound_ms =
        cr.integer("liveness_bound_ms", checks.liveness_bound_ms, 1, 86'400'000);
    const json* starvation = cr.find("starvation_bound_ms");
    if (starvation && !starvation->is_null()) {
        checks.starvation_bound_ms = cr.integer("starvation_bound_ms", 0, 1, 86'400'000);
    }
    checks.model = cr.choice<std::string>("model", checks.model,
                                          {{"auto", "auto"},
                                           {"none", "none"},
                                           {"mutex", "mutex"},
                                           {"rwlock", "rwlock"},
                                           {"register", "register"}});
    checks.time_limit_s = cr.number("time_limit_s", checks.time_limit_s, 0.01, 86'400);
    cr.finish();
    return checks;
}

json parse_faults(const json& f, const ObjectReader& r) {
    if (!f.is_array())
        r.fail("/faults", "must be an array, not " + type_name(f));
    Nemesis::parse(f, r.origin());  // a mistake in a fault fails here, before any server starts
    return f;
}

std::map<std::string, std::string> parse_expect(const json& e, const std::string& origin) {
    ObjectReader er(e, origin, "/expect");
    std::map<std::string, std::string> expect;
    for (const auto& [strategy, outcome] : e.items()) {
        er.find(strategy);
        if (!is_strategy_name(strategy))
            er.fail("/expect/" + strategy, "unknown strategy");
        if (!outcome.is_string())
            er.fail("/expect/" + strategy, "must be a string");
        try {
            Expectation::parse(outcome.get<std::string>());
        } catch (const std::invalid_argument& bad) {
            er.fail("/expect/" + strategy, bad.what());
        }
        expect[strategy] = outcome.get<std::string>();
    }
    return expect;
}

// The strategy a run uses comes from `strategy`, from the first of `expect`, or from
// `client_command`; read after `expect`, which the first two depend on.
void read_strategy_choice(const json& j, ObjectReader& r, Workload& w) {
    if (j.contains("demo_strategy")) {
        w.demo_strategy = r.string("demo_strategy", "");
        if (!w.demo_strategy.empty() && !w.expect.count(w.demo_strategy))
            r.fail("/demo_strategy", "must be one of the strategies `expect` names");
    }
    if (!j.contains("strategy") && !w.expect.empty()) {
        // A scenario names the strategies it is about; run the first unless told otherwise.
        w.strategy = w.expect.begin()->first;
    }
    if (j.contains("client_command")) {
        w.client_command = r.string("client_command", "");
        if (j.contains("strategy"))
            r.fail("/client_command",
                   "names the strategy itself: give strategy or client_command, not both");
        try {
            split_command_line(w.client_command);
        } catch (const std::invalid_argument& bad) {
            r.fail("/client_command", bad.what());
        }
        w.strategy = std::string(kCommandPrefix) + w.client_command;
    }
}

// ---- Workload::validate: each check throws for a workload that cannot run as written

const StrategyInfo* known_strategy(const std::string& strategy) {
    const StrategyInfo* info = find_strategy(strategy);
    if (!info) {
        std::string names;
        for (const auto& s : all_strategies())
            names += (names.empty() ? "" : "|") + std::string(s.name);
        throw WorkloadError("strategy: unknown '" + strategy + "' (one of " + names + ")");
    }
    return info;
}

// What the strategy must be able to do for the workload as written.
void check_strategy_can(const Workload& w, const StrategyInfo* info) {
    if (w.shared_ratio > 0 && !info->capabilities.shared_mode) {
        throw WorkloadError("shared_ratio: " + w.strategy + " has no shared mode");
    }
    if (w.reentry_depth > 1 && !info->capabilities.reentrant) {
        throw WorkloadError("reentry_depth: " + w.strategy + " is not re-entrant");
    }
    if (info->capabilities.multi_node &&
        (w.topology.kind == TopologyKind::Replicated ||
         (w.topology.kind == TopologyKind::Masters && w.topology.masters < kMinRedlockMasters))) {
        // Redlock on one node is a plain SET NX lock with a quorum of one: not what was meant.
        const std::string n = std::to_string(kMinRedlockMasters);
        throw WorkloadError("topology: " + w.strategy +
                            " is a quorum over independent masters and "
                            "needs at least " +
                            n + " (topology kind 'masters', or " + n + " --redis endpoints)");
    }
}

void check_separate_resource_server(const Workload& w) {
    if (w.resource_server_separate && w.resource == ResourceKind::None) {
        throw WorkloadError(
            "resource_server: 'separate' puts the resource on its own server, "
            "and resource is 'none'");
    }
    if (w.resource_server_separate && w.topology.kind == TopologyKind::Sentinel) {
        throw WorkloadError(
            "resource_server: 'separate' runs on loopback beside lockbench, "
            "where the clients of topology 'sentinel' in their own namespace "
            "cannot reach it");
    }
}

void check_shared_connections(const Workload& w, const StrategyInfo* info) {
    if (w.shares_connections()) {
        const std::string shared = "connections: " + std::to_string(w.connections) + " shared by " +
                                   std::to_string(w.clients) + " clients ";
        if (info->capabilities.zookeeper || info->capabilities.etcd || find_adapter(w.strategy))
            throw WorkloadError(shared + "are lockbench's own Redis connections, and " +
                                w.strategy + " connects by itself (" +
                                (info->capabilities.zookeeper ? "ZooKeeper"
                                 : info->capabilities.etcd    ? "etcd"
                                                              : "a lock library's process") +
                                ")");
        if (w.connections < w.threads)
            throw WorkloadError(shared + "are fewer than the " + std::to_string(w.threads) +
                                " threads: every thread needs at least one of its own");
        if (w.topology.kind == TopologyKind::Cluster)
            throw WorkloadError(shared +
                                "are not built for topology 'cluster' (its client "
                                "routes each key on connections of its own)");
        if (w.topology.isolated_clients > 0)
            throw WorkloadError(shared +
                                "are not built for isolated_clients (those run on a "
                                "thread and network of their own)");
    }
}

void check_topology_fits(const Workload& w, const StrategyInfo* info) {
    if (w.topology.kind == TopologyKind::Sentinel) {
        if (info->capabilities.multi_node || info->capabilities.zookeeper) {
            throw WorkloadError(
                "topology: 'sentinel' is one Redis master found through its "
                "sentinels; " +
                w.strategy + " locks " +
                (info->capabilities.zookeeper ? "on ZooKeeper" : "N masters"));
        }
        if (w.topology.isolated_clients >= w.clients) {
            throw WorkloadError("topology: isolated_clients " +
                                std::to_string(w.topology.isolated_clients) +
                                " leaves no client beside the sentinels' majority (clients " +
                                std::to_string(w.clients) + ")");
        }
    } else if (w.topology.isolated_clients > 0 && w.topology.kind != TopologyKind::Cluster) {
        throw WorkloadError(
            "topology: isolated_clients needs kind 'sentinel' or 'cluster' (hosts "
            "in network namespaces)");
    }
    if (w.topology.kind == TopologyKind::Cluster && w.topology.isolated_clients >= w.clients) {
        throw WorkloadError("topology: isolated_clients " +
                            std::to_string(w.topology.isolated_clients) +
                            " leaves no client beside the cluster's majority (clients " +
                            std::to_string(w.clients) + ")");
    }
    if (w.topology.kind == TopologyKind::Cluster && info->capabilities.zookeeper) {
        throw WorkloadError(
            "topology: 'cluster' is one Redis Cluster, whose client sends each "
            "key to its slot's master; " +
            w.strategy + " locks on ZooKeeper");
    }
    if (w.resource_server_separate && w.topology.kind == TopologyKind::Cluster) {
        throw WorkloadError("resource_server: 'separate' is not built for topology 'cluster' yet");
    }
    if (info->capabilities.needs_replicas && w.topology.kind == TopologyKind::Masters) {
        throw WorkloadError("topology: " + w.strategy +
                            " counts a grant once a replica acknowledged it and needs a master "
                            "with a replica (topology kind 'replicated'), not independent masters");
    }
}

void check_rate_and_fencing(const Workload& w, const StrategyInfo* info) {
    if (w.rate && !(w.think_ms.kind == Distribution::Kind::Constant && w.think_ms.a == 0)) {
        throw WorkloadError(
            "think_ms: a run at a rate starts each cycle when its arrival is due, so think_ms "
            "must be 0 (--think-ms 0)");
    }
    if (w.resource == ResourceKind::Fenced && !info->capabilities.fencing) {
        throw WorkloadError("resource: 'fenced' needs a strategy with fencing numbers, not " +
                            w.strategy);
    }
}

}  // namespace

std::chrono::microseconds Distribution::sample(std::mt19937_64& rng) const {
    double ms = a;
    if (kind == Kind::Uniform)
        ms = std::uniform_real_distribution<double>(a, b)(rng);
    if (kind == Kind::Exponential)
        ms = a > 0 ? std::exponential_distribution<double>(1.0 / a)(rng) : 0;
    return std::chrono::microseconds(static_cast<std::int64_t>(ms * 1000.0));
}

json Distribution::to_json() const {
    switch (kind) {
        case Kind::Constant:
            return json{{"constant", a}};
        case Kind::Uniform:
            return json{{"uniform", {a, b}}};
        case Kind::Exponential:
            return json{{"exponential", a}};
    }
    return nullptr;
}

std::string_view to_string(Rate::Arrivals a) {
    return a == Rate::Arrivals::Fixed ? "fixed" : "poisson";
}

json Rate::to_json() const {
    return json{{"per_s", per_s}, {"arrivals", to_string(arrivals)}};
}

json KeyDistribution::to_json() const {
    if (kind == Kind::Uniform)
        return "uniform";
    return json{{"zipf", zipf_s}};
}

std::string_view to_string(ResourceKind k) {
    switch (k) {
        case ResourceKind::None:
            return "none";
        case ResourceKind::Counter:
            return "counter";
        case ResourceKind::Fenced:
            return "fenced";
    }
    return "?";
}

std::string_view to_string(TopologyKind k) {
    switch (k) {
        case TopologyKind::Single:
            return "single";
        case TopologyKind::Replicated:
            return "replicated";
        case TopologyKind::Masters:
            return "masters";
        case TopologyKind::Sentinel:
            return "sentinel";
        case TopologyKind::Cluster:
            return "cluster";
    }
    return "?";
}

Workload Workload::from_json(const json& j, const std::string& origin) {
    ObjectReader r(j, origin, "");
    Workload w;
    read_names_and_scale(r, w);
    if (const json* kd = r.find("key_distribution"))
        w.key_distribution = parse_key_distribution(*kd, origin);
    w.hold_ms = parse_distribution(r.find("hold_ms"), w.hold_ms, r, "/hold_ms");
    w.think_ms = parse_distribution(r.find("think_ms"), w.think_ms, r, "/think_ms");
    if (const json* rate = r.find("rate"); rate && !rate->is_null())
        w.rate = parse_rate(*rate, r);
    read_lock_and_client_settings(r, w);
    if (const json* t = r.find("topology"))
        w.topology = parse_topology(*t, origin, w.topology);
    if (const json* c = r.find("checks"))
        w.checks = parse_check_settings(*c, origin, w.checks);
    if (const json* f = r.find("faults"))
        w.faults = parse_faults(*f, r);
    if (const json* e = r.find("expect"))
        w.expect = parse_expect(*e, origin);
    read_strategy_choice(j, r, w);
    r.finish();
    return w;
}

Workload Workload::load(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw WorkloadError(path.string() + ": cannot open");
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        throw WorkloadError(path.string() + ": cannot read");
    return parse(text, path.string());
}

Workload Workload::parse(std::string_view text, const std::string& origin) {
    return from_json(json_input::parse_text<WorkloadError>(text, origin), origin);
}

json Workload::to_json() const {
    json expect_json = json::object();
    for (const auto& [k, v] : expect)
        expect_json[k] = v;
    return json{
        {"name", name},
        {"description", description},
        {"summary", summary},
        {"strategy", strategy},
        {"clients", clients},
        {"threads", threads},
        {"connections", connections},
        {"clients_per_process", clients_per_process},
        {"keys", keys},
        {"key_distribution", key_distribution.to_json()},
        {"hold_ms", hold_ms.to_json()},
        {"think_ms", think_ms.to_json()},
        {"rate", rate ? rate->to_json() : json(nullptr)},
        {"lease_ms", lease_ms},
        {"wait_ms", wait_ms},
        {"shared_ratio", shared_ratio},
        {"reentry_depth", reentry_depth},
        {"release_on_failed_acquire", release_on_failed_acquire},
        {"retry_ambiguous_release", retry_ambiguous_release},
        {"resource", to_string(resource)},
        {"resource_server", resource_server_separate ? "separate" : "shared"},
        {"seed", seed},
        {"duration_s", duration_s},
        {"connect_timeout_ms", connect_timeout_ms},
        {"command_timeout_ms", command_timeout_ms},
        {"topology",
         {{"kind", to_string(topology.kind)},
          {"masters", topology.masters},
          {"persistence", topology.persistence},
          {"zookeeper_servers", topology.zookeeper_servers},
          {"etcd_servers", topology.etcd_servers},
          {"replicas", topology.replicas},
          {"min_replicas_to_write", topology.min_replicas_to_write},
          {"min_replicas_max_lag_s", topology.min_replicas_max_lag_s},
          {"down_after_ms", topology.down_after_ms},
          {"failover_timeout_ms", topology.failover_timeout_ms},
          {"isolated_clients", topology.isolated_clients},
          {"node_timeout_ms", topology.node_timeout_ms},
          {"namespaces", topology.namespaces},
          {"require_full_coverage", topology.require_full_coverage}}},
        {"checks",
         {{"liveness_bound_ms", checks.liveness_bound_ms},
          {"starvation_bound_ms",
           checks.starvation_bound_ms ? json(*checks.starvation_bound_ms) : json(nullptr)},
          {"model", checks.model},
          {"time_limit_s", checks.time_limit_s}}},
        {"faults", faults},
        {"expect", expect_json},
        {"demo_strategy", demo_strategy},
    };
}

void Workload::resolve(std::size_t external_nodes) {
    const StrategyInfo* info = find_strategy(strategy);
    if (info && info->capabilities.multi_node && topology.kind == TopologyKind::Single) {
        topology.kind = TopologyKind::Masters;
        topology.masters =
            external_nodes > 0 ? static_cast<int>(external_nodes) : kMinRedlockMasters;
    }
    // A strategy that waits for replicas gets one on the embedded servers; the user's --redis
    // master must have its own (checked when the run starts).
    if (info && info->capabilities.needs_replicas && topology.kind == TopologyKind::Single &&
        external_nodes == 0)
        topology.kind = TopologyKind::Replicated;
    if (checks.model == "auto")
        checks.model = shared_ratio > 0 ? "rwlock" : "mutex";
}

void Workload::validate() const {
    const StrategyInfo* info = known_strategy(strategy);
    check_strategy_can(*this, info);
    check_separate_resource_server(*this);
    validate_packing();
    check_shared_connections(*this, info);
    check_topology_fits(*this, info);
    check_rate_and_fencing(*this, info);
}

// Packed clients share one adapter process, which answers their requests as each completes: a
// process that answers one at a time would serialise them, and lockbench's C++ strategies have
// no process of their own to pack.
void Workload::validate_packing() const {
    if (clients_per_process == 1)
        return;
    const std::string flag = "--clients-per-process " + std::to_string(clients_per_process) + ": ";
    const auto adapter = find_adapter(strategy);
    if (!adapter) {
        throw WorkloadError(flag + strategy +
                            " is one of lockbench's own strategies, whose clients run inside "
                            "lockbench: there is no adapter process to pack them into");
    }
    if (!probe_adapter(*adapter).concurrent) {
        throw WorkloadError(flag + strategy +
                            "'s adapter answers one request at a time (it does not declare "
                            "concurrent): its clients would wait for each other's locks");
    }
    if (topology.isolated_clients > 0) {
        throw WorkloadError(flag +
                            "isolated_clients run in a network namespace of their own, which a "
                            "process shared with other clients cannot be in");
    }
}

std::string Workload::unused_fence_note() const {
    const StrategyInfo* info = find_strategy(strategy);
    if (!info || !info->capabilities.fencing || resource != ResourceKind::Counter)
        return "";
    return strategy +
           " hands out fencing numbers, but resource 'counter' ignores them: the fence protects "
           "nothing here (resource 'fenced', --resource fenced, refuses a stale write)";
}

KeyPicker::KeyPicker(int keys, KeyDistribution dist) : keys_(keys), dist_(dist) {
    if (dist_.kind == KeyDistribution::Kind::Zipf) {
        cdf_.resize(static_cast<std::size_t>(keys_));
        double sum = 0;
        for (int i = 0; i < keys_; ++i) {
            sum += 1.0 / std::pow(i + 1, dist_.zipf_s);
            cdf_[static_cast<std::size_t>(i)] = sum;
        }
        for (auto& c : cdf_)
            c /= sum;
    }
}

int KeyPicker::pick(std::mt19937_64& rng) const {
    if (dist_.kind == KeyDistribution::Kind::Uniform) {
        return static_cast<int>(std::uniform_int_distribution<int>(0, keys_ - 1)(rng));
    }
    double u = std::uniform_real_distribution<double>(0, 1)(rng);
    auto it = std::lower_bound(cdf_.begin(), cdf_.end(), u);
    return std::min(keys_ - 1, static_cast<int>(it - cdf_.begin()));
}

}  // namespace lockbench
