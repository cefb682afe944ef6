#include "engine/run/server_cost.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include "strategies/client/event_loop.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

// Lockbench's own readings are not commands of the run: Redis counts the first reading's INFO
// once it has answered, so the second reading sees it, and with a password the second
// reading's AUTH too (it runs before that INFO).
std::uint64_t own_calls(const std::string& command, const MeteredServer& server) {
    if (command == "info")
        return 1;
    if (command == "auth" && server.redis && !server.redis->password.empty())
        return 1;
    return 0;
}

double number_or(const std::string& text, double fallback) {
    try {
        return std::stod(text);
    } catch (const std::exception&) {
        return fallback;
    }
}

// "calls=12,usec=34,usec_per_call=2.83,rejected_calls=0,failed_calls=0"
CommandStat parse_command_stat(const std::string& fields) {
    CommandStat stat;
    std::stringstream list(fields);
    for (std::string field; std::getline(list, field, ',');) {
        const auto eq = field.find('=');
        if (eq == std::string::npos)
            continue;
        const std::string name = field.substr(0, eq);
        const std::string value = field.substr(eq + 1);
        try {
            if (name == "calls")
                stat.calls = std::stoull(value);
            else if (name == "usec")
                stat.usec = std::stoull(value);
        } catch (const std::exception&) {
        }
    }
    return stat;
}

ServerReading read_redis(const Endpoint& endpoint, std::chrono::milliseconds timeout) {
    try {
        EventLoop loop;
        RedisConnection c(loop, endpoint, {.connect_timeout = timeout, .command_timeout = timeout});
        // "all" rather than the sections by name: Redis before 7 takes one section only.
        Reply reply = run_sync(loop, [](RedisConnection& conn) -> Task<Reply> {
            co_return co_await conn.command("INFO", "all");
        }(c));
        ServerReading reading = parse_redis_info(reply.as_string());
        if (reading.run_id.empty())
            reading.error = "its INFO names no run_id";
        return reading;
    } catch (const std::exception& e) {
        ServerReading failed;
        failed.error = std::string("INFO failed: ") + e.what();
        return failed;
    }
}

ServerReading read_process(pid_t pid) {
    ServerReading reading;
    if (pid <= 0) {
        reading.error = "its process is not running";
        return reading;
    }
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    std::getline(in, line);
    if (auto parsed = parse_proc_stat(line, sysconf(_SC_CLK_TCK)))
        return *parsed;
    reading.error = "cannot read /proc/" + std::to_string(pid) + "/stat";
    return reading;
}

// How many cores a node's work can use: Redis runs commands on one thread, a JVM and etcd on
// all of the machine's.
double capacity_of(const MeteredServer& server) {
    if (server.redis)
        return 1;
    return static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
}

json per_cycle(double us, std::uint64_t cycles) {
    return cycles ? json(us / static_cast<double>(cycles)) : json(nullptr);
}

std::string cores_text(double used, double capacity) {
    char text[64];
    if (capacity <= 1)
        std::snprintf(text, sizeof text, "%.2f of a core", used);
    else
        std::snprintf(text, sizeof text, "%.2f of %.0f cores", used, capacity);
    return text;
}

// What the nodes add up to, and the busiest of them, gathered node by node.
struct CostTotals {
    double total_cpu_us = 0, counted_cpu_us = 0;
    std::uint64_t total_commands = 0;
    bool any_measured = false, any_counted = false;
    std::size_t not_measured = 0;
    // The busiest node, by the share of what it can use.
    double busiest_share = -1, busiest_cores = 0, busiest_capacity = 1;
    std::string busiest_node;
};

// Why a node's two readings cannot be subtracted; "" when they can.
std::string why_not_measured(const ServerReading& b, const ServerReading& a) {
    if (!b.error.empty())
        return b.error;
    if (!a.error.empty())
        return "after the run: " + a.error;
    if (b.run_id != a.run_id || b.start_ticks != a.start_ticks || a.cpu_s < b.cpu_s)
        return "restarted during the run: its counters began again";
    return "";
}

