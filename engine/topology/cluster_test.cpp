// Redis Cluster on real redis-servers: the client's routing (slots, MOVED, ASK, a failover) and
// the embedded cluster a run starts.

#include "engine/topology/cluster.hpp"

#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/nemesis/nemesis.hpp"
#include "engine/run/run.hpp"
#include "engine/run/workload.hpp"
#include "engine/testing/redis_fixture.hpp"
#include "engine/topology/deployment.hpp"
#include "strategies/client/cluster_routing.hpp"
#include "strategies/client/session.hpp"
#include "strategies/registry.hpp"

namespace lockbench {
namespace {

using namespace std::chrono_literals;

TEST(ClusterSlotTest, KeySlotIsCrc16OfTheHashTagAsRedisComputesIt) {
    // Values from the Redis Cluster specification and CLUSTER KEYSLOT.
    EXPECT_EQ(key_slot("123456789"), 0x31C3);
    EXPECT_EQ(key_slot("foo"), 12182);
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("{user1000}.followers"));
    EXPECT_EQ(key_slot("{user1000}.following"), key_slot("user1000"));
    EXPECT_EQ(key_slot("foo{}{bar}"), key_slot("foo{}{bar}"));  // empty tag: the whole key
    EXPECT_NE(key_slot("foo{}{bar}"), key_slot("bar"));
    EXPECT_EQ(key_slot("foo{{bar}}zap"), key_slot("{bar"));
    EXPECT_EQ(key_slot("lockbench:ab12:{k0}:fence"), key_slot("k0"));
}

TEST(ClusterSlotTest, CommandKeyIsTheFirstKeyAndNoneForKeylessCommands) {
    EXPECT_EQ(command_key(strings("SET", "a", "1")), "a");
    EXPECT_EQ(command_key(strings("EVALSHA", "abc", "2", "k1", "k2", "v")), "k1");
    EXPECT_EQ(command_key(strings("eval", "return 1", "0")), std::nullopt);
    EXPECT_EQ(command_key(strings("WAIT", "1", "100")), std::nullopt);
    EXPECT_EQ(command_key(strings("PING")), std::nullopt);
    EXPECT_EQ(command_key(strings("publish", "ch", "x")), std::nullopt);
}

TEST(ClusterSlotTest, RedirectsAreParsedAndAnythingElseIsNot) {
    auto moved = parse_redirect("MOVED 3999 127.0.0.1:6381");
    ASSERT_TRUE(moved);
    EXPECT_FALSE(moved->ask);
    EXPECT_EQ(moved->slot, 3999);
    EXPECT_EQ(moved->node.to_string(), "127.0.0.1:6381");
    auto ask = parse_redirect("ASK 12 10.0.0.2:7000");
    ASSERT_TRUE(ask);
    EXPECT_TRUE(ask->ask);
    EXPECT_EQ(ask->node.port, 7000);
    EXPECT_FALSE(parse_redirect("MOVED 99999 127.0.0.1:1"));
    EXPECT_FALSE(parse_redirect("MOVED x 127.0.0.1:1"));
    EXPECT_FALSE(parse_redirect("ERR MOVED 1 127.0.0.1:1"));
    EXPECT_FALSE(parse_redirect("CLUSTERDOWN The cluster is down"));
}

// A real cluster of three masters with a replica each, as a run starts it.
class ClusterTest : public testing::EventLoopTest {
  protected:
    static void SetUpTestSuite() {
        Workload w = Workload::from_json(
            nlohmann::json{{"topology", {{"kind", "cluster"}, {"node_timeout_ms", 500}}}});
        deployment_ = std::make_unique<Deployment>(Deployment::start(w, {}));
    }
    static void TearDownTestSuite() { deployment_.reset(); }

