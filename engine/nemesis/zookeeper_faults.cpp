#include "engine/nemesis/zookeeper_faults.hpp"

#include "engine/topology/deployment.hpp"

namespace lockbench {

using nlohmann::json;
using namespace std::chrono_literals;

ZooKeeperServer* ZooKeeperFault::member(NemesisContext& ctx, std::size_t& index,
                                        std::string& role) {
    ZooKeeperEnsemble* ensemble = ctx.deployment().zookeeper.get();
    if (!ensemble) {
        missed("no embedded ZooKeeper to act on");
        return nullptr;
    }
    if (target_.kind == FaultTarget::Kind::Leader) {
        // An election may be under way (an earlier fault): the leader is whoever wins it.
        const auto leader = ensemble->wait_for_leader(5s);
        if (!leader) {
            missed("no ZooKeeper server led within 5 s of the fault's time");
            return nullptr;
        }
        index = *leader;
    } else {
        index = static_cast<std::size_t>(target_.index);
    }
    ZooKeeperServer& server = ensemble->server(index);
    if (!server.running()) {
        missed("ZooKeeper server " + std::to_string(index) + " was not running");
        return nullptr;
    }
    role = server.mode();
    if (role.empty())
        role = server.paused() ? "paused" : "not serving";
    return &server;
}

KillZooKeeper::KillZooKeeper(ObjectReader& r) {
    const nlohmann::json* v = r.find("restart_after_ms");
    if (!v) {
        restart_after_ = 1000ms;
    } else if (!v->is_null()) {
        restart_after_ =
            std::chrono::milliseconds(r.integer("restart_after_ms", 1000, 0, 3'600'000));
    }
}

void KillZooKeeper::apply(NemesisContext& ctx) {
    std::size_t index = 0;
    std::string role;
    ZooKeeperServer* server = member(ctx, index, role);
    if (!server)
        return;
    server->kill();  // reaps it: when this returns, the process is gone
    const double t =
        ctx.log("kill-zookeeper", json{{"node", index}, {"port", server->port()}, {"role", role}});
    took_effect();
    const auto window = ctx.open_window("kill-zookeeper", json{{"node", index}, {"role", role}}, t);
    if (!restart_after_)
        return;
    ctx.later(EventLoop::now() + *restart_after_, [&ctx, server, window, index] {
        server->restart();
        ctx.close_window(window, ctx.log("restart-zookeeper", json{{"node", index},
                                                                   {"port", server->port()},
                                                                   {"role", server->mode()}}));
    });
}

PauseZooKeeper::PauseZooKeeper(ObjectReader& r)
    : duration_(r.integer("duration_ms", 2000, 0, 3'600'000)) {}

void PauseZooKeeper::apply(NemesisContext& ctx) {
    std::size_t index = 0;
    std::string role;
    ZooKeeperServer* server = member(ctx, index, role);
    if (!server)
        return;
    server->pause();
    const double t = ctx.log(
        "pause-zookeeper",
        json{{"node", index}, {"port", server->port()}, {"role", role}, {"ms", duration_.count()}});
    took_effect();
    const auto window =
        ctx.open_window("pause-zookeeper", json{{"node", index}, {"role", role}}, t);
    ctx.later(EventLoop::now() + duration_, [&ctx, server, window, index] {
        server->resume();
        ctx.close_window(
            window, ctx.log("resume-zookeeper", json{{"node", index}, {"port", server->port()}}));
    });
}

}  // namespace lockbench
