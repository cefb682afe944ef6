#include "strategies/external/adapter_registry.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <unistd.h>

#include "strategies/external/adapter_process.hpp"

namespace lockbench {

namespace {

namespace fs = std::filesystem;

const fs::path kSource = LOCKBENCH_SOURCE_DIR;
const fs::path kBinary = LOCKBENCH_BINARY_DIR;

AdapterSpec python(std::string name, std::string summary, const std::string& file) {
    const fs::path script = kSource / "strategies/adapters" / file;
    return {std::move(name),
            std::move(summary),
            {"/usr/bin/python3", script.string()},
            {{script, "the source tree"}}};
}

AdapterSpec node(std::string name, std::string summary, const std::string& file) {
    const fs::path dir = kSource / "strategies/adapters/node";
    return {std::move(name),
            std::move(summary),
            {"node", (dir / file).string()},
            {{dir / file, "the source tree"},
             {dir / "node_modules", "npm ci in strategies/adapters/node (the bootstrap)"}}};
}

AdapterSpec curator(std::string name, std::string summary, const std::string& recipe) {
    const fs::path jar = kBinary / "adapters/curator-lock-adapter.jar";
    return {std::move(name),
            std::move(summary),
            {"java", "-jar", jar.string(), recipe},
            {{jar, "the build (javac and libcurator-recipes-java installed at configure time)"}}};
}

// The tail of an adapter's log: why a probe failed, in the adapter's own words.
std::string last_line_of(const fs::path& log) {
    std::ifstream in(log);
    std::string line, last;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") != std::string::npos)
            last = line;
    }
    return last.size() > 160 ? last.substr(0, 160) + "..." : last;
}

}  // namespace

const std::vector<AdapterSpec>& shipped_adapters() {
    static const std::vector<AdapterSpec> adapters{
        python("redis-py", "redis-py Lock (SET NX PX, Lua release) on one Redis master",
               "python/redis_py_lock.py"),
        python("kazoo", "kazoo Lock: ZooKeeper ephemeral sequential znodes",
               "python/kazoo_lock.py"),
        node("node-redlock", "node-redlock: Redlock over independent masters, auto-extension",
             "redlock_adapter.js"),
        node("redis-semaphore", "redis-semaphore Mutex: refresh timer, onLockLost",
             "redis_semaphore_adapter.js"),
        curator("curator-mutex", "Apache Curator InterProcessMutex on ZooKeeper", "mutex"),
        curator("curator-rwlock", "Apache Curator InterProcessReadWriteLock on ZooKeeper",
                "rwlock"),
        node("etcd3-lock", "etcd3 (npm) Lock: an etcd lease and a key per holder",
             "etcd3_lock_adapter.js"),
        python("null-adapter",
               "PROTOCOL.md's minimal in-memory adapter: the protocol's own cost, no server",
               "examples/minimal_adapter.py"),
    };
    return adapters;
}

std::optional<AdapterSpec> find_adapter(std::string_view strategy_name) {
    for (const auto& spec : shipped_adapters()) {
        if (spec.name == strategy_name)
            return spec;
    }
    if (strategy_name.starts_with(kCommandPrefix)) {
        const std::string command(strategy_name.substr(kCommandPrefix.size()));
        try {
            return AdapterSpec{std::string(strategy_name),
                               "your adapter: " + command,
                               split_command_line(command),
                               {}};
        } catch (const std::invalid_argument&) {
            return std::nullopt;
        }
    }
    return std::nullopt;
}

std::optional<std::string> missing_for(const AdapterSpec& spec) {
    if (!find_program(spec.argv.at(0)))
        return "runtime '" + spec.argv[0] + "' is not installed (not found on PATH)";
    for (const auto& [file, provider] : spec.needs) {
        std::error_code ignored;
        if (!fs::exists(file, ignored))
            return file.string() + " is missing (from " + provider + ")";
    }
    return std::nullopt;
}

