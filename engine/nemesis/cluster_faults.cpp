#include "engine/nemesis/cluster_faults.hpp"

#include <algorithm>

#include "engine/topology/cluster.hpp"
#include "engine/topology/deployment.hpp"
#include "strategies/client/cluster_routing.hpp"

namespace lockbench {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// What the first node that answers says serves `slot` now (none: no node answered, or the slot
// has no live master).
std::optional<Endpoint> slot_master(const std::vector<Endpoint>& ask, int slot) {
    const auto view = read_cluster_nodes(ask, 300ms);
    if (!view)
        return std::nullopt;
    const ClusterNode* m = master_of_slot(*view, slot);
    return m ? std::optional(m->endpoint) : std::nullopt;
}

// Polls every 100 ms until a node other than `from` serves `slot` (asking `ask`), then calls
// `done(new master)`; at `deadline`, `gave_up()`. A copy of the check schedules the next one.
struct WaitForNewMaster {
    NemesisContext* ctx;
    std::vector<Endpoint> ask;
    int slot;
    Endpoint from;
    EventLoop::TimePoint deadline;
    std::function<void(const Endpoint&)> done;
    std::function<void()> gave_up;
    void operator()() const {
        if (const auto now_master = slot_master(ask, slot);
            now_master && !now_master->same_address(from)) {
            done(*now_master);
            return;
        }
        if (EventLoop::now() >= deadline) {
            gave_up();
            return;
        }
        ctx->later(EventLoop::now() + 100ms, *this);
    }
};

}  // namespace

ClusterFailover::ClusterFailover(ObjectReader& r)
    : timeout_(r.integer("timeout_ms", 10'000, 100, 600'000)) {
    mode_ = r.choice<std::string>(
        "mode", "graceful",
        {{"graceful", "graceful"}, {"force", "force"}, {"takeover", "takeover"}});
}

void ClusterFailover::apply(NemesisContext& ctx) {
    const auto& nodes = ctx.deployment().endpoints;
    const auto view = read_cluster_nodes(nodes, 500ms);
    if (!view) {
        missed("no node of the cluster answered CLUSTER NODES");
        return;
    }
    const auto selected = selected_slot(target_.key, *view);
    if (!selected) {
        missed("the cluster has no " + target_.key);
        return;
    }
    const int slot = *selected;
    const ClusterNode* master = master_of_slot(*view, slot);
    if (!master) {
        missed("no live master served slot " + std::to_string(slot));
        return;
    }
    const auto replicas = replicas_of(*view, *master);
    const auto replica = std::find_if(replicas.begin(), replicas.end(),
                                      [](const ClusterNode* n) { return !n->failed; });
    if (replica == replicas.end()) {
        missed("master " + master->endpoint.to_string() + " has no live replica to fail over to");
        return;
    }
    const Endpoint from = master->endpoint, to = (*replica)->endpoint;
    std::vector<std::string> command = {"CLUSTER", "FAILOVER"};
    if (mode_ == "force")
        command.push_back("FORCE");
    else if (mode_ == "takeover")
        command.push_back("TAKEOVER");
    try {
        command_once(to, command, 2s);
    } catch (const RedisError& e) {
        missed("CLUSTER FAILOVER on " + to.to_string() + ": " + e.what());
        return;
    }
    const double t = ctx.log("cluster-failover", json{{"from", from.to_string()},
                                                      {"to", to.to_string()},
                                                      {"slot", slot},
                                                      {"master_of", target_.key},
                                                      {"mode", mode_}});
    const auto window = ctx.open_window("cluster-failover", target_.to_json(), t);
    ctx.later(
        EventLoop::now() + 100ms,
        WaitForNewMaster{&ctx,
                         {to},
                         slot,
                         from,
                         EventLoop::now() + timeout_,
                         [this, &ctx, window](const Endpoint& promoted) {
                             ctx.close_window(window, ctx.log("cluster-failover-done",
                                                              json{{"to", promoted.to_string()}}));
                             took_effect();
                         },
                         [this, &ctx, window, to] {
                             missed("replica " + to.to_string() + " did not take over within " +
                                    std::to_string(timeout_.count()) + " ms");
                             ctx.close_window(window, ctx.log("cluster-failover-failed",
                                                              json{{"at", to.to_string()}}));
                         }});
}

KillClusterMaster::KillClusterMaster(ObjectReader& r)
    : timeout_(r.integer("timeout_ms", 30'000, 100, 600'000)) {
    const nlohmann::json* v = r.find("restart_after_ms");
    if (v && !v->is_null())
        restart_after_ = std::chrono::milliseconds(r.integer("restart_after_ms", 0, 0, 3'600'000));
}

void KillClusterMaster::apply(NemesisContext& ctx) {
    Deployment& d = ctx.deployment();
    const auto view = read_cluster_nodes(d.endpoints, 300ms);
    const auto selected = view ? selected_slot(target_.key, *view) : std::nullopt;
    if (!selected) {
        missed(view ? "the cluster has no " + target_.key
                    : "no node of the cluster answered CLUSTER NODES");
        return;
    }
    const int slot = *selected;
    const ClusterNode* serving = master_of_slot(*view, slot);
    if (!serving) {
        missed("no node of the cluster named a live master for slot " + std::to_string(slot));
        return;
    }
    const std::optional<Endpoint> master = serving->endpoint;
    std::size_t index = d.servers.size();
    for (std::size_t i = 0; i < d.servers.size(); ++i) {
        if (d.servers[i]->running() && d.servers[i]->endpoint().same_address(*master))
            index = i;
    }
    if (index == d.servers.size()) {
        missed("the master of slot " + std::to_string(slot) + ", " + master->to_string() +
               ", is not a server lockbench started");
        return;
    }
    RedisServer& s = *d.servers[index];
    s.kill();
    const double t = ctx.log("kill-server", json{{"node", index},
                                                 {"port", s.port()},
                                                 {"role", "master"},
                                                 {"slot", slot},
                                                 {"master_of", target_.key}});
    took_effect();
    const auto window = ctx.open_window("kill-cluster-master", target_.to_json(), t);
    std::vector<Endpoint> others;
    for (const auto& ep : d.endpoints) {
        if (!ep.same_address(*master))
            others.push_back(ep);
    }
    ctx.later(EventLoop::now() + 100ms,
              WaitForNewMaster{
                  &ctx, others, slot, *master, EventLoop::now() + timeout_,
                  [&ctx, window](const Endpoint& promoted) {
                      ctx.close_window(
                          window, ctx.log("cluster-promoted", json{{"to", promoted.to_string()}}));
                  },
                  [this, &ctx, window, slot] {
                      ctx.close_window(
                          window, ctx.log("cluster-not-promoted",
                                          json{{"slot", slot}, {"after_ms", timeout_.count()}}));
                  }});
    if (!restart_after_)
        return;
    ctx.later(EventLoop::now() + *restart_after_, [&ctx, &s, index] {
        s.restart();
        ctx.log("restart-server", json{{"node", index}, {"port", s.port()}});
    });
}

}  // namespace lockbench
