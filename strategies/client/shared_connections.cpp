#include "strategies/client/shared_connections.hpp"

#include <stdexcept>

namespace lockbench {

namespace {
std::vector<std::unique_ptr<RedisConnection>> auto_pipelined(EventLoop& loop,
                                                             const Endpoint& endpoint,
                                                             ConnectionOptions options,
                                                             std::size_t count) {
    std::vector<std::unique_ptr<RedisConnection>> out;
    out.reserve(count);
    for (std::size_t i = 0; i < count; ++i) {
        out.push_back(std::make_unique<RedisConnection>(loop, endpoint, options));
        out.back()->set_auto_pipelining(true);
    }
    return out;
}
}  // namespace

SharedConnections::SharedConnections(EventLoop& loop, const std::vector<Endpoint>& nodes,
                                     const std::optional<Endpoint>& resource,
                                     ConnectionOptions options, std::size_t count)
    : count_(count) {
    if (count == 0)
        throw std::invalid_argument("shared connections: at least one per node");
    for (const auto& endpoint : nodes)
        nodes_.push_back(auto_pipelined(loop, endpoint, options, count));
    if (resource)
        resource_ = auto_pipelined(loop, *resource, options, count);
}

}  // namespace lockbench
