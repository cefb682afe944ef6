#include "engine/cli/compare_command.hpp"

#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <sstream>
#include <unistd.h>

#include "engine/compare/compare.hpp"
#include "engine/run/workload.hpp"

namespace lockbench::cli {

namespace fs = std::filesystem;

namespace {

// A file, or a shipped scenario's name (as `demo` takes it).
Workload load_named(const std::string& name, const std::string& dir) {
    fs::path file = name;
    if (!fs::is_regular_file(file))
        file = fs::path(dir) / (name + ".json");
    if (!fs::is_regular_file(file))
        throw WorkloadError("compare: no workload file or scenario named '" + name + "' (in " +
                            dir + "; see lockbench scenarios)");
    return Workload::load(file);
}

void print(const CompareOutcome& outcome) {
    std::cout << format_compare(outcome.compare) << "results     " << outcome.dir.string() << "\n";
    if (outcome.interrupted)
        std::cerr << "lockbench: interrupted; the runs that finished are kept, and compare.json "
                     "says it is incomplete\n";
}

}  // namespace

Command add_compare_command(CLI::App& app, const std::string& scenarios_dir) {
    Subcommand<CompareFlags> c(
        app, "compare",
        "Run one workload against several strategies, each N times interleaved, and tell each "
        "check's outcome as k of n runs with a 95% interval (0 table produced, 2 bad input, 4 "
        "environment, 130 interrupted)");
    CompareFlags& f = c.flags();
    f.dir = scenarios_dir;
    c->add_option("workload", f.workload,
                  "A workload file, or a shipped scenario's name (see lockbench scenarios)")
        ->required();
    c->add_option("--strategy", f.strategies, "Strategies to compare, comma-separated: a,b,c")
        ->required();
    c->add_option("--repeat", f.repeat,
                  "Runs per strategy (per setting, with --sweep); round r runs every strategy "
                  "once, in an order rotated by r")
        ->check(CLI::Range(1, 1000))
        ->capture_default_str();
    c->add_option("--sweep", f.sweeps,
                  "FIELD=v1,v2,...: run at each value of a numeric workload field (lease_ms, "
                  "hold_ms, faults[0].duration_ms; a fault's field by its bare name when one "
                  "fault has it). Twice for a grid: the first across, the second down. Draws a "
                  "heat map of the violation rate per strategy")
        ->allow_extra_args(false);
    c->add_option("--duration", f.duration, "Seconds per run (overrides the workload)")
        ->check(CLI::Range(0.01, 86'400.0));
    c->add_option("--seed", f.seed, "Seed of every random choice (every run uses the same one)")
        ->check(CLI::Range(std::uint64_t{0},
                           static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())));
    c->add_option("--clients", f.clients, "Concurrent simulated clients")
        ->check(CLI::Range(1, 100'000));
    c->add_option("--lease-ms", f.lease_ms, "Lock lease")
        ->check(CLI::Range(std::int64_t{1}, std::int64_t{86'400'000}));
    c->add_option("--dir", f.dir, "Folder of scenario files")->capture_default_str();
    add_server_options(c.app(), f.server, {.inventory = false, .etcd = false});
    // A script that passes run's flags to compare should not fail on one that means nothing here.
    c->add_flag("--no-yardstick", f.no_yardstick,
                "Accepted and ignored: compare never measures the machine (its runs are "
                "compared with each other, interleaved on one machine)");
    return c.runs(compare_command);
}

int compare_command(const CompareFlags& f, const std::atomic<bool>* interrupt) {
    Workload w = load_named(f.workload, f.dir);
    nlohmann::json j = w.to_json();
    if (f.duration)
        j["duration_s"] = *f.duration;
    if (f.seed)
        j["seed"] = *f.seed;
    if (f.clients)
        j["clients"] = *f.clients;
    if (f.lease_ms)
        j["lease_ms"] = *f.lease_ms;
    CompareOptions options;
    options.base.workload = Workload::from_json(j, "command line");
    options.base.out_dir = f.server.out;
    const RedisServers redis = apply_server_flags(f.server, options.base);
    options.base.progress = ::isatty(STDERR_FILENO) != 0;
    options.base.interrupt = interrupt;
    // The runs are compared with each other, on one machine, interleaved: no yardstick needed.
    options.base.machine_not_measured =
        "compare's runs are compared with each other, interleaved on one machine";
    std::stringstream names(f.strategies);
    for (std::string name; std::getline(names, name, ',');) {
        if (name.empty())
            throw WorkloadError("--strategy " + f.strategies + ": an empty strategy name");
        options.strategies.push_back(name);
    }
    if (!f.strategies.empty() && f.strategies.back() == ',')
        throw WorkloadError("--strategy " + f.strategies + ": an empty strategy name");
    if (f.sweeps.size() > kMaxSweepAxes)
        throw WorkloadError("--sweep: at most two (a heat map has two axes)");
    const nlohmann::json as_run = options.base.workload.to_json();
    for (const std::string& text : f.sweeps) {
        SweepAxis axis = parse_sweep(text, as_run);
        for (const SweepAxis& other : options.sweep) {
            if (other.path == axis.path)
                throw WorkloadError("--sweep " + text + ": " + axis.path + " is swept twice");
        }
        options.sweep.push_back(std::move(axis));
    }
    options.repeat = f.repeat;
    const CompareOutcome outcome = run_compare(options);
    print(outcome);
    if (outcome.interrupted)
        return 130;
    return outcome.failure_exit_code;
}

int repeat_run_command(const RunOptions& run, int repeat) {
    CompareOptions options;
    options.base = run;
    options.strategies = {run.workload.strategy};
    options.repeat = repeat;
    options.kind = "repeat";
    const CompareOutcome outcome = run_compare(options);
    print(outcome);
    if (outcome.interrupted)
        return 130;
    if (outcome.failure_exit_code != 0)
        return outcome.failure_exit_code;
    return outcome.runs_exit_code;
}

}  // namespace lockbench::cli