AdapterProbe parse_probe(const std::string& adapter, const nlohmann::json& reply) {
    auto bad = [&](const std::string& what) {
        return AdapterUnavailable("adapter " + adapter + " answered the probe wrongly: " + what +
                                  " (got " + reply.dump().substr(0, 200) + ")");
    };
    if (reply.value("type", "") == "error")
        throw bad("an error, " + reply.value("code", std::string("?")) + ": " +
                  reply.value("text", std::string()));
    if (reply.value("type", "") != "init_ok")
        throw bad("expected type init_ok");
    AdapterProbe probe;
    const auto string_field = [&](const char* name) {
        const auto it = reply.find(name);
        if (it == reply.end() || !it->is_string() || it->get<std::string>().empty())
            throw bad(std::string("'") + name + "' must be a non-empty string");
        return it->get<std::string>();
    };
    probe.library = string_field("library");
    probe.version = string_field("version");
    const auto services = reply.find("services");
    if (services == reply.end() || !services->is_array())
        throw bad("'services' must be an array");
    for (const auto& s : *services) {
        static const std::vector<std::string> known{"redis", "redis-masters", "zookeeper", "etcd"};
        if (!s.is_string() ||
            std::find(known.begin(), known.end(), s.get<std::string>()) == known.end())
            throw bad("unknown service " + s.dump() + " (redis|redis-masters|zookeeper|etcd)");
        probe.services.push_back(s.get<std::string>());
    }
    const nlohmann::json caps = reply.value("capabilities", nlohmann::json::object());
    if (!caps.is_object())
        throw bad("'capabilities' must be an object");
    const auto flag = [&](const char* name) {
        const auto it = caps.find(name);
        if (it != caps.end() && !it->is_boolean())
            throw bad(std::string("capability '") + name + "' must be true or false");
        return it != caps.end() && it->get<bool>();
    };
    Capabilities& c = probe.capabilities;
    c.reentrant = flag("reentrant");
    c.shared_mode = flag("shared");
    c.fencing = flag("fencing");
    c.auto_renewal = flag("auto_renewal");
    c.renew = flag("renew");
    probe.lost_signal = flag("lost_signal");
    probe.concurrent = flag("concurrent");
    const auto needs = [&](const char* s) {
        return std::find(probe.services.begin(), probe.services.end(), s) != probe.services.end();
    };
    // What the run deploys follows from the services: the lock lives on ZooKeeper, on etcd, or on
    // N independent masters (deployment.cpp, workload.cpp read these as for our strategies).
    c.zookeeper = needs("zookeeper");
    c.multi_node = needs("redis-masters");
    c.etcd = needs("etcd");
    return probe;
}

const AdapterProbe& probe_adapter(const AdapterSpec& spec) {
    static std::mutex mutex;
    static std::map<std::string, std::unique_ptr<AdapterProbe>> probes;
    std::lock_guard lock(mutex);
    if (auto it = probes.find(spec.name); it != probes.end())
        return *it->second;
    if (auto missing = missing_for(spec))
        throw AdapterUnavailable("strategy " + spec.name + " is unavailable: " + *missing);
    const fs::path log =
        fs::temp_directory_path() / ("lockbench-probe-" + std::to_string(::getpid()) + ".log");
    std::error_code ignored;
    fs::remove(log, ignored);
    nlohmann::json reply;
    std::string failure;
    {
        EventLoop loop;
        try {
            AdapterProcess process(loop, AdapterLaunch{spec.argv, {}, log},
                                   "probe of " + spec.name);
            // A JVM's start and class loading take seconds on a busy machine.
            reply = run_sync(loop, process.call({{"type", "init"},
                                                 {"clients", nlohmann::json::array()},
                                                 {"namespace", "lockbench-probe"},
                                                 {"servers", nlohmann::json::object()},
                                                 {"options", nlohmann::json::object()}},
                                                std::chrono::seconds(30)));
            run_sync(loop, process.close(std::chrono::milliseconds(2000)));
        } catch (const std::exception& e) {
            failure = e.what();
        }
    }
    const std::string said = last_line_of(log);
    fs::remove(log, ignored);
    if (!failure.empty()) {
        throw AdapterUnavailable("strategy " + spec.name + " is unavailable: its probe failed (" +
                                 failure + ")" + (said.empty() ? "" : "; it said: " + said));
    }
    auto probe = std::make_unique<AdapterProbe>(parse_probe(spec.name, reply));
    return *probes.emplace(spec.name, std::move(probe)).first->second;
}

}  // namespace lockbench
