#pragma once

// What a strategy may use of its simulated client: the client's connections (one per Redis node,
// plus a pub/sub connection made on first use), its Clock, its identity, and fault hooks. A
// Session lives on one EventLoop thread and is never shared between clients (no global Redis
// handle: seed 001's static Helper.redisTemplate is what not to do).

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/client/clock.hpp"
#include "strategies/client/event_loop.hpp"
#include "strategies/client/redis_connection.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

class ZkClient;
class ClusterRouting;
class SharedConnections;

class Session {
  public:
    // `client_id` must be unique among all clients that may touch the same keys (the engine puts
    // a per-run nonce in it), because owner-bound strategies store it in Redis.
    Session(EventLoop& loop, std::vector<Endpoint> nodes, ConnectionOptions options,
            std::string client_id, Clock clock = Clock());
    ~Session();
    Session(const Session&) = delete;
    Session& operator=(const Session&) = delete;

    EventLoop& loop() { return loop_; }
    Clock& clock() { return clock_; }
    const std::string& client_id() const { return client_id_; }
    // The lock's nodes: one for a Redis Cluster, however many masters it has - unless it was
    // given shard tags, then one per shard.
    std::size_t node_count() const {
        return cluster_ ? std::max<std::size_t>(1, shard_tags_.size()) : nodes_.size();
    }

    // Redis Cluster: the nodes given are seeds; redis() is then one connection whose commands go
    // to the master of their key's slot (cluster_routing.hpp), and so does the resource's
    // unless it has its own server. Call before any connection is made.
    // With `shard_tags` (a hash tag whose slot each shard owns: cluster.hpp's shard_hash_tags), a
    // strategy over several nodes (Redlock) sees each shard's master as a node of its own:
    // node_key(i, key) names `key` in shard i's slots, and redis(i) reaches it.
    void use_cluster(std::vector<std::string> shard_tags = {});
    // Where `key` lives on node `i`: itself, except on a cluster's shard (use_cluster), where a
    // leading hash tag moves it to that shard's slots.
    std::string node_key(std::size_t node, const std::string& key) const {
        return shard_tags_.empty() ? key : "{" + shard_tags_.at(node) + "}" + key;
    }
    ClusterRouting* cluster() { return cluster_.get(); }

    // The lock's nodes as given (before any redirect), and the connections' timeouts: what an
    // adapter process (strategies/external/) is told to connect to.
    const std::vector<Endpoint>& nodes() const { return nodes_; }
    const ConnectionOptions& connection_options() const { return options_; }

    // Per-client state beyond connections, by name, living as long as the session: an adapter
    // process (strategies/external/), and what the engine hands such a strategy for the run.
    void set_extension(const std::string& name, std::shared_ptr<void> value) {
        extensions_[name] = std::move(value);
    }
    template <typename T>
    T* extension(const std::string& name) const {
        const auto it = extensions_.find(name);
        return it == extensions_.end() ? nullptr : static_cast<T*>(it->second.get());
    }

    // `--connections`: redis(i) and resource() are `shared`'s connections for `slot`, which other
    // clients' sessions on this loop use too (shared_connections.hpp); the subscriber stays
    // this client's own. Call before any connection is made; not with use_cluster.
    void use_shared_connections(std::shared_ptr<SharedConnections> shared, std::size_t slot);
    bool shares_connections() const { return shared_ != nullptr; }

    // The command connection to node `i` (created on first use, reconnects after failures).
    RedisConnection& redis(std::size_t node = 0);
    // A separate connection for SUBSCRIBE: a subscribed RESP2 connection cannot run commands.
    RedisConnection& subscriber(std::size_t node = 0);

    // Where the protected resource lives: a server of its own (a separate path, T13), or the
    // lock's node 0 when none was set. Its own connection either way once set.
    void set_resource_endpoint(Endpoint endpoint) { resource_endpoint_ = std::move(endpoint); }
    bool has_own_resource() const { return resource_endpoint_.has_value(); }
    RedisConnection& resource();

    // Where ZooKeeper strategies connect ("HOST:PORT,…"); empty when the run has no ZooKeeper.
    void set_zookeeper_hosts(std::string hosts) { zookeeper_hosts_ = std::move(hosts); }
    const std::string& zookeeper_hosts() const { return zookeeper_hosts_; }
    // Where etcd strategies (an adapter's etcd client) connect: every member's client endpoint;
    // empty when the run has no etcd.
    void set_etcd_endpoints(std::vector<Endpoint> endpoints) {
        etcd_endpoints_ = std::move(endpoints);
    }
    const std::vector<Endpoint>& etcd_endpoints() const { return etcd_endpoints_; }
    // This client's ZooKeeper session (zk_client.hpp), created on first use asking for
    // `session_timeout`, and again after the server expired it (as Curator makes a new
    // ZooKeeper instance). Throws std::logic_error when no hosts were set.
    ZkClient& zookeeper(std::chrono::milliseconds session_timeout);

    // A token no other grant in this run has: "<client_id>:<sequence>".
    std::string next_token();

    // Sleeps `d` as this client's clock measures it.
    Clock::SleepAwaiter sleep_for(Clock::Duration d) { return clock_.sleep_for(loop_, d); }