    static Deployment& cluster() { return *deployment_; }
    static std::vector<ClusterNode> view() {
        auto v = read_cluster_nodes(cluster().endpoints, 1s);
        if (!v)
            throw std::runtime_error("no node answered CLUSTER NODES");
        return *v;
    }
    static RedisServer& server_at(const Endpoint& ep) {
        for (auto& s : cluster().servers) {
            if (s->port() == ep.port)
                return *s;
        }
        throw std::runtime_error("no server at " + ep.to_string());
    }
    // The ports of the masters whose slots hold `keys`, as the cluster itself tells.
    static std::set<int> masters_owning(const std::vector<std::string>& keys) {
        const auto nodes = view();
        std::set<int> ports;
        for (const auto& k : keys) {
            const ClusterNode* owner = master_of_slot(nodes, key_slot(k));
            if (!owner)
                throw std::runtime_error("no master owns the slot of " + k);
            ports.insert(owner->endpoint.port);
        }
        return ports;
    }
    std::unique_ptr<Session> cluster_session(const std::string& name) {
        auto s = std::make_unique<Session>(loop_, cluster().endpoints, ConnectionOptions{}, name);
        s->use_cluster();
        return s;
    }

  private:
    static inline std::unique_ptr<Deployment> deployment_;
};

TEST_F(ClusterTest, StartsThreeMastersWithAReplicaEachCoveringEverySlot) {
    const auto nodes = view();
    ASSERT_EQ(nodes.size(), 6u);
    int masters = 0, covered = 0;
    for (const auto& n : nodes) {
        if (!n.master)
            continue;
        ++masters;
        EXPECT_EQ(replicas_of(nodes, n).size(), 1u) << n.endpoint.to_string();
        for (auto [lo, hi] : n.slots)
            covered += hi - lo + 1;
    }
    EXPECT_EQ(masters, 3);
    EXPECT_EQ(covered, kClusterSlots);
}

TEST_F(ClusterTest, EveryKeyLandsOnTheMasterOfItsSlotThroughOneConnection) {
    auto session = cluster_session("router");
    std::vector<std::string> keys;
    for (int i = 0; i < 60; ++i)
        keys.push_back("spread:" + std::to_string(i));
    run([](Session& s, const std::vector<std::string>& ks) -> Task<void> {
        for (const auto& k : ks)
            co_await s.redis().command("SET", k, "v-" + k);
    }(*session, keys));
    const auto nodes = view();
    for (const auto& k : keys) {
        const ClusterNode* owner = master_of_slot(nodes, key_slot(k));
        ASSERT_NE(owner, nullptr);
        // Asked directly (no routing), the owner has it: it was written there, not elsewhere.
        Reply r = server_at(owner->endpoint).command({"GET", k});
        EXPECT_EQ(r.str, "v-" + k);
        ASSERT_TRUE(session->cluster()->owner_of(k));
        EXPECT_EQ(session->cluster()->owner_of(k)->port, owner->endpoint.port);
    }
    EXPECT_EQ(masters_owning(keys).size(), 3u);  // the keys really spread over the cluster
    // A script's keys in one slot (hash tags) run where their slot lives.
    Reply sum = run([](Session& s) -> Task<Reply> {
        co_await s.redis().command("SET", "{tag}:a", "2");
        co_await s.redis().command("SET", "{tag}:b", "3");
        co_return co_await s.redis().command(
            "EVAL", "return redis.call('get', KEYS[1]) + redis.call('get', KEYS[2])", "2",
            "{tag}:a", "{tag}:b");
    }(*session));
    EXPECT_EQ(sum.integer, 5);
}

// A managed cluster's ACL user: the router learns the other masters from the seed's MOVED
// replies, and each learnt node must be AUTHed as the seed's user - the default user may not
// touch these keys here, so a learnt node reached as it would answer NOPERM.
TEST_F(ClusterTest, LearntNodesAuthenticateAsTheSeedsAclUser) {
    for (auto& server : cluster().servers) {
        server->command({"ACL", "SETUSER", "carol", "on", ">carol-pw", "~*", "&*", "+@all"});
        server->command({"ACL", "SETUSER", "default", "resetkeys", "~other:*"});
    }
    struct RestoreDefault {
        ~RestoreDefault() {
            for (auto& server : cluster().servers)
                server->command({"ACL", "SETUSER", "default", "allkeys"});
        }
    } restore;
    Endpoint seed = cluster().endpoints.front();
    seed.user = "carol";
    seed.password = "carol-pw";
    Session session(loop_, {seed}, ConnectionOptions{}, "acl-router");
    session.use_cluster();
    std::vector<std::string> keys;
    for (int i = 0; i < 30; ++i)
        keys.push_back("acl:" + std::to_string(i));
    run([](Session& s, const std::vector<std::string>& ks) -> Task<void> {
        for (const auto& k : ks)
            co_await s.redis().command("SET", k, "by-carol");
    }(session, keys));
    EXPECT_EQ(masters_owning(keys).size(), 3u);  // the other two masters were learnt, not given
}

TEST_F(ClusterTest, AnAskRedirectDuringAMigrationIsFollowedWithoutMovingTheMap) {
    auto session = cluster_session("asker");
    const std::string key = "migrating-key";
    run([](Session& s, std::string k) -> Task<void> {
        co_await s.redis().command("SET", k, "here");
    }(*session, key));
    const int slot = key_slot(key);
    auto nodes = view();
    const ClusterNode* source = master_of_slot(nodes, slot);
    ASSERT_NE(source, nullptr);
    const ClusterNode* target = nullptr;
    for (const auto& n : nodes) {
        if (n.master && n.id != source->id)
            target = &n;
    }
    ASSERT_NE(target, nullptr);
    RedisServer& from = server_at(source->endpoint);
    RedisServer& to = server_at(target->endpoint);
    // The key moves to the target mid-migration: the source answers ASK for it.
    to.command({"CLUSTER", "SETSLOT", std::to_string(slot), "IMPORTING", source->id});
    from.command({"CLUSTER", "SETSLOT", std::to_string(slot), "MIGRATING", target->id});
    from.command({"MIGRATE", target->endpoint.host, std::to_string(target->endpoint.port), key, "0",
                  "5000"});
    Reply got = run([](Session& s, std::string k) -> Task<Reply> {
        co_return co_await s.redis().command("GET", k);
    }(*session, key));
    EXPECT_EQ(got.str, "here");
    // ASK is for one command: the map still names the source until the migration ends.
    EXPECT_EQ(session->cluster()->owner_of(key)->port, source->endpoint.port);
    for (auto* s : {&to, &from})
        s->command({"CLUSTER", "SETSLOT", std::to_string(slot), "NODE", target->id});
    // Every node hears of it through the cluster bus; the client through MOVED.
    Reply after = run([](Session& s, std::string k) -> Task<Reply> {
        co_return co_await s.redis().command("GET", k);
    }(*session, key));
    EXPECT_EQ(after.str, "here");
    EXPECT_EQ(session->cluster()->owner_of(key)->port, target->endpoint.port);
}

TEST_F(ClusterTest, AfterItsMasterIsKilledAKeyIsFoundOnThePromotedReplica) {
    auto session = cluster_session("survivor");
    const std::string key = "{failover}:lock";
    run([](Session& s, std::string k) -> Task<void> {
        co_await s.redis().command("SET", k, "held", "PX", "60000");
        co_await s.redis().command("WAIT", "1", "1000");  // follows the SET to its master
    }(*session, key));
    const auto nodes = view();
    const ClusterNode* master = master_of_slot(nodes, key_slot(key));
    ASSERT_NE(master, nullptr);
    const auto replicas = replicas_of(nodes, *master);
    ASSERT_EQ(replicas.size(), 1u);
    const Endpoint replica = replicas.front()->endpoint;
    server_at(master->endpoint).kill();

    // Until the replica is promoted the slot answers nothing; then the client finds it there.
    Reply got;
    const auto deadline = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        try {
            got = run([](Session& s, std::string k) -> Task<Reply> {
                co_return co_await s.redis().command("GET", k);
            }(*session, key));
            break;
        } catch (const RedisError&) {
            ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "never promoted";
            std::this_thread::sleep_for(50ms);
        }
    }
    EXPECT_EQ(got.str, "held");  // it was replicated before the kill (WAIT said so)
    EXPECT_EQ(session->cluster()->owner_of(key)->port, replica.port);