// The run's commands on one Redis node, without those lockbench sent itself; adds to `node`
// and returns how many there were.
std::uint64_t add_command_counts(json& node, const MeteredServer& server, const ServerReading& b,
                                 const ServerReading& a, double cpu_us) {
    json per_command = json::object();
    std::uint64_t commands = 0;
    for (const auto& [name, stat] : a.commands) {
        CommandStat delta = stat;
        if (auto was = b.commands.find(name); was != b.commands.end()) {
            delta.calls -= std::min(delta.calls, was->second.calls);
            delta.usec -= std::min(delta.usec, was->second.usec);
        }
        if (const std::uint64_t own = std::min(own_calls(name, server), delta.calls); own > 0) {
            delta.usec -= delta.usec * own / delta.calls;
            delta.calls -= own;
        }
        if (delta.calls == 0)
            continue;
        commands += delta.calls;
        per_command[name] = {
            {"calls", delta.calls},
            {"usec", delta.usec},
            {"usec_per_call", static_cast<double>(delta.usec) / static_cast<double>(delta.calls)}};
    }
    node["commands"] = commands;
    node["cpu_us_per_command"] =
        commands ? json(cpu_us / static_cast<double>(commands)) : json(nullptr);
    node["per_command"] = per_command;
    return commands;
}

json node_cost_json(const MeteredServer& server, const ServerReading& b, const ServerReading& a,
                    double window_s, std::uint64_t cycles, CostTotals& totals) {
    json node{{"service", server.service}, {"node", server.node}};
    if (const std::string why = why_not_measured(b, a); !why.empty()) {
        ++totals.not_measured;
        if (!server.role.empty())
            node["role"] = server.role;
        node["not_measured"] = why;
        return node;
    }
    totals.any_measured = true;
    const double cpu_us = (a.cpu_s - b.cpu_s) * 1e6;
    // Redis runs every command on its main thread: that thread's share is what saturates.
    const double busy_s = a.main_thread_cpu_s && b.main_thread_cpu_s
                              ? *a.main_thread_cpu_s - *b.main_thread_cpu_s
                              : a.cpu_s - b.cpu_s;
    const double cores = window_s > 0 ? busy_s / window_s : 0;
    const double capacity = capacity_of(server);
    node["role"] =
        server.role.empty() ? (a.role.empty() ? json(nullptr) : json(a.role)) : json(server.role);
    node["source"] = server.redis ? "INFO" : "/proc/<pid>/stat";
    node["cpu_us"] = cpu_us;
    node["main_thread_cpu_us"] =
        a.main_thread_cpu_s && b.main_thread_cpu_s ? json(busy_s * 1e6) : json(nullptr);
    node["cores"] = cores;
    node["cpu_us_per_cycle"] = per_cycle(cpu_us, cycles);
    totals.total_cpu_us += cpu_us;
    if (capacity > 0 && cores / capacity > totals.busiest_share) {
        totals.busiest_share = cores / capacity;
        totals.busiest_cores = cores;
        totals.busiest_capacity = capacity;
        totals.busiest_node = server.service + " " + server.node;
    }
    if (!server.redis) {
        node["commands"] = nullptr;
        node["cpu_us_per_command"] = nullptr;
        return node;
    }
    totals.total_commands += add_command_counts(node, server, b, a, cpu_us);
    totals.counted_cpu_us += cpu_us;
    totals.any_counted = true;
    return node;
}

json total_cost_json(const CostTotals& totals, std::uint64_t cycles) {
    if (!totals.any_measured)
        return nullptr;
    return {{"cpu_us", totals.total_cpu_us},
            {"commands", totals.any_counted ? json(totals.total_commands) : json(nullptr)},
            {"cpu_us_per_cycle", per_cycle(totals.total_cpu_us, cycles)},
            // Only the nodes that count their commands (Redis) are divided by them.
            {"cpu_us_per_command",
             totals.total_commands
                 ? json(totals.counted_cpu_us / static_cast<double>(totals.total_commands))
                 : json(nullptr)},
            {"nodes_not_measured", totals.not_measured}};
}

json bottleneck_json(const CostTotals& totals, const EngineCost& engine) {
    const double engine_cores = engine.elapsed_s > 0 ? engine.cpu_s / engine.elapsed_s : 0;
    const bool engine_saturated = engine_cores >= kSaturatedShare * engine.cores;
    const bool server_saturated = totals.busiest_share >= kSaturatedShare;
    const bool any_measured = totals.any_measured;
    std::string side = engine_saturated && server_saturated ? "both"
                       : engine_saturated                   ? "engine"
                       : server_saturated                   ? "server"
                       : any_measured                       ? "neither"
                                                            : "unknown";
    return {{"side", side},
            {"saturated_at", kSaturatedShare},
            {"engine_cores", engine_cores},
            {"engine_capacity", engine.cores},
            {"server_cores", any_measured ? json(totals.busiest_cores) : json(nullptr)},
            {"server_capacity", any_measured ? json(totals.busiest_capacity) : json(nullptr)},
            {"server_node", any_measured ? json(totals.busiest_node) : json(nullptr)}};
}

}  // namespace

