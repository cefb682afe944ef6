#pragma once

// An embedded ZooKeeper server, as RedisServer embeds redis-server: one standalone server
// (Debian's zookeeper package: ZooKeeperServerMain from /usr/share/java/zookeeper.jar, whose
// manifest names its dependencies) on a free loopback port, its zoo.cfg, data and log in its own
// temp dir, the admin server off, waited for until it answers `ruok` with `imok`, and stopped on
// every exit path (destructor; PR_SET_PDEATHSIG if lockbench itself dies). It runs in its own
// process group, so a Ctrl-C at the terminal reaches lockbench only.
//
// The JVM takes about a second to start on the 2-core machine: a run starts one server, and a
// test binary one for all its tests.
//
// Sessions: tickTime is 50 ms and the session timeouts a client may negotiate run from 100 ms to
// 10 minutes, so the timeout a client asks for (a workload's lease) is the one it gets.

#include <chrono>
#include <filesystem>
#include <string>
#include <sys/types.h>

namespace lockbench {

struct ZooKeeperServerOptions {
    int port = 0;               // 0: pick a free loopback port
    std::string java = "java";  // looked up in PATH unless it contains a '/'
    std::string jar = "/usr/share/java/zookeeper.jar";
    std::chrono::milliseconds start_timeout{30'000};
};

class ZooKeeperServer {
  public:
    // Starts the server and waits until it answers; throws EnvironmentError (redis_server.hpp)
    // when java or the package is missing, the port is busy or the server does not answer.
    explicit ZooKeeperServer(ZooKeeperServerOptions options = {});
    ~ZooKeeperServer();
    ZooKeeperServer(const ZooKeeperServer&) = delete;
    ZooKeeperServer& operator=(const ZooKeeperServer&) = delete;

    int port() const { return port_; }
    pid_t pid() const { return pid_; }
    // "127.0.0.1:PORT", the C client's connect string.
    std::string hosts() const { return "127.0.0.1:" + std::to_string(port_); }
    const std::filesystem::path& dir() const { return dir_; }
    bool running() const { return pid_ > 0; }
    // False if the process has exited since (reaps it).
    bool alive();

    // SIGTERM, then SIGKILL if it lingers.
    void stop();

    // Sends a four-letter word (ruok, srvr) and returns the answer; "" if none.
    std::string four_letter_word(const std::string& word) const;
    // The last lines of the server's log, to explain a failure.
    std::string log_tail(std::size_t lines = 5) const;

  private:
    void spawn();
    void wait_ready();

    ZooKeeperServerOptions options_;
    std::filesystem::path dir_;
    std::string java_path_;
    int port_ = 0;
    pid_t pid_ = -1;
};

}  // namespace lockbench
