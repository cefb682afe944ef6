#include <iostream>
#include <string>
#include <unistd.h>

#include "engine/ci/suite.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/machine_output.hpp"
#include "engine/cli/server_options.hpp"
#include "engine/cli/user_input.hpp"

namespace lockbench::cli {

namespace {

struct SuiteFlags {
    SuiteOptions so;
    std::string junit;
    ServerFlags server;
    bool no_yardstick = false;
    bool json = false, csv = false;
};

// `lockbench suite`: 0 every pair as expected, 1 one was not, 3 nothing judged, 130 interrupted.
int suite_command(SuiteFlags& f, const std::atomic<bool>* interrupt) {
    SuiteOptions& so = f.so;
    if (!f.junit.empty())
        so.junit = f.junit;
    so.progress = ::isatty(STDERR_FILENO) != 0 ? SuiteProgress::Terminal : SuiteProgress::Lines;
    so.interrupt = interrupt;
    so.yardstick = !f.no_yardstick;
    so.out_dir = f.server.out;
    so.zookeeper = parse_zookeeper_list(f.server.zookeeper);
    so.inventory = load_inventory(f.server.inventory);
    so.connections = connections_flag(f.server);
    const RedisServers redis = redis_servers(f.server);
    so.redis = redis.endpoints;
    auto outcome = run_suite(so);
    // With --json or --csv stdout is the script's: the table goes to stderr.
    (f.json || f.csv ? std::cerr : std::cout)
        << format_table(outcome.table) << "results     " << outcome.dir.string() << "\n";
    if (f.json)
        std::cout << file_text(outcome.dir / "suite.json") << std::flush;
    else if (f.csv)
        std::cout << suite_csv(outcome.table, outcome.each_run, outcome.dir) << std::flush;
    if (outcome.interrupted)
        return 130;
    if (outcome.failure_exit_code != 0)
        return outcome.failure_exit_code;
    if (!outcome.all_as_expected)
        return 1;
    // Every pair skipped: nothing was judged, which is not a pass.
    if (outcome.table.runs.empty() && !outcome.table.skipped.empty()) {
        std::cerr << "lockbench suite: every selected pair was skipped on this machine; "
                     "nothing was judged\n";
        return 3;
    }
    return 0;
}

}  // namespace

Command add_suite_command(CLI::App& app, const std::string& scenarios_dir) {
    Subcommand<SuiteFlags> suite(app, "suite",
                                 "Run every shipped scenario against every strategy it names");
    SuiteFlags& f = suite.flags();
    f.so.scenarios_dir = scenarios_dir;
    suite->add_flag("--quick", f.so.quick,
                    "Cap fault-free runs at 2.5 s (demonstrations keep their timing)");
    suite->add_option("--strategy", f.so.strategies, "Only these strategies (repeatable)");
    suite->add_option("--scenario", f.so.scenarios, "Only these scenarios (repeatable)");
    suite->add_flag("--no-topology", f.so.no_topology,
                    "Leave out the scenarios that start a deployment of many servers (Sentinel, "
                    "Cluster, a ZooKeeper ensemble): CI's quick suite; the gate compares the rest");
    suite
        ->add_option("--retries", f.so.retries,
                     "Run a pair again (up to N times) when its outcome was unexpected; the "
                     "table marks it")
        ->check(CLI::Range(0, 5))
        ->capture_default_str();
    suite
        ->add_option("--repeat", f.so.repeat,
                     "Run each pair N times, interleaved (round r runs every pair once): one row "
                     "per pair, each check as k of n runs, its expectation judged over the runs "
                     "(rates included)")
        ->check(CLI::Range(1, 100))
        ->capture_default_str();
    suite->add_option("--junit", f.junit,
                      "Write a JUnit XML file: one test case per (scenario, strategy)");
    add_server_options(suite.app(), f.server, {.inventory = true, .etcd = false});
    // On the user's servers a suite runs what it can there.
    CLI::Option* redis = suite->get_option("--redis");
    redis->description(redis->get_description() +
                       "; scenarios that need servers of lockbench's own are skipped, saying why");
    suite->add_flag("--no-yardstick", f.no_yardstick,
                    "Skip measuring the machine with redis-benchmark first (the gate then "
                    "compares throughput to set_nx_px only)");
    suite->add_option("--dir", f.so.scenarios_dir, "Folder of scenario files")
        ->capture_default_str();
    CLI::Option* json_flag = suite->add_flag(
        "--json", f.json, "Print the suite's suite.json on stdout; the table then goes to stderr");
    suite
        ->add_flag("--csv", f.csv,
                   "Print a header line and one row per run on stdout (with --repeat, each "
                   "pair's runs, their round in `repeat`); the table then goes to stderr")
        ->excludes(json_flag);

    return suite.runs(suite_command);
}

}  // namespace lockbench::cli
