#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <unistd.h>
#include <vector>

#include "engine/cli/commands.hpp"
#include "engine/cli/server_options.hpp"
#include "engine/cli/user_input.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/run.hpp"
#include "engine/run/summary.hpp"
#include "engine/run/workload.hpp"

namespace lockbench::cli {

namespace {

struct DemoFlags {
    std::string scenario;
    std::optional<std::string> strategy;
    std::string dir;
    ServerFlags server;
    bool no_yardstick = false;  // accepted as run takes it; a demo never measures the machine
};

// The strategy a demonstration shows by default: the one the scenario says its story is about
// (`demo_strategy`), else the first it breaks (set_nx_px when it is one of them, the lock most
// people write).
std::string demo_strategy(const Workload& w) {
    if (!w.demo_strategy.empty())
        return w.demo_strategy;
    // By the expectation's grammar (expectation.hpp), not by words in its text; the file was
    // checked on loading, so the text parses.
    const auto breaks = [](const std::string& outcome) {
        const Expectation expectation = Expectation::parse(outcome);
        return std::any_of(expectation.terms.begin(), expectation.terms.end(),
                           [](const auto& term) {
                               return term.kind == Expectation::Kind::Violates ||
                                      term.kind == Expectation::Kind::Deadlocks;
                           });
    };
    if (auto it = w.expect.find("set_nx_px"); it != w.expect.end() && breaks(it->second))
        return it->first;
    for (const auto& [strategy, outcome] : w.expect) {
        if (breaks(outcome))
            return strategy;
    }
    return w.expect.begin()->first;
}

// The description, in lines that fit a terminal as the story's do.
void print_wrapped(const std::string& text) {
    std::size_t column = 0;
    std::istringstream words(text);
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
}

// `lockbench demo SCENARIO`: runs a shipped scenario and tells its story (story.txt), then
// where the timeline is. The exit code is run's: 0 when the scenario did what it claims.
int demo_command(const DemoFlags& f, const std::atomic<bool>* interrupt) {
    namespace fs = std::filesystem;
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
    RunOptions options{.workload = Workload::from_json(j, file.string()), .out_dir = f.server.out};
    const RedisServers redis = apply_server_flags(f.server, options);
    options.machine_not_measured = "a demo does not measure the machine";
    options.progress = ::isatty(STDERR_FILENO) != 0;
    options.interrupt = interrupt;
    std::cout << "lockbench demo: " << w.name << " / " << strategy << "\n";
    if (const std::string note = options.workload.unused_fence_note(); !note.empty())
        std::cout << "note: " << note << "\n";
    print_wrapped(w.description);
    std::cout << "\n" << std::flush;
    RunOutcome outcome = run_workload(options);
    if (outcome.interrupted) {
        // As run's report.txt heads a cut-short run: the story below has only the part that ran,
        // and a scenario whose fault was still due shows nothing of it.
        char ran[64];
        std::snprintf(ran, sizeof ran, "%.1f of %.1f s", outcome.summary.duration_s,
                      options.workload.duration_s);
        std::cout << "lockbench demo: " << w.name << " / " << strategy << "  (INTERRUPTED after "
                  << ran << "; the story is of the part that ran)\n\n";
    }
    std::ifstream story(outcome.dir / "story.txt");
    std::cout << story.rdbuf() << "\n";
    std::cout << verdict_line(outcome.summary) << expected_line(outcome.summary);
    std::cout << "timeline    " << (outcome.dir / "timeline.html").string() << "\n"
              << "result      " << outcome.dir.string() << "\n";
    if (outcome.interrupted)
        std::cerr << "lockbench: interrupted; the partial result is marked so\n";
    return run_exit_code(outcome);
}

}  // namespace

Command add_demo_command(CLI::App& app, const std::string& scenarios_dir) {
    Subcommand<DemoFlags> demo(
        app, "demo", "Run a shipped scenario and tell its story: what happened, event by event");
    DemoFlags& df = demo.flags();
    df.dir = scenarios_dir;
    demo->add_option("scenario", df.scenario, "Scenario name (see lockbench scenarios) or file")
        ->required();
    demo->add_option("--strategy", df.strategy,
                     "Strategy to show (default: the scenario's demo_strategy, else the first "
                     "it breaks, set_nx_px when it is one)");
    demo->add_option("--dir", df.dir, "Folder of scenario files")->capture_default_str();
    add_server_options(demo.app(), df.server, {.inventory = true, .etcd = false});
    demo->add_flag("--no-yardstick", df.no_yardstick,
                   "Accepted as run takes it: a demo never measures the machine");
    return demo.runs(demo_command);
}

}  // namespace lockbench::cli