std::vector<MeteredServer> metered_servers(const Deployment& deployment,
                                           const std::vector<Endpoint>& external) {
    std::vector<MeteredServer> out;
    auto add_redis = [&](const Endpoint& endpoint, std::string role) {
        out.push_back(MeteredServer{.service = "redis",
                                    .node = endpoint.to_string(),
                                    .role = std::move(role),
                                    .redis = endpoint});
    };
    if (deployment.embedded) {
        for (const auto& server : deployment.servers)
            add_redis(server->endpoint(), "");
    } else {
        for (const auto& endpoint : external)
            add_redis(endpoint, "");
    }
    if (deployment.resource_server)
        add_redis(deployment.resource_server->endpoint(), "resource");
    if (deployment.zookeeper) {
        for (std::size_t i = 0; i < deployment.zookeeper->size(); ++i) {
            const ZooKeeperServer& member = deployment.zookeeper->server(i);
            out.push_back(MeteredServer{.service = "zookeeper",
                                        .node = member.hosts(),
                                        .pid = [&member] { return member.pid(); }});
        }
    } else if (!deployment.zookeeper_hosts.empty()) {
        out.push_back(MeteredServer{
            .service = "zookeeper",
            .node = deployment.zookeeper_hosts,
            .not_measured = "the user's ZooKeeper (--zookeeper): its process is not lockbench's "
                            "to read, and ZooKeeper has no CPU counter to ask for"});
    }
    if (deployment.etcd) {
        for (std::size_t i = 0; i < deployment.etcd->size(); ++i) {
            const EtcdServer& member = deployment.etcd->member(i);
            out.push_back(MeteredServer{.service = "etcd",
                                        .node = member.endpoint().to_string(),
                                        .pid = [&member] { return member.pid(); }});
        }
    } else {
        for (const auto& endpoint : deployment.etcd_endpoints) {
            out.push_back(MeteredServer{
                .service = "etcd",
                .node = endpoint.to_string(),
                .not_measured =
                    "the user's etcd (--etcd): its process is not lockbench's to read"});
        }
    }
    return out;
}

std::vector<ServerReading> read_servers(const std::vector<MeteredServer>& servers,
                                        std::chrono::milliseconds timeout) {
    std::vector<ServerReading> out;
    out.reserve(servers.size());
    for (const auto& server : servers) {
        if (!server.not_measured.empty()) {
            out.push_back(ServerReading{.error = server.not_measured});
        } else if (server.redis) {
            out.push_back(read_redis(*server.redis, timeout));
        } else {
            out.push_back(read_process(server.pid ? server.pid() : -1));
        }
    }
    return out;
}

ServerReading parse_redis_info(const std::string& info) {
    ServerReading reading;
    double user = 0, sys = 0;
    std::optional<double> main_user, main_sys;
    std::stringstream lines(info);
    for (std::string line; std::getline(lines, line);) {
        if (!line.empty() && line.back() == '\r')
            line.pop_back();
        const auto colon = line.find(':');
        if (line.empty() || line[0] == '#' || colon == std::string::npos)
            continue;
        const std::string key = line.substr(0, colon);
        const std::string value = line.substr(colon + 1);
        if (key == "run_id")
            reading.run_id = value;
        else if (key == "role")
            reading.role = value;
        else if (key == "used_cpu_user")
            user = number_or(value, 0);
        else if (key == "used_cpu_sys")
            sys = number_or(value, 0);
        else if (key == "used_cpu_user_main_thread")
            main_user = number_or(value, 0);
        else if (key == "used_cpu_sys_main_thread")
            main_sys = number_or(value, 0);
        else if (key.rfind("cmdstat_", 0) == 0)
            reading.commands[key.substr(8)] = parse_command_stat(value);
    }
    reading.cpu_s = user + sys;
    if (main_user && main_sys)
        reading.main_thread_cpu_s = *main_user + *main_sys;
    return reading;
}

