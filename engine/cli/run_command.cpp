#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <unistd.h>

#include "checker/report.hpp"
#include "engine/ci/yardstick.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/compare_command.hpp"
#include "engine/cli/machine_output.hpp"
#include "engine/cli/number_flags.hpp"
#include "engine/cli/server_options.hpp"
#include "engine/cli/user_input.hpp"
#include "engine/run/ramp.hpp"
#include "engine/run/run.hpp"
#include "engine/run/summary.hpp"
#include "engine/run/workload.hpp"

namespace lockbench::cli {

namespace {

struct RunFlags {
    std::string workload_file;
    std::optional<std::string> strategy;
    std::optional<std::string> client_command;
    std::optional<int> clients, keys, threads, clients_per_process;
    std::optional<double> duration, hold_ms, think_ms, rate;
    std::optional<std::string> arrivals;
    std::optional<std::int64_t> lease_ms, wait_ms;
    std::optional<std::uint64_t> seed;
    std::optional<std::string> resource;
    ServerFlags server;
    std::string clients_ramp;
    std::optional<int> repeat;
    bool no_yardstick = false;
    bool json = false, csv = false;
    MachineOutput machine() const {
        return json ? MachineOutput::Json : csv ? MachineOutput::Csv : MachineOutput::None;
    }
    // With --json or --csv stdout is the script's: the human text goes to stderr.
    std::ostream& human() const { return machine() == MachineOutput::None ? std::cout : std::cerr; }
};

// The workload file's fields with the flags' values over them (the run's workload.json records
// the result).
nlohmann::json overridden_by_flags(const RunFlags& f, const Workload& w) {
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
    if (f.clients_per_process)
        j["clients_per_process"] = *f.clients_per_process;
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
    return j;
}

// A field the flags set is named by its flag, not by a JSON path the user never wrote.
std::map<std::string, std::string> flags_given(const RunFlags& f) {
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
    given(f.clients_per_process.has_value(), "/clients_per_process", "--clients-per-process");
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
    return flag_of;
}

Workload workload_of(const RunFlags& f) {
    Workload w = f.workload_file.empty() ? Workload{} : Workload::load(f.workload_file);
    nlohmann::json j = overridden_by_flags(f, w);
    const std::map<std::string, std::string> flag_of = flags_given(f);
    std::optional<Workload> workload;
    try {
        workload = Workload::from_json(j, "command line");
    } catch (const WorkloadError& e) {
        throw WorkloadError(cli::name_the_flag(e.what(), flag_of));
    }
    return *workload;
}

// Said once the run has a result, never before an error: a run that cannot start says one line,
// the reason.
void note_unused_fences(const RunFlags& f, const RunOptions& options) {
    std::stringstream strategy_names(f.clients_ramp.empty()
                                         ? options.workload.strategy
                                         : f.strategy.value_or(options.workload.strategy));
    for (std::string name; std::getline(strategy_names, name, ',');) {
        Workload as_run = options.workload;
        as_run.strategy = name;
        if (const std::string note = as_run.unused_fence_note(); !note.empty())
            std::cerr << "lockbench: note: " << note << "\n";
    }
}

// False when interrupted meanwhile.
bool measure_machine(const RunFlags& f, RunOptions& options, const std::atomic<bool>* interrupt) {
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
        if (interrupt && interrupt->load()) {
            std::cerr << "lockbench: interrupted while measuring the machine; nothing written\n";
            return false;
        }
    }
    return true;
}

int ramp_command(const RunFlags& f, const RunOptions& options) {
    if (f.clients)
        throw WorkloadError("--clients-ramp sets the client counts; drop --clients");
    if (options.inventory)
        throw WorkloadError("--clients-ramp takes --redis for your servers, not --inventory");
    if (!options.etcd.empty())
        throw WorkloadError("--clients-ramp does not take --etcd: run each client count");
    RampOptions ramp{.workload = workload_as_run(options),
                     .clients = parse_clients_ramp(f.clients_ramp),
                     .redis = options.redis,
                     .zookeeper = options.zookeeper,
                     .out_dir = options.out_dir,
                     .progress = options.progress,
                     .progress_lines = !options.progress,
                     .interrupt = options.interrupt,
                     .machine = options.machine,
                     .machine_not_measured = options.machine_not_measured};
    std::stringstream names(f.strategy.value_or(options.workload.strategy));
    for (std::string name; std::getline(names, name, ',');)
        ramp.strategies.push_back(name);
    RampOutcome outcome = run_ramp(ramp);
    f.human() << format_ramp(outcome.ramp)
              << format_machine(outcome.ramp.yardstick.value_or(nlohmann::json())) << "results     "
              << outcome.dir.string() << "\n";
    if (f.machine() == MachineOutput::Json)
        std::cout << file_text(outcome.dir / "ramp.json") << std::flush;
    else if (f.machine() == MachineOutput::Csv)
        std::cout << ramp_csv(outcome.ramp, outcome.dir) << std::flush;
    if (outcome.interrupted)
        return 130;
    if (outcome.failure_exit_code != 0)
        return outcome.failure_exit_code;
    return checker::exit_code(outcome.verdict);
}

int run_command(const RunFlags& f, const std::atomic<bool>* interrupt) {
    if (f.repeat && !f.clients_ramp.empty())
        throw WorkloadError("--repeat repeats one run; a --clients-ramp is many: drop one of them");
    if (f.repeat && f.machine() != MachineOutput::None)
        throw WorkloadError(std::string(f.json ? "--json" : "--csv") +
                            " prints one run, a ramp or a suite; --repeat's result is the "
                            "compare.json in its folder");
    RunOptions options{.workload = workload_of(f), .out_dir = f.server.out};
    const RedisServers redis = apply_server_flags(f.server, options);
    options.progress = ::isatty(STDERR_FILENO) != 0;
    options.interrupt = interrupt;
    if (!measure_machine(f, options, interrupt))
        return 130;
    if (!f.clients_ramp.empty()) {
        const int code = ramp_command(f, options);
        note_unused_fences(f, options);
        return code;
    }
    if (f.repeat) {
        const int code = lockbench::cli::repeat_run_command(options, *f.repeat);
        note_unused_fences(f, options);
        return code;
    }
    RunOutcome outcome = run_workload(options);
    note_unused_fences(f, options);
    f.human() << file_text(outcome.dir / "report.txt") << "result      " << outcome.dir.string()
              << "\n";
    if (f.machine() == MachineOutput::Json)
        std::cout << file_text(outcome.dir / "summary.json") << std::flush;
    else if (f.machine() == MachineOutput::Csv)
        std::cout << run_csv(outcome.summary, outcome.dir) << std::flush;
    if (outcome.interrupted)
        std::cerr << "lockbench: interrupted; the partial result is marked so\n";
    return run_exit_code(outcome);
}

}  // namespace

