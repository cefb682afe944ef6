// The `lockbench` command line (a contract: CI scripts depend on it; see README.md).
// Every error ends here as one line on stderr and a documented exit code:
// 0 success/valid, 1 violation or unexpected outcome, 2 bad input or usage, 3 unknown,
// 4 environment (no redis-server, port busy, Redis down, a system call or the disk failing),
// 5 internal error (a bug in lockbench, reported with its message).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <new>
#include <optional>
#include <signal.h>
#include <sstream>
#include <system_error>
#include <type_traits>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include "checker/check.hpp"
#include "checker/edn.hpp"
#include "checker/jepsen_history.hpp"
#include "checker/story/story.hpp"
#include "engine/ci/gate.hpp"
#include "engine/ci/suite.hpp"
#include "engine/cli/compare_command.hpp"
#include "engine/cli/user_input.hpp"
#include "engine/run/ramp.hpp"
#include "engine/run/run.hpp"
#include "engine/run/scenario_list.hpp"
#include "engine/run/summary.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "engine/topology/inventory.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/registry.hpp"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitEnvironment = 4;
constexpr int kExitInternal = 5;

// Set by SIGINT/SIGTERM/SIGHUP; the run notices, stops its clients and still writes a valid
// result. SIGHUP too: closing the ssh session of a long suite must not lose its finished runs
// (nor leave results/.tmp-* behind), which the signal's default action would.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_interrupt(int) {
    g_interrupted.store(true);
}

// 86400000, not 8.64e+07: a bound as a person writes it.
template <typename T>
std::string bound_words(T bound) {
    if constexpr (std::is_integral_v<T>) {
        return std::to_string(bound);
    } else {
        if (bound == std::floor(bound) && std::fabs(bound) < 1e15)
            return std::to_string(static_cast<long long>(bound));
        std::ostringstream os;
        os << bound;
        return os.str();
    }
}

// A number flag with bounds, worded as the workload file's errors are ("--hold-ms: must be
// between 0 and 86400000, not 1e300"): a negative or huge value would overflow the clock types a
// run computes with, or reach the workload reader and be named by a JSON path the user never
// wrote. --help shows the range.
template <typename T>
CLI::Validator within(T lo, T hi) {
    const std::string type = std::is_floating_point_v<T> ? "FLOAT"
                             : std::is_signed_v<T>       ? "INT"
                                                         : "UINT";
    const std::string lo_words = bound_words(lo), hi_words = bound_words(hi);
    return CLI::Validator(
        [lo, hi, lo_words, hi_words](std::string& text) -> std::string {
            T value{};
            if (CLI::detail::lexical_cast(text, value) && value >= lo && value <= hi)
                return {};
            return "must be between " + lo_words + " and " + hi_words + ", not " + text;
        },
        type + " in [" + lo_words + " - " + hi_words + "]");
}

void install_interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);
}

struct RunFlags {
    std::string workload_file;
    std::optional<std::string> strategy;
    std::optional<std::string> client_command;
    std::optional<int> clients, keys, threads;
    std::optional<double> duration, hold_ms, think_ms, rate;
    std::optional<std::string> arrivals;
    std::optional<std::int64_t> lease_ms, wait_ms;
    std::optional<std::uint64_t> seed;
    std::optional<std::string> resource;
    std::string redis;
    lockbench::cli::RedisAccessFlags access;
    std::string inventory;
    std::string zookeeper;
    std::string etcd;
    std::string out = "results";
    std::string clients_ramp;
    std::optional<int> repeat;
    bool no_yardstick = false;
};

// --inventory FILE: the user's deployment, node by node (engine/topology/inventory.hpp).
std::optional<lockbench::Inventory> load_inventory(const std::string& file) {
    if (file.empty())
        return std::nullopt;
    return lockbench::Inventory::load(file);
}

// --zookeeper HOST:PORT[,HOST:PORT...]: the user's own ensemble ("" for none), as the C client
// takes it.
std::string parse_zookeeper_list(const std::string& list_text) {
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        try {
            lockbench::Endpoint::parse(item);
        } catch (const std::invalid_argument& e) {
            throw lockbench::WorkloadError(std::string("--zookeeper: ") + e.what());
        }
    }
    if (!list_text.empty() && (list_text.back() == ',' || list_text.front() == ','))
        throw lockbench::WorkloadError("--zookeeper: an empty HOST:PORT in '" + list_text + "'");
    return list_text;
}

// --etcd HOST:PORT[,HOST:PORT...]: the user's own etcd, every member's client port (none for
// an empty list).
std::vector<lockbench::Endpoint> parse_etcd_list(const std::string& list_text) {
    std::vector<lockbench::Endpoint> endpoints;
    if (list_text.empty())
        return endpoints;
    if (list_text.back() == ',' || list_text.front() == ',')
        throw lockbench::WorkloadError("--etcd: an empty HOST:PORT in '" + list_text + "'");
    std::stringstream list(list_text);
    for (std::string item; std::getline(list, item, ',');) {
        try {
            endpoints.push_back(lockbench::Endpoint::parse(item));
        } catch (const std::invalid_argument& e) {
            throw lockbench::WorkloadError(std::string("--etcd: ") + e.what());
        }
    }
    return endpoints;
}

