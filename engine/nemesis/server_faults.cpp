#include "engine/nemesis/server_faults.hpp"

#include "engine/clients/client.hpp"
#include "engine/servers/controlled_server.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/deployment.hpp"
#include "strategies/lua_scripts.hpp"

namespace lockbench {

using nlohmann::json;

namespace {
// The user's node the target names, when the inventory gives a control for it.
ControlledServer* controlled(NemesisContext& ctx, const FaultTarget& t) {
    auto& nodes = ctx.deployment().controlled;
    const auto i = static_cast<std::size_t>(t.index);
    return i < nodes.size() ? nodes[i].get() : nullptr;
}
RedisServer& node(NemesisContext& ctx, const FaultTarget& t) {
    auto& servers = ctx.deployment().servers;
    return *servers.at(static_cast<std::size_t>(t.index));
}
}  // namespace

PauseServer::PauseServer(ObjectReader& r)
    : duration_(r.integer("duration_ms", 1000, 0, 3'600'000)) {}

void PauseServer::apply(NemesisContext& ctx) {
    if (ControlledServer* remote = controlled(ctx, target_)) {
        // The user's node, through its host's control: the host resumes it by itself should
        // lockbench not get to (controlled_server.hpp).
        remote->pause(duration_);
        const std::string at = remote->node().endpoint.to_string();
        const double t = ctx.log("pause-server", json{{"node", target_.index},
                                                      {"name", remote->node().name},
                                                      {"at", at},
                                                      {"ms", duration_.count()}});
        took_effect();
        auto window = ctx.open_window("pause-server", target_.to_json(), t);
        ctx.later(EventLoop::now() + duration_, [&ctx, remote, window, index = target_.index] {
            remote->resume();
            ctx.close_window(window, ctx.log("resume-server",
                                             json{{"node", index}, {"name", remote->node().name}}));
        });
        return;
    }
    RedisServer& s = node(ctx, target_);
    s.pause();
    double t =
        ctx.log("pause-server",
                json{{"node", target_.index}, {"port", s.port()}, {"ms", duration_.count()}});
    took_effect();
    auto window = ctx.open_window("pause-server", target_.to_json(), t);
    ctx.later(EventLoop::now() + duration_, [&ctx, &s, window, index = target_.index] {
        s.resume();
        ctx.close_window(window,
                         ctx.log("resume-server", json{{"node", index}, {"port", s.port()}}));
    });
}

KillServer::KillServer(ObjectReader& r) {
    const nlohmann::json* v = r.find("restart_after_ms");
    if (!v) {
        restart_after_ = std::chrono::milliseconds(0);
    } else if (!v->is_null()) {
        restart_after_ = std::chrono::milliseconds(r.integer("restart_after_ms", 0, 0, 3'600'000));
    }
}

void KillServer::apply(NemesisContext& ctx) {
    if (ControlledServer* remote = controlled(ctx, target_)) {
        // The restart is left running on the host when the kill is sent: it happens even if
        // lockbench does not live to see it. The nemesis only waits for the node to answer.
        remote->kill(restart_after_);
        const double t = ctx.log("kill-server", json{{"node", target_.index},
                                                     {"name", remote->node().name},
                                                     {"at", remote->node().endpoint.to_string()}});
        took_effect();
        auto window = ctx.open_window("kill-server", target_.to_json(), t);
        if (!restart_after_)
            return;
        ctx.later(EventLoop::now() + *restart_after_, [&ctx, remote, window,
                                                       index = target_.index] {
            remote->wait_until_answers(std::chrono::seconds(30));
            ctx.close_window(window, ctx.log("restart-server",
                                             json{{"node", index}, {"name", remote->node().name}}));
        });
        return;
    }
    RedisServer& s = node(ctx, target_);
    s.kill();
    double t = ctx.log("kill-server", json{{"node", target_.index}, {"port", s.port()}});
    took_effect();
    auto window = ctx.open_window("kill-server", target_.to_json(), t);
    if (!restart_after_)
        return;
    ctx.later(EventLoop::now() + *restart_after_, [&ctx, &s, window, index = target_.index] {
        s.restart();
        ctx.close_window(
            window,
            ctx.log("restart-server", json{{"node", index},
                                           {"port", s.port()},
                                           {"persistence", to_string(s.options().persistence)}}));
    });
}

IsolateNode::IsolateNode(ObjectReader& r)
    : duration_(r.integer("duration_ms", 2000, 1, 3'600'000)) {}

void IsolateNode::apply(NemesisContext& ctx) {
    ControlledServer* remote = controlled(ctx, target_);
    if (!remote) {
        missed("node " + std::to_string(target_.index) + " has no control to cut it off with");
        return;
    }
    remote->isolate(duration_);
    const double t = ctx.log("isolate-node", json{{"node", target_.index},
                                                  {"name", remote->node().name},
                                                  {"at", remote->node().endpoint.to_string()},
                                                  {"ms", duration_.count()}});
    took_effect();
    auto window = ctx.open_window("isolate-node", target_.to_json(), t);
    ctx.later(EventLoop::now() + duration_, [&ctx, remote, window, index = target_.index] {
        remote->end_isolation();
        ctx.close_window(
            window, ctx.log("heal-node", json{{"node", index}, {"name", remote->node().name}}));
    });
}

JumpServerClock::JumpServerClock(ObjectReader& r)
    : jump_ms_(r.integer("jump_ms", 1000, 1, 86'400'000)) {}

void JumpServerClock::apply(NemesisContext& ctx) {
    static const Script jump("nemesis_clock_jump");
    RedisServer& s = node(ctx, target_);
    Reply touched = s.command({"EVAL", jump.body(), "0", std::to_string(jump_ms_)});
    double t = ctx.log("clock-jump", json{{"node", target_.index},
                                          {"port", s.port()},
                                          {"jump_ms", jump_ms_},
                                          {"keys", touched.integer},
                                          {"emulated", true}});
    took_effect();
    auto window = ctx.open_window("clock-jump", target_.to_json(), t);
    ctx.close_window(window, t);
}

Failover::Failover(ObjectReader& r) : lag_(r.integer("lag_ms", 300, 0, 600'000)) {}

void Failover::apply(NemesisContext& ctx) {
    auto& servers = ctx.deployment().servers;
    if (servers.size() < 2)
        throw WorkloadError("failover needs topology kind 'replicated'");
    RedisServer& master = *servers.front();
    RedisServer& replica = *servers.back();
    // Detach the replica now: lock writes from here on never reach it. (SIGSTOPping it is not
    // enough - the stream queued in its socket is applied after SIGCONT, before any promotion.)
    // No client talks to it until the master dies, so this is a failover to a lagging replica.
    replica.command({"REPLICAOF", "NO", "ONE"});
    double t =
        ctx.log("failover",
                json{{"from", master.port()}, {"to", replica.port()}, {"lag_ms", lag_.count()}});
    auto window =
        ctx.open_window("failover", json{{"from", master.port()}, {"to", replica.port()}}, t);
    ctx.later(EventLoop::now() + lag_, [this, &ctx, &master, &replica, window] {
        master.kill();
        Endpoint promoted = replica.endpoint();
        ctx.deployment().endpoints[0] = promoted;
        ctx.clients().post_all([promoted](SimulatedClient& c) { c.redirect(promoted); });
        ctx.close_window(window, ctx.log("failover-done", json{{"to", replica.port()}}));
        took_effect();
    });
}

}  // namespace lockbench
