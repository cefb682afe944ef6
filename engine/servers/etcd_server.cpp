#include "engine/servers/etcd_server.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <unistd.h>

#include "engine/servers/redis_server.hpp"  // EnvironmentError, find_executable, pick_free_ports

namespace lockbench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

std::string milliseconds_text(std::chrono::milliseconds ms) {
    return std::to_string(ms.count());
}

std::string url(const std::string& address, int port) {
    return "http://" + address + ":" + std::to_string(port);
}

}  // namespace

EtcdServer::EtcdServer(std::string name, EtcdHost host, int client_port, int peer_port,
                       std::string initial_cluster, std::string cluster_token,
                       EtcdServerOptions options)
    : EmbeddedServer(5s),
      name_(std::move(name)),
      host_(std::move(host)),
      client_port_(client_port),
      peer_port_(peer_port),
      initial_cluster_(std::move(initial_cluster)),
      cluster_token_(std::move(cluster_token)),
      options_(std::move(options)) {
    try {
        binary_path_ = find_executable(options_.binary);
    } catch (const EnvironmentError&) {
        throw EnvironmentError(
            "etcd not found in PATH: the embedded etcd needs Debian's etcd-server package "
            "(scripts/bootstrap.sh installs it)");
    }
    dir_ = ServerDir("etcd");
    spawn();
}

void EtcdServer::spawn() {
    std::vector<std::string> args{
        binary_path_,
        "--name",
        name_,
        "--data-dir",
        (dir_.path() / "data").string(),
        "--listen-client-urls",
        url(host_.address, client_port_),
        "--advertise-client-urls",
        url(host_.address, client_port_),
        "--listen-peer-urls",
        url(host_.address, peer_port_),
        "--initial-advertise-peer-urls",
        url(host_.address, peer_port_),
        "--initial-cluster",
        initial_cluster_,
        "--initial-cluster-state",
        "new",
        "--initial-cluster-token",
        cluster_token_,
        "--heartbeat-interval",
        milliseconds_text(options_.heartbeat_interval),
        "--election-timeout",
        milliseconds_text(options_.election_timeout),
        "--logger",
        "zap",
        "--log-outputs",
        "stderr",
        "--log-level",
        "warn",
    };
    process_ = start_server_process(ChildLaunch{.argv = std::move(args),
                                                .netns_fd = host_.netns_fd,
                                                .stdin_from = ChildStream::Null,
                                                .stdout_to = ChildStream::Log,
                                                .stderr_to = ChildStream::Log,
                                                .log = dir_.path() / "etcd.log",
                                                .role = "etcd"});
}

bool EtcdServer::healthy(std::chrono::milliseconds timeout) const {
    return running() && !paused() && etcd_healthy(endpoint(), timeout);
}

std::optional<EtcdStatus> EtcdServer::status(std::chrono::milliseconds timeout) const {
    if (!running() || paused())
        return std::nullopt;
    try {
        return etcd_status(endpoint(), timeout);
    } catch (const EtcdGatewayError&) {
        return std::nullopt;
    }
}

void EtcdServer::wait_ready() {
    const Start start = wait_for_start(options_.start_timeout, 50ms, [this] {
        if (!healthy())
            return false;
        if (auto s = this->status())
            member_id_ = s->member_id;
        return member_id_ != 0;
    });
    if (start == Start::Exited)
        throw EnvironmentError("etcd " + name_ + " exited at start: " + log_tail());
    if (start == Start::TimedOut)
        throw EnvironmentError(
            "etcd " + name_ + " on " + endpoint().to_string() + " was not healthy within " +
            std::to_string(options_.start_timeout.count()) + " ms: " + log_tail());
}

void EtcdServer::restart() {
    kill();
    spawn();
    wait_ready();
}

std::string EtcdServer::log_tail(std::size_t lines) const {
    return lockbench::log_tail(dir_.path() / "etcd.log", lines);
}

EtcdCluster::EtcdCluster(int nodes, EtcdServerOptions options, std::vector<EtcdHost> hosts) {
    if (nodes < 1 || nodes > 7 || nodes % 2 == 0)
        throw std::invalid_argument("an etcd cluster has 1, 3, 5 or 7 members");
    if (!hosts.empty() && hosts.size() != static_cast<std::size_t>(nodes))
        throw std::invalid_argument("EtcdCluster: one host per member");
    // Two clusters that reuse each other's ports (one test's after another's) must never take
    // each other's members for their own.
    static std::atomic<int> clusters{0};
    const std::string token =
        "lockbench-" + std::to_string(::getpid()) + "-" + std::to_string(++clusters);
    // In a network lab every host has its own 2379 and 2380: no port is picked, none retried.
    const bool in_lab = !hosts.empty();
    const auto start_members = [&] {
        const auto ports =
            in_lab ? std::vector<int>{} : pick_free_ports(static_cast<std::size_t>(nodes) * 2);
        std::vector<EtcdHost> where;
        std::vector<std::pair<int, int>> member_ports;  // client, peer
        std::string initial_cluster;
        for (int i = 0; i < nodes; ++i) {
            const auto at = static_cast<std::size_t>(i);
            where.push_back(in_lab ? hosts[at] : EtcdHost{});
            member_ports.emplace_back(in_lab ? 2379 : ports[2 * at],
                                      in_lab ? 2380 : ports[2 * at + 1]);
            initial_cluster += (i ? "," : "") + std::string("etcd") + std::to_string(i + 1) + "=" +
                               url(where.back().address, member_ports.back().second);
        }
        for (int i = 0; i < nodes; ++i) {
            const auto at = static_cast<std::size_t>(i);
            members_.push_back(std::make_unique<EtcdServer>(
                "etcd" + std::to_string(i + 1), where[at], member_ports[at].first,
                member_ports[at].second, initial_cluster, token, options));
        }
    };
    start_server_group(members_, start_members, !in_lab, 20, "address already in use");
}

std::vector<Endpoint> EtcdCluster::endpoints() const {
    std::vector<Endpoint> out;
    for (const auto& m : members_)
        out.push_back(m->endpoint());
    return out;
}

std::optional<std::size_t> EtcdCluster::index_of(std::uint64_t member_id) const {
    for (std::size_t i = 0; i < members_.size(); ++i) {
        if (member_id != 0 && members_[i]->member_id() == member_id)
            return i;
    }
    return std::nullopt;
}

std::optional<std::size_t> EtcdCluster::leader() const {
    std::optional<std::size_t> found;
    std::uint64_t term = 0;
    for (std::size_t i = 0; i < members_.size(); ++i) {
        const auto s = members_[i]->status();
        if (s && s->leads() && (!found || s->raft_term > term)) {
            found = i;
            term = s->raft_term;
        }
    }
    return found;
}

std::optional<std::size_t> EtcdCluster::wait_for_leader(std::chrono::milliseconds timeout) const {
    return lockbench::wait_for_leader([this] { return leader(); }, timeout);
}

}  // namespace lockbench