    // The next tests of the binary share this cluster (ctest runs each alone, a developer may
    // not): the killed node comes back, as the promoted replica's replica.
    server_at(master->endpoint).restart();
    const auto healed_by = std::chrono::steady_clock::now() + 20s;
    for (;;) {
        try {
            check_cluster(cluster().endpoints);
            break;
        } catch (const std::exception& e) {
            ASSERT_LT(std::chrono::steady_clock::now(), healed_by) << e.what();
            std::this_thread::sleep_for(100ms);
        }
    }
}

TEST_F(ClusterTest, TheFailoverScenarioRunsOnAClusterItDidNotStart) {
    // As a user runs it against their own cluster: lockbench only gets the nodes' addresses,
    // its keys carry a per-run prefix, and the failover is asked of the cluster itself.
    Workload w = Workload::load(LOCKBENCH_WORKLOADS_DIR "/cluster-failover.json");
    w.duration_s = 3;
    w.lease_ms = 5000;  // room for a sanitizer build's slower clients: this judges the failover
    w.faults[0]["at_s"] = 1;
    testing::TempDir out;
    const RunOutcome r =
        run_workload({.workload = w, .redis = cluster().endpoints, .out_dir = out.path()});
    ASSERT_EQ(r.summary.to_json()["nemesis"].size(), 1u);
    EXPECT_EQ(r.summary.to_json()["nemesis"][0]["took_effect"], 1)
        << r.summary.to_json()["nemesis"].dump();
    EXPECT_EQ(r.summary.to_json()["as_expected"], true) << r.summary.to_json()["verdict"].dump();
    EXPECT_GT(r.summary.to_json()["verdict"]["checks"]["mutual_exclusion"]["holds"].get<int>(), 10);
    // And takes its keys away from every master the cluster has after the failover.
    const nlohmann::json cleanup = r.summary.to_json()["cleanup"];
    EXPECT_EQ(cleanup["left"], nlohmann::json::array()) << cleanup.dump();
    const std::string prefix = r.summary.to_json()["redis"]["key_prefix"];
    long long deleted = 0;
    for (const auto& master : cleanup["redis"]) {
        deleted += master["deleted"].get<long long>();
        EXPECT_TRUE(command_once(Endpoint::parse(master["server"].get<std::string>()),
                                 {"KEYS", "*" + prefix + "*"}, 2s)
                        .elements.empty())
            << master.dump();
    }
    EXPECT_GT(deleted, 0) << cleanup.dump();
}

