#include "engine/run/workload.hpp"

#include <map>

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using nlohmann::json;

std::string workload_error_of(const json& j) {
    try {
        Workload::from_json(j, "w.json").validate();
    } catch (const WorkloadError& e) {
        return e.what();
    }
    return "";
}

// A strategy's fence protects only a resource that checks it: on the default counter the run
// notes it; with the fenced register, with no resource, or without fences there is no note.
TEST(WorkloadTest, AFenceOnAResourceThatIgnoresItIsNoted) {
    const auto note = [](const char* text) {
        return Workload::from_json(json::parse(text)).unused_fence_note();
    };
    EXPECT_EQ(note(R"({"strategy": "fenced"})"),
              "fenced hands out fencing numbers, but resource 'counter' ignores them: the fence "
              "protects nothing here (resource 'fenced', --resource fenced, refuses a stale "
              "write)");
    EXPECT_EQ(note(R"({"strategy": "zk_mutex", "resource": "counter"})").rfind("zk_mutex hands", 0),
              0u);
    EXPECT_EQ(note(R"({"strategy": "fenced", "resource": "fenced"})"), "");
    EXPECT_EQ(note(R"({"strategy": "fenced", "resource": "none"})"), "");
    EXPECT_EQ(note(R"({"strategy": "set_nx_px"})"), "");
}

// `summary`, the one line `lockbench scenarios` shows, is read and written back.
TEST(WorkloadTest, ASummaryIsReadAndRecorded) {
    const Workload w =
        Workload::from_json(json::parse(R"({"summary": "A pause past the lease."})"));
    EXPECT_EQ(w.summary, "A pause past the lease.");
    EXPECT_EQ(w.to_json()["summary"], "A pause past the lease.");
    EXPECT_EQ(workload_error_of(json::parse(R"({"summary": 3})")),
              "w.json: /summary: must be a string, not a number");
}

TEST(WorkloadTest, DefaultsRoundTripThroughJson) {
    Workload w = Workload::from_json(json::object());
    Workload again = Workload::from_json(w.to_json());
    EXPECT_EQ(w.to_json(), again.to_json());
    EXPECT_EQ(w.strategy, "set_nx_px");
}

