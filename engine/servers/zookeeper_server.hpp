#pragma once

// An embedded ZooKeeper server, as RedisServer embeds redis-server: Debian's zookeeper package
// (from /usr/share/java/zookeeper.jar, whose manifest names its dependencies) on free loopback
// ports, its zoo.cfg, data and log in its own temp dir, the admin server off, waited for until it
// serves (`srvr` names its mode), and stopped on every exit path (destructor; PR_SET_PDEATHSIG if
// lockbench itself dies). It runs in its own process group, so a Ctrl-C at the terminal reaches
// lockbench only.
//
// One server runs standalone (ZooKeeperServerMain); a ZooKeeperEnsemble runs three or five as
// one quorum (QuorumPeerMain, each with its own client, quorum and election port), so faults can
// kill, pause or restart the leader or a follower: kill()/restart()/pause()/resume(), as
// RedisServer's.
//
// The JVM takes about a second to start on the 2-core machine: a run starts one server (or one
// ensemble, whose members start side by side), and a test binary one for all its tests.
//
// Sessions: tickTime is 50 ms and the session timeouts a client may negotiate run from 100 ms to
// 10 minutes, so the timeout a client asks for (a workload's lease) is the one it gets. An
// ensemble's followers give a silent leader 1 s (syncLimit) before they elect another.

#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include "engine/servers/embedded_server.hpp"

namespace lockbench {

// The ports of one member of an ensemble.
struct ZooKeeperPeer {
    int client_port = 0;
    int quorum_port = 0;
    int election_port = 0;
};

struct ZooKeeperServerOptions {
    int port = 0;               // 0: pick a free loopback port (standalone only)
    std::string java = "java";  // looked up in PATH unless it contains a '/'
    std::string jar = "/usr/share/java/zookeeper.jar";
    std::chrono::milliseconds start_timeout{30'000};
    // A member of an ensemble: its id (1-based) and every member's ports; an empty ensemble is
    // a standalone server. A member is not waited for when constructed (it cannot serve before
    // a quorum exists): ZooKeeperEnsemble starts them all, then waits.
    int myid = 0;
    std::vector<ZooKeeperPeer> ensemble;
};

class ZooKeeperServer : public EmbeddedServer {
  public:
    // Starts the server and (standalone) waits until it answers; throws EnvironmentError
    // (embedded_server.hpp) when java or the package is missing, the port is busy or the server
    // does not answer.
    explicit ZooKeeperServer(ZooKeeperServerOptions options = {});

    int port() const { return port_; }
    // "127.0.0.1:PORT", the C client's connect string.
    std::string hosts() const { return "127.0.0.1:" + std::to_string(port_); }
    // The member's id in its ensemble (0 when standalone).
    int myid() const { return options_.myid; }

    // Waits until the server serves requests (standalone, or a member of a quorum).
    void wait_ready();
    // "leader", "follower", "standalone", or "" when it does not serve (no quorum, stopped).
    std::string mode() const;

    // Starts again on the same ports and data dir (a member rejoins its ensemble), and waits.
    void restart();

    // Sends a four-letter word (ruok, srvr) and returns the answer; "" if none.
    std::string four_letter_word(const std::string& word) const;
    // The last lines of the server's log, to explain a failure.
    std::string log_tail(std::size_t lines = 5) const;

  private:
    void spawn();

    ZooKeeperServerOptions options_;
    std::string java_path_;
    int port_ = 0;
};

// One standalone server (servers = 1) or a quorum of 3, 5 or 7 members on loopback, started
// side by side and waited for until every member serves; stopped on every exit path.
class ZooKeeperEnsemble {
  public:
    explicit ZooKeeperEnsemble(int servers = 1, ZooKeeperServerOptions base = {});

    std::size_t size() const { return servers_.size(); }
    ZooKeeperServer& server(std::size_t i) { return *servers_.at(i); }
    const ZooKeeperServer& server(std::size_t i) const { return *servers_.at(i); }
    // The C client's connect string: every member.
    std::string hosts() const;
    // The index of the member that leads now (0 for a standalone server); nullopt when none
    // does (an election is under way, or no quorum is left).
    std::optional<std::size_t> leader() const;
    // Waits up to `timeout` for a leader; nullopt if none was elected.
    std::optional<std::size_t> wait_for_leader(std::chrono::milliseconds timeout) const;

  private:
    std::vector<std::unique_ptr<ZooKeeperServer>> servers_;
};

}  // namespace lockbench
