#include "engine/topology/server_cleanup.hpp"

#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zookeeper/zookeeper.h>

#include "engine/topology/cluster.hpp"
#include "strategies/client/event_loop.hpp"
#include "strategies/client/redis_connection.hpp"
#include "strategies/client/zk_client.hpp"
#include "strategies/zk_lock_internals.hpp"

namespace lockbench {

using namespace std::chrono_literals;

namespace {

constexpr ConnectionOptions kCleanupConnection{.connect_timeout = 2000ms,
                                               .command_timeout = 5000ms};

// Deletes every key of `conn`'s server that matches `pattern`; returns how many went. In a
// cluster a multi-key UNLINK spanning slots is refused (CROSSSLOT), so there keys go one by one.
Task<long long> delete_matching(RedisConnection& conn, std::string pattern, bool one_per_command) {
    long long deleted = 0;
    std::string unlink = "UNLINK";
    std::string cursor = "0";
    do {
        Reply page = co_await conn.command("SCAN", cursor, "MATCH", pattern, "COUNT", "1000");
        if (!page.is_array() || page.elements.size() != 2 || !page.elements[1].is_array())
            throw ReplyError("SCAN answered something other than [cursor, keys]");
        cursor = page.elements[0].as_string();
        std::vector<std::string> keys;
        for (const Reply& key : page.elements[1].elements)
            keys.push_back(key.as_string());
        for (std::size_t first = 0; first < keys.size();) {
            const std::size_t count = one_per_command ? 1 : keys.size() - first;
            std::vector<std::string> argv{unlink};
            argv.insert(argv.end(), keys.begin() + static_cast<std::ptrdiff_t>(first),
                        keys.begin() + static_cast<std::ptrdiff_t>(first + count));
            std::optional<Reply> reply;
            try {
                reply = co_await conn.command_argv(std::move(argv));
            } catch (const ReplyError& e) {
                // A server older than Redis 4 has no UNLINK: DEL does the same, blocking.
                if (unlink != "UNLINK" ||
                    std::string(e.what()).find("unknown command") == std::string::npos)
                    throw;
                unlink = "DEL";
                continue;
            }
            deleted += reply->as_integer();
            first += count;
        }
    } while (cursor != "0");
    co_return deleted;
}

// The children of `path`; nothing when it is not there (a concurrent clean-up took it). Throws
// ReplyError when it cannot be listed.
Task<std::optional<std::vector<std::string>>> children_of(ZkClient& zk, std::string path) {
    auto listed = co_await zk.get_children(path);
    if (listed.rc == ZNONODE)
        co_return std::nullopt;
    if (listed.rc != ZOK)
        throw ReplyError("cannot list " + path + ": " + zerror(listed.rc));
    co_return std::move(listed.children);
}

// Deletes `path` and everything under it; returns how many znodes went (0 when it was not there).
Task<long long> delete_tree(ZkClient& zk, std::string path) {
    long long deleted = 0;
    const auto children = co_await children_of(zk, path);
    if (!children)
        co_return 0;
    for (const std::string& child : *children)
        deleted += co_await delete_tree(zk, path + "/" + child);
    auto removed = co_await zk.remove(path);
    if (removed.rc == ZOK)
        ++deleted;
    else if (removed.rc != ZNONODE)
        throw ReplyError("cannot delete " + path + ": " + zerror(removed.rc));
    co_return deleted;
}

// The run's lock nodes under the lock root, then the root and its parent when nothing else is
// left in them: a concurrent run that finds them gone creates them again (zk_lock_internals.cpp).
Task<long long> delete_run_znodes(ZkClient& zk, std::string key_prefix) {
    co_await zk.connected();
    const std::string prefixed = ZkLockInternals::lock_path(key_prefix);
    const std::string root = prefixed.substr(0, prefixed.rfind('/'));  // "/lockbench/locks"
    const std::string name_prefix = prefixed.substr(root.size() + 1);
    long long deleted = 0;
    const auto locks = co_await children_of(zk, root);
    if (!locks)
        co_return 0;
    for (const std::string& lock : *locks) {
        if (lock.starts_with(name_prefix))
            deleted += co_await delete_tree(zk, root + "/" + lock);
    }
    for (std::string dir = root; dir.size() > 1; dir = dir.substr(0, dir.rfind('/'))) {
        auto removed = co_await zk.remove(dir);
        if (removed.rc == ZOK)
            ++deleted;
        else if (removed.rc != ZNONODE)
            break;  // ZNOTEMPTY: someone else's locks are in it
    }
    co_return deleted;
}

// Deletes what a run left on the servers the user runs, one kind of server at a time, and reports
// what went and what it had to leave.
class UserServerCleanup {
  public:
    UserServerCleanup(const std::string& key_prefix, const std::string& adapter_namespace,
                      bool quiet)
        : key_prefix_(key_prefix), adapter_namespace_(adapter_namespace), quiet_(quiet) {}

