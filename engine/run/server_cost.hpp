#pragma once

// What each server of a run spent on it, by the server's own accounting, read once every client
// is connected (before the first cycle) and again after the last client stopped: Redis's INFO
// (commandstats: calls and microseconds per command; cpu: the process's and its main thread's CPU),
// and for ZooKeeper and etcd lockbench started, the process's CPU from /proc/<pid>/stat. Never
// CONFIG RESETSTAT: on the user's server that would erase their statistics; two readings and their
// difference change nothing there.
//
// summary.json's `server_cost` (docs/results.md) puts it beside the engine's own CPU per
// cycle and says which side was the bottleneck.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <sys/types.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/topology/deployment.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

// A side whose CPU over the measured window is at least this share of what it can use (one core
// for Redis's command thread; the engine's event-loop threads; every core for a JVM or etcd) is
// saturated: it, not the other side, set the run's pace.
constexpr double kSaturatedShare = 0.85;

struct CommandStat {
    std::uint64_t calls = 0;
    std::uint64_t usec = 0;
};

// One server at one moment, or why it could not be read.
struct ServerReading {
    std::string error;  // not empty: nothing below is known
    // Redis: its run_id (another after a restart, whose counters begin again), role, CPU seconds
    // of the whole process and of the main thread (Redis 7; null before), and its commandstats.
    std::string run_id;
    std::string role;
    double cpu_s = 0;
    std::optional<double> main_thread_cpu_s;
    std::map<std::string, CommandStat> commands;
    // A process read from /proc: when it started (clock ticks after boot): another process
    // under the same pid after a restart has another.
    std::uint64_t start_ticks = 0;
};

// One server a run's clients use: a Redis node read with INFO, or a process lockbench started
// (ZooKeeper, etcd) read from /proc, or one neither way reaches (`not_measured` says why).
struct MeteredServer {
    std::string service;  // "redis", "zookeeper", "etcd"
    std::string node;     // HOST:PORT
    std::string role;     // "resource" for the protected resource's own server, else ""
    std::optional<Endpoint> redis;
    // The process's pid now (-1 when it is not running): after a restart it is another.
    std::function<pid_t()> pid;
    std::string not_measured;
};

// Every server of `deployment` the clients talk to: its Redis nodes (embedded: each master and
// replica, read directly rather than through a fault proxy; otherwise `external`, the user's),
// the protected resource's own server, and ZooKeeper and etcd - by process when lockbench
// started them, not measured (saying why) when they are the user's. Sentinels are left out: no
// lock command goes through them.
std::vector<MeteredServer> metered_servers(const Deployment& deployment,
                                           const std::vector<Endpoint>& external);

// Reads each server (a Redis node waits at most `timeout` for its INFO). Never throws: a server
// that cannot be read has its reading's `error`.
std::vector<ServerReading> read_servers(const std::vector<MeteredServer>& servers,
                                        std::chrono::milliseconds timeout);

// INFO's text (every section asked for) as a reading; a field missing from it stays unset.
ServerReading parse_redis_info(const std::string& info);
// /proc/<pid>/stat's line: CPU seconds (user + system, every thread) and start time; nullopt
// when it is not such a line.
std::optional<ServerReading> parse_proc_stat(const std::string& line, long ticks_per_second);

struct EngineCost {
    double cpu_s = 0;      // getrusage over the measured run
    double elapsed_s = 0;  // the run's duration
    double cores = 1;      // what its event loops can use: min(threads, the machine's cores)
    std::uint64_t cycles = 0;
};

// summary.json's `server_cost`: per node and in total cpu_us, commands, cpu_us_per_cycle,
// cpu_us_per_command and (Redis) each command's calls and usec_per_call over the window between
// the two readings (`window_s`), the engine's CPU per cycle, and `bottleneck`. The one INFO
// lockbench's first reading added is not counted.
nlohmann::json server_cost_json(const std::vector<MeteredServer>& servers,
                                const std::vector<ServerReading>& before,
                                const std::vector<ServerReading>& after, double window_s,
                                const EngineCost& engine);

// report.txt's line (no newline): "server: 12.3 µs CPU per lock cycle (4.1 per command) ·
// engine: 30.2 µs per cycle · bottleneck: engine (0.92 of a core)".
std::string server_cost_line(const nlohmann::json& server_cost);

}  // namespace lockbench