// A workload file that is not JSON is a WorkloadError (exit 2) with nlohmann's words, whatever
// kind of JSON error it is: a number too large for a double used to escape as an internal error.
TEST(WorkloadTest, TextThatIsNotJsonIsAWorkloadError) {
    const auto parse_error = [](std::string_view text) {
        try {
            Workload::parse(text, "w.json");
        } catch (const WorkloadError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    EXPECT_EQ(parse_error(R"({"clients": 1e400})"),
              "w.json: not valid JSON: at line 1, column 13: number overflow parsing '1e400'");
    EXPECT_EQ(parse_error("{\"name\":\n \"x\", \"hold_ms\": -1e999}"),
              "w.json: not valid JSON: at line 2, column 18: number overflow parsing '-1e999'");
    EXPECT_EQ(parse_error("{\"clients\": 4,}"),
              "w.json: not valid JSON: parse error at line 1, column 15: syntax error while "
              "parsing object key - unexpected '}'; expected string literal");
    EXPECT_EQ(Workload::parse(R"({"clients": 4})", "w.json").clients, 4);
}

TEST(WorkloadTest, ParsesEveryField) {
    json j = json::parse(R"({
        "name": "t1", "description": "holder paused", "strategy": "fenced", "clients": 8,
        "threads": 2, "connections": 4, "keys": 3, "key_distribution": {"zipf": 1.1},
        "hold_ms": {"uniform": [1, 5]}, "think_ms": {"exponential": 2}, "lease_ms": 500,
        "wait_ms": 100, "shared_ratio": 0, "reentry_depth": 1,
        "release_on_failed_acquire": true, "resource": "fenced", "seed": 42, "duration_s": 2.5,
        "connect_timeout_ms": 300, "command_timeout_ms": 400,
        "topology": {"kind": "masters", "masters": 5, "persistence": "aof-always"},
        "faults": [{"fault": "pause-client", "target": "holder", "key": "k0", "at_s": 1, "duration_ms": 500}], "expect": {"fenced": "safe", "set_nx_px": "violates:mutual_exclusion"}
    })");
    Workload w = Workload::from_json(j);
    w.validate();
    EXPECT_EQ(w.name, "t1");
    EXPECT_EQ(w.clients, 8);
    EXPECT_EQ(w.connections, 4);
    EXPECT_TRUE(w.shares_connections());
    EXPECT_EQ(w.to_json()["connections"], 4);
    EXPECT_EQ(w.key_distribution.kind, KeyDistribution::Kind::Zipf);
    EXPECT_EQ(w.hold_ms.kind, Distribution::Kind::Uniform);
    EXPECT_EQ(w.think_ms.kind, Distribution::Kind::Exponential);
    EXPECT_EQ(w.resource, ResourceKind::Fenced);
    EXPECT_EQ(w.topology.kind, TopologyKind::Masters);
    EXPECT_EQ(w.topology.masters, 5);
    EXPECT_EQ(w.expect.at("set_nx_px"), "violates:mutual_exclusion");
    EXPECT_EQ(w.faults.size(), 1u);
}

TEST(WorkloadTest, EveryErrorNamesItsJsonPath) {
    const std::map<std::string, std::string> cases{
        {R"({"clients": 0})", "w.json: /clients: must be between 1 and 100000, not 0"},
        {R"({"clients": "many"})", "w.json: /clients: must be an integer, not a string"},
        {R"({"connections": -1})", "w.json: /connections: must be between 0 and 100000, not -1"},
        {R"({"colour": "red"})", "w.json: /colour: unknown field"},
        {R"({"hold_ms": {"uniform": [5, 1]}})",
         "w.json: /hold_ms/uniform: must be [low, high] with 0 <= low <= high <= 86400000"},
        {R"({"hold_ms": {"normal": 3}})", "w.json: /hold_ms/normal: unknown field"},
        // A time no clock type holds: 1e300 ms wrapped to a short hold and ran anyway.
        {R"({"hold_ms": 1e300})", "w.json: /hold_ms: must be between 0 and 86400000 ms"},
        {R"({"think_ms": {"uniform": [0, 1e20]}})",
         "w.json: /think_ms/uniform: must be [low, high] with 0 <= low <= high <= 86400000"},
        {R"({"hold_ms": {"exponential": 1e20}})",
         "w.json: /hold_ms/exponential: must be a mean between 0 and 86400000"},
        {R"({"hold_ms": {}})",
         "w.json: /hold_ms: must be a number or exactly one of {constant|uniform|exponential}"},
        {R"({"resource": "disk"})",
         "w.json: /resource: must be one of none|counter|fenced, not \"disk\""},
        {R"({"topology": {"kind": "ring"}})",
         "w.json: /topology/kind: must be one of single|replicated|masters|sentinel|cluster, not "
         "\"ring\""},
        {R"({"topology": {"masters": 3, "extra": 1}})", "w.json: /topology/extra: unknown field"},
        {R"({"expect": {"zookeeper": "safe"}})", "w.json: /expect/zookeeper: unknown strategy"},
        {R"({"faults": {}})", "w.json: /faults: must be an array, not an object"},
        {R"({"expect": {"set_nx_px": "fine"}})",
         "w.json: /expect/set_nx_px: 'fine' is not safe, deadlocks, saves:fencing, safe:<check> or "
         "violates:<check>[|<check>...], with `in >= K of N` after it for a rate (checks: "
         "mutual_exclusion, fencing, resource, liveness, linearizability, starvation)"},
        {R"({"faults": [{"fault": "meteor"}]})",
         "w.json: /faults/0/fault: must be one of "
         "pause-client|crash-client|clock-skew|stall|lose-release-reply|partition-client|"
         "delay-write|"
         "pause-server|kill-server|isolate-node|clock-jump|failover|drop-replies|"
         "delay-replies|"
         "reset-connections|partition|kill-zookeeper|pause-zookeeper|kill-etcd|pause-etcd|"
         "partition-etcd|partition-hosts|"
         "sentinel-failover|cluster-failover|kill-cluster-master, not \"meteor\""},
        {R"({"faults": [{"fault": "kill-zookeeper", "target": "master"}]})",
         "w.json: /faults/0/target: must be leader|node:N for a ZooKeeper fault, not \"master\""},
        {R"({"faults": [{"fault": "kill-server", "target": "leader"}]})",
         "w.json: /faults/0/target: must be master|node:N for a server fault, not \"leader\""},
        {R"({"topology": {"isolated_clients": 1}})",
         "topology: isolated_clients needs kind 'sentinel' or 'cluster' (hosts in network "
         "namespaces)"},
        {R"({"strategy": "redlock", "topology": {"kind": "sentinel"}})",
         "topology: 'sentinel' is one Redis master found through its sentinels; redlock locks N "
         "masters"},
        {R"({"clients": 2, "topology": {"kind": "sentinel", "isolated_clients": 2}})",
         "topology: isolated_clients 2 leaves no client beside the sentinels' majority (clients "
         "2)"},
        {R"({"faults": [{"fault": "partition-hosts"}]})",
         "w.json: /faults/0/hosts: an isolate partition needs the hosts to cut off"},
        {R"({"faults": [{"fault": "partition-hosts", "hosts": ["moon"]}]})",
         "w.json: /faults/0/hosts: names master|master-of:KEY|replicas-of:KEY|clients|root|node:N "
         "(KEY may be shard:N), not \"moon\""},
        {R"({"faults": [{"fault": "partition-hosts", "shape": "halves", "hosts": ["master"]}]})",
         "w.json: /faults/0/hosts: only an isolate partition names hosts; halves acts on the data "
         "nodes"},
        {R"({"faults": [{"fault": "sentinel-failover", "target": "master"}]})",
         "w.json: /faults/0/target: a fault of the network names its hosts (hosts, shape), not a "
         "target"},
        {R"({"topology": {"zookeeper_servers": 2}})",
         "w.json: /topology/zookeeper_servers: must be 1 (standalone) or an odd ensemble of 3, 5 "
         "or 7, not 2"},
        {R"({"faults": [{"fault": "pause-client", "target": "master"}]})",
         "w.json: /faults/0/target: must be holder|random|client:N for a client fault, not "
         "\"master\""},
        {R"({"faults": [{"fault": "kill-server", "speed": 1}]})",
         "w.json: /faults/0/speed: unknown field"},
        {R"({"faults": [{"fault": "pause-client", "point": "client.lunch"}]})",
         "w.json: /faults/0/point: must be one of any|client.after_acquire|client.before_write|"
         "release.before_delete|client.release_reply, not \"client.lunch\""},
        {R"({"strategy": "redlock", "topology": {"kind": "masters", "masters": 2}})",
         "topology: redlock is a quorum over independent masters and needs at least 3 (topology "
         "kind 'masters', or 3 --redis endpoints)"},
        {R"({"strategy": "set_nx_px_wait", "topology": {"kind": "masters", "masters": 3}})",
         "topology: set_nx_px_wait counts a grant once a replica acknowledged it and needs a "
         "master with a replica (topology kind 'replicated'), not independent masters"},
        {R"({"strategy": "redlock", "topology": {"kind": "replicated"}})",
         "topology: redlock is a quorum over independent masters and needs at least 3 (topology "
         "kind 'masters', or 3 --redis endpoints)"},
        {R"({"checks": {"model": "queue"}})",
         "w.json: /checks/model: must be one of auto|none|mutex|rwlock|register, not \"queue\""},
        {R"([1, 2])", "w.json: /: must be an object, not an array"},
        {R"({"strategy": "nope"})",
         "strategy: unknown 'nope' (one of "
         "setnx_getset|set_nx_px|set_nx_px_del|set_nx_px_wait|reentrant_hash|rwlock_seed|rwlock|"
         "fenced|redlock|zk_mutex|zk_rwlock)"},
        {R"({"shared_ratio": 0.5})", "shared_ratio: set_nx_px has no shared mode"},
        {R"({"reentry_depth": 2})", "reentry_depth: set_nx_px is not re-entrant"},
        {R"({"resource": "fenced"})",
         "resource: 'fenced' needs a strategy with fencing numbers, not set_nx_px"},
        {R"({"rate": 5000})",
         "w.json: /rate: must be {\"per_s\": N, \"arrivals\": \"fixed\"|\"poisson\"} or null, "
         "not a number"},
        {R"({"rate": {}})", "w.json: /rate/per_s: missing"},
        {R"({"rate": {"per_s": "fast"}})", "w.json: /rate/per_s: must be a number, not a string"},
        {R"({"rate": {"per_s": 0}})",
         "w.json: /rate/per_s: must be arrivals per second, more than 0 and at most 10000000, "
         "not 0"},
        {R"({"rate": {"per_s": -5}})",
         "w.json: /rate/per_s: must be arrivals per second, more than 0 and at most 10000000, "
         "not -5"},
        {R"({"rate": {"per_s": 100, "arrivals": "bursty"}})",
         "w.json: /rate/arrivals: must be one of fixed|poisson, not \"bursty\""},
        {R"({"rate": {"per_s": 100, "burst": 3}})", "w.json: /rate/burst: unknown field"},
        {R"({"rate": {"per_s": 100}, "think_ms": 2})",
         "think_ms: a run at a rate starts each cycle when its arrival is due, so think_ms must be "
         "0 (--think-ms 0)"},
    };
    for (const auto& [text, expected] : cases) {
        EXPECT_EQ(workload_error_of(json::parse(text)), expected) << text;
    }
}

TEST(WorkloadTest, RateIsClosedLoopUnlessGivenAndRoundTrips) {
    EXPECT_FALSE(Workload::from_json(json::object()).rate);
    EXPECT_EQ(Workload::from_json(json::object()).to_json()["rate"], nullptr);
    EXPECT_FALSE(Workload::from_json(json::parse(R"({"rate": null})")).rate);
    Workload w = Workload::from_json(json::parse(R"({"rate": {"per_s": 2500.5}})"));
    ASSERT_TRUE(w.rate);
    EXPECT_EQ(w.rate->per_s, 2500.5);
    EXPECT_EQ(w.rate->arrivals, Rate::Arrivals::Fixed);
    EXPECT_EQ(w.to_json()["rate"], json::parse(R"({"per_s": 2500.5, "arrivals": "fixed"})"));
    Workload p =
        Workload::from_json(json::parse(R"({"rate": {"per_s": 10, "arrivals": "poisson"}})"));
    EXPECT_EQ(p.rate->arrivals, Rate::Arrivals::Poisson);
    EXPECT_EQ(Workload::from_json(p.to_json()).to_json(), p.to_json());
}

TEST(WorkloadTest, ResolvingFillsWhatTheStrategyNeeds) {
    Workload redlock = Workload::from_json(json::parse(R"({"strategy": "redlock"})"));
    redlock.resolve();
    EXPECT_EQ(redlock.topology.kind, TopologyKind::Masters);
    EXPECT_EQ(redlock.topology.masters, kMinRedlockMasters);
    EXPECT_EQ(redlock.checks.model, "mutex");
    Workload on_five = Workload::from_json(json::parse(R"({"strategy": "redlock"})"));
    on_five.resolve(5);  // --redis names five masters
    EXPECT_EQ(on_five.topology.masters, 5);
    // A strategy that waits for replicas gets a replica on embedded servers; on --redis the
    // user's master brings its own.
    Workload wait = Workload::from_json(json::parse(R"({"strategy": "set_nx_px_wait"})"));
    wait.resolve();
    EXPECT_EQ(wait.topology.kind, TopologyKind::Replicated);
    Workload wait_external = Workload::from_json(json::parse(R"({"strategy": "set_nx_px_wait"})"));
    wait_external.resolve(1);
    EXPECT_EQ(wait_external.topology.kind, TopologyKind::Single);
    Workload rw = Workload::from_json(
        json::parse(R"({"strategy": "rwlock", "shared_ratio": 0.5, "checks": {"model": "auto"}})"));
    rw.resolve();
    EXPECT_EQ(rw.checks.model, "rwlock");
    EXPECT_EQ(rw.topology.kind, TopologyKind::Single);
}

TEST(WorkloadTest, ZipfPrefersLowKeysAndUniformDoesNot) {
    std::mt19937_64 rng(7);
    KeyPicker zipf(100, {KeyDistribution::Kind::Zipf, 1.2});
    KeyPicker uniform(100, {});
    int zipf_zero = 0, uniform_zero = 0;
    for (int i = 0; i < 20'000; ++i) {
        int z = zipf.pick(rng), u = uniform.pick(rng);
        ASSERT_GE(z, 0);
        ASSERT_LT(z, 100);
        ASSERT_GE(u, 0);
        ASSERT_LT(u, 100);
        zipf_zero += z == 0;
        uniform_zero += u == 0;
    }
    EXPECT_GT(zipf_zero, 5'000);   // ~ 1/H(100,1.2) = 0.22 of the picks
    EXPECT_LT(uniform_zero, 400);  // ~ 0.01
}

TEST(WorkloadTest, DistributionsSampleInTheirRange) {
    std::mt19937_64 rng(3);
    Distribution u{Distribution::Kind::Uniform, 2, 4};
    for (int i = 0; i < 1000; ++i) {
        auto v = u.sample(rng).count();
        ASSERT_GE(v, 2000);
        ASSERT_LE(v, 4000);
    }
    EXPECT_EQ(Distribution::constant(1.5).sample(rng).count(), 1500);
}

}  // namespace
}  // namespace lockbench