int run_command(const RunFlags& f) {
    using namespace lockbench;
    if (f.repeat && !f.clients_ramp.empty())
        throw WorkloadError("--repeat repeats one run; a --clients-ramp is many: drop one of them");
    Workload w = f.workload_file.empty() ? Workload{} : Workload::load(f.workload_file);
    // Flags override the file (the run's workload.json records the result).
    nlohmann::json j = w.to_json();
    if (f.client_command) {
        if (f.strategy)
            throw WorkloadError(
                "--client-command names the strategy itself: give --strategy or "
                "--client-command, not both");
        j.erase("strategy");
        j["client_command"] = *f.client_command;
    }
    if (f.strategy)
        // A ramp may name several strategies, one curve each: the first stands for the rest here.
        j["strategy"] =
            f.clients_ramp.empty() ? *f.strategy : f.strategy->substr(0, f.strategy->find(','));
    if (f.clients)
        j["clients"] = *f.clients;
    if (f.keys)
        j["keys"] = *f.keys;
    if (f.threads)
        j["threads"] = *f.threads;
    if (f.duration)
        j["duration_s"] = *f.duration;
    if (f.hold_ms)
        j["hold_ms"] = *f.hold_ms;
    if (f.think_ms)
        j["think_ms"] = *f.think_ms;
    if (f.lease_ms)
        j["lease_ms"] = *f.lease_ms;
    if (f.wait_ms)
        j["wait_ms"] = *f.wait_ms;
    if (f.seed)
        j["seed"] = *f.seed;
    if (f.resource)
        j["resource"] = *f.resource;
    if (f.rate) {
        j["rate"] = nlohmann::json{{"per_s", *f.rate}, {"arrivals", "fixed"}};
        if (w.rate)
            j["rate"]["arrivals"] = to_string(w.rate->arrivals);
    }
    if (f.arrivals) {
        if (!j["rate"].is_object())
            throw WorkloadError("--arrivals needs a rate: --rate R, or a rate in the workload");
        j["rate"]["arrivals"] = *f.arrivals;
    }
    // A field the flags set is named by its flag, not by a JSON path the user never wrote.
    std::map<std::string, std::string> flag_of;
    const auto given = [&](bool set, const char* path, const char* flag) {
        if (set)
            flag_of[path] = flag;
    };
    given(f.strategy.has_value(), "/strategy", "--strategy");
    given(f.client_command.has_value(), "/client_command", "--client-command");
    given(f.clients.has_value(), "/clients", "--clients");
    given(f.keys.has_value(), "/keys", "--keys");
    given(f.threads.has_value(), "/threads", "--threads");
    given(f.duration.has_value(), "/duration_s", "--duration");
    given(f.hold_ms.has_value(), "/hold_ms", "--hold-ms");
    given(f.think_ms.has_value(), "/think_ms", "--think-ms");
    given(f.lease_ms.has_value(), "/lease_ms", "--lease-ms");
    given(f.wait_ms.has_value(), "/wait_ms", "--wait-ms");
    given(f.seed.has_value(), "/seed", "--seed");
    given(f.resource.has_value(), "/resource", "--resource");
    given(f.rate.has_value(), "/rate", "--rate");
    given(f.rate.has_value(), "/rate/per_s", "--rate");
    given(f.arrivals.has_value(), "/rate/arrivals", "--arrivals");
    std::optional<Workload> workload;
    try {
        workload = Workload::from_json(j, "command line");
    } catch (const WorkloadError& e) {
        throw WorkloadError(cli::name_the_flag(e.what(), flag_of));
    }
    RunOptions options{.workload = *workload, .out_dir = f.out};
    const cli::RedisServers redis = cli::open_redis_servers(f.redis, f.access);
    options.redis = redis.endpoints;
    options.inventory = load_inventory(f.inventory);
    options.zookeeper = parse_zookeeper_list(f.zookeeper);
    options.etcd = parse_etcd_list(f.etcd);
    options.progress = ::isatty(STDERR_FILENO) != 0;
    options.interrupt = &g_interrupted;
    std::stringstream strategy_names(f.clients_ramp.empty()
                                         ? options.workload.strategy
                                         : f.strategy.value_or(options.workload.strategy));
    for (std::string name; std::getline(strategy_names, name, ',');) {
        Workload as_run = options.workload;
        as_run.strategy = name;
        if (const std::string note = as_run.unused_fence_note(); !note.empty())
            std::cerr << "lockbench: note: " << note << "\n";
    }
    if (f.no_yardstick) {
        options.machine_not_measured = "skipped (--no-yardstick)";
    } else {
        // The machine first, as a suite measures it (once here, for a run or a whole ramp): its
        // throughput beside redis-benchmark's.
        if (options.progress)
            std::fprintf(stderr, "\r\x1b[Kmeasuring the machine (redis-benchmark)");
        try {
            options.machine = measure_yardstick(8, 1);
        } catch (const EnvironmentError& e) {
            options.machine_not_measured = e.what();
        }
        if (options.progress)
            std::fprintf(stderr, "\r\x1b[K");
        if (g_interrupted) {
            std::cerr << "lockbench: interrupted while measuring the machine; nothing written\n";
            return 130;
        }
    }
    if (!f.clients_ramp.empty()) {
        if (f.clients)
            throw WorkloadError("--clients-ramp sets the client counts; drop --clients");
        if (options.inventory)
            throw WorkloadError("--clients-ramp takes --redis for your servers, not --inventory");
        if (!options.etcd.empty())
            throw WorkloadError("--clients-ramp does not take --etcd: run each client count");
        RampOptions ramp{.workload = options.workload,
                         .clients = parse_clients_ramp(f.clients_ramp),
                         .redis = options.redis,
                         .zookeeper = options.zookeeper,
                         .out_dir = options.out_dir,
                         .progress = options.progress,
                         .interrupt = options.interrupt,
                         .machine = options.machine,
                         .machine_not_measured = options.machine_not_measured};
        std::stringstream names(f.strategy.value_or(options.workload.strategy));
        for (std::string name; std::getline(names, name, ',');)
            ramp.strategies.push_back(name);
        RampOutcome outcome = run_ramp(ramp);
        std::cout << format_ramp(outcome.curves)
                  << format_machine(outcome.curves.value("yardstick", nlohmann::json()))
                  << "results     " << outcome.dir.string() << "\n";
        if (outcome.interrupted)
            return 130;
        if (outcome.failure_exit_code != 0)
            return outcome.failure_exit_code;
        return checker::exit_code(outcome.verdict);
    }
    if (f.repeat)
        return lockbench::cli::repeat_run_command(options, *f.repeat);
    RunOutcome outcome = run_workload(options);
    std::ifstream report(outcome.dir / "report.txt");
    std::cout << report.rdbuf() << "result      " << outcome.dir.string() << "\n";
    if (outcome.interrupted)
        std::cerr << "lockbench: interrupted; the partial result is marked so\n";
    return run_exit_code(outcome);
}

