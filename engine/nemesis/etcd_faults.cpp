#include "engine/nemesis/etcd_faults.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <csignal>
#include <fstream>
#include <memory>
#include <set>
#include <utility>

#include "engine/servers/embedded_server.hpp"  // EnvironmentError
#include "engine/servers/etcd_server.hpp"
#include "engine/topology/deployment.hpp"

namespace lockbench {

using nlohmann::json;
using namespace std::chrono_literals;

namespace {

// The state letter /proc gives the member's process: 'T' when it is stopped.
std::string state_of(const EtcdServer& server) {
    const auto state = process_state(server.pid());
    return state ? std::string(1, *state) : "gone";
}

std::string role_of(const EtcdServer& server) {
    if (server.paused())
        return "paused";
    const auto status = server.status();
    if (!status)
        return "not answering";
    if (status->leads())
        return "leader";
    return status->leader_id ? "follower" : "no leader";
}

}  // namespace

EtcdServer* EtcdFault::member(NemesisContext& ctx, std::size_t& index, std::string& role) {
    EtcdCluster* cluster = ctx.deployment().etcd.get();
    if (!cluster) {
        missed("no embedded etcd to act on");
        return nullptr;
    }
    if (target_.kind == FaultTarget::Kind::Leader) {
        // An election may be under way (an earlier fault): the leader is whoever wins it.
        const auto leader = cluster->wait_for_leader(5s);
        if (!leader) {
            missed("no etcd member led within 5 s of the fault's time");
            return nullptr;
        }
        index = *leader;
    } else if (target_.kind == FaultTarget::Kind::Random) {
        std::vector<std::size_t> running;
        for (std::size_t i = 0; i < cluster->size(); ++i) {
            if (cluster->member(i).running())
                running.push_back(i);
        }
        if (running.empty()) {
            missed("no etcd member was running");
            return nullptr;
        }
        index =
            running[std::uniform_int_distribution<std::size_t>(0, running.size() - 1)(ctx.rng())];
    } else {
        index = static_cast<std::size_t>(target_.index);
    }
    if (index >= cluster->size()) {
        missed("etcd has no member " + std::to_string(index));
        return nullptr;
    }
    EtcdServer& server = cluster->member(index);
    if (!server.running()) {
        missed("etcd member " + std::to_string(index) + " was not running");
        return nullptr;
    }
    role = role_of(server);
    return &server;
}

namespace {

// What the running members say of raft terms: the newest any of them is in, and the newest one a
// member leads in, with that member. A stopped or paused member is not asked (it would only time
// out, holding up the nemesis thread).
struct TermSurvey {
    std::uint64_t newest = 0;
    std::optional<std::pair<std::uint64_t, std::size_t>> leading;
};

TermSurvey survey_terms(EtcdCluster& cluster) {
    TermSurvey survey;
    for (std::size_t i = 0; i < cluster.size(); ++i) {
        const EtcdServer& m = cluster.member(i);
        if (!m.running() || m.paused())
            continue;
        const auto s = m.status(std::chrono::milliseconds(200));
        if (!s)
            continue;
        survey.newest = std::max(survey.newest, s->raft_term);
        if (s->leads() && (!survey.leading || s->raft_term > survey.leading->first))
            survey.leading = std::pair{s->raft_term, i};
    }
    return survey;
}

}  // namespace

std::uint64_t EtcdFault::newest_term(NemesisContext& ctx) {
    EtcdCluster* cluster = ctx.deployment().etcd.get();
    return cluster ? survey_terms(*cluster).newest : 0;
}

namespace {

// One look every 20 ms, each scheduled by the last (the pending look owns the watch), so that the
// faults due meanwhile run.
struct LeaderWatch : std::enable_shared_from_this<LeaderWatch> {
    LeaderWatch(NemesisContext& c, double fault, std::uint64_t old_term, bool may_stay)
        : ctx(c),
          fault_s(fault),
          term(old_term),
          old_leader_may_stay(may_stay),
          give_up(EventLoop::now() + 10s) {}

    void look_later() {
        ctx.later(EventLoop::now() + 20ms, [self = shared_from_this()] { self->look(); });
    }
    void look() {
        EtcdCluster* cluster = ctx.deployment().etcd.get();
        if (!cluster)
            return;
        const auto leading = survey_terms(*cluster).leading;
        if (leading && leading->first > term) {
            const EtcdServer& leader = cluster->member(leading->second);
            ctx.log("leases-renewed", json{{"service", "etcd"},
                                           {"node", leading->second},
                                           {"name", leader.name()},
                                           {"term", leading->first},
                                           {"fault_time", std::llround(fault_s * 1e9)},
                                           {"by_ms", leader.election_timeout().count()}});
            return;
        }
        // A leader paused for less than an election timeout leads on when it resumes: no
        // election, no renewal.
        if (old_leader_may_stay && leading && leading->first == term)
            return;
        if (EventLoop::now() < give_up)
            look_later();
    }