// A dead node the user listed is named as unreachable, wherever it stands in the list, and the
// run refuses rather than give a verdict on fewer nodes than the user thinks it tested.
TEST_F(ClusterTest, AListedNodeThatDoesNotAnswerIsNamedAndTheRunRefused) {
    const Endpoint dead{"127.0.0.1", pick_free_port()};  // nothing listens there
    for (const bool dead_first : {true, false}) {
        std::vector<Endpoint> listed = cluster().endpoints;
        listed.insert(dead_first ? listed.begin() : listed.end(), dead);
        try {
            check_cluster(listed);
            FAIL() << "a dead node passed the check";
        } catch (const EnvironmentError& e) {
            const std::string what = e.what();
            EXPECT_NE(what.find("cannot reach Redis Cluster node " + dead.to_string()),
                      std::string::npos)
                << what;
            EXPECT_EQ(what.find("is not a node"), std::string::npos) << what;
        }
        Workload w = Workload::from_json(
            nlohmann::json{{"duration_s", 0.5}, {"topology", {{"kind", "cluster"}}}});
        testing::TempDir out;
        EXPECT_THROW(run_workload({.workload = w, .redis = listed, .out_dir = out.path()}),
                     EnvironmentError);
        EXPECT_TRUE(std::filesystem::is_empty(out.path()));
    }
    EXPECT_TRUE(is_cluster_node(cluster().endpoints.front()));
    try {
        is_cluster_node(dead);
        FAIL() << "a dead endpoint was taken for a plain Redis";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("cannot reach Redis at " + dead.to_string()),
                  std::string::npos)
            << e.what();
    }
}

