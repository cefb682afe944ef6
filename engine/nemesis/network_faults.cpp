#include "engine/nemesis/network_faults.hpp"

#include "engine/run/workload.hpp"
#include "engine/topology/cluster.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/network_lab.hpp"
#include "engine/topology/sentinel.hpp"
#include "strategies/client/cluster_routing.hpp"

namespace lockbench {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// The lab host whose address is `host`, if any.
std::optional<int> host_of(const NetworkLab& lab, const std::string& address) {
    for (std::size_t i = 0; i < lab.size(); ++i) {
        if (lab.address(static_cast<int>(i)) == address)
            return static_cast<int>(i);
    }
    return std::nullopt;
}

std::string host_name(const NetworkLab& lab, int host) {
    return host == NetworkLab::kRoot ? "root" : lab.name(static_cast<std::size_t>(host));
}

std::optional<Endpoint> current_master(Deployment& d) {
    if (auto m = ask_sentinels_for_master(d.sentinels, 300ms))
        return m;
    return std::nullopt;
}

}  // namespace

namespace {

bool is_number(std::string_view s) {
    return !s.empty() && s.size() < 6 &&
           s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool is_host_name(std::string_view name) {
    const auto selected = [&](std::string_view prefix) -> std::optional<std::string_view> {
        if (!name.starts_with(prefix) || name.size() == prefix.size())
            return std::nullopt;
        return name.substr(prefix.size());
    };
    const auto key_or_shard = [&](std::string_view prefix) {
        const auto sel = selected(prefix);
        return sel && (!sel->starts_with("shard:") || is_number(sel->substr(6)));
    };
    const auto node = selected("node:");
    return name == "master" || name == "clients" || name == "root" || (node && is_number(*node)) ||
           key_or_shard("master-of:") || key_or_shard("replicas-of:");
}

std::vector<std::string> read_hosts(ObjectReader& r, const char* field) {
    std::vector<std::string> out;
    if (const json* hosts = r.optional_array(field)) {
        for (const auto& h : *hosts) {
            if (!h.is_string() || !is_host_name(h.get<std::string>())) {
                r.fail(r.at(field),
                       "names master|master-of:KEY|replicas-of:KEY|clients|root|node:N (KEY may "
                       "be shard:N), not " +
                           h.dump());
            }
            out.push_back(h.get<std::string>());
        }
    }
    return out;
}

}  // namespace

PartitionHosts::PartitionHosts(ObjectReader& r)
    : shape_(r.choice<std::string>("shape", "isolate",
                                   {{"isolate", "isolate"},
                                    {"halves", "halves"},
                                    {"majorities-ring", "majorities-ring"},
                                    {"bridge", "bridge"}})),
      hosts_(read_hosts(r, "hosts")),
      from_(read_hosts(r, "from")),
      duration_(r.integer("duration_ms", 5000, 1, 3'600'000)) {
    if (shape_ == "isolate" && hosts_.empty())
        r.fail(r.at("hosts"), "an isolate partition needs the hosts to cut off");
    if (shape_ != "isolate" && !hosts_.empty())
        r.fail(r.at("hosts"),
               "only an isolate partition names hosts; " + shape_ + " acts on the data nodes");
    if (shape_ != "isolate" && !from_.empty())
        r.fail(r.at("from"), "only an isolate partition names whom its hosts are cut from");
}

std::optional<std::set<int>> PartitionHosts::resolve(const std::vector<std::string>& names,
                                                     Deployment& d) {
    NetworkLab& lab = *d.lab;
    const int nodes = static_cast<int>(d.servers.size());
    std::set<int> group;
    for (const auto& name : names) {
        if (name == "root") {
            group.insert(NetworkLab::kRoot);
        } else if (name == "clients") {
            if (!d.clients_host) {
                missed("there is no clients host (topology's isolated_clients is 0)");
                return std::nullopt;
            }
            group.insert(static_cast<int>(*d.clients_host));
        } else if (name.rfind("master-of:", 0) == 0 || name.rfind("replicas-of:", 0) == 0) {
            const bool replicas = name[0] == 'r';
            const std::string selector = name.substr(name.find(':') + 1);
            const auto view = read_cluster_nodes(d.endpoints, 300ms);
            const auto slot = view ? selected_slot(selector, *view) : std::nullopt;
            const ClusterNode* master = slot ? master_of_slot(*view, *slot) : nullptr;
            if (!master) {
                missed(!view   ? "no node of the cluster answered CLUSTER NODES"
                       : !slot ? "the cluster has no " + selector
                               : "no node of the cluster named a live master for slot " +
                                     std::to_string(*slot));
                return std::nullopt;
            }
            std::vector<const ClusterNode*> chosen{master};
            if (replicas)
                chosen = replicas_of(*view, *master);
            if (chosen.empty()) {
                missed("master " + master->endpoint.to_string() + " has no replica");
                return std::nullopt;
            }
            for (const ClusterNode* n : chosen) {
                const auto host = host_of(lab, n->endpoint.host);
                if (!host) {
                    missed(n->endpoint.to_string() + " is not a host of the lab");
                    return std::nullopt;
                }
                group.insert(*host);
            }
        } else if (name == "master") {
            if (d.sentinels.empty()) {
                missed("'master' is the one the sentinels name; in a cluster, name master-of:KEY");
                return std::nullopt;
            }
            const auto master = current_master(d);
            const auto host = master ? host_of(lab, master->host) : std::nullopt;
            if (!host) {
                missed("no sentinel the nemesis could reach named a master");
                return std::nullopt;
            }
            group.insert(*host);
        } else {
            const int n = std::stoi(name.substr(5));
            if (n < 0 || n >= nodes) {
                missed(name + " does not exist (" + std::to_string(nodes) + " nodes)");
                return std::nullopt;
            }
            group.insert(n);
        }
    }
    return group;
}

void PartitionHosts::apply(NemesisContext& ctx) {
    Deployment& d = ctx.deployment();
    NetworkLab& lab = *d.lab;
    const int nodes = static_cast<int>(d.servers.size());
    std::vector<int> data_nodes;
    for (int i = 0; i < nodes; ++i)
        data_nodes.push_back(i);
    NetworkLab::Grudge grudge;
    if (shape_ == "isolate") {
        const auto group = resolve(hosts_, d);
        if (!group)
            return;
        std::set<int> everyone{NetworkLab::kRoot};
        for (std::size_t i = 0; i < lab.size(); ++i)
            everyone.insert(static_cast<int>(i));
        if (!from_.empty()) {
            const auto from = resolve(from_, d);
            if (!from)
                return;
            for (int h : *from) {
                if (group->count(h)) {
                    missed(host_name(lab, h) +
                           " is both among the hosts and those they are cut "
                           "from");
                    return;
                }
            }
            everyone = *from;
            everyone.insert(group->begin(), group->end());
        }
        grudge = isolate_grudge(*group, everyone);
    } else if (shape_ == "halves") {
        grudge = halves_grudge(data_nodes);
    } else if (shape_ == "majorities-ring") {
        grudge = majorities_ring_grudge(data_nodes);
    } else {
        grudge = bridge_grudge(data_nodes);
    }
    // Throws when iptables does: the run ends with the reason.
    const int handle = lab.add_partition(grudge);
    json cut = json::object();
    for (const auto& [host, unheard] : grudge) {
        json from = json::array();
        for (int u : unheard)
            from.push_back(host_name(lab, u));
        cut[host_name(lab, host)] = from;
    }
    const double t = ctx.log("partition", json{{"shape", shape_}, {"cut", cut}});
    took_effect();
    const auto window = ctx.open_window("partition-hosts", json{{"shape", shape_}}, t);
    ctx.later(EventLoop::now() + duration_, [&ctx, &lab, window, handle] {
        lab.remove_partition(handle);
        ctx.close_window(window, ctx.log("heal", json{{"shape", "hosts"}}));
    });
}

void SentinelFailover::apply(NemesisContext& ctx) {
    Deployment& d = ctx.deployment();
    const auto from = current_master(d);
    if (!from) {
        missed("no sentinel the nemesis could reach named a master");
        return;
    }
    bool asked = false;
    std::string why = "no sentinel answered SENTINEL FAILOVER";
    for (auto& s : d.sentinel_servers) {
        try {
            s->command({"SENTINEL", "FAILOVER", std::string(kSentinelMasterName)});
            asked = true;
            break;
        } catch (const RedisError& e) {
            why = std::string("SENTINEL FAILOVER: ") + e.what();
        }
    }
    if (!asked) {
        missed(why);
        return;
    }
    const double t = ctx.log("failover", json{{"from", from->to_string()}, {"by", "sentinel"}});
    const auto window = ctx.open_window("sentinel-failover", json{{"from", from->to_string()}}, t);
    // It took effect once the sentinels name another master: asked again every 100 ms (a copy
    // of the check schedules the next one).
    struct Check {
        SentinelFailover* fault;
        NemesisContext* ctx;
        Endpoint from;
        std::size_t window;
        EventLoop::TimePoint deadline;
        void operator()() const {
            Deployment& dep = ctx->deployment();
            const auto now_master = current_master(dep);
            if (now_master && (now_master->host != from.host || now_master->port != from.port)) {
                ctx->close_window(window,
                                  ctx->log("failover-done", json{{"to", now_master->to_string()}}));
                fault->took_effect();
                return;
            }
            if (EventLoop::now() >= deadline) {
                fault->missed("the sentinels still named " + from.to_string() +
                              " as the master after the failover timeout");
                ctx->close_window(window,
                                  ctx->log("failover-failed", json{{"at", from.to_string()}}));
                return;
            }
            ctx->later(EventLoop::now() + 100ms, *this);
        }
    };
    ctx.later(EventLoop::now() + 100ms,
              Check{this, &ctx, *from, window, EventLoop::now() + d.failover_timeout + 5s});
}

}  // namespace lockbench
