// `lockbench strategies` and `lockbench scenarios`: what there is to run.

#include <cstdio>
#include <iostream>
#include <string>

#include "engine/cli/commands.hpp"
#include "engine/run/scenario_list.hpp"
#include "strategies/external/adapter_registry.hpp"
#include "strategies/registry.hpp"

namespace lockbench::cli {

namespace {

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

struct ScenariosFlags {
    std::string dir;
    bool verbose = false;
};

}  // namespace

Command add_strategies_command(CLI::App& app) {
    auto* strategies =
        app.add_subcommand("strategies", "List lock strategies and their capabilities");

    return {strategies, false, [](const std::atomic<bool>*) { return list_strategies(); }};
}

Command add_scenarios_command(CLI::App& app, const std::string& scenarios_dir) {
    Subcommand<ScenariosFlags> scenarios(app, "scenarios",
                                         "List the shipped scenarios: what each shows and what "
                                         "it expects of each strategy (COLUMNS wide)");
    ScenariosFlags& f = scenarios.flags();
    f.dir = scenarios_dir;
    scenarios->add_option("--dir", f.dir, "Folder of scenario files")->capture_default_str();
    scenarios->add_flag("--verbose,-v", f.verbose,
                        "Every strategy's expectation as written, instead of the summary");

    return scenarios.runs(
        [](const ScenariosFlags& flags) { return list_scenarios(flags.dir, flags.verbose); });
}

}  // namespace lockbench::cli
