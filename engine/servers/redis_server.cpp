#include "engine/servers/redis_server.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <memory>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <system_error>
#include <thread>
#include <unistd.h>

extern char** environ;

namespace lockbench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string_view to_string(Persistence p) {
    switch (p) {
        case Persistence::None:
            return "none";
        case Persistence::AofEverysec:
            return "aof-everysec";
        case Persistence::AofAlways:
            return "aof-always";
    }
    return "?";
}

std::string find_executable(const std::string& name) {
    if (auto found = find_program(name))
        return found->string();
    if (name.find('/') != std::string::npos)
        throw EnvironmentError(name + " is not an executable file");
    throw EnvironmentError(name + " not found in PATH (scripts/bootstrap.sh installs it)");
}

ChildProcess start_server_process(const ChildLaunch& launch) {
    try {
        return ChildProcess(launch);
    } catch (const std::system_error& e) {
        throw EnvironmentError(e.what());
    }
}

RedisServer::RedisServer(RedisServerOptions options)
    : EmbeddedServer(3s), options_(std::move(options)) {
    binary_path_ = find_executable(options_.binary);
    dir_ = ServerDir("redis");
    if (options_.port == 0 && options_.netns_fd >= 0)
        options_.port = options_.sentinel_config.empty() ? 6379 : 26379;
    start_on_port(
        port_, options_.port, "",
        [&] {
            spawn();
            wait_ready();
        },
        [&](const EnvironmentError&) {
            return log_tail(20).find("Address already in use") != std::string::npos;
        });
}

void RedisServer::spawn() {
    std::vector<std::string> args{binary_path_};
    if (!options_.sentinel_config.empty()) {
        // A sentinel rewrites its configuration file as it learns: one of its own, written
        // once (a restart keeps what it learned).
        const fs::path conf = dir_.path() / "sentinel.conf";
        if (!fs::exists(conf)) {
            std::ofstream out(conf);
            out << options_.sentinel_config;
            if (!out)
                throw EnvironmentError("cannot write " + conf.string());
        }
        args.push_back(conf.string());
        args.push_back("--sentinel");
    }
    for (std::string& a : std::vector<std::string>{
             "--port",
             std::to_string(port_),
             std::string("--bind"),
             options_.host,
             std::string("--dir"),
             dir_.path().string(),
             std::string("--logfile"),
             (dir_.path() / "redis.log").string(),
             std::string("--daemonize"),
             std::string("no"),
             // Test servers are on loopback or in the run's own namespaces.
             std::string("--protected-mode"),
             std::string("no"),
         })
        args.push_back(std::move(a));
    if (options_.sentinel_config.empty())
        add_data_server_args(args);
    // It logs to --logfile; what it says before that file is open (a bad argument) reaches our
    // stderr.
    process_ = start_server_process(ChildLaunch{.argv = std::move(args),
                                                .netns_fd = options_.netns_fd,
                                                .stdin_from = ChildStream::Null,
                                                .stdout_to = ChildStream::Null,
                                                .stderr_to = ChildStream::Inherit,
                                                .role = "redis-server"});
}

void RedisServer::add_data_server_args(std::vector<std::string>& args) const {
    for (std::string& a : std::vector<std::string>{
             std::string("--save"),
             std::string(""),
             std::string("--enable-debug-command"),
             std::string("local"),
             std::string("--appendonly"),
             std::string(options_.persistence == Persistence::None ? "no" : "yes"),
             std::string("--appendfsync"),
             std::string(options_.persistence == Persistence::AofAlways ? "always" : "everysec"),
             std::string("--maxclients"),
             std::to_string(options_.maxclients),
             // Thousands of clients connect at the start of a run: the default backlog of 511
             // drops their SYNs and each retry costs a second (the kernel caps it at somaxconn).
             std::string("--tcp-backlog"),
             std::string("4096"),
             // Replicas (failover scenarios) sync at once, not after diskless sync's 5 s delay.
             std::string("--repl-diskless-sync-delay"),
             std::string("0"),
         })
        args.push_back(std::move(a));
    if (!options_.password.empty()) {
        args.push_back("--requirepass");
        args.push_back(options_.password);
    }
    for (const auto& a : options_.extra_args)
        args.push_back(a);
}

bool RedisServer::data_commands_answer() const {
    try {
        return command({"EXISTS", "lockbench:ready-probe"}).is_integer();
    } catch (const ReplyError& e) {
        // A cluster node answers CLUSTERDOWN (no slots yet) or MOVED: it is up. LOADING is not.
        return !std::string_view(e.what()).starts_with("LOADING");
    }
}

void RedisServer::wait_ready() {
    const Start start = wait_for_start(options_.start_timeout, 10ms, [this] {
        try {
            // Ours, and not another server that already had the port (a busy port must fail).
            // INFO (default sections) has process_id and, once an AOF is replayed, loading:0.
            auto info = command({"INFO"}).str;
            // A data command answers LOADING until an AOF is replayed; INFO does not wait. A
            // sentinel has no data commands.
            return info.find("process_id:" + std::to_string(process_.pid()) + "\r") !=
                       std::string::npos &&
                   (!options_.sentinel_config.empty() || data_commands_answer());
        } catch (const RedisError&) {
            return false;
        }
    });
    if (start == Start::Exited)
        throw EnvironmentError("redis-server exited at start: " + log_tail(1));
    if (start == Start::TimedOut)
        throw EnvironmentError("redis-server on port " + std::to_string(port_) +
                               " did not answer within " +
                               std::to_string(options_.start_timeout.count()) + " ms");
}

Reply RedisServer::command(const std::vector<std::string>& args) const {
    return command_once(endpoint(), args, 2s);
}

void RedisServer::restart(Persistence persistence) {
    kill();
    options_.persistence = persistence;
    spawn();
    try {
        wait_ready();
    } catch (...) {
        stop();
        throw;
    }
}

std::string RedisServer::log_tail(std::size_t lines) const {
    return lockbench::log_tail(dir_.path() / "redis.log", lines);
}

std::string output_of(const std::vector<std::string>& argv) {
    int out[2];
    if (::pipe(out) != 0)
        throw EnvironmentError(std::string("pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    std::vector<char*> args;
    for (const auto& a : argv)
        args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int spawned = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    ::close(out[1]);
    if (spawned != 0) {
        ::close(out[0]);
        throw EnvironmentError(argv[0] +
                               " not found (Debian: redis-tools): " + std::strerror(spawned));
    }
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
    }
    ::close(out[0]);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        const auto end = text.find_last_not_of("\r\n");
        const auto begin = end == std::string::npos ? end : text.rfind('\n', end);
        const std::string last =
            end == std::string::npos
                ? ""
                : text.substr(begin == std::string::npos ? 0 : begin + 1,
                              end - (begin == std::string::npos ? 0 : begin + 1) + 1);
        throw EnvironmentError(argv[0] + " failed (exit status " + std::to_string(status) + ")" +
                               (last.empty() ? "" : ": " + last));
    }
    return text;
}

}  // namespace lockbench
