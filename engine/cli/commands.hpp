#pragma once

// The subcommands of `lockbench`, one file each (run_command.cpp, suite_command.cpp, ...): each
// registers its options on the app and returns how to run it once parsed. main.cpp only sets the
// signals, builds the app, dispatches and maps what a command throws to the exit codes:
// 0 success/valid, 1 violation or unexpected outcome, 2 bad input or usage, 3 unknown,
// 4 environment (no redis-server, port busy, Redis down, a system call or the disk failing),
// 5 internal error (a bug in lockbench, reported with its message).

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>

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

// A subcommand and the flags its options fill. The flags outlive parsing, as long as the Command
// that reads them: a command registers itself by making one, adding its options
// (`sub->add_option("--x", sub.flags().x, ...)`) and returning `sub.runs(x_command)`.
template <class Flags>
class Subcommand {
  public:
    Subcommand(CLI::App& parent, std::string name, std::string description)
        : app_(parent.add_subcommand(std::move(name), std::move(description))) {}

    CLI::App* operator->() const { return app_; }
    CLI::App& app() const { return *app_; }
    Flags& flags() const { return *flags_; }

    // The Command that runs `command` on the parsed flags. A command that takes the interrupt
    // flag, int(Flags&, const std::atomic<bool>*), is interruptible; one that does not,
    // int(Flags&), ends the process on a signal.
    template <class Run>
    Command runs(Run command) const {
        if constexpr (std::is_invocable_r_v<int, Run, Flags&, const std::atomic<bool>*>) {
            return {app_, true, [parsed = flags_, command](const std::atomic<bool>* interrupt) {
                        return command(*parsed, interrupt);
                    }};
        } else {
            return {app_, false, [parsed = flags_, command](const std::atomic<bool>*) {
                        return command(*parsed);
                    }};
        }
    }

  private:
    CLI::App* app_;
    std::shared_ptr<Flags> flags_ = std::make_shared<Flags>();
};

Command add_strategies_command(CLI::App& app);
Command add_scenarios_command(CLI::App& app, const std::string& scenarios_dir);
Command add_suite_command(CLI::App& app, const std::string& scenarios_dir);
Command add_gate_command(CLI::App& app);
Command add_check_command(CLI::App& app);
Command add_run_command(CLI::App& app);
Command add_demo_command(CLI::App& app, const std::string& scenarios_dir);

}  // namespace lockbench::cli
