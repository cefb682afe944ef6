#pragma once

// An embedded etcd, as ZooKeeperServer embeds ZooKeeper: Debian's etcd-server (`etcd`, 3.4) on
// free loopback ports (a client and a peer port per member), its data and log in its own temp
// dir, waited for until its JSON gateway says it is healthy (etcd_gateway.hpp: it serves and
// sees a leader), and stopped on every exit path (destructor; PR_SET_PDEATHSIG if lockbench
// itself dies). It runs in its own process group, so a Ctrl-C at the terminal reaches lockbench
// only.
//
// An EtcdCluster is one member or a cluster of 3 (5, 7) on loopback, or each member in a host of
// a network lab (network_lab.hpp) when faults partition one member from the others: on loopback
// every member shares one address, and no firewall rule could tell their traffic apart.
// Faults act on a member: kill()/restart()/pause()/resume(); the status a member reports names
// the leader, for faults that hit whoever leads when they fire.
//
// Raft runs at a 100 ms heartbeat and a 1 s election timeout (etcd's defaults): a leader silent
// for a second is replaced, as an ensemble's followers give ZooKeeper's.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "engine/servers/embedded_server.hpp"
#include "engine/servers/etcd_gateway.hpp"
#include "strategies/client/redis_connection.hpp"  // Endpoint

namespace lockbench {

// Where a member runs: this machine's loopback, or a network namespace (its descriptor, and the
// host's address there; ports are then etcd's own 2379 and 2380 - every host has its own).
struct EtcdHost {
    int netns_fd = -1;
    std::string address = "127.0.0.1";
};

struct EtcdServerOptions {
    std::string binary = "etcd";  // looked up in PATH unless it contains a '/'
    std::chrono::milliseconds start_timeout{30'000};
    std::chrono::milliseconds heartbeat_interval{100};
    std::chrono::milliseconds election_timeout{1000};
};

// One member of a cluster (of one, or more). Constructing it starts the process without waiting:
// a member of a cluster cannot be healthy before a quorum of its peers runs.
class EtcdServer : public EmbeddedServer {
  public:
    // `initial_cluster`: every member's "NAME=http://ADDRESS:PEER_PORT", comma-separated;
    // `cluster_token`: the same for every member, and no other cluster's.
    EtcdServer(std::string name, EtcdHost host, int client_port, int peer_port,
               std::string initial_cluster, std::string cluster_token, EtcdServerOptions options);

    const std::string& name() const { return name_; }
    // Where clients reach it: its client port.
    Endpoint endpoint() const { return Endpoint{host_.address, client_port_, ""}; }
    int peer_port() const { return peer_port_; }
    // A leader silent this long is replaced; a new leader renews every lease by it as well.
    std::chrono::milliseconds election_timeout() const { return options_.election_timeout; }
    // Its member id in the cluster (etcd derives it from its name and peer URL), known once it
    // was ready; 0 before.
    std::uint64_t member_id() const { return member_id_; }

    // Waits until /health says true (it serves, and sees a leader); throws EnvironmentError
    // (embedded_server.hpp) with the log's last lines when it exits or does not within the
    // start timeout.
    void wait_ready();
    bool healthy(std::chrono::milliseconds timeout = std::chrono::milliseconds(500)) const;
    // Its status, or nothing when it does not answer (stopped, paused, not serving yet).
    std::optional<EtcdStatus> status(
        std::chrono::milliseconds timeout = std::chrono::milliseconds(500)) const;

    // Starts again on the same ports and data dir (it rejoins its cluster), and waits.
    void restart();

    // The last lines of its log, to explain a failure.
    std::string log_tail(std::size_t lines = 3) const;

  private:
    void spawn();

    std::string name_;
    EtcdHost host_;
    int client_port_ = 0;
    int peer_port_ = 0;
    std::string initial_cluster_;
    std::string cluster_token_;
    EtcdServerOptions options_;
    std::string binary_path_;
    std::uint64_t member_id_ = 0;
};

// One member (nodes = 1) or a cluster of 3, 5 or 7, started side by side and waited for until
// every member is healthy; stopped on every exit path. `hosts`: where each member runs (empty:
// every one on loopback, on free ports).
class EtcdCluster {
  public:
    explicit EtcdCluster(int nodes = 1, EtcdServerOptions options = {},
                         std::vector<EtcdHost> hosts = {});

    std::size_t size() const { return members_.size(); }
    EtcdServer& member(std::size_t i) { return *members_.at(i); }
    const EtcdServer& member(std::size_t i) const { return *members_.at(i); }
    // Every member's client endpoint: what clients are given.
    std::vector<Endpoint> endpoints() const;
    // The index of the member that says it leads (the one of the highest term, should an old
    // leader cut off from the others not know yet); nullopt when none does.
    std::optional<std::size_t> leader() const;
    // Waits up to `timeout` for a leader; nullopt if none was elected.
    std::optional<std::size_t> wait_for_leader(std::chrono::milliseconds timeout) const;
    // The index of the member with this id; nullopt if none has it.
    std::optional<std::size_t> index_of(std::uint64_t member_id) const;

  private:
    std::vector<std::unique_ptr<EtcdServer>> members_;
};

}  // namespace lockbench