struct DemoFlags {
    std::string scenario;
    std::optional<std::string> strategy;
    std::string dir = LOCKBENCH_WORKLOADS_DIR;
    std::string redis;
    lockbench::cli::RedisAccessFlags access;
    bool no_yardstick = false;  // accepted as run takes it; a demo never measures the machine
    std::string inventory;
    std::string zookeeper;
    std::string out = "results";
};

// The strategy a demonstration shows by default: the first the scenario breaks (set_nx_px when
// it is one of them, the lock most people write).
std::string demo_strategy(const lockbench::Workload& w) {
    const auto breaks = [](const std::string& outcome) {
        return outcome.find("violates") != std::string::npos ||
               outcome.find("deadlocks") != std::string::npos;
    };
    if (auto it = w.expect.find("set_nx_px"); it != w.expect.end() && breaks(it->second))
        return it->first;
    for (const auto& [strategy, outcome] : w.expect) {
        if (breaks(outcome))
            return strategy;
    }
    return w.expect.begin()->first;
}

// `lockbench demo SCENARIO`: runs a shipped scenario and tells its story (story.txt), then
// where the timeline is. The exit code is run's: 0 when the scenario did what it claims.
int demo_command(const DemoFlags& f) {
    namespace fs = std::filesystem;
    using namespace lockbench;
    fs::path file = f.scenario;
    if (file.extension() != ".json" || !fs::exists(file))
        file = fs::path(f.dir) / (f.scenario + ".json");
    if (!fs::exists(file)) {
        std::vector<std::string> names;
        std::error_code ec;
        for (const auto& entry : fs::directory_iterator(f.dir, ec)) {
            if (entry.path().extension() == ".json")
                names.push_back(entry.path().stem().string());
        }
        std::sort(names.begin(), names.end());
        const auto near = cli::nearest_names(f.scenario, names);
        throw WorkloadError("demo: no scenario named " + f.scenario + " in " + f.dir +
                            (near.empty() ? "" : "; did you mean " + cli::either(near) + "?") +
                            " (see lockbench scenarios)");
    }
    Workload w = Workload::load(file);
    if (w.expect.empty())
        throw WorkloadError("demo: " + file.string() +
                            " has no expectations, so it demonstrates nothing; use lockbench run");
    const std::string strategy = f.strategy.value_or(demo_strategy(w));
    if (!w.expect.count(strategy)) {
        std::string names;
        for (const auto& [s, outcome] : w.expect)
            names += (names.empty() ? "" : ", ") + s;
        throw WorkloadError("demo: " + w.name + " says nothing about " + strategy + "; it names " +
                            names);
    }
    nlohmann::json j = w.to_json();
    j["strategy"] = strategy;
    RunOptions options{.workload = Workload::from_json(j, file.string()), .out_dir = f.out};
    const cli::RedisServers redis = cli::open_redis_servers(f.redis, f.access);
    options.redis = redis.endpoints;
    options.machine_not_measured = "a demo does not measure the machine";
    options.inventory = load_inventory(f.inventory);
    options.zookeeper = parse_zookeeper_list(f.zookeeper);
    options.progress = ::isatty(STDERR_FILENO) != 0;
    options.interrupt = &g_interrupted;
    std::cout << "lockbench demo: " << w.name << " / " << strategy << "\n";
    if (const std::string note = options.workload.unused_fence_note(); !note.empty())
        std::cout << "note: " << note << "\n";
    // The description, in lines that fit a terminal as the story's do.
    std::size_t column = 0;
    std::istringstream words(w.description);
    for (std::string word; words >> word;) {
        if (column > 0 && column + 1 + word.size() > 100) {
            std::cout << "\n";
            column = 0;
        } else if (column > 0) {
            std::cout << ' ';
            ++column;
        }
        std::cout << word;
        column += word.size();
    }
    if (column > 0)
        std::cout << "\n";
    std::cout << "\n" << std::flush;
    RunOutcome outcome = run_workload(options);
    std::ifstream story(outcome.dir / "story.txt");
    std::cout << story.rdbuf() << "\n";
    std::ifstream report(outcome.dir / "report.txt");
    for (std::string line; std::getline(report, line);) {
        if (line.rfind("expected", 0) == 0 || line.rfind("verdict", 0) == 0)
            std::cout << line << "\n";
    }
    std::cout << "timeline    " << (outcome.dir / "timeline.html").string() << "\n"
              << "result      " << outcome.dir.string() << "\n";
    if (outcome.interrupted)
        std::cerr << "lockbench: interrupted; the partial result is marked so\n";
    return run_exit_code(outcome);
}

