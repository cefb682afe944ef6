#include "engine/ci/yardstick.hpp"

#include <chrono>
#include <cmath>

#include "engine/ci/throughput_stats.hpp"
#include "engine/servers/redis_server.hpp"
#include "strategies/client/event_loop.hpp"
#include "strategies/client/redis_connection.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

// The release a set_nx_px cycle sends, as a script redis-benchmark can send with EVAL.
constexpr const char* kReleaseScript =
    "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) "
    "else return 0 end";

// requests/s from redis-benchmark --csv: the last line's second field, quoted.
double rps_of(const std::string& csv, const std::string& tool) {
    std::size_t end = csv.find_last_not_of("\r\n");
    if (end == std::string::npos)
        throw EnvironmentError(tool + " printed nothing");
    const std::size_t begin = csv.rfind('\n', end);
    const std::string line = csv.substr(begin == std::string::npos ? 0 : begin + 1, end + 1);
    // The first field is the command, quoted, and may hold commas itself.
    const std::size_t first_end = line.starts_with('"') ? line.find('"', 1) : line.find(',') - 1;
    const std::size_t comma =
        first_end == std::string::npos ? first_end : line.find(',', first_end);
    if (comma == std::string::npos)
        throw EnvironmentError(tool + " printed no CSV: " + line);
    std::string field = line.substr(comma + 1, line.find(',', comma + 1) - comma - 1);
    std::erase(field, '"');
    char* rest = nullptr;
    const double rps = std::strtod(field.c_str(), &rest);
    if (rest == field.c_str() || !(rps > 0))
        throw EnvironmentError(tool + " printed no rate: " + line);
    return rps;
}

}  // namespace

namespace {

void summarise(YardstickPoint& p) {
    p.cycles_per_s = median_of(p.samples);
    std::vector<double> deviations;
    for (double x : p.samples)
        deviations.push_back(std::fabs(x - p.cycles_per_s));
    p.noise = p.cycles_per_s > 0 ? median_of(deviations) / p.cycles_per_s : 0;
}

}  // namespace

void Yardstick::absorb(const Yardstick& later) {
    for (auto& p : points) {
        for (const auto& q : later.points) {
            if (q.connections != p.connections)
                continue;
            p.samples.insert(p.samples.end(), q.samples.begin(), q.samples.end());
            p.set_rps = (p.set_rps + q.set_rps) / 2;
            p.release_rps = (p.release_rps + q.release_rps) / 2;
            summarise(p);
        }
    }
    if (lockbench_cycles_per_s && later.lockbench_cycles_per_s)
        lockbench_cycles_per_s = (*lockbench_cycles_per_s + *later.lockbench_cycles_per_s) / 2;
}

json Yardstick::to_json() const {
    json ps = json::array();
    for (const auto& p : points) {
        ps.push_back({{"connections", p.connections},
                      {"set_rps", p.set_rps},
                      {"release_rps", p.release_rps},
                      {"cycles_per_s", p.cycles_per_s},
                      {"noise", p.noise},
                      {"samples", p.samples}});
    }
    return {{"tool", tool},
            {"points", ps},
            {"lockbench_cycles_per_s",
             lockbench_cycles_per_s ? json(*lockbench_cycles_per_s) : json(nullptr)}};
}