std::optional<ServerReading> parse_proc_stat(const std::string& line, long ticks_per_second) {
    // The command name (field 2) is in parentheses and may hold spaces and ')': the fields
    // after the last ')' are plain numbers, the process state first (field 3).
    const auto close = line.rfind(')');
    if (close == std::string::npos || ticks_per_second <= 0)
        return std::nullopt;
    std::istringstream rest(line.substr(close + 1));
    std::vector<std::string> fields;
    for (std::string field; rest >> field;)
        fields.push_back(field);
    // utime, stime and starttime are fields 14, 15 and 22: 11, 12 and 19 after the state.
    if (fields.size() < 20)
        return std::nullopt;
    try {
        ServerReading reading;
        const auto ticks = std::stoull(fields[11]) + std::stoull(fields[12]);
        reading.cpu_s = static_cast<double>(ticks) / static_cast<double>(ticks_per_second);
        reading.start_ticks = std::stoull(fields[19]);
        return reading;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

json server_cost_json(const std::vector<MeteredServer>& servers,
                      const std::vector<ServerReading>& before,
                      const std::vector<ServerReading>& after, double window_s,
                      const EngineCost& engine) {
    const std::uint64_t cycles = engine.cycles;
    json nodes = json::array();
    CostTotals totals;
    for (std::size_t i = 0; i < servers.size(); ++i)
        nodes.push_back(
            node_cost_json(servers[i], before.at(i), after.at(i), window_s, cycles, totals));
    return json{{"cycles", cycles},
                {"window_s", window_s},
                {"nodes", nodes},
                {"total", total_cost_json(totals, cycles)},
                {"engine",
                 {{"cpu_us", engine.cpu_s * 1e6},
                  {"cpu_us_per_cycle", per_cycle(engine.cpu_s * 1e6, cycles)}}},
                {"bottleneck", bottleneck_json(totals, engine)}};
}

std::string server_cost_line(const json& cost) {
    char text[160];
    std::string out = "server: ";
    const json& total = cost.value("total", json());
    if (!total.is_object()) {
        out += "not measured";
        for (const auto& node : cost.value("nodes", json::array())) {
            if (node.contains("not_measured")) {
                out += " (" + node["not_measured"].get<std::string>() + ")";
                break;
            }
        }
    } else if (total["cpu_us_per_cycle"].is_number()) {
        std::snprintf(text, sizeof text, "%.1f µs CPU per lock cycle",
                      total["cpu_us_per_cycle"].get<double>());
        out += text;
        if (total["cpu_us_per_command"].is_number()) {
            // ZooKeeper and etcd count no commands: a per-command figure is then Redis's alone.
            const auto& nodes = cost["nodes"];
            const bool redis_only = std::any_of(nodes.begin(), nodes.end(), [](const json& n) {
                return !n.contains("not_measured") && n["commands"].is_null();
            });
            std::snprintf(text, sizeof text, " (%.1f per %scommand)",
                          total["cpu_us_per_command"].get<double>(), redis_only ? "Redis " : "");
            out += text;
        }
    } else {
        std::snprintf(text, sizeof text, "%.0f µs CPU, no cycle completed",
                      total["cpu_us"].get<double>());
        out += text;
    }
    if (total.is_object() && total.value("nodes_not_measured", 0) > 0) {
        for (const auto& node : cost["nodes"]) {
            if (node.contains("not_measured")) {
                out += "; not measured: " + node["service"].get<std::string>() + " " +
                       node["node"].get<std::string>() + " (" +
                       node["not_measured"].get<std::string>() + ")";
            }
        }
    }
    const json& engine = cost.value("engine", json());
    if (engine.is_object() && engine["cpu_us_per_cycle"].is_number()) {
        std::snprintf(text, sizeof text, " · engine: %.1f µs per cycle",
                      engine["cpu_us_per_cycle"].get<double>());
        out += text;
    }
    const json& b = cost.value("bottleneck", json());
    if (!b.is_object())
        return out;
    const std::string side = b["side"].get<std::string>();
    const std::string engine_text =
        "engine (" +
        cores_text(b["engine_cores"].get<double>(), b["engine_capacity"].get<double>()) + ")";
    const std::string server_text =
        b["server_cores"].is_number()
            ? "server (" +
                  cores_text(b["server_cores"].get<double>(), b["server_capacity"].get<double>()) +
                  ")"
            : "server (not measured)";
    out += " · bottleneck: ";
    if (side == "engine")
        out += engine_text;
    else if (side == "server")
        out += server_text;
    else if (side == "both")
        out += engine_text + " and " + server_text;
    else
        out += side + ": " + engine_text + ", " + server_text;
    return out;
}

}  // namespace lockbench