struct CheckFlags {
    std::string history_file;
    std::string format = "auto";
    std::string fail_means = "error";
    std::string initial = "nil";
    std::string model = "none";
    std::vector<std::string> checks;
    double time_limit_s = 30;
    bool json = false;
    bool story = false;
    std::int64_t liveness_bound_ms = 10'000;
    std::optional<std::int64_t> starvation_bound_ms;
};

std::string read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::system_error(errno, std::generic_category(), "cannot read " + path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        throw std::system_error(errno, std::generic_category(), "cannot read " + path);
    return text;
}

// `lockbench check`: judges a history without Redis. 0 valid, 1 violation, 2 bad input, 3 unknown.
int check_command(const CheckFlags& f) {
    namespace checker = lockbench::checker;
    checker::CheckOptions options;
    options.model = *checker::parse_model(f.model);  // CLI::IsMember already checked the name
    options.linearizability.time_limit = std::chrono::duration<double>(f.time_limit_s);
    options.liveness_bound_ms = f.liveness_bound_ms;
    options.starvation_bound_ms = f.starvation_bound_ms;
    if (!f.checks.empty()) {
        options.only = f.checks;
        const bool wants_linearizability =
            std::find(f.checks.begin(), f.checks.end(), "linearizability") != f.checks.end();
        if (wants_linearizability && options.model == checker::Model::None) {
            throw lockbench::WorkloadError(
                "--checks linearizability needs a model: --model mutex|rwlock|register");
        }
    }
    options.linearizability.every_fail_observes = f.fail_means == "observation";
    if (f.initial != "nil") {
        if (options.model != checker::Model::Register)
            throw lockbench::WorkloadError(
                "--initial is the register's first value: it needs "
                "--model register or cas-register");
        std::size_t used = 0;
        try {
            options.linearizability.initial_value = std::stoll(f.initial, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != f.initial.size() || f.initial.empty())
            throw lockbench::WorkloadError("--initial must be an integer or nil, not " + f.initial);
    }
    const bool edn =
        f.format == "edn" ||
        (f.format == "auto" && std::filesystem::path(f.history_file).extension() == ".edn");
    checker::Report report;
    checker::ConvertedHistory converted;
    try {
        if (edn) {
            // Jepsen's EDN goes through the same reader and checks as history.jsonl.
            converted = checker::jepsen_to_jsonl(read_whole_file(f.history_file));
            std::istringstream in(converted.jsonl);
            report = checker::check_history(in, options);
            converted.locate(report);
        } else {
            report = checker::check_history(std::filesystem::path(f.history_file), options);
        }
    } catch (const checker::edn::EdnError& e) {
        std::cerr << "lockbench: " << f.history_file << ": " << e.what() << "\n";
        return kExitUsage;
    } catch (const checker::HistoryError& e) {
        std::cerr << "lockbench: " << f.history_file << ": "
                  << (edn ? converted.locate(e) : std::string(e.what())) << "\n";
        return kExitUsage;
    } catch (const std::system_error& e) {  // the history file is missing or unreadable
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitUsage;
    }
    if (f.json)
        std::cout << report.to_json().dump(2) << "\n";
    else
        std::cout << checker::format_report(report);
    if (f.story) {
        // The story reads the history again, in the form the checks read.
        std::istringstream jsonl(converted.jsonl);
        const checker::Story story =
            edn ? checker::tell_story(jsonl, report, {})
                : checker::tell_story(std::filesystem::path(f.history_file), report, {});
        std::cout << "\n" << checker::format_story(story);
    }
    return checker::exit_code(report.verdict);
}

struct GateFlags {
    std::string baseline;
    std::string current = "results";
    std::string write_baseline;
    double max_drop_pct = 20;
    double max_p99_rise_pct = 200;
    bool verbose = false;
};

// The suite a gate judges: a suite folder (holding suite.json) or a results folder, whose newest
// suite is taken.
std::filesystem::path suite_json_of(const std::string& current) {
    namespace fs = std::filesystem;
    fs::path dir = current;
    if (!fs::exists(dir / "suite.json"))
        dir = lockbench::latest_suite_dir(dir);
    return dir / "suite.json";
}

// `lockbench gate`: 0 pass, 1 fail, 2 bad input - a readable diff either way.
int gate_command(const GateFlags& f) {
    namespace fs = std::filesystem;
    lockbench::GateOptions options;
    options.max_drop_pct = f.max_drop_pct;
    options.max_p99_rise_pct = f.max_p99_rise_pct;
    options.verbose = f.verbose;
    const fs::path suite = suite_json_of(f.current);
    options.current_name = suite.string();
    const nlohmann::json current = lockbench::load_gate_json(suite);
    if (!f.write_baseline.empty()) {
        lockbench::write_atomically(f.write_baseline,
                                    lockbench::make_baseline(current, options).dump(2) + "\n");
        std::cout << "baseline    " << f.write_baseline << " from " << suite.string() << "\n";
        return 0;
    }
    options.baseline_name = f.baseline;
    auto result = lockbench::run_gate(lockbench::load_gate_json(f.baseline), current, options);
    std::cout << result.report;
    return result.pass ? 0 : 1;
}

// The shipped scenarios: every workloads/*.json, in name order, each with what it shows and
// expects (engine/run/scenario_list.hpp), in lines that fit the terminal.
int list_scenarios(const std::string& dir, bool verbose) {
    std::cout << lockbench::format_scenarios(lockbench::load_scenarios(dir),
                                             lockbench::output_columns(), verbose);
    return 0;
}

int list_strategies() {
    for (const auto& s : lockbench::all_strategies()) {
        std::printf("%-15s %-50s %s\n", std::string(s.name).c_str(),
                    lockbench::describe(s.capabilities).c_str(), std::string(s.summary).c_str());
    }
    // Lock libraries through their adapters (strategies/adapters/PROTOCOL.md): library and
    // version as each adapter's probe reports them, or why it cannot run here.
    for (const auto& spec : lockbench::shipped_adapters()) {
        try {
            const lockbench::StrategyInfo* s = lockbench::find_strategy(spec.name);
            std::printf("%-15s %-50s %s\n", spec.name.c_str(),
                        lockbench::describe(s->capabilities).c_str(),
                        std::string(s->summary).c_str());
        } catch (const lockbench::AdapterUnavailable& e) {
            std::printf("%-15s %-50s %s\n", spec.name.c_str(), "unavailable", e.what());
        }
    }
    return 0;
}

constexpr const char* kPasswordHelp =
    "AUTH password for --redis (seen by every local user in ps: prefer --password-file or "
    "LOCKBENCH_REDIS_PASSWORD)";
constexpr const char* kPasswordFileHelp =
    "Read the AUTH password for --redis from the first line of this file";

}  // namespace

