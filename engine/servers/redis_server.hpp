#pragma once

// An embedded redis-server: started from PATH on a free loopback port in its own temp dir,
// waited for until it answers PING, and stopped on every exit path (destructor; and if lockbench
// itself dies, the kernel kills it through PR_SET_PDEATHSIG). It runs in its own process group so
// a Ctrl-C at the terminal reaches lockbench only, which then stops the server in order.
//
// Faults act on it directly: pause()/resume() (SIGSTOP/SIGCONT), kill() (SIGKILL) and restart()
// on the same port and data dir, so an AOF written before the crash is replayed (T4).

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <sys/types.h>
#include <utility>
#include <vector>

#include "engine/servers/embedded_server.hpp"  // EnvironmentError, ServerDir
#include "strategies/client/child_process.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

enum class Persistence { None, AofEverysec, AofAlways };
std::string_view to_string(Persistence p);

struct RedisServerOptions {
    Persistence persistence = Persistence::None;
    int port = 0;                         // 0: pick a free loopback port
    std::string binary = "redis-server";  // looked up in PATH unless it contains a '/'
    std::string password;                 // requirepass, if not empty
    // Redis's own default; a run sizes it for its clients (it needs the file descriptors too).
    int maxclients = 10'000;
    std::chrono::milliseconds start_timeout{10'000};
    std::vector<std::string> extra_args;  // e.g. {"--replicaof", "127.0.0.1", "7001"}
    // A host in a network namespace (network_lab.hpp): the namespace to run in and the address
    // to bind there; the port is then 6379 (26379 for a sentinel) unless given - every host has
    // its own.
    int netns_fd = -1;
    std::string host = "127.0.0.1";
    // Not empty: a Redis Sentinel (redis-server --sentinel) with this configuration (its `sentinel
    // monitor …` lines), which it rewrites as it learns.
    std::string sentinel_config;
};

class RedisServer : public EmbeddedServer {
  public:
    // Starts the server and waits until it answers; throws EnvironmentError otherwise.
    explicit RedisServer(RedisServerOptions options = {});

    int port() const { return port_; }
    Endpoint endpoint() const { return Endpoint{options_.host, port_, options_.password}; }
    const RedisServerOptions& options() const { return options_; }

    // Starts again on the same port and dir, with `persistence` (AOF files left by the previous
    // run are replayed if the new mode has AOF on).
    void restart(Persistence persistence);
    void restart() { restart(options_.persistence); }

    // Sends one command synchronously (for setup, faults and tests); throws RedisError.
    Reply command(const std::vector<std::string>& args) const;

    // The last lines of the server's log, to explain a failure.
    std::string log_tail(std::size_t lines = 5) const;

  private:
    void spawn();
    void add_data_server_args(std::vector<std::string>& args) const;
    void wait_ready();
    bool data_commands_answer() const;

    RedisServerOptions options_;
    std::string binary_path_;
    int port_ = 0;
};

// Resolves `name` in PATH (or checks it if it has a '/'); throws EnvironmentError if missing.
std::string find_executable(const std::string& name);
// Runs argv (a Redis tool: redis-cli, redis-benchmark), returns its standard output; throws
// EnvironmentError naming the tool when it is missing or fails (with its last line of output).
std::string output_of(const std::vector<std::string>& argv);
// Starts a server's process; what keeps it from starting (fork, exec) is the machine's:
// EnvironmentError.
ChildProcess start_server_process(const ChildLaunch& launch);

}  // namespace lockbench
