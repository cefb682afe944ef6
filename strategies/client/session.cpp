#include "strategies/client/session.hpp"

#include <stdexcept>

#include "strategies/client/cluster_routing.hpp"
#include "strategies/client/shared_connections.hpp"
#include "strategies/client/zk_client.hpp"

namespace lockbench {

Session::Session(EventLoop& loop, std::vector<Endpoint> nodes, ConnectionOptions options,
                 std::string client_id, Clock clock)
    : loop_(loop),
      nodes_(std::move(nodes)),
      options_(options),
      client_id_(std::move(client_id)),
      clock_(std::move(clock)) {
    if (nodes_.empty())
        throw std::invalid_argument("a session needs at least one Redis node");
    connections_.resize(nodes_.size());
    subscribers_.resize(nodes_.size());
}

Session::~Session() = default;

void Session::use_cluster(std::vector<std::string> shard_tags) {
    cluster_ = std::make_unique<ClusterRouting>(loop_, nodes_, options_);
    shard_tags_ = std::move(shard_tags);
    if (killed_)
        cluster_->disable(*killed_);
}

void Session::use_shared_connections(std::shared_ptr<SharedConnections> shared, std::size_t slot) {
    if (cluster_)
        throw std::logic_error("a Redis Cluster client routes on connections of its own");
    shared_ = std::move(shared);
    shared_slot_ = slot;
}

RedisConnection& Session::redis(std::size_t node) {
    if (shared_)
        return shared_->node(node, shared_slot_);
    if (cluster_) {
        if (node >= node_count())
            throw std::out_of_range("a Redis Cluster is one node to a strategy, or one per shard");
        return cluster_->entry();
    }
    auto& c = connections_.at(node);
    if (!c) {
        c = std::make_unique<RedisConnection>(loop_, nodes_[node], options_);
        if (killed_)
            c->disable(*killed_);
    }
    return *c;
}

RedisConnection& Session::subscriber(std::size_t node) {
    auto& c = subscribers_.at(node);
    if (!c) {
        c = std::make_unique<RedisConnection>(loop_, nodes_[node], options_);
        if (killed_)
            c->disable(*killed_);
    }
    return *c;
}

RedisConnection& Session::resource() {
    if (!resource_endpoint_)
        return redis(0);
    if (shared_) {
        if (RedisConnection* shared = shared_->resource(shared_slot_))
            return *shared;
    }
    if (!resource_) {
        resource_ = std::make_unique<RedisConnection>(loop_, *resource_endpoint_, options_);
        if (killed_)
            resource_->disable(*killed_);
    }
    return *resource_;
}

ZkClient& Session::zookeeper(std::chrono::milliseconds session_timeout) {
    if (zookeeper_hosts_.empty())
        throw std::logic_error("this session has no ZooKeeper (set_zookeeper_hosts)");
    if (!zookeeper_ || (!killed_ && zookeeper_->expired())) {
        zookeeper_ = std::make_unique<ZkClient>(loop_, zookeeper_hosts_, session_timeout,
                                                options_.connect_timeout);
        if (killed_)
            zookeeper_->kill(*killed_);
    }
    return *zookeeper_;
}

std::string Session::next_token() {
    std::string token;
    token.reserve(client_id_.size() + 21);
    token += client_id_;
    token += ':';
    token += std::to_string(++token_sequence_);
    return token;
}

namespace {
Task<void> stall_at(EventLoop& loop, const Session::CheckpointHook& hook, std::string_view point,
                    std::chrono::milliseconds stall) {
    for (; stall.count() > 0; stall = hook(point))
        co_await loop.sleep_for(stall);
}
}  // namespace

bool Session::CheckpointAwaiter::await_ready() {
    if (!session.checkpoint_hook_)
        return true;
    const auto stall = session.checkpoint_hook_(point);
    if (stall.count() <= 0)
        return true;
    stalled = stall_at(session.loop_, session.checkpoint_hook_, point, stall);
    return false;
}

Task<void> Session::wait_while_paused() {
    while (paused())
        co_await loop_.sleep_until(paused_until_);
}

void Session::redirect(std::size_t node, const Endpoint& endpoint) {
    if (cluster_)
        throw std::logic_error("a Redis Cluster client follows the cluster's redirects itself");
    nodes_.at(node) = endpoint;
    if (shared_) {
        // Every client of the connection redirects it: only the first one moves it.
        RedisConnection& c = shared_->node(node, shared_slot_);
        if (!c.endpoint().same_address(endpoint))
            c.set_endpoint(endpoint);
    }
    if (connections_[node])
        connections_[node]->set_endpoint(endpoint);
    if (subscribers_[node])
        subscribers_[node]->set_endpoint(endpoint);
}

void Session::kill(const std::string& reason) {
    if (shared_)
        throw std::logic_error("client " + client_id_ +
                               " shares its connections: it cannot crash alone");
    killed_ = reason;
    if (zookeeper_)
        zookeeper_->kill(reason);
    for (auto& c : connections_) {
        if (c)
            c->disable(reason);
    }
    for (auto& c : subscribers_) {
        if (c)
            c->disable(reason);
    }
    if (resource_)
        resource_->disable(reason);
    if (cluster_)
        cluster_->disable(reason);
}

}  // namespace lockbench