int main(int argc, char** argv) {
    // hiredis 0.14 writes with plain write(): a server that died must not kill us with SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
    // A file-size limit (ulimit -f) must fail a write with EFBIG - reported, the partial result
    // removed - rather than kill the process and leave its servers and temp folders behind.
    ::signal(SIGXFSZ, SIG_IGN);

    CLI::App app{"lockbench: benchmark and correctness test-bench for distributed locks on Redis"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "lockbench 0.1.0");

    auto* strategies =
        app.add_subcommand("strategies", "List lock strategies and their capabilities");

    std::string scenarios_dir = LOCKBENCH_WORKLOADS_DIR;
    auto* scenarios =
        app.add_subcommand("scenarios",
                           "List the shipped scenarios: what each shows and what it expects of "
                           "each strategy (COLUMNS wide)");
    scenarios->add_option("--dir", scenarios_dir, "Folder of scenario files")
        ->capture_default_str();
    bool scenarios_verbose = false;
    scenarios->add_flag("--verbose,-v", scenarios_verbose,
                        "Every strategy's expectation as written, instead of the summary");

    lockbench::SuiteOptions so;
    so.scenarios_dir = LOCKBENCH_WORKLOADS_DIR;
    std::string junit;
    auto* suite =
        app.add_subcommand("suite", "Run every shipped scenario against every strategy it names");
    suite->add_flag("--quick", so.quick,
                    "Cap fault-free runs at 2.5 s (demonstrations keep their timing)");
    suite->add_option("--strategy", so.strategies, "Only these strategies (repeatable)");
    suite->add_option("--scenario", so.scenarios, "Only these scenarios (repeatable)");
    suite
        ->add_option("--retries", so.retries,
                     "Run a pair again (up to N times) when its outcome was unexpected; the "
                     "table marks it")
        ->check(CLI::Range(0, 5))
        ->capture_default_str();
    suite->add_option("--junit", junit,
                      "Write a JUnit XML file: one test case per (scenario, strategy)");
    suite->add_option("--out", so.out_dir, "Results folder")->capture_default_str();
    suite->add_option("--zookeeper", so.zookeeper,
                      "ZooKeeper strategies: use an existing ensemble HOST:PORT[,HOST:PORT...]");
    std::string suite_redis, suite_inventory;
    lockbench::cli::RedisAccessFlags suite_access;
    suite->add_option("--redis", suite_redis,
                      "Run on existing Redis server(s) HOST[:PORT][,HOST[:PORT]...] (port 6379 "
                      "when none is given; also [redis[s]://][USER:PASSWORD@]HOST[:PORT], "
                      "unix:/PATH); scenarios that "
                      "need servers of lockbench's own are skipped, saying why");
    suite->add_option("--password", suite_access.password, kPasswordHelp);
    suite->add_option("--password-file", suite_access.password_file, kPasswordFileHelp)
        ->excludes("--password");
    lockbench::cli::add_redis_access_options(*suite, suite_access);
    suite
        ->add_option("--inventory", suite_inventory,
                     "Run on your deployment, node by node (see run --help); pause-server and "
                     "kill-server act on the hosts it gives a control for")
        ->check(CLI::ExistingFile)
        ->excludes("--redis");
    bool no_yardstick = false;
    suite->add_flag("--no-yardstick", no_yardstick,
                    "Skip measuring the machine with redis-benchmark first (the gate then "
                    "compares throughput to set_nx_px only)");
    suite->add_option("--dir", so.scenarios_dir, "Folder of scenario files")->capture_default_str();

    GateFlags gf;
    auto* gate = app.add_subcommand(
        "gate",
        "Compare a suite result with a baseline: unexpected outcomes, throughput drops "
        "beyond the noise and gross acquire-p99 rises fail (0 pass, 1 fail, 2 bad input)");
    auto* baseline_opt =
        gate->add_option("--baseline", gf.baseline, "Baseline file (results/baseline.json)");
    gate->add_option("--current", gf.current,
                     "A suite folder, or a results folder whose newest suite is taken")
        ->capture_default_str();
    gate->add_option("--max-drop", gf.max_drop_pct,
                     "Largest tolerated drop of normalised throughput, in percent")
        ->check(CLI::Range(0.0, 100.0))
        ->capture_default_str();
    gate->add_option("--max-p99-rise", gf.max_p99_rise_pct,
                     "Largest tolerated rise of a fault-free run's acquire p99 (at least 1 ms), "
                     "in percent, vs the machine and vs set_nx_px's p99")
        ->check(CLI::Range(0.0, 10000.0))
        ->capture_default_str();
    auto* write_opt = gate->add_option(
        "--write-baseline", gf.write_baseline,
        "Instead of gating, write the current suite as the new baseline to this file");
    baseline_opt->excludes(write_opt);
    gate->add_flag("--verbose", gf.verbose,
                   "List every cell as a table, not only those that changed or failed");

    CheckFlags cf;
    auto* check = app.add_subcommand(
        "check",
        "Judge a history (history.jsonl, or Jepsen's history.edn): mutual exclusion, fencing, "
        "resource, liveness, "
        "linearizability (0 valid, 1 violation, 2 bad input, 3 unknown)");
    check
        ->add_option("history", cf.history_file,
                     "history.jsonl (checker/HISTORY.md), or a Jepsen history.edn")
        ->required()
        ->check(CLI::ExistingFile);
    check
        ->add_option("--format", cf.format,
                     "jsonl or edn (Jepsen's history.edn); auto: edn for a .edn file")
        ->check(CLI::IsMember({"auto", "jsonl", "edn"}))
        ->capture_default_str();
    check
        ->add_option("--fail-means", cf.fail_means,
                     "error: a failed cas/acquire/release observed its condition only when its "
                     "error says so (mismatch, held, not-held), otherwise it did not happen, as "
                     "in Jepsen; observation: every failed one observed its condition")
        ->check(CLI::IsMember({"error", "observation"}))
        ->capture_default_str();
    check
        ->add_option("--model", cf.model,
                     "Linearizability model: mutex and rwlock are lease locks (a grant may end "
                     "when the lease its acquire asked for runs out) and owner-aware; "
                     "unowned-mutex is Knossos's mutex (any release frees it); register (or "
                     "Knossos's name cas-register) a cas register that starts nil")
        ->check(
            CLI::IsMember({"none", "mutex", "unowned-mutex", "rwlock", "register", "cas-register"}))
        ->capture_default_str();
    check
        ->add_option("--initial", cf.initial,
                     "The register's value before the first op: an integer, or nil")
        ->capture_default_str();
    check
        ->add_option("--checks", cf.checks,
                     "Only these checks, comma-separated (default: every check that applies)")
        ->delimiter(',')
        ->check(CLI::IsMember(lockbench::checker::check_names()));
    check
        ->add_option("--time-limit", cf.time_limit_s,
                     "Seconds the linearizability search may take before it answers unknown")
        ->check(within(0.01, 86'400.0))
        ->capture_default_str();
    check->add_flag("--json", cf.json, "Print the report as JSON");
    check
        ->add_flag("--story", cf.story,
                   "Also tell the first violation's story: sentences citing event indices and "
                   "a per-process swimlane")
        ->excludes("--json");
    check
        ->add_option("--liveness-bound-ms", cf.liveness_bound_ms,
                     "A lock without a lease orphaned longer than this while others wait is a "
                     "deadlock (a leased lock: past its lease)")
        ->check(within(std::int64_t{1}, std::int64_t{86'400'000}))
        ->capture_default_str();
    check
        ->add_option("--starvation-bound-ms", cf.starvation_bound_ms,
                     "A wait for a grant longer than this is starvation (default: not judged)")
        ->check(within(std::int64_t{1}, std::int64_t{86'400'000}));

    RunFlags rf;
    auto* run =
        app.add_subcommand("run", "Run a workload against real Redis and judge its history");
    // No existence check here: CLI11 checks a positional before it reports an unknown option,
    // so `run --rate-limit 5` said "File does not exist: 5"; a missing file is refused on loading.
    run->add_option("workload", rf.workload_file, "Workload JSON file (workloads/README.md)");
    run->add_option("--strategy", rf.strategy,
                    "Lock strategy (see `lockbench strategies`); with --clients-ramp, a "
                    "comma-separated list: one curve each");
    run->add_option("--client-command", rf.client_command,
                    "Your own lock library: run \"CMD ARGS\" as one adapter process per client "
                    "(strategies/adapters/PROTOCOL.md) instead of --strategy");
    run->add_option("--clients-ramp", rf.clients_ramp,
                    "Run at each client count, START:STEP:END or N,N,...: one curve per strategy "
                    "(throughput, acquire p50/p99, fairness) in results/ramp-*/ramp.json");
    // The ranges a workload file allows (engine/run/workload.cpp): a negative or huge value
    // would otherwise overflow the clock types the run computes with, or be refused later as a
    // JSON field the user never wrote.
    run->add_option("--clients", rf.clients, "Concurrent simulated clients")
        ->check(within(1, 100'000));
    run->add_option("--keys", rf.keys, "Number of lock keys")->check(within(1, 10'000'000));
    run->add_option("--threads", rf.threads, "Event-loop threads the clients are spread over")
        ->check(within(1, 64));
    run->add_option("--duration", rf.duration, "Seconds to run")->check(within(0.01, 86'400.0));
    run->add_option("--hold-ms", rf.hold_ms, "Time inside the critical section (constant)")
        ->check(within(0.0, 86'400'000.0));
    run->add_option("--think-ms", rf.think_ms, "Pause between cycles (constant)")
        ->check(within(0.0, 86'400'000.0));
    run->add_option("--lease-ms", rf.lease_ms, "Lock lease")
        ->check(within(std::int64_t{1}, std::int64_t{86'400'000}));
    run->add_option("--wait-ms", rf.wait_ms, "How long an acquire may wait for a held lock")
        ->check(within(std::int64_t{0}, std::int64_t{86'400'000}));
    run->add_option("--seed", rf.seed, "Seed of every random choice")
        ->check(within(std::uint64_t{0},
                       static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
    run->add_option("--resource", rf.resource,
                    "Protected resource: counter | fenced (refuses a write whose fence is below "
                    "one it accepted; a fence protects nothing on counter) | none");
    run->add_option("--rate", rf.rate,
                    "Open loop: start this many cycles per second over all clients, and report "
                    "acquire latency from when each was due (every arrival, granted, refused or "
                    "timed out) as well as from its send (granted ones)");
    run->add_option("--arrivals", rf.arrivals, "With --rate: fixed (evenly spaced) or poisson")
        ->check(CLI::IsMember({"fixed", "poisson"}));
    run->add_option("--redis", rf.redis,
                    "Use existing Redis server(s) HOST[:PORT][,HOST[:PORT]...] (port 6379 when "
                    "none is given; also [redis[s]://][USER:PASSWORD@]HOST[:PORT] with rediss:// "
                    "for TLS, unix:/PATH for a unix socket)");
    run->add_option("--password", rf.access.password, kPasswordHelp);
    run->add_option("--password-file", rf.access.password_file, kPasswordFileHelp)
        ->excludes("--password");
    lockbench::cli::add_redis_access_options(*run, rf.access);
    run->add_option(
           "--inventory", rf.inventory,
           "Your deployment node by node (a JSON file: README, 'Testing your own "
           "deployment'): its masters are the lock nodes, and pause-server/kill-server act "
           "on the hosts it gives a control for (ssh or local)")
        ->check(CLI::ExistingFile)
        ->excludes("--redis");
    run->add_option("--zookeeper", rf.zookeeper,
                    "ZooKeeper strategies (zk_mutex, zk_rwlock): use an existing ensemble "
                    "HOST:PORT[,HOST:PORT...] instead of starting one");
    run->add_option("--etcd", rf.etcd,
                    "etcd strategies: use an existing etcd, every member's client port "
                    "HOST:PORT[,HOST:PORT...], instead of starting one (the run's keys, under "
                    "its prefix, are deleted afterwards)");
    run->add_option("--out", rf.out, "Results folder")->capture_default_str();
    run->add_option("--repeat", rf.repeat,
                    "Run it N times into one folder (repeat-*/): each check as k of n runs "
                    "with a 95% interval (compare.json, as lockbench compare writes)")
        ->check(CLI::Range(1, 1000));
    run->add_flag("--no-yardstick", rf.no_yardstick,
                  "Do not measure the machine with redis-benchmark first (about 2 s)");

    lockbench::cli::CompareFlags compare_flags;
    auto* compare =
        lockbench::cli::add_compare_command(app, compare_flags, LOCKBENCH_WORKLOADS_DIR);

    DemoFlags df;
    auto* demo = app.add_subcommand(
        "demo", "Run a shipped scenario and tell its story: what happened, event by event");
    demo->add_option("scenario", df.scenario, "Scenario name (see lockbench scenarios) or file")
        ->required();
    demo->add_option("--strategy", df.strategy,
                     "Strategy to show (default: the first the scenario breaks, set_nx_px "
                     "when it is one)");
    demo->add_option("--dir", df.dir, "Folder of scenario files")->capture_default_str();
    demo->add_option("--redis", df.redis,
                     "Use existing Redis server(s) HOST[:PORT][,HOST[:PORT]...] (port 6379 when "
                     "none is given; also [redis[s]://][USER:PASSWORD@]HOST[:PORT], "
                     "unix:/PATH)");
    demo->add_option("--password", df.access.password, kPasswordHelp);
    demo->add_option("--password-file", df.access.password_file, kPasswordFileHelp)
        ->excludes("--password");
    lockbench::cli::add_redis_access_options(*demo, df.access);
    demo->add_flag("--no-yardstick", df.no_yardstick,
                   "Accepted as run takes it: a demo never measures the machine");
    demo->add_option("--inventory", df.inventory, "Your deployment node by node (see run --help)")
        ->check(CLI::ExistingFile)
        ->excludes("--redis");
    demo->add_option("--zookeeper", df.zookeeper,
                     "ZooKeeper strategies: use an existing ensemble HOST:PORT[,HOST:PORT...]");
    demo->add_option("--out", df.out, "Results folder")->capture_default_str();

    // "A subcommand is required" for a misspelt one would send the user looking for a missing
    // word: name the one they wrote and the nearest there is.
    if (argc > 1 && argv[1][0] != '-') {
        std::vector<std::string> names;
        for (const auto* sub : app.get_subcommands({}))
            names.push_back(sub->get_name());
        if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
            const auto near = lockbench::cli::nearest_names(argv[1], names, 3);
            std::string all;
            for (const auto& name : names)
                all += (all.empty() ? "" : ", ") + name;
            std::cerr << "lockbench: unknown subcommand '" << argv[1] << "'"
                      << (near.empty() ? "; the subcommands are " + all
                                       : "; did you mean " + lockbench::cli::either(near) + "?")
                      << " (see lockbench --help)\n";
            return kExitUsage;
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        // The help to read is the subcommand's, and an unknown option is named as one.
        const CLI::App* sub = nullptr;
        if (argc > 1 && argv[1][0] != '-')
            sub = app.get_subcommand_ptr(argv[1]).get();
        std::vector<std::string> options;
        for (const auto* option : (sub ? sub : &app)->get_options()) {
            for (const auto& name : option->get_lnames())
                options.push_back("--" + name);
        }
        // `lockbench --bogus` fails as "A subcommand is required" before CLI11 names the option.
        const bool unknown_first_option =
            !sub && argc > 1 && argv[1][0] == '-' &&
            std::find(options.begin(), options.end(), std::string(argv[1])) == options.end();
        std::cerr << "lockbench: "
                  << lockbench::cli::parse_error_line(
                         unknown_first_option ? std::string(": ") + argv[1] : e.what(),
                         unknown_first_option ||
                             dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr,
                         sub ? sub->get_name() : "", options)
                  << "\n";
        return kExitUsage;
    }

    try {
        if (strategies->parsed())
            return list_strategies();
        if (scenarios->parsed())
            return list_scenarios(scenarios_dir, scenarios_verbose);
        if (check->parsed())
            return check_command(cf);
        if (gate->parsed()) {
            if (gf.baseline.empty() && gf.write_baseline.empty())
                throw lockbench::WorkloadError(
                    "gate: --baseline FILE or --write-baseline FILE is required");
            return gate_command(gf);
        }
        if (suite->parsed()) {
            install_interrupt_handlers();
            if (!junit.empty())
                so.junit = junit;
            so.progress = ::isatty(STDERR_FILENO) != 0 ? lockbench::SuiteProgress::Terminal
                                                       : lockbench::SuiteProgress::Lines;
            so.interrupt = &g_interrupted;
            so.yardstick = !no_yardstick;
            so.zookeeper = parse_zookeeper_list(so.zookeeper);
            const auto suite_servers =
                lockbench::cli::open_redis_servers(suite_redis, suite_access);
            so.redis = suite_servers.endpoints;
            so.inventory = load_inventory(suite_inventory);
            auto outcome = lockbench::run_suite(so);
            std::cout << lockbench::format_table(outcome.table) << "results     "
                      << outcome.dir.string() << "\n";
            if (outcome.interrupted)
                return 130;
            if (outcome.failure_exit_code != 0)
                return outcome.failure_exit_code;
            if (!outcome.all_as_expected)
                return 1;
            // Every pair skipped: nothing was judged, which is not a pass.
            if (outcome.table["runs"].empty() && !outcome.table["skipped"].empty()) {
                std::cerr << "lockbench suite: every selected pair was skipped on this machine; "
                             "nothing was judged\n";
                return 3;
            }
            return 0;
        }
        if (run->parsed()) {
            install_interrupt_handlers();
            return run_command(rf);
        }
        if (demo->parsed()) {
            install_interrupt_handlers();
            return demo_command(df);
        }
        if (compare->parsed()) {
            install_interrupt_handlers();
            return lockbench::cli::compare_command(compare_flags, &g_interrupted);
        }
    } catch (const lockbench::WorkloadError& e) {
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitUsage;
    } catch (const lockbench::EnvironmentError& e) {
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitEnvironment;
    } catch (const lockbench::AdapterUnavailable& e) {
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitEnvironment;
    } catch (const std::system_error& e) {  // a system call, the file system
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitEnvironment;
    } catch (const std::bad_alloc&) {
        std::cerr << "lockbench: out of memory\n";
        return kExitEnvironment;
    } catch (const std::exception& e) {
        std::cerr << "lockbench: internal error (a bug in lockbench; please report it): "
                  << e.what() << "\n";
        return kExitInternal;
    }
    return kExitUsage;
}
