#include "engine/nemesis/proxy_faults.hpp"

#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/fault_proxy.hpp"

namespace lockbench {

using nlohmann::json;

FaultProxy& ProxyFault::proxy(NemesisContext& ctx) const {
    return *ctx.deployment().proxies.at(static_cast<std::size_t>(target_.index));
}

DropReplies::DropReplies(ObjectReader& r)
    : duration_(r.integer("duration_ms", 1000, 1, 3'600'000)) {}

void DropReplies::apply(NemesisContext& ctx) {
    FaultProxy& p = proxy(ctx);
    p.set_drop_replies(true);
    double t = ctx.log("drop-replies", json{{"node", target_.index}, {"ms", duration_.count()}});
    took_effect();
    auto window = ctx.open_window("drop-replies", target_.to_json(), t);
    ctx.later(EventLoop::now() + duration_, [&ctx, &p, window, index = target_.index] {
        p.set_drop_replies(false);
        ctx.close_window(window, ctx.log("heal", json{{"node", index}, {"fault", "drop-replies"}}));
    });
}

DelayReplies::DelayReplies(ObjectReader& r)
    : delay_(r.integer("delay_ms", 100, 1, 3'600'000)),
      duration_(r.integer("duration_ms", 1000, 1, 3'600'000)) {}

void DelayReplies::apply(NemesisContext& ctx) {
    FaultProxy& p = proxy(ctx);
    p.set_reply_delay(delay_);
    double t = ctx.log(
        "delay-replies",
        json{{"node", target_.index}, {"delay_ms", delay_.count()}, {"ms", duration_.count()}});
    took_effect();
    auto window = ctx.open_window("delay-replies", target_.to_json(), t);
    ctx.later(EventLoop::now() + duration_, [&ctx, &p, window, index = target_.index] {
        p.set_reply_delay(std::chrono::milliseconds(0));
        ctx.close_window(window,
                         ctx.log("heal", json{{"node", index}, {"fault", "delay-replies"}}));
    });
}

void ResetConnections::apply(NemesisContext& ctx) {
    proxy(ctx).reset_connections();
    double t = ctx.log("reset-connections", json{{"node", target_.index}});
    took_effect();
    ctx.close_window(ctx.open_window("reset-connections", target_.to_json(), t), t);
}

PartitionNode::PartitionNode(ObjectReader& r)
    : duration_(r.integer("duration_ms", 1000, 1, 3'600'000)) {}

void PartitionNode::apply(NemesisContext& ctx) {
    FaultProxy& p = proxy(ctx);
    p.set_blackhole(true);
    double t = ctx.log("partition", json{{"node", target_.index}, {"ms", duration_.count()}});
    took_effect();
    auto window = ctx.open_window("partition", target_.to_json(), t);
    ctx.later(EventLoop::now() + duration_, [&ctx, &p, window, index = target_.index] {
        p.set_blackhole(false);
        ctx.close_window(window, ctx.log("heal", json{{"node", index}, {"fault", "partition"}}));
    });
}

}  // namespace lockbench