    NemesisContext& ctx;
    double fault_s;
    std::uint64_t term;
    bool old_leader_may_stay;
    EventLoop::TimePoint give_up;
};

}  // namespace

void EtcdFault::watch_for_new_leader(NemesisContext& ctx, double fault_s, std::uint64_t term,
                                     bool old_leader_may_stay) {
    std::make_shared<LeaderWatch>(ctx, fault_s, term, old_leader_may_stay)->look_later();
}

KillEtcd::KillEtcd(ObjectReader& r) {
    const json* v = r.find("restart_after_ms");
    if (!v) {
        restart_after_ = 1000ms;
    } else if (!v->is_null()) {
        restart_after_ =
            std::chrono::milliseconds(r.integer("restart_after_ms", 1000, 0, 3'600'000));
    }
}

void KillEtcd::apply(NemesisContext& ctx) {
    std::size_t index = 0;
    std::string role;
    EtcdServer* server = member(ctx, index, role);
    if (!server)
        return;
    const pid_t pid = server->pid();
    const std::uint64_t term = role == "leader" ? newest_term(ctx) : 0;
    server->kill();  // reaps it
    // The proof: no process has that id any more.
    const bool gone = ::kill(pid, 0) != 0 && errno == ESRCH;
    const double t = ctx.log("kill-etcd", json{{"node", index},
                                               {"name", server->name()},
                                               {"pid", pid},
                                               {"pid_gone", gone},
                                               {"role", role}});
    if (!gone) {
        missed("etcd member " + std::to_string(index) + "'s process " + std::to_string(pid) +
               " was still there after SIGKILL");
        return;
    }
    took_effect();
    if (role == "leader")
        watch_for_new_leader(ctx, t, term, false);
    const auto window = ctx.open_window("kill-etcd", json{{"node", index}, {"role", role}}, t);
    if (!restart_after_)
        return;
    ctx.later(EventLoop::now() + *restart_after_, [&ctx, server, window, index] {
        server->restart();
        ctx.close_window(window, ctx.log("restart-etcd", json{{"node", index},
                                                              {"name", server->name()},
                                                              {"pid", server->pid()},
                                                              {"role", role_of(*server)}}));
    });
}

PauseEtcd::PauseEtcd(ObjectReader& r) : duration_(r.integer("duration_ms", 2000, 0, 3'600'000)) {}

void PauseEtcd::apply(NemesisContext& ctx) {
    std::size_t index = 0;
    std::string role;
    EtcdServer* server = member(ctx, index, role);
    if (!server)
        return;
    const std::uint64_t term = role == "leader" ? newest_term(ctx) : 0;
    server->pause();  // waits until /proc says stopped (up to a second)
    const std::string state = state_of(*server);
    const double t = ctx.log("pause-etcd", json{{"node", index},
                                                {"name", server->name()},
                                                {"pid", server->pid()},
                                                {"state", state},
                                                {"role", role},
                                                {"ms", duration_.count()}});
    if (state != "T") {
        server->resume();
        missed("etcd member " + std::to_string(index) + " was in state " + state +
               ", not stopped (T), after SIGSTOP");
        return;
    }
    took_effect();
    if (role == "leader")
        watch_for_new_leader(ctx, t, term, true);
    const auto window = ctx.open_window("pause-etcd", json{{"node", index}, {"role", role}}, t);
    ctx.later(EventLoop::now() + duration_, [&ctx, server, window, index] {
        server->resume();
        ctx.close_window(window, ctx.log("resume-etcd", json{{"node", index},
                                                             {"name", server->name()},
                                                             {"state", state_of(*server)}}));
    });
}

PartitionEtcd::PartitionEtcd(ObjectReader& r)
    : duration_(r.integer("duration_ms", 2000, 0, 3'600'000)) {}

void PartitionEtcd::apply(NemesisContext& ctx) {
    NetworkLab* lab = ctx.deployment().etcd_lab.get();
    if (!lab) {
        missed("the embedded etcd does not run in network namespaces");
        return;
    }
    std::size_t index = 0;
    std::string role;
    EtcdServer* server = member(ctx, index, role);
    if (!server)
        return;
    std::set<int> members;
    for (std::size_t i = 0; i < lab->size(); ++i)
        members.insert(static_cast<int>(i));
    const int cut_off = static_cast<int>(index);
    const std::uint64_t term = role == "leader" ? newest_term(ctx) : 0;
    // Throws when iptables does: the run ends with the reason.
    const int handle = lab->add_partition(isolate_grudge({cut_off}, members));
    // The proof: the cut-off member's kernel now drops what every other member sends it (its
    // own INPUT rules, read back), and each of them what it sends (the same rules on their side).
    json drops = json::object();
    std::string unproven;
    for (int host : members) {
        std::string rules;
        try {
            rules = lab->run(host, {"iptables", "-w", "-S", "INPUT"});
        } catch (const EnvironmentError& e) {
            rules = e.what();
        }
        json dropped = json::array();
        for (int other : members) {
            const bool cut_pair = (host == cut_off) != (other == cut_off);
            if (other == host || !cut_pair)
                continue;
            const std::string rule = "-s " + lab->address(other) + "/32 -j DROP";
            if (rules.find(rule) != std::string::npos)
                dropped.push_back(lab->name(static_cast<std::size_t>(other)));
            else
                unproven = lab->name(static_cast<std::size_t>(host)) + " does not drop " +
                           lab->name(static_cast<std::size_t>(other));
        }
        drops[lab->name(static_cast<std::size_t>(host))] = dropped;
    }
    const double t = ctx.log("partition-etcd", json{{"node", index},
                                                    {"name", server->name()},
                                                    {"role", role},
                                                    {"drops", drops},
                                                    {"ms", duration_.count()}});
    if (!unproven.empty()) {
        lab->remove_partition(handle);
        missed("the partition of etcd member " + std::to_string(index) +
               " was not in place: " + unproven);
        return;
    }
    took_effect();
    // The cut-off leader answers, in its old term, until it steps down: not a sign it stays.
    if (role == "leader")
        watch_for_new_leader(ctx, t, term, false);
    const auto window = ctx.open_window("partition-etcd", json{{"node", index}, {"role", role}}, t);
    ctx.later(EventLoop::now() + duration_, [&ctx, lab, window, handle, index] {
        lab->remove_partition(handle);
        ctx.close_window(window, ctx.log("heal-etcd", json{{"node", index}}));
    });
}

}  // namespace lockbench
