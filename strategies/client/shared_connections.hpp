#pragma once

// The Redis connections that the clients of one event loop share (`--connections`): `count`
// connections to every lock node (and to the resource's own server, when it has one), each
// auto-pipelined (redis_connection.hpp), as Redisson's pooled connections and ioredis's
// enableAutoPipelining carry many application threads' commands. A client keeps its own
// Session - identity, clock, tokens, history - and borrows one connection per node by its slot.
// Loop thread only; sessions hold it, so it goes when the last of its clients does.

#include <cstddef>
#include <memory>
#include <optional>
#include <vector>

#include "strategies/client/redis_connection.hpp"

namespace lockbench {

class SharedConnections {
  public:
    // `count` >= 1 connections per node; none connects before its first command.
    SharedConnections(EventLoop& loop, const std::vector<Endpoint>& nodes,
                      const std::optional<Endpoint>& resource, ConnectionOptions options,
                      std::size_t count);
    SharedConnections(const SharedConnections&) = delete;
    SharedConnections& operator=(const SharedConnections&) = delete;

    std::size_t count() const { return count_; }
    // The connection to node `node` that the client in `slot` uses (slot modulo count).
    RedisConnection& node(std::size_t node, std::size_t slot) {
        return *nodes_.at(node).at(slot % count_);
    }
    // The resource's own server's connection for `slot`; null when the resource lives on node 0.
    RedisConnection* resource(std::size_t slot) {
        return resource_.empty() ? nullptr : resource_.at(slot % count_).get();
    }

  private:
    std::size_t count_;
    std::vector<std::vector<std::unique_ptr<RedisConnection>>> nodes_;
    std::vector<std::unique_ptr<RedisConnection>> resource_;
};

}  // namespace lockbench