    void delete_from_redis(const Workload& w, const std::vector<Endpoint>& external) {
        // The keys live on the masters; a cluster's are every master serving slots now, which a
        // failover during the run may have changed from the nodes the user named.
        std::vector<Endpoint> masters = external;
        const bool cluster = w.topology.kind == TopologyKind::Cluster;
        const std::string pattern = "*" + key_prefix_ + "*";
        // An adapter's library names its keys itself, under the namespace (`<namespace>:<key>`,
        // redis-semaphore's `<namespace>:mutex:<key>`), where the key prefix need not appear.
        std::vector<std::string> patterns{pattern};
        if (!adapter_namespace_.empty())
            patterns.push_back(adapter_namespace_ + ":*");
        if (cluster) {
            masters.clear();
            if (const auto view = read_cluster_nodes(external, 2s)) {
                for (const ClusterNode* shard : shards_of(*view)) {
                    masters.push_back(shard->endpoint);
                    masters.back().password = external.front().password;
                    masters.back().user = external.front().user;
                }
            } else {
                leave("keys matching " + pattern + " on the cluster of " +
                      external.front().to_string() + ": no node answered CLUSTER NODES");
            }
        }
        report_["redis"] = nlohmann::json::array();
        for (const Endpoint& master : masters) {
            RedisConnection conn(loop_, master, kCleanupConnection);
            long long deleted = 0;
            try {
                for (const std::string& each : patterns)
                    deleted += run_sync(loop_, delete_matching(conn, each, cluster));
                report_["redis"].push_back({{"server", master.to_string()}, {"deleted", deleted}});
            } catch (const std::exception& e) {
                leave("keys matching " + pattern +
                      (adapter_namespace_.empty() ? "" : " or " + adapter_namespace_ + ":*") +
                      " on " + master.to_string() + ": " + e.what());
            }
        }
    }

    void delete_from_zookeeper(const std::string& hosts) {
        try {
            ZkClient zk(loop_, hosts, 10'000ms, 5'000ms);
            long long deleted = run_sync(loop_, delete_run_znodes(zk, key_prefix_));
            // An adapter's library keeps its nodes under /<namespace> (kazoo's, Curator's).
            if (!adapter_namespace_.empty())
                deleted += run_sync(loop_, delete_tree(zk, "/" + adapter_namespace_));
            report_["zookeeper"] = {{"hosts", hosts}, {"deleted", deleted}};
        } catch (const std::exception& e) {
            leave("znodes /lockbench/locks/" + key_prefix_ + "*" +
                  (adapter_namespace_.empty() ? "" : " and /" + adapter_namespace_) + " on " +
                  hosts + ": " + e.what());
        }
    }

    void delete_from_etcd(const std::vector<Endpoint>& members) {
        // The run's keys start with the prefix, an adapter's library's (its lock keys, leases'
        // keys under them) with `<namespace>/`: a range delete each, on any member that answers.
        std::vector<std::string> prefixes{key_prefix_};
        if (!adapter_namespace_.empty())
            prefixes.push_back(adapter_namespace_ + "/");
        std::string why;
        for (const Endpoint& member : members) {
            try {
                long long deleted = 0;
                for (const std::string& each : prefixes)
                    deleted += etcd_delete_prefix(member, each, 5s);
                report_["etcd"] = {{"server", member.to_string()}, {"deleted", deleted}};
                why.clear();
                break;
            } catch (const EtcdGatewayError& e) {
                why = e.what();
            }
        }
        if (!why.empty())
            leave("keys starting with " + key_prefix_ +
                  (adapter_namespace_.empty() ? "" : " or " + adapter_namespace_ + "/") +
                  " on etcd: " + why);
    }

    nlohmann::json& report() { return report_; }

  private:
    void leave(const std::string& what) {
        report_["left"].push_back(what);
        if (!quiet_)
            std::fprintf(stderr, "lockbench: left on your servers: %s\n", what.c_str());
    }

    const std::string& key_prefix_;
    const std::string& adapter_namespace_;
    bool quiet_;
    nlohmann::json report_{{"left", nlohmann::json::array()}};
    EventLoop loop_;
};

}  // namespace

nlohmann::json clean_up_user_servers(const Workload& w, const Deployment& deployment,
                                     const std::vector<Endpoint>& external,
                                     const std::string& key_prefix,
                                     const std::string& adapter_namespace, bool quiet) {
    const bool redis = !deployment.embedded && !external.empty();
    const bool zookeeper = !deployment.zookeeper_hosts.empty() && !deployment.zookeeper;
    const bool etcd = !deployment.etcd_endpoints.empty() && !deployment.etcd;
    if (key_prefix.empty() || (!redis && !zookeeper && !etcd))
        return nullptr;
    UserServerCleanup cleanup(key_prefix, adapter_namespace, quiet);
    if (redis)
        cleanup.delete_from_redis(w, external);
    if (zookeeper)
        cleanup.delete_from_zookeeper(deployment.zookeeper_hosts);
    if (etcd)
        cleanup.delete_from_etcd(deployment.etcd_endpoints);
    return std::move(cleanup.report());
}

CleanUpOnFailure::CleanUpOnFailure(const Workload& w, const Deployment& deployment,
                                   const std::vector<Endpoint>& external,
                                   const std::string& key_prefix,
                                   const std::string& adapter_namespace)
    : workload_(w),
      deployment_(deployment),
      external_(external),
      key_prefix_(key_prefix),
      adapter_namespace_(adapter_namespace),
      exceptions_at_start_(std::uncaught_exceptions()) {}

CleanUpOnFailure::~CleanUpOnFailure() {
    if (dismissed_ || std::uncaught_exceptions() <= exceptions_at_start_)
        return;
    try {
        const nlohmann::json report = clean_up_user_servers(
            workload_, deployment_, external_, key_prefix_, adapter_namespace_, /*quiet=*/true);
        if (report.is_null() || report["left"].empty())
            return;
        std::string left;
        for (const auto& what : report["left"])
            left += (left.empty() ? "" : "; ") + what.get<std::string>();
        std::fprintf(stderr, "lockbench: left on your servers after the error: %s\n", left.c_str());
    } catch (...) {
        // Unwinding already: the run's own error is the one to report.
    }
}

}  // namespace lockbench