Command add_run_command(CLI::App& app) {
    Subcommand<RunFlags> run(app, "run", "Run a workload against real Redis and judge its history");
    RunFlags& rf = run.flags();
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
    run->add_option("--clients-per-process", rf.clients_per_process,
                    "A lock library's clients packed N to one adapter process (its adapter must "
                    "declare concurrent), for throughput runs; a process fault then hits every "
                    "client of the process, and the run says so")
        ->check(within(1, 100'000));
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
    add_server_options(run.app(), rf.server);
    run->add_option("--repeat", rf.repeat,
                    "Run it N times into one folder (repeat-*/): each check as k of n runs "
                    "with a 95% interval (compare.json, as lockbench compare writes)")
        ->check(CLI::Range(1, 1000));
    run->add_flag("--no-yardstick", rf.no_yardstick,
                  "Do not measure the machine with redis-benchmark first (about 2 s)");
    CLI::Option* json_flag =
        run->add_flag("--json", rf.json,
                      "Print the result's summary.json (a ramp: ramp.json) on stdout; the "
                      "report then goes to stderr");
    run->add_flag("--csv", rf.csv,
                  "Print a header line and one row (a ramp: one per point) on stdout; the "
                  "report then goes to stderr")
        ->excludes(json_flag);

    return run.runs(run_command);
}

}  // namespace lockbench::cli