    // Named points inside a strategy where a fault may hold the client, e.g. between the GET and
    // the DEL of a non-atomic unlock (T8). The hook returns how long to stall there (0: none); it
    // is asked again after each stall, and may throw to end the client (a crash).
    using CheckpointHook = std::function<std::chrono::milliseconds(std::string_view point)>;
    void set_checkpoint_hook(CheckpointHook hook) { checkpoint_hook_ = std::move(hook); }
    // `co_await session.checkpoint(point)`. Passing a point no fault holds costs no coroutine
    // frame: every cycle passes several.
    struct CheckpointAwaiter {
        Session& session;
        std::string_view point;
        Task<void> stalled;  // the sleeps, when the hook asks for any

        bool await_ready();
        std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
            stalled.handle().promise().continuation = awaiting;
            return stalled.handle();
        }
        void await_resume() {
            if (stalled.valid())
                stalled.result();
        }
    };
    CheckpointAwaiter checkpoint(std::string_view point) { return {*this, point, {}}; }

    // Whole-client pause (T1/T10: a GC pause stops the watchdog too). Background work such as a
    // watchdog calls wait_while_paused() before acting.
    void pause_until(EventLoop::TimePoint until) {
        paused_until_ = until;
        if (on_whole_pause_)
            on_whole_pause_(until);
    }
    // Called by pause_until: what else must stop with the client (its ZooKeeper connections,
    // whose library's own threads a pause of ours does not stop).
    void set_on_whole_pause(std::function<void(EventLoop::TimePoint)> hook) {
        on_whole_pause_ = std::move(hook);
    }
    // A partition between this client and ZooKeeper until `until` (the engine's fault): false
    // when the client's ZooKeeper connections cannot be cut (no ZooKeeper, or no hook set).
    bool partition_until(EventLoop::TimePoint until) {
        if (!on_partition_)
            return false;
        on_partition_(until);
        return true;
    }
    void set_on_partition(std::function<void(EventLoop::TimePoint)> hook) {
        on_partition_ = std::move(hook);
    }
    // A strategy that finds, later, that an acquire it answered in doubt took effect after all,
    // and removes what it left (a ZooKeeper node of a create whose reply was lost, first in the
    // queue when found): `phase` "granted" once it knows the lock was held for that acquire,
    // "released" once its leftover is gone (`ok`: removed). The engine records each as the
    // history's `late-grant` event (checker/HISTORY.md), as a lock library's adapter reports one;
    // without them a checker would see that acquire's lock end without a release.
    using LateGrantHook = std::function<void(const std::string& key, std::string_view phase,
                                             bool ok, const std::string& token)>;
    void set_late_grant_hook(LateGrantHook hook) { late_grant_hook_ = std::move(hook); }
    void report_late_grant(const std::string& key, std::string_view phase, bool ok,
                           const std::string& token) {
        if (late_grant_hook_)
            late_grant_hook_(key, phase, ok, token);
    }
    bool paused() const { return EventLoop::now() < paused_until_; }
    // When the current whole-client pause ends (in the past when not paused), so background work
    // can wait for it on an event it can also be stopped by.
    EventLoop::TimePoint paused_until() const { return paused_until_; }
    Task<void> wait_while_paused();

    // Moves node `i` to another server (a failover promoted a replica). Connections stay the same
    // objects, so strategies holding a reference keep working.
    void redirect(std::size_t node, const Endpoint& endpoint);

    // A crash: every connection drops at once (a ZooKeeper session is ended on the server:
    // zk_client.hpp), commands in flight fail with ClosedError, and every later command too (a
    // dead process sends nothing, not even from a waiting strategy). Throws std::logic_error on
    // shared connections: dropping them would crash the other clients too, so a run refuses
    // such faults in shared mode before it starts.
    void kill(const std::string& reason);

  private:
    EventLoop& loop_;
    std::vector<Endpoint> nodes_;
    ConnectionOptions options_;
    std::string client_id_;
    Clock clock_;
    std::vector<std::unique_ptr<RedisConnection>> connections_;
    std::vector<std::unique_ptr<RedisConnection>> subscribers_;
    std::optional<Endpoint> resource_endpoint_;
    std::unique_ptr<RedisConnection> resource_;
    std::string zookeeper_hosts_;
    std::unique_ptr<ZkClient> zookeeper_;
    std::vector<Endpoint> etcd_endpoints_;
    std::unique_ptr<ClusterRouting> cluster_;
    std::vector<std::string> shard_tags_;
    std::shared_ptr<SharedConnections> shared_;
    std::size_t shared_slot_ = 0;
    std::uint64_t token_sequence_ = 0;
    CheckpointHook checkpoint_hook_;
    EventLoop::TimePoint paused_until_{};
    std::function<void(EventLoop::TimePoint)> on_whole_pause_;
    std::function<void(EventLoop::TimePoint)> on_partition_;
    LateGrantHook late_grant_hook_;
    std::optional<std::string> killed_;
    // Last: an adapter process goes before the connections its strategy used beside it.
    std::map<std::string, std::shared_ptr<void>> extensions_;
};

}  // namespace lockbench
