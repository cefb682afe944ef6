#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "checker/check.hpp"
#include "checker/edn.hpp"
#include "checker/jepsen_history.hpp"
#include "checker/story/story.hpp"
#include "engine/cli/commands.hpp"
#include "engine/cli/number_flags.hpp"
#include "engine/run/workload.hpp"

namespace lockbench::cli {

namespace {

struct CheckFlags {
    std::string history_file;
    std::string format = "auto";
    std::string fail_means = "error";
    std::string initial = "nil";
    std::string model = "none";
    std::vector<std::string> checks;
    double time_limit_s = 30;
    bool json = false;
    bool story = false;
    std::int64_t liveness_bound_ms = 10'000;
    std::optional<std::int64_t> starvation_bound_ms;
};

std::string read_whole_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw std::system_error(errno, std::generic_category(), "cannot read " + path);
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (in.bad())
        throw std::system_error(errno, std::generic_category(), "cannot read " + path);
    return text;
}

// `lockbench check`: judges a history without Redis. 0 valid, 1 violation, 2 bad input, 3 unknown.
int check_command(const CheckFlags& f) {
    namespace checker = lockbench::checker;
    checker::CheckOptions options;
    options.model = *checker::parse_model(f.model);  // CLI::IsMember already checked the name
    options.linearizability.time_limit = std::chrono::duration<double>(f.time_limit_s);
    options.liveness_bound_ms = f.liveness_bound_ms;
    options.starvation_bound_ms = f.starvation_bound_ms;
    if (!f.checks.empty()) {
        options.only = f.checks;
        const bool wants_linearizability =
            std::find(f.checks.begin(), f.checks.end(), "linearizability") != f.checks.end();
        if (wants_linearizability && options.model == checker::Model::None) {
            throw lockbench::WorkloadError(
                "--checks linearizability needs a model: --model mutex|rwlock|register");
        }
    }
    options.linearizability.every_fail_observes = f.fail_means == "observation";
    if (f.initial != "nil") {
        if (options.model != checker::Model::Register)
            throw lockbench::WorkloadError(
                "--initial is the register's first value: it needs "
                "--model register or cas-register");
        std::size_t used = 0;
        try {
            options.linearizability.initial_value = std::stoll(f.initial, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != f.initial.size() || f.initial.empty())
            throw lockbench::WorkloadError("--initial must be an integer or nil, not " + f.initial);
    }
    const bool edn =
        f.format == "edn" ||
        (f.format == "auto" && std::filesystem::path(f.history_file).extension() == ".edn");
    checker::Report report;
    checker::ConvertedHistory converted;
    try {
        if (edn) {
            // Jepsen's EDN goes through the same reader and checks as history.jsonl.
            converted = checker::jepsen_to_jsonl(read_whole_file(f.history_file));
            std::istringstream in(converted.jsonl);
            report = checker::check_history(in, options);
            converted.locate(report);
        } else {
            report = checker::check_history(std::filesystem::path(f.history_file), options);
        }
    } catch (const checker::edn::EdnError& e) {
        std::cerr << "lockbench: " << f.history_file << ": " << e.what() << "\n";
        return kExitUsage;
    } catch (const checker::HistoryError& e) {
        std::cerr << "lockbench: " << f.history_file << ": "
                  << (edn ? converted.locate(e) : std::string(e.what())) << "\n";
        return kExitUsage;
    } catch (const std::system_error& e) {  // the history file is missing or unreadable
        std::cerr << "lockbench: " << e.what() << "\n";
        return kExitUsage;
    }
    if (f.json)
        std::cout << report.to_json().dump(2) << "\n";
    else
        std::cout << checker::format_report(report);
    if (f.story) {
        // The story reads the history again, in the form the checks read.
        std::istringstream jsonl(converted.jsonl);
        const checker::Story story =
            edn ? checker::tell_story(jsonl, report, {})
                : checker::tell_story(std::filesystem::path(f.history_file), report, {});
        std::cout << "\n" << checker::format_story(story);
    }
    return checker::exit_code(report.verdict);
}

}  // namespace

Command add_check_command(CLI::App& app) {
    Subcommand<CheckFlags> check(
        app, "check",
        "Judge a history (history.jsonl, or Jepsen's history.edn): mutual exclusion, fencing, "
        "resource, liveness, "
        "linearizability (0 valid, 1 violation, 2 bad input, 3 unknown)");
    CheckFlags& cf = check.flags();
    check
        ->add_option("history", cf.history_file,
                     "history.jsonl (checker/HISTORY.md), or a Jepsen history.edn")
        ->required()
        ->check(CLI::ExistingFile);
    check
        ->add_option("--format", cf.format,
                     "jsonl or edn (Jepsen's history.edn); auto: edn for a .edn file")
        ->check(CLI::IsMember({"auto", "jsonl", "edn"}))
        ->capture_default_str();
    check
        ->add_option("--fail-means", cf.fail_means,
                     "error: a failed cas/acquire/release observed its condition only when its "
                     "error says so (mismatch, held, not-held), otherwise it did not happen, as "
                     "in Jepsen; observation: every failed one observed its condition")
        ->check(CLI::IsMember({"error", "observation"}))
        ->capture_default_str();
    check
        ->add_option("--model", cf.model,
                     "Linearizability model: mutex and rwlock are lease locks (a grant may end "
                     "when the lease its acquire asked for runs out) and owner-aware; "
                     "unowned-mutex is Knossos's mutex (any release frees it); register (or "
                     "Knossos's name cas-register) a cas register that starts nil")
        ->check(
            CLI::IsMember({"none", "mutex", "unowned-mutex", "rwlock", "register", "cas-register"}))
        ->capture_default_str();
    check
        ->add_option("--initial", cf.initial,
                     "The register's value before the first op: an integer, or nil")
        ->capture_default_str();
    check
        ->add_option("--checks", cf.checks,
                     "Only these checks, comma-separated (default: every check that applies)")
        ->delimiter(',')
        ->check(CLI::IsMember(lockbench::checker::check_names()));
    check
        ->add_option("--time-limit", cf.time_limit_s,
                     "Seconds the linearizability search may take before it answers unknown")
        ->check(within(0.01, 86'400.0))
        ->capture_default_str();
    check->add_flag("--json", cf.json, "Print the report as JSON");
    check
        ->add_flag("--story", cf.story,
                   "Also tell the first violation's story: sentences citing event indices and "
                   "a per-process swimlane")
        ->excludes("--json");
    check
        ->add_option("--liveness-bound-ms", cf.liveness_bound_ms,
                     "A lock without a lease orphaned longer than this while others wait is a "
                     "deadlock (a leased lock: past its lease)")
        ->check(within(std::int64_t{1}, std::int64_t{86'400'000}))
        ->capture_default_str();
    check
        ->add_option("--starvation-bound-ms", cf.starvation_bound_ms,
                     "A wait for a grant longer than this is starvation (default: not judged)")
        ->check(within(std::int64_t{1}, std::int64_t{86'400'000}));

    return check.runs(check_command);
}

}  // namespace lockbench::cli