TEST_F(ClusterTest, RedlockOnAClusterVotesOnEveryShardsMaster) {
    // One lock key per shard, each in that shard's slots: Redlock's votes on the three masters.
    const auto view = read_cluster_nodes(cluster().endpoints, 2s);
    ASSERT_TRUE(view);
    const std::vector<std::string> tags = shard_hash_tags(*view);
    ASSERT_EQ(tags.size(), 3u);
    const std::vector<const ClusterNode*> shards = shards_of(*view);
    auto session = std::make_unique<Session>(loop_, cluster().endpoints, ConnectionOptions{}, "r");
    session->use_cluster(tags);
    ASSERT_EQ(session->node_count(), 3u);
    auto redlock = make_strategy("redlock");
    const auto grant = run(redlock->acquire(*session, {.key = "{k0}", .lease = 5000ms}));
    ASSERT_TRUE(std::holds_alternative<Grant>(grant));
    for (std::size_t i = 0; i < shards.size(); ++i) {
        const std::string key = session->node_key(i, "{k0}");
        EXPECT_TRUE(shards[i]->owns(key_slot(key))) << key;
        EXPECT_EQ(server_at(shards[i]->endpoint).command({"EXISTS", key}).integer, 1) << key;
    }
    EXPECT_EQ(run(redlock->release(*session, std::get<Grant>(grant))), ReleaseOutcome::Released);
    for (std::size_t i = 0; i < shards.size(); ++i) {
        EXPECT_EQ(server_at(shards[i]->endpoint)
                      .command({"EXISTS", session->node_key(i, "{k0}")})
                      .integer,
                  0);
    }
    run(redlock->shutdown(*session));

    // And through a run on servers lockbench did not start, as a user points it at theirs.
    Workload w = Workload::from_json(nlohmann::json{{"strategy", "redlock"},
                                                    {"clients", 4},
                                                    {"duration_s", 1},
                                                    {"hold_ms", 2},
                                                    {"topology", {{"kind", "cluster"}}}});
    testing::TempDir out;
    const RunOutcome r =
        run_workload({.workload = w, .redis = cluster().endpoints, .out_dir = out.path()});
    EXPECT_EQ(r.summary.to_json()["verdict"]["valid"], true)
        << r.summary.to_json()["verdict"].dump();
    EXPECT_GT(r.summary.to_json()["verdict"]["checks"]["mutual_exclusion"]["holds"].get<int>(), 10);
}

TEST(ClusterRunTest, AServerThatIsNoClusterNodeIsAnEnvironmentError) {
    RedisServer plain;
    Workload w = Workload::from_json(
        nlohmann::json{{"duration_s", 0.5}, {"topology", {{"kind", "cluster"}}}});
    testing::TempDir out;
    try {
        run_workload({.workload = w, .redis = {plain.endpoint()}, .out_dir = out.path()});
        FAIL() << "ran against a server that is not a cluster node";
    } catch (const EnvironmentError& e) {
        EXPECT_NE(std::string(e.what()).find("is not a node of a Redis Cluster"), std::string::npos)
            << e.what();
    }
    EXPECT_TRUE(std::filesystem::is_empty(out.path()));  // no half-written result
}