std::optional<Yardstick> Yardstick::from_json(const json& j) {
    // Every field is checked before it is read: json::value() throws a type_error on a field of
    // the wrong kind, which escaped the gate as an internal error (exit 5), not bad input.
    const auto number_or = [](const json& o, const char* field, double fallback) {
        const auto it = o.find(field);
        return it == o.end()     ? std::optional<double>(fallback)
               : it->is_number() ? std::optional<double>(it->get<double>())
                                 : std::nullopt;
    };
    if (!j.is_object() || !j.contains("points") || !j["points"].is_array() || j["points"].empty())
        return std::nullopt;
    Yardstick y;
    if (const auto tool = j.find("tool"); tool != j.end()) {
        if (!tool->is_string())
            return std::nullopt;
        y.tool = tool->get<std::string>();
    }
    for (const auto& p : j["points"]) {
        if (!p.is_object() || !p.contains("cycles_per_s") || !p["cycles_per_s"].is_number())
            return std::nullopt;
        YardstickPoint point;
        point.cycles_per_s = p["cycles_per_s"].get<double>();
        const auto connections = number_or(p, "connections", 1);
        const auto set_rps = number_or(p, "set_rps", 0);
        const auto release_rps = number_or(p, "release_rps", 0);
        const auto noise = number_or(p, "noise", 0);
        // A count as a double would be undefined behaviour on conversion beyond int's range.
        if (!connections || !set_rps || !release_rps || !noise || !(*connections >= 1) ||
            !(*connections <= 1e6) || *connections != std::floor(*connections))
            return std::nullopt;
        point.connections = static_cast<int>(*connections);
        point.set_rps = *set_rps;
        point.release_rps = *release_rps;
        point.noise = *noise;
        if (const auto samples = p.find("samples"); samples != p.end()) {
            if (!samples->is_array())
                return std::nullopt;
            for (const auto& sample : *samples) {
                if (!sample.is_number())
                    return std::nullopt;
                point.samples.push_back(sample.get<double>());
            }
        }
        y.points.push_back(std::move(point));
    }
    if (const auto own = j.find("lockbench_cycles_per_s"); own != j.end() && own->is_number())
        y.lockbench_cycles_per_s = own->get<double>();
    return y;
}

namespace {

// The same cycle through lockbench's RedisConnection: SET key token NX PX, then the release.
double own_cycles_per_s(const Endpoint& endpoint, int cycles) {
    EventLoop loop;
    RedisConnection connection(loop, endpoint);
    const auto body = [&]() -> Task<double> {
        co_await connection.command("PING");  // connected before the clock starts
        const auto start = std::chrono::steady_clock::now();
        for (int i = 0; i < cycles; ++i) {
            const std::string key = "lock:" + std::to_string(i % 100'000);
            co_await connection.command("SET", key, "tok", "NX", "PX", "30000");
            co_await connection.command("EVAL", kReleaseScript, "1", key, "tok");
        }
        const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
        co_return took.count() > 0 ? cycles / took.count() : 0;
    };
    return run_sync(loop, body());
}

}  // namespace

Yardstick measure_yardstick(int connections, int repeats, const std::string& redis_benchmark) {
    RedisServer server;
    const std::string port = std::to_string(server.port());
    Yardstick y;
    for (int c : {1, connections}) {
        const std::string requests = std::to_string(c == 1 ? 10'000 : 30'000);
        const auto bench = [&](std::vector<std::string> command) {
            std::vector<std::string> argv{
                redis_benchmark,   "-h", "127.0.0.1", "-p", port,     "-c",
                std::to_string(c), "-n", requests,    "-r", "100000", "--csv"};
            argv.insert(argv.end(), command.begin(), command.end());
            return rps_of(output_of(argv), redis_benchmark);
        };
        std::vector<double> sets, releases, cycles;
        for (int i = 0; i < repeats; ++i) {
            const double set = bench({"set", "lock:__rand_int__", "tok", "NX", "PX", "30000"});
            const double release = bench({"eval", kReleaseScript, "1", "lock:__rand_int__", "tok"});
            sets.push_back(set);
            releases.push_back(release);
            cycles.push_back(1 / (1 / set + 1 / release));
        }
        YardstickPoint p;
        p.connections = c;
        p.set_rps = median_of(sets);
        p.release_rps = median_of(releases);
        p.samples = cycles;
        summarise(p);
        y.points.push_back(p);
    }
    y.lockbench_cycles_per_s = own_cycles_per_s(server.endpoint(), 5'000);
    return y;
}

}  // namespace lockbench
