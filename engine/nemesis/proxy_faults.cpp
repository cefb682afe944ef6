#include "engine/nemesis/proxy_faults.hpp"

#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/fault_proxy.hpp"

namespace lockbench {

using nlohmann::json;

FaultProxy& ProxyFault::proxy(NemesisContext& ctx) const {
    return *ctx.deployment().proxies.at(static_cast<std::size_t>(target_.index));
}

void ProxyFault::turn_on_until_healed(NemesisContext& ctx, std::chrono::milliseconds duration,
                                      json details, std::function<void(FaultProxy&, bool)> turn) {
    FaultProxy& p = proxy(ctx);
    turn(p, true);
    details["node"] = target_.index;
    details["ms"] = duration.count();
    const double t = ctx.log(name(), std::move(details));
    took_effect();
    auto window = ctx.open_window(std::string(name()), target_.to_json(), t);
    ctx.later(EventLoop::now() + duration, [&ctx, &p, window, turn = std::move(turn),
                                            index = target_.index, fault = std::string(name())] {
        turn(p, false);
        ctx.close_window(window, ctx.log("heal", json{{"node", index}, {"fault", fault}}));
    });
}

DropReplies::DropReplies(ObjectReader& r)
    : duration_(r.integer("duration_ms", 1000, 1, 3'600'000)) {}

void DropReplies::apply(NemesisContext& ctx) {
    turn_on_until_healed(ctx, duration_, json::object(),
                         [](FaultProxy& p, bool on) { p.set_drop_replies(on); });
}

DelayReplies::DelayReplies(ObjectReader& r)
    : delay_(r.integer("delay_ms", 100, 1, 3'600'000)),
      duration_(r.integer("duration_ms", 1000, 1, 3'600'000)) {}

void DelayReplies::apply(NemesisContext& ctx) {
    turn_on_until_healed(ctx, duration_, json{{"delay_ms", delay_.count()}},
                         [delay = delay_](FaultProxy& p, bool on) {
                             p.set_reply_delay(on ? delay : std::chrono::milliseconds(0));
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
    turn_on_until_healed(ctx, duration_, json::object(),
                         [](FaultProxy& p, bool on) { p.set_blackhole(on); });
}

}  // namespace lockbench