// Faults that cannot act on a cluster as meant are refused before anything starts.
TEST(ClusterWorkloadTest, FaultsThatDoNotFitTheTopologyAreRefusedUpFront) {
    auto refused = [](nlohmann::json workload) {
        Workload w = Workload::from_json(workload);
        w.resolve();
        w.validate();
        try {
            Nemesis::validate(Nemesis::parse(w.faults, w.name), w);
        } catch (const WorkloadError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    const nlohmann::json cluster = {{"kind", "cluster"}};
    EXPECT_NE(refused({{"faults", {{{"fault", "cluster-failover"}}}}})
                  .find("needs topology kind "
                        "'cluster'"),
              std::string::npos);
    EXPECT_NE(refused({{"topology", cluster}, {"faults", {{{"fault", "pause-server"}}}}})
                  .find("kill-cluster-master or cluster-failover"),
              std::string::npos);
    EXPECT_NE(refused({{"topology", cluster},
                       {"faults", {{{"fault", "partition-hosts"}, {"hosts", {"master-of:k0"}}}}}})
                  .find("namespaces or isolated_clients"),
              std::string::npos);
    EXPECT_NE(refused({{"topology", {{"kind", "cluster"}, {"isolated_clients", 1}}},
                       {"faults", {{{"fault", "sentinel-failover"}}}}})
                  .find("asks the sentinels"),
              std::string::npos);
    EXPECT_NE(
        refused({{"topology", cluster},
                 {"faults", {{{"fault", "kill-cluster-master"}, {"target", "master-of:k9"}}}}})
            .find("no client ever locks 'k9'"),
        std::string::npos);
    EXPECT_EQ(refused({{"topology", cluster},
                       {"faults",
                        {{{"fault", "kill-cluster-master"}, {"target", "master-of:k0"}},
                         {{"fault", "pause-client"}, {"at_s", 1}}}}}),
              "");
    EXPECT_THROW(
        Nemesis::parse(
            nlohmann::json::array({{{"fault", "cluster-failover"}, {"target", "node:1"}}}), "w"),
        WorkloadError);
}

TEST(ClusterWorkloadTest, ClusterTopologyDefaultsAndRefusals) {
    Workload w = Workload::from_json(nlohmann::json{{"topology", {{"kind", "cluster"}}}});
    EXPECT_EQ(w.topology.masters, 3);
    EXPECT_EQ(w.topology.replicas, 1);
    EXPECT_THROW(
        Workload::from_json(nlohmann::json{{"topology", {{"kind", "cluster"}, {"masters", 2}}}}),
        WorkloadError);
    // Redlock over the cluster's masters is the point of redlock-cluster-lagging-failover; a
    // ZooKeeper lock has no business on a Redis Cluster.
    Workload redlock = Workload::from_json(
        nlohmann::json{{"strategy", "redlock"}, {"topology", {{"kind", "cluster"}}}});
    redlock.resolve();
    EXPECT_NO_THROW(redlock.validate());
    EXPECT_EQ(redlock.topology.kind, TopologyKind::Cluster);
    Workload zookeeper = Workload::from_json(
        nlohmann::json{{"strategy", "zk_mutex"}, {"topology", {{"kind", "cluster"}}}});
    zookeeper.resolve();
    EXPECT_THROW(zookeeper.validate(), WorkloadError);
    // Namespaces are a cluster's choice only; with them, hosts can be partitioned.
    EXPECT_TRUE(Workload::from_json(
                    nlohmann::json{{"topology", {{"kind", "cluster"}, {"namespaces", true}}}})
                    .topology.in_namespaces());
    EXPECT_FALSE(Workload::from_json(nlohmann::json{{"topology", {{"kind", "cluster"}}}})
                     .topology.in_namespaces());
    EXPECT_THROW(Workload::from_json(
                     nlohmann::json{{"topology", {{"kind", "masters"}, {"namespaces", true}}}}),
                 WorkloadError);
    EXPECT_THROW(Workload::from_json(nlohmann::json{
                     {"topology", {{"kind", "masters"}, {"require_full_coverage", false}}}}),
                 WorkloadError);
}

TEST(ClusterWorkloadTest, ShardSelectorsAndCutsFromSomeHosts) {
    const auto refused = [](const nlohmann::json& faults) {
        try {
            Workload w = Workload::from_json(nlohmann::json{
                {"topology", {{"kind", "cluster"}, {"namespaces", true}}}, {"faults", faults}});
            w.resolve();
            Nemesis::validate(Nemesis::parse(w.faults, w.name), w);
        } catch (const WorkloadError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(refused({{{"fault", "partition-hosts"},
                        {"hosts", {"master-of:shard:0"}},
                        {"from", {"replicas-of:shard:0"}}},
                       {{"fault", "kill-cluster-master"}, {"target", "master-of:shard:2"}}}),
              "");
    EXPECT_NE(refused({{{"fault", "kill-cluster-master"}, {"target", "master-of:shard:3"}}})
                  .find("shard:0 to shard:2"),
              std::string::npos);
    EXPECT_NE(refused({{{"fault", "partition-hosts"},
                        {"shape", "halves"},
                        {"from", {"replicas-of:shard:0"}}}})
                  .find("only an isolate partition names whom"),
              std::string::npos);
    for (const char* bad : {"replicas-of:", "master-of:shard:x", "node:one"}) {
        EXPECT_NE(refused({{{"fault", "partition-hosts"}, {"hosts", {bad}}}})
                      .find("names master|master-of:KEY|replicas-of:KEY"),
                  std::string::npos)
            << bad;
    }
}

}  // namespace
}  // namespace lockbench
