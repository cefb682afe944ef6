#include <filesystem>
#include <iostream>
#include <string>

#include "engine/ci/gate.hpp"
#include "engine/ci/suite.hpp"
#include "engine/cli/commands.hpp"
#include "engine/run/result_folder.hpp"
#include "engine/run/workload.hpp"

namespace lockbench::cli {

namespace {

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
    if (f.baseline.empty() && f.write_baseline.empty())
        throw lockbench::WorkloadError(
            "gate: --baseline FILE or --write-baseline FILE is required");
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

}  // namespace

Command add_gate_command(CLI::App& app) {
    Subcommand<GateFlags> gate(
        app, "gate",
        "Compare a suite result with a baseline: unexpected outcomes, throughput drops "
        "beyond the noise and gross acquire-p99 rises fail (0 pass, 1 fail, 2 bad input)");
    GateFlags& gf = gate.flags();
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

    return gate.runs(gate_command);
}

}  // namespace lockbench::cli
