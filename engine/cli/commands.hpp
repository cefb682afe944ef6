#pragma once

// The subcommands of `lockbench`, one file each (run_command.cpp, suite_command.cpp, ...): each
// registers its options on the app and returns how to run it once parsed. main.cpp only sets the
// signals, builds the app, dispatches and maps what a command throws to the exit codes:
// 0 success/valid, 1 violation or unexpected outcome, 2 bad input or usage, 3 unknown,
// 4 environment (no redis-server, port busy, Redis down, a system call or the disk failing),
// 5 internal error (a bug in lockbench, reported with its message).

#include <atomic>
#include <functional>
#include <string>

#include <CLI/CLI.hpp>

namespace lockbench::cli {

constexpr int kExitUsage = 2;
constexpr int kExitEnvironment = 4;
constexpr int kExitInternal = 5;

struct Command {
    CLI::App* app = nullptr;
    // Runs with SIGINT/SIGTERM/SIGHUP setting `interrupt` (main.cpp) instead of ending the
    // process: the command stops its clients and still writes a valid result.
    bool interruptible = false;
    // Once `app` was parsed: the exit code. Throws WorkloadError, EnvironmentError and the rest,
    // which main() maps to their exit codes.
    std::function<int(const std::atomic<bool>* interrupt)> run;
};

Command add_strategies_command(CLI::App& app);
Command add_scenarios_command(CLI::App& app, const std::string& scenarios_dir);
Command add_suite_command(CLI::App& app, const std::string& scenarios_dir);
Command add_gate_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_demo_command(CLI::App& app, const std::string& scenarios_dir);

}  // namespace lockbench::cli
