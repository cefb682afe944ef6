#pragma once

// `lockbench compare` and `lockbench run --repeat`: the options and what they hand to
// engine/compare/.

#include <atomic>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/cli/commands.hpp"
#include "engine/cli/server_options.hpp"
#include "engine/run/run.hpp"

namespace lockbench::cli {

struct CompareFlags {
    std::string workload;  // a file, or the name of a shipped scenario
    std::string strategies;
    int repeat = 5;
    std::vector<std::string> sweeps;
    std::string dir;  // scenario folder
    std::optional<double> duration;
    std::optional<std::uint64_t> seed;
    std::optional<int> clients;
    std::optional<std::int64_t> lease_ms;
    ServerFlags server;
    // Accepted for the same flags as run and suite; compare never measures the machine.
    bool no_yardstick = false;
};

// Registers `compare` on `app`.
Command add_compare_command(CLI::App& app, const std::string& scenarios_dir);

// Runs it: 0 when the table was produced (it answers a question; it is not a gate), 130
// interrupted (what finished is kept), else the exit code of a run that failed (2, 4 or 5).
// Throws WorkloadError / EnvironmentError as every command does.
int compare_command(const CompareFlags& flags, const std::atomic<bool>* interrupt);

// `run --repeat N`: `options`' run N times into one folder, the same k-of-n table. Exits as a run
// does, composed over the runs: 130 interrupted, a failed run's code; with an expectation, 1 if
// it was not met over the runs (every plain term in every run, a rate term at its rate), 3 if
// the runs could not decide, else 0; without one, 1 if any run violated, 3 if any was unknown, 0.
int repeat_run_command(const RunOptions& options, int repeat);

}  // namespace lockbench::cli
