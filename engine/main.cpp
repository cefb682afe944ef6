// The `lockbench` command line (a contract: CI scripts depend on it; see DESIGN.md).
// Every error ends here as one line on stderr and a documented exit code:
// 0 success/valid, 1 violation or unexpected outcome, 2 bad input or usage, 3 unknown,
// 4 environment (no redis-server, port busy, Redis down).

#include <cstdio>
#include <iostream>
#include <signal.h>

#include <CLI/CLI.hpp>

#include "redis_server.hpp"
#include "registry.hpp"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitEnvironment = 4;

int list_strategies() {
    for (const auto& s : lockbench::all_strategies()) {
        std::printf("%-15s %-50s %s\n", std::string(s.name).c_str(),
                    lockbench::describe(s.capabilities).c_str(), std::string(s.summary).c_str());
    }
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    // hiredis 0.14 writes with plain write(): a server that died must not kill us with SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);

    CLI::App app{"lockbench: benchmark and correctness test-bench for distributed locks on Redis"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "lockbench 0.1.0");

    auto* strategies =
        app.add_subcommand("strategies", "List lock strategies and their capabilities");

    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::cerr << "lockbench: " << e.what() << " (see lockbench --help)\n";
        return kExitUsage;
    }

    try {
        if (strategies->parsed())
            return list_strategies();
    } catch (const lockbench::EnvironmentError& e) {
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitEnvironment;
    } catch (const std::exception& e) {
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitEnvironment;
    }
    return kExitUsage;
}
