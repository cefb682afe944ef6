// The `lockbench` command line (a contract: CI scripts depend on it; see docs/cli.md).
// Every error ends here as one line on stderr and a documented exit code:
// 0 success/valid, 1 violation or unexpected outcome, 2 bad input or usage, 3 unknown,
// 4 environment (no redis-server, port busy, Redis down, a system call or the disk failing),
// 5 internal error (a bug in lockbench, reported with its message).

#include <algorithm>
#include <atomic>
#include <iostream>
#include <new>
#include <optional>
#include <signal.h>
#include <string>
#include <system_error>
#include <vector>

#include <CLI/CLI.hpp>

#include "engine/cli/commands.hpp"
#include "engine/cli/compare_command.hpp"
#include "engine/cli/user_input.hpp"
#include "engine/run/workload.hpp"
#include "engine/servers/redis_server.hpp"
#include "strategies/external/adapter_registry.hpp"

namespace {

using lockbench::cli::kExitEnvironment;
using lockbench::cli::kExitInternal;
using lockbench::cli::kExitUsage;

// Set by SIGINT/SIGTERM/SIGHUP; the run notices, stops its clients and still writes a valid
// result. SIGHUP too: closing the ssh session of a long suite must not lose its finished runs
// (nor leave results/.tmp-* behind), which the signal's default action would.
std::atomic<bool> g_interrupted{false};
static_assert(std::atomic<bool>::is_always_lock_free);

extern "C" void on_interrupt(int) {
    g_interrupted.store(true);
}

void install_interrupt_handlers() {
    struct sigaction sa {};
    sa.sa_handler = on_interrupt;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGINT, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    ::sigaction(SIGHUP, &sa, nullptr);
}

// "A subcommand is required" for a misspelt one would send the user looking for a missing
// word: name the one they wrote and the nearest there is. True when it said so.
bool refuse_unknown_subcommand(CLI::App& app, int argc, char** argv) {
    if (argc <= 1 || argv[1][0] == '-')
        return false;
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
        return true;
    }
    return false;
}

// The exit code when parsing ends the command line (help, version, a usage error).
std::optional<int> parse(CLI::App& app, int argc, char** argv) {
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
    return std::nullopt;
}

// What a command throws, as one line on stderr and its exit code (commands.hpp).
int run_mapping_errors(const lockbench::cli::Command& command) {
    try {
        if (command.interruptible)
            install_interrupt_handlers();
        return command.run(&g_interrupted);
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
}

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
    namespace cli = lockbench::cli;
    const std::string scenarios_dir = LOCKBENCH_WORKLOADS_DIR;
    // In the order `lockbench --help` lists them.
    const std::vector<cli::Command> commands = {cli::add_strategies_command(app),
                                                cli::add_scenarios_command(app, scenarios_dir),
                                                cli::add_suite_command(app, scenarios_dir),
                                                cli::add_gate_command(app),
                                                cli::add_check_command(app),
                                                cli::add_run_command(app),
                                                cli::add_compare_command(app, scenarios_dir),
                                                cli::add_demo_command(app, scenarios_dir)};

    if (refuse_unknown_subcommand(app, argc, argv))
        return kExitUsage;
    if (const std::optional<int> exit_code = parse(app, argc, argv))
        return *exit_code;
    for (const cli::Command& command : commands) {
        if (command.app->parsed())
            return run_mapping_errors(command);
    }
    return kExitUsage;
}
