#include "engine/compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <set>
#include <sstream>

#include "checker/report.hpp"
#include "checker/story/markup_escape.hpp"
#include "engine/compare/wilson.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/result_folder.hpp"

namespace lockbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The order a reading names what broke: the damage a user sees first.
const std::vector<std::string>& reading_order() {
    static const std::vector<std::string> order{"resource", "mutual_exclusion", "fencing",
                                                "linearizability", "liveness"};
    return order;
}

std::string broke_words(const std::string& check) {
    if (check == "resource")
        return "lost an update";
    if (check == "mutual_exclusion")
        return "broke mutual exclusion";
    if (check == "fencing")
        return "let a stale fencing number through";
    if (check == "linearizability")
        return "was not linearizable";
    if (check == "liveness")
        return "deadlocked or starved a waiter";
    return "violated " + check;
}

json spread_of(std::vector<double> values) {
    if (values.empty())
        return json{{"median", nullptr}, {"min", nullptr}, {"max", nullptr}};
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    const double median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
    return json{{"median", median}, {"min", values.front()}, {"max", values.back()}};
}

// {"violated", "valid", "unknown", "not_applicable", "runs", "violation_rate", "wilson_95"}
json counts_json(const checker::VerdictCounts& c) {
    const int n = c.runs();
    const RateInterval ci = wilson_interval(c.violated, n);
    return json{
        {"violated", c.violated},
        {"valid", c.valid},
        {"unknown", c.unknown},
        {"not_applicable", c.not_applicable},
        {"runs", n},
        {"violation_rate", n > 0 ? json(static_cast<double>(c.violated) / n) : json(nullptr)},
        {"wilson_95", {ci.low, ci.high}}};
}

std::string k_of_n(const json& counts) {
    return std::to_string(counts["violated"].get<int>()) + " of " +
           std::to_string(counts["runs"].get<int>());
}

// "set_nx_px lost an update in 5 of 5 runs and broke mutual exclusion in 5 of 5", "fenced kept
// the data in 5 of 5 but broke mutual exclusion in 5 of 5", "reentrant_hash was safe in 5 of 5
// runs".
std::string reading_of(const std::string& strategy, const json& stats) {
    const int n = stats["runs"].get<int>();
    if (n == 0)
        return strategy + ": no run finished";
    const json& checks = stats["checks"];
    std::vector<std::string> broke;
    for (const auto& name : reading_order()) {
        if (checks.contains(name) && checks[name]["violated"].get<int>() > 0)
            broke.push_back(broke_words(name) + " in " + k_of_n(checks[name]));
    }
    for (const auto& [name, counts] : checks.items()) {
        const auto& order = reading_order();
        if (std::find(order.begin(), order.end(), name) == order.end() &&
            counts["violated"].get<int>() > 0)
            broke.push_back(broke_words(name) + " in " + k_of_n(counts));
    }
    const int unknown = stats["verdict"]["unknown"].get<int>();
    const std::string n_text = std::to_string(n);
    if (broke.empty()) {
        if (unknown == 0)
            return strategy + " was safe in " + n_text + " of " + n_text + " runs";
        return strategy + " showed no violation, but " + std::to_string(unknown) + " of " + n_text +
               " runs could not be judged (unknown)";
    }
    std::string words = strategy + " ";
    if (checks.contains("resource") && checks["resource"]["valid"].get<int>() == n)
        words += "kept the data in " + n_text + " of " + n_text + " runs but ";
    else
        broke.front() += " runs";
    for (std::size_t i = 0; i < broke.size(); ++i)
        words += (i == 0 ? "" : " and ") + broke[i];
    if (unknown > 0)
        words += " (" + std::to_string(unknown) + " unknown)";
    return words;
}

std::string percent(double rate) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * rate);
    return buf;
}

std::string interval_text(const json& counts) {
    return percent(counts["wilson_95"][0].get<double>()) + "-" +
           percent(counts["wilson_95"][1].get<double>());
}

std::string number_text(const json& v, const char* format) {
    if (!v.is_number())
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, format, v.get<double>());
    return buf;
}

// safe: no run violated anything; unsafe: some run did; unknown: nothing judged there.
enum class Safety { Safe, Unsafe, Unknown };

Safety safety_of(const json& stats) {
    const json& v = stats["verdict"];
    if (v["violated"].get<int>() > 0)
        return Safety::Unsafe;
    if (v["valid"].get<int>() > 0)
        return Safety::Safe;
    return Safety::Unknown;
}

std::string setting_label(const json& compare, std::size_t index) {
    const json& sweep = compare["sweep"];
    const json& setting = compare["settings"][index]["at"];
    std::string words;
    for (const json& axis : sweep) {
        const std::string path = axis["path"].get<std::string>();
        words += (words.empty() ? "" : " ") + axis["field"].get<std::string>() + "=" +
                 value_text(setting[path].get<double>());
    }
    return words;
}

// Where safe turns unsafe or back between two neighbouring settings; a setting not judged is
// on neither side.
bool safety_boundary(Safety a, Safety b) {
    return a != Safety::Unknown && b != Safety::Unknown && a != b;
}

// A sweep's settings as a grid: the first axis across, the second (if any) down; the settings
// are listed with the first axis varying fastest.
struct SweepGrid {
    explicit SweepGrid(const json& comparison)
        : compare(comparison),
          across(comparison["sweep"][0]),
          down(comparison["sweep"].size() == 2 ? &comparison["sweep"][1] : nullptr),
          columns(across["values"].size()),
          rows(down ? (*down)["values"].size() : 1) {}

    const json& stats_at(const std::string& strategy, std::size_t r, std::size_t c) const {
        return compare["settings"][r * columns + c]["strategies"][strategy];
    }

    const json& compare;
    const json& across;
    const json* down;  // null with one axis
    std::size_t columns;
    std::size_t rows;
};

}  // namespace

json server_us_per_cycle(const json& summary) {
    const json cost = summary.value("server_cost", json());
    if (!cost.is_object() || !cost.value("total", json()).is_object())
        return nullptr;
    const json us = cost["total"].value("cpu_us_per_cycle", json());
    return us.is_number() ? us : json(nullptr);
}

namespace {

// The runs of one strategy at one setting, in the order they were made.
std::vector<const json*> runs_of(const json& runs, std::size_t setting,
                                 const std::string& strategy) {
    std::vector<const json*> mine;
    for (const json& r : runs) {
        if (r["setting"].get<std::size_t>() == setting && r["strategy"] == strategy)
            mine.push_back(&r);
    }
    return mine;
}

// Each check any of the runs reported, as k of n over all of them.
json check_counts(const std::vector<const json*>& runs) {
    std::set<std::string> seen;
    for (const json* r : runs) {
        for (const auto& [name, valid] : (*r)["checks"].items())
            seen.insert(name);
    }
    json checks = json::object();
    for (const std::string& name : checker::Report::in_check_order(seen)) {
        checker::VerdictCounts counts;
        for (const json* r : runs) {
            const json& c = (*r)["checks"];
            // A check a run did not report took no part in it.
            counts.add(c.contains(name) ? checker::verdict_of(c[name])
                                        : checker::Verdict::NotApplicable);
        }
        checks[name] = counts_json(counts);
    }
    return checks;
}

// What one strategy did at one setting over its runs (compare.json's settings[i].strategies).
json strategy_stats(const std::string& strategy, const std::vector<const json*>& runs) {
    checker::VerdictCounts verdicts;
    std::vector<double> throughput, p99, server_cost;
    json run_names = json::array();
    json expected = nullptr;
    int as_expected = 0;
    for (const json* r : runs) {
        verdicts.add(checker::verdict_of((*r)["verdict"]));
        if ((*r)["cycles_per_s"].is_number())
            throughput.push_back((*r)["cycles_per_s"].get<double>());
        if ((*r)["acquire_p99_ms"].is_number())
            p99.push_back((*r)["acquire_p99_ms"].get<double>());
        if (const json us = r->value("server_us_per_cycle", json()); us.is_number())
            server_cost.push_back(us.get<double>());
        run_names.push_back((*r)["run"]);
        if ((*r)["expected"].is_string()) {
            expected = (*r)["expected"];
            as_expected += (*r)["as_expected"] == true;
        }
    }
    // The run's verdict is never "not applicable": a run nothing applied to is unknown.
    json stats{
        {"runs", static_cast<int>(runs.size())},
        {"verdict", counts_json({.violated = verdicts.violated,
                                 .valid = verdicts.valid,
                                 .unknown = verdicts.unknown + verdicts.not_applicable})},
        {"checks", check_counts(runs)},
        {"expected", expected},
        {"as_expected", expected.is_null() ? json(nullptr) : json(as_expected)},
        {"cycles_per_s", spread_of(throughput)},
        {"acquire_p99_ms", spread_of(p99)},
        // Where no run measured the servers (ZooKeeper, etcd of the user's):
        // null, never a median of nothing.
        {"server_us_per_cycle", server_cost.empty() ? json(nullptr) : spread_of(server_cost)},
        {"run_folders", run_names}};
    std::vector<json> terms;
    for (const json* r : runs)
        terms.push_back(r->value("expected_terms", json::array()));
    stats.update(judge_repeated(expected, terms).to_json());
    stats["reading"] = reading_of(strategy, stats);
    return stats;
}

// "fenced violated something at 2 of 6 settings (lease_ms=200, ...)": the first three named.
std::string sweep_reading(const json& compare, const std::string& strategy) {
    const json& settings = compare["settings"];
    std::vector<std::string> unsafe;
    std::size_t judged = 0;
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const Safety s = safety_of(settings[i]["strategies"][strategy]);
        judged += s != Safety::Unknown;
        if (s == Safety::Unsafe)
            unsafe.push_back(setting_label(compare, i));
    }
    std::string words = strategy + " ";
    if (unsafe.empty())
        return words + "violated nothing at any of " + std::to_string(judged) + " settings";
    words += "violated something at " + std::to_string(unsafe.size()) + " of " +
             std::to_string(settings.size()) + " settings (";
    for (std::size_t k = 0; k < unsafe.size() && k < 3; ++k)
        words += (k ? ", " : "") + unsafe[k];
    return words + (unsafe.size() > 3 ? ", ...)" : ")");
}

// Without a sweep each strategy's own reading; with one, where each was unsafe.
std::string overall_reading(const json& compare, bool swept) {
    const std::vector<std::string> strategies = compare["strategies"];
    const json& settings = compare["settings"];
    std::string reading;
    for (const std::string& strategy : strategies) {
        if (swept)
            reading += (reading.empty() ? "" : "; ") + sweep_reading(compare, strategy);
        else if (!settings.empty())
            reading += (reading.empty() ? "" : "; ") +
                       settings[0]["strategies"][strategy]["reading"].get<std::string>();
    }
    return reading;
}

}  // namespace

json summarise_compare(json compare) {
    const std::vector<std::string> strategies = compare["strategies"];
    json& settings = compare["settings"];
    for (std::size_t i = 0; i < settings.size(); ++i) {
        json per_strategy = json::object();
        for (const std::string& strategy : strategies)
            per_strategy[strategy] =
                strategy_stats(strategy, runs_of(compare["runs"], i, strategy));
        settings[i]["strategies"] = std::move(per_strategy);
    }
    const bool swept = !compare["sweep"].empty();
    compare["reading"] = overall_reading(compare, swept);
    return compare;
}

namespace {

void check_compare_options(const CompareOptions& options) {
    if (options.strategies.empty())
        throw WorkloadError("compare: --strategy names no strategy");
    std::set<std::string> distinct(options.strategies.begin(), options.strategies.end());
    if (distinct.size() != options.strategies.size())
        throw WorkloadError("compare: --strategy names a strategy twice");
    if (options.repeat < 1)
        throw WorkloadError("compare: --repeat must be 1 or more");
    if (options.sweep.size() > kMaxSweepAxes)
        throw WorkloadError("compare: at most two --sweep (a heat map has two axes)");
}

// Per setting, per strategy (in the order given) the run to make; throws WorkloadError naming
// the strategy and setting that cannot run.
std::vector<std::vector<RunOptions>> plan_runs(const CompareOptions& options,
                                               const std::vector<std::vector<double>>& settings) {
    std::vector<std::vector<RunOptions>> plan(settings.size());
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const Workload at = at_setting(options.base.workload, options.sweep, settings[i]);
        for (const std::string& strategy : options.strategies) {
            RunOptions run = options.base;
            run.workload = at;
            run.workload.strategy = strategy;
            std::string why = why_it_cannot_run(run);
            if (!why.empty()) {
                const std::string where = setting_words(options.sweep, settings[i]);
                // "strategy: unknown 'x'" after "--strategy x" would say it twice.
                if (why.rfind("strategy: ", 0) == 0)
                    why.erase(0, 10);
                throw WorkloadError("--strategy " + strategy +
                                    (where.empty() ? "" : " at " + where) + ": " + why);
            }
            plan[i].push_back(std::move(run));
        }
    }
    return plan;
}

std::size_t runs_planned(const CompareOptions& options, std::size_t settings) {
    return options.strategies.size() * settings * static_cast<std::size_t>(options.repeat);
}

// compare.json before any run: what is compared, over which settings, on which machine.
json compare_document(const CompareOptions& options,
                      const std::vector<std::vector<double>>& settings) {
    const Workload& w = options.base.workload;
    json sweep = json::array();
    for (const SweepAxis& axis : options.sweep)
        sweep.push_back(axis.to_json());
    json setting_list = json::array();
    for (const auto& setting : settings)
        setting_list.push_back({{"at", setting_json(options.sweep, setting)}});
    json compare{{"format", kCompareFormat},
                 {"version", kCompareVersion},
                 {"kind", options.kind},
                 {"scenario", w.name},
                 {"strategies", options.strategies},
                 {"repeat", options.repeat},
                 {"duration_s", w.duration_s},
                 {"seed", w.seed},
                 {"confidence", 0.95},
                 {"sweep", sweep},
                 {"settings", setting_list},
                 {"runs_planned", runs_planned(options, settings.size())},
                 {"runs", json::array()},
                 {"failed", json::array()}};
    if (options.base.machine)
        compare["yardstick"] = options.base.machine->to_json();
    else if (!options.base.machine_not_measured.empty())
        compare["yardstick"] = {{"not_measured", options.base.machine_not_measured}};
    return compare;
}

// One run's row of compare.json's "runs", from its summary.json.
json run_row(int round, std::size_t setting, const std::string& strategy, const RunOutcome& r,
             int exit_code) {
    const json& summary = r.summary;
    const checker::Report report = checker::Report::from_json(summary["verdict"]);
    json checks = json::object();
    for (const auto& c : report.checks)
        checks[c.name] = checker::to_json(c.verdict());
    return {{"round", round},
            {"setting", setting},
            {"strategy", strategy},
            {"run", r.dir.filename().string()},
            {"verdict", checker::to_json(report.verdict)},
            {"checks", checks},
            {"unknown_reasons", report.unknown_reasons},
            {"expected", summary.value("expected", json())},
            {"as_expected", summary.value("as_expected", json())},
            {"cycles_per_s", summary["throughput"]["cycles_per_s"]},
            {"acquire_p99_ms", summary["latency_ms"]["acquire"]["p99"]},
            {"server_us_per_cycle", server_us_per_cycle(summary)},
            {"expected_terms", summary.value("expected_terms", json::array())},
            {"exit_code", exit_code}};
}

// Makes the planned runs round by round into the comparison's folder, recording each in
// compare.json, until all are done or the user interrupts.
class CompareRunner {
  public:
    CompareRunner(const CompareOptions& options, const std::vector<std::vector<double>>& settings,
                  std::vector<std::vector<RunOptions>> plan, const fs::path& folder, json& compare,
                  CompareOutcome& outcome)
        : options_(options),
          settings_(settings),
          plan_(std::move(plan)),
          folder_(folder),
          compare_(compare),
          outcome_(outcome),
          planned_(runs_planned(options, settings.size())) {}

    void run_all() {
        const std::size_t n_strategies = options_.strategies.size();
        for (int round = 0; round < options_.repeat && !outcome_.interrupted; ++round) {
            for (std::size_t i = 0; i < settings_.size() && !outcome_.interrupted; ++i) {
                for (std::size_t k = 0; k < n_strategies && !outcome_.interrupted; ++k) {
                    if (options_.base.interrupt && options_.base.interrupt->load()) {
                        outcome_.interrupted = true;
                        break;
                    }
                    // Rotated each round, so no strategy always runs first (on a cold machine)
                    // or right after the same neighbour.
                    run_one(round, i, (k + static_cast<std::size_t>(round)) % n_strategies);
                }
            }
        }
        if (options_.base.progress)
            std::fprintf(stderr, "\r\x1b[K");
    }

  private:
    void run_one(int round, std::size_t i, std::size_t s) {
        RunOptions run = plan_[i][s];
        const std::string& strategy = options_.strategies[s];
        const std::string where = setting_words(options_.sweep, settings_[i]);
        run.out_dir = folder_;
        run.progress = false;
        run.label =
            strategy + (where.empty() ? "" : "-" + where) + "-r" + std::to_string(round + 1);
        ++started_;
        if (options_.base.progress) {
            std::fprintf(stderr, "\r\x1b[K[%zu/%zu] %s%s%s, round %d", started_, planned_,
                         strategy.c_str(), where.empty() ? "" : " at ", where.c_str(), round + 1);
        }
        RunOutcome r;
        try {
            r = run_workload(run);
        } catch (...) {
            // A run that could not be done is that run's error; the others still answer.
            record_failure(round, i, strategy, where, run_failure(std::current_exception()));
            return;
        }
        if (r.interrupted) {
            // Its folder stays (marked interrupted), but half a run is not a sample.
            compare_["interrupted_run"] = r.dir.filename().string();
            outcome_.interrupted = true;
            return;
        }
        const int exit_code = run_exit_code(r);
        if (exit_code == 1 || outcome_.runs_exit_code == 1)
            outcome_.runs_exit_code = 1;
        else if (exit_code == 3)
            outcome_.runs_exit_code = 3;
        compare_["runs"].push_back(run_row(round + 1, i, strategy, r, exit_code));
    }

    void record_failure(int round, std::size_t i, const std::string& strategy,
                        const std::string& where, const RunFailure& failure) {
        std::fprintf(stderr, "%sfailed: %s%s%s, round %d: %s\n",
                     options_.base.progress ? "\r\x1b[K" : "", strategy.c_str(),
                     where.empty() ? "" : " at ", where.c_str(), round + 1,
                     failure.message.c_str());
        compare_["failed"].push_back({{"round", round + 1},
                                      {"setting", i},
                                      {"strategy", strategy},
                                      {"error", failure.message},
                                      {"exit_code", failure.exit_code}});
        outcome_.failure_exit_code = std::max(outcome_.failure_exit_code, failure.exit_code);
    }

    const CompareOptions& options_;
    const std::vector<std::vector<double>>& settings_;
    const std::vector<std::vector<RunOptions>> plan_;
    const fs::path& folder_;
    json& compare_;
    CompareOutcome& outcome_;
    const std::size_t planned_;
    std::size_t started_ = 0;
};

// Where every strategy states an expectation, it decides over the runs together (a rate needs
// them all); one run's own exit code cannot judge a rate. Nothing to say otherwise.
std::optional<int> exit_code_by_expectations(const json& compare) {
    bool all_stated = !compare["runs"].empty();
    bool missed = false, undecided = false;
    for (const json& setting : compare["settings"]) {
        for (const auto& [strategy, stats] : setting["strategies"].items()) {
            all_stated = all_stated && stats["expected"].is_string();
            missed = missed || stats["expectation_met"] == false;
            undecided = undecided || stats["expectation_met"].is_null();
        }
    }
    if (!all_stated)
        return std::nullopt;
    return missed ? 1 : undecided ? 3 : 0;
}

}  // namespace

CompareOutcome run_compare(const CompareOptions& options) {
    check_compare_options(options);
    const std::vector<std::vector<double>> settings = sweep_cells(options.sweep);
    // Every run is planned and checked before any starts: a strategy that cannot run this
    // workload, or a setting the workload refuses, fails in a second, not an hour in.
    std::vector<std::vector<RunOptions>> plan = plan_runs(options, settings);

    ResultFolder folder(options.base.out_dir, options.kind + "-" + utc_stamp() + "-" +
                                                  safe_name(options.base.workload.name));
    json compare = compare_document(options, settings);
    CompareOutcome outcome;
    CompareRunner(options, settings, std::move(plan), folder.tmp(), compare, outcome).run_all();
    compare["interrupted"] = outcome.interrupted;
    compare["runs_done"] = compare["runs"].size();
    compare["complete"] = !outcome.interrupted && compare["failed"].empty();
    compare = summarise_compare(std::move(compare));
    if (const auto code = exit_code_by_expectations(compare))
        outcome.runs_exit_code = *code;
    write_atomically(folder.tmp() / "compare.json", compare.dump(2) + "\n");
    write_atomically(folder.tmp() / "compare.txt", format_compare(compare));
    write_atomically(folder.tmp() / "compare.html", compare_html(compare));
    outcome.compare = std::move(compare);
    outcome.dir = folder.commit();
    return outcome;
}

namespace {

std::string padded(std::string s, std::size_t width) {
    s.resize(std::max(s.size(), width), ' ');
    return s;
}

std::string without_trailing_spaces(std::string s) {
    while (!s.empty() && s.back() == ' ')
        s.pop_back();
    return s;
}

// "3/3 ###": k of n, then '.' where none violated, one '#' per third of the runs that did, '?'
// where nothing was judged.
std::string heat_cell_text(const json& stats) {
    const json& v = stats["verdict"];
    std::string cell =
        std::to_string(v["violated"].get<int>()) + "/" + std::to_string(v["runs"].get<int>());
    const Safety safety = safety_of(stats);
    if (safety == Safety::Unknown)
        return cell + " ?";
    if (safety == Safety::Safe)
        return cell + " .";
    const double rate = v["violation_rate"].get<double>();
    return cell + " " + std::string(static_cast<std::size_t>(std::ceil(rate * 3)), '#');
}

// The text heat map's columns: the row labels' width, then one cell per value across.
struct HeatMapLayout {
    std::vector<std::string> row_labels;
    std::vector<std::string> headers;
    std::size_t label_width = 0;
    std::size_t cell_width = 9;
};

HeatMapLayout heat_map_layout(const SweepGrid& grid) {
    HeatMapLayout layout;
    layout.row_labels.resize(grid.rows);
    for (std::size_t r = 0; r < grid.rows; ++r) {
        if (grid.down)
            layout.row_labels[r] = (*grid.down)["field"].get<std::string>() + "=" +
                                   value_text((*grid.down)["values"][r].get<double>());
        layout.label_width = std::max(layout.label_width, layout.row_labels[r].size());
    }
    layout.label_width += 2;
    layout.headers.resize(grid.columns);
    for (std::size_t c = 0; c < grid.columns; ++c) {
        layout.headers[c] = grid.across["field"].get<std::string>() + "=" +
                            value_text(grid.across["values"][c].get<double>());
        layout.cell_width = std::max(layout.cell_width, layout.headers[c].size() + 2);
    }
    return layout;
}

// One row of cells, with '|' where the next setting across is on the other side of safe.
std::string heat_map_row(const SweepGrid& grid, const HeatMapLayout& layout,
                         const std::string& strategy, std::size_t r) {
    std::string line = padded(layout.row_labels[r], layout.label_width);
    for (std::size_t c = 0; c < grid.columns; ++c) {
        const json& stats = grid.stats_at(strategy, r, c);
        const bool edge =
            c + 1 < grid.columns &&
            safety_boundary(safety_of(stats), safety_of(grid.stats_at(strategy, r, c + 1)));
        line += padded(heat_cell_text(stats), layout.cell_width - 2) + (edge ? "| " : "  ");
    }
    return without_trailing_spaces(line);
}

// Under row r: '=' under each cell whose setting below is on the other side of safe; empty
// where there is none.
std::string heat_map_line_under(const SweepGrid& grid, const HeatMapLayout& layout,
                                const std::string& strategy, std::size_t r) {
    std::string under = padded("", layout.label_width);
    bool any = false;
    for (std::size_t c = 0; c < grid.columns; ++c) {
        const bool edge = safety_boundary(safety_of(grid.stats_at(strategy, r, c)),
                                          safety_of(grid.stats_at(strategy, r + 1, c)));
        any = any || edge;
        under +=
            edge ? std::string(layout.cell_width - 2, '=') + "  " : padded("", layout.cell_width);
    }
    return any ? without_trailing_spaces(under) : "";
}

}  // namespace

std::string format_heat_map(const json& compare, const std::string& strategy) {
    if (compare["sweep"].empty())
        return "";
    const SweepGrid grid(compare);
    const HeatMapLayout layout = heat_map_layout(grid);
    std::ostringstream out;
    out << strategy << ": runs that violated a check, k of n"
        << (grid.down ? " (rows " + (*grid.down)["path"].get<std::string>() + ", columns " +
                            grid.across["path"].get<std::string>() + ")"
                      : "")
        << "\n";
    std::string header = padded("", layout.label_width);
    for (const auto& h : layout.headers)
        header += padded(h, layout.cell_width);
    out << without_trailing_spaces(header) << "\n";
    for (std::size_t r = 0; r < grid.rows; ++r) {
        out << heat_map_row(grid, layout, strategy, r) << "\n";
        if (r + 1 < grid.rows)
            out << heat_map_line_under(grid, layout, strategy, r) << "\n";
    }
    return out.str();
}

namespace {

// An expectation of rates only ("violates:mutual_exclusion in >= 2 of 3"): no single run
// decides it, so "as expected in 0 of n run(s)" would be true and say nothing.
bool only_rates(const std::string& expected) {
    try {
        return Expectation::parse(expected).only_rates();
    } catch (const std::invalid_argument&) {
        return false;  // a grammar this build does not know: said as it is, run by run
    }
}

// "violates:mutual_exclusion in >= 2 of 3 runs; seen in 3 of 3: as expected": each rate as the
// runs met it, then whether they met them all.
std::string rates_outcome(const json& stats) {
    std::string words;
    for (const json& rate : stats.value("rate_terms", json::array())) {
        const int undecided = rate["undecided"].get<int>();
        words += (words.empty() ? "" : "; ") + rate["term"].get<std::string>() + " runs; seen in " +
                 std::to_string(rate["held"].get<int>()) + " of " +
                 std::to_string(rate["runs"].get<int>()) +
                 (undecided > 0 ? " (" + std::to_string(undecided) + " undecided)" : "");
    }
    const json met = stats.value("expectation_met", json());
    return words + ": " +
           (met.is_null()     ? "unknown"
            : met.get<bool>() ? "as expected"
                              : "NOT as expected");
}

// "compare: t1, 5 run(s) per strategy, interleaved, 10 s each", and whether all were done.
void write_compare_intro(std::ostream& out, const json& compare) {
    const std::size_t planned = compare.value("runs_planned", std::size_t{0});
    const std::size_t done = compare.value("runs_done", std::size_t{0});
    out << compare.value("kind", std::string("compare")) << ": "
        << compare.value("scenario", std::string()) << ", " << compare.value("repeat", 0)
        << " run(s) per strategy";
    if (!compare["sweep"].empty())
        out << " and setting";
    out << (compare["strategies"].size() > 1 ? ", interleaved, " : ", ")
        << value_text(compare.value("duration_s", 0.0)) << " s each\n";
    if (compare.value("interrupted", false))
        out << "INCOMPLETE: interrupted after " << done << " of " << planned << " runs\n";
    else if (!compare.value("complete", true))
        out << "INCOMPLETE: " << compare["failed"].size() << " of " << planned
            << " runs failed (listed at the end)\n";
}

// "  mutual_exclusion   violated in 5 of 5    57%-100%": a line per check that applied.
void write_check_lines(std::ostream& out, const json& stats) {
    std::set<std::string> names;
    for (const auto& [name, counts] : stats["checks"].items())
        names.insert(name);
    for (const std::string& name : checker::Report::in_check_order(names)) {
        const json& counts = stats["checks"][name];
        if (counts["not_applicable"].get<int>() == counts["runs"].get<int>())
            continue;  // did not apply to this strategy in any run
        std::string extra;
        if (counts["unknown"].get<int>() > 0)
            extra += ", unknown in " + std::to_string(counts["unknown"].get<int>());
        if (counts["not_applicable"].get<int>() > 0)
            extra += ", n/a in " + std::to_string(counts["not_applicable"].get<int>());
        char line[200];
        std::snprintf(line, sizeof line, "  %-18s violated in %-8s  %s%s\n", name.c_str(),
                      k_of_n(counts).c_str(), interval_text(counts).c_str(), extra.c_str());
        out << line;
    }
}

// "  cycles/s           300.0 median (100.0 - 500.0)": `unit` follows the median.
void write_spread_line(std::ostream& out, const char* what, const json& spread, const char* format,
                       const char* unit) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-18s %s%s median (%s - %s)\n", what,
                  number_text(spread["median"], format).c_str(), unit,
                  number_text(spread["min"], format).c_str(),
                  number_text(spread["max"], format).c_str());
    out << line;
}

std::string met_word(const json& met) {
    return met.is_null() ? "unknown" : met.get<bool>() ? "met" : "NOT MET";
}

// The expectation run by run, then over the runs, then each rate term as the runs held it.
void write_expectation_lines(std::ostream& out, const json& stats) {
    out << "  expected           " << stats["expected"].get<std::string>() << ": as expected in "
        << stats["as_expected"].get<int>() << " of " << stats["runs"].get<int>()
        << " run(s); over the runs: " << met_word(stats.value("expectation_met", json())) << "\n";
    for (const json& rate : stats.value("rate_terms", json::array())) {
        out << "    " << rate["term"].get<std::string>() << ": held in " << rate["held"].get<int>()
            << " of " << rate["runs"].get<int>()
            << (rate["undecided"].get<int>() > 0
                    ? " (" + std::to_string(rate["undecided"].get<int>()) + " undecided)"
                    : "")
            << " -> " << met_word(rate["met"]) << "\n";
    }
}

void write_strategy_text(std::ostream& out, const json& compare, const std::string& strategy,
                         const json& stats) {
    const json& v = stats["verdict"];
    out << "\n"
        << strategy << ": " << stats["runs"].get<int>() << " run(s), violated in " << k_of_n(v)
        << " (95% interval " << interval_text(v) << ")\n";
    write_check_lines(out, stats);
    write_spread_line(out, "cycles/s", stats["cycles_per_s"], "%.1f", "");
    write_spread_line(out, "acquire p99", stats["acquire_p99_ms"], "%.3f", " ms");
    if (const json& us = stats.value("server_us_per_cycle", json()); us.is_object())
        write_spread_line(out, "server cpu/cycle", us, "%.1f", " us");
    if (stats["expected"].is_string() && compare["sweep"].empty()) {
        if (only_rates(stats["expected"].get<std::string>()))
            out << "  expected           " << rates_outcome(stats) << "\n";
        else
            write_expectation_lines(out, stats);
    }
    out << "  reading            " << stats["reading"].get<std::string>() << "\n";
}

}  // namespace

std::string format_compare(const json& compare) {
    std::ostringstream out;
    write_compare_intro(out, compare);
    const std::vector<std::string> strategies = compare["strategies"];
    if (!compare["sweep"].empty()) {
        out << "\nheat maps ('.' none violated, one '#' per third of runs violated, '|' and '=' "
               "the boundary between safe and unsafe settings, '?' not judged)\n";
        for (const auto& strategy : strategies)
            out << "\n" << format_heat_map(compare, strategy);
    }
    const json& settings = compare["settings"];
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const std::string label = setting_label(compare, i);
        if (!label.empty())
            out << "\nat " << label << "\n";
        for (const auto& strategy : strategies)
            write_strategy_text(out, compare, strategy, settings[i]["strategies"][strategy]);
    }
    out << "\nreading: " << compare.value("reading", std::string()) << "\n";
    for (const json& f : compare["failed"]) {
        out << "failed: " << f["strategy"].get<std::string>() << ", round " << f["round"].get<int>()
            << ": " << f["error"].get<std::string>() << "\n";
    }
    return out.str();
}

namespace {

// The SVG heat map in pixels: a cell, and the margins left of and above the grid for the labels.
constexpr int kSvgCellWidth = 96, kSvgCellHeight = 40, kSvgLeft = 170, kSvgTop = 48;

void write_html_head(std::ostream& h, const json& compare) {
    h << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>lockbench "
      << markup_escape(compare.value("kind", std::string("compare"))) << ": "
      << markup_escape(compare.value("scenario", std::string())) << "</title>\n<style>\n"
      << "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}\n"
      << "h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
      << "table{border-collapse:collapse;margin:8px 0}\n"
      << "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}\n"
      << "th{background:#f3f3f3}.bad{color:#b71c1c;font-weight:600}.ok{color:#1b5e20}\n"
      << ".ci{color:#666;font-size:12px}.reading{background:#fff8e1;padding:8px 12px;"
      << "border-left:4px solid #f9a825}.incomplete{color:#b71c1c;font-weight:700}\n"
      << "figure{display:inline-block;margin:8px 24px 8px 0}figcaption{font-weight:600}\n"
      << "svg.heatmap text{font:12px system-ui,sans-serif}\n"
      << ".boundary{stroke:#000;stroke-width:4}\n</style></head>\n<body>\n";
}

// The title, what was run, whether it all was, and the reading.
void write_html_intro(std::ostream& h, const json& compare) {
    h << "<h1>lockbench " << markup_escape(compare.value("kind", std::string("compare"))) << ": "
      << markup_escape(compare.value("scenario", std::string())) << "</h1>\n<p>"
      << compare.value("repeat", 0) << " run(s) per strategy"
      << (compare["sweep"].empty() ? "" : " and setting") << ", interleaved, "
      << value_text(compare.value("duration_s", 0.0)) << " s each.</p>\n";
    if (!compare.value("complete", true)) {
        h << "<p class=\"incomplete\">Incomplete: " << compare.value("runs_done", 0) << " of "
          << compare.value("runs_planned", 0) << " runs done"
          << (compare.value("interrupted", false) ? " (interrupted)" : "") << ".</p>\n";
    }
    h << "<p class=\"reading\">" << markup_escape(compare.value("reading", std::string()))
      << "</p>\n";
}

// Green where safe, grey where not judged, and from a light red at a few runs violated to a
// deep one at every run.
std::string heat_cell_fill(const json& stats) {
    const Safety safety = safety_of(stats);
    if (safety == Safety::Safe)
        return "#a5d6a7";
    if (safety != Safety::Unsafe)
        return "#bdbdbd";
    const double rate = stats["verdict"]["violation_rate"].get<double>();
    const int g = static_cast<int>(205 - 165 * rate);
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 229 - static_cast<int>(30 * rate), g, g);
    return buf;
}

// The fields' paths with an arrow each, and the values of the first axis over the columns.
void write_svg_axes(std::ostream& h, const SweepGrid& grid) {
    h << "<text x=\"" << kSvgLeft << "\" y=\"14\">"
      << markup_escape(grid.across["path"].get<std::string>()) << " &#8594;</text>\n";
    if (grid.down)
        h << "<text x=\"4\" y=\"14\">" << markup_escape((*grid.down)["path"].get<std::string>())
          << " &#8595;</text>\n";
    for (std::size_t c = 0; c < grid.columns; ++c) {
        h << "<text x=\"" << kSvgLeft + static_cast<int>(c) * kSvgCellWidth + kSvgCellWidth / 2
          << "\" y=\"" << kSvgTop - 8 << "\" text-anchor=\"middle\">"
          << value_text(grid.across["values"][c].get<double>()) << "</text>\n";
    }
}

void write_svg_cell(std::ostream& h, const SweepGrid& grid, const std::string& strategy,
                    std::size_t r, std::size_t c) {
    const json& stats = grid.stats_at(strategy, r, c);
    const json& v = stats["verdict"];
    const int x = kSvgLeft + static_cast<int>(c) * kSvgCellWidth;
    const int y = kSvgTop + static_cast<int>(r) * kSvgCellHeight;
    h << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << kSvgCellWidth
      << "\" height=\"" << kSvgCellHeight << "\" fill=\"" << heat_cell_fill(stats)
      << "\" stroke=\"#fff\"><title>" << markup_escape(strategy) << " at "
      << markup_escape(setting_label(grid.compare, r * grid.columns + c)) << ": " << k_of_n(v)
      << " runs violated a check (95% interval " << interval_text(v) << ")</title></rect>\n";
    h << "<text x=\"" << x + kSvgCellWidth / 2 << "\" y=\"" << y + kSvgCellHeight / 2 + 4
      << "\" text-anchor=\"middle\">" << v["violated"].get<int>() << "/" << v["runs"].get<int>()
      << "</text>\n";
}

// A thick line right of a cell and under it where safe turns unsafe or back.
void write_svg_boundaries(std::ostream& h, const SweepGrid& grid, const std::string& strategy) {
    for (std::size_t r = 0; r < grid.rows; ++r) {
        for (std::size_t c = 0; c < grid.columns; ++c) {
            const Safety here = safety_of(grid.stats_at(strategy, r, c));
            const int x = kSvgLeft + static_cast<int>(c) * kSvgCellWidth;
            const int y = kSvgTop + static_cast<int>(r) * kSvgCellHeight;
            if (c + 1 < grid.columns &&
                safety_boundary(here, safety_of(grid.stats_at(strategy, r, c + 1))))
                h << "<line class=\"boundary\" x1=\"" << x + kSvgCellWidth << "\" y1=\"" << y
                  << "\" x2=\"" << x + kSvgCellWidth << "\" y2=\"" << y + kSvgCellHeight
                  << "\"/>\n";
            if (r + 1 < grid.rows &&
                safety_boundary(here, safety_of(grid.stats_at(strategy, r + 1, c))))
                h << "<line class=\"boundary\" x1=\"" << x << "\" y1=\"" << y + kSvgCellHeight
                  << "\" x2=\"" << x + kSvgCellWidth << "\" y2=\"" << y + kSvgCellHeight
                  << "\"/>\n";
        }
    }
}

void write_heat_map_svg(std::ostream& h, const SweepGrid& grid, const std::string& strategy) {
    const int width = kSvgLeft + static_cast<int>(grid.columns) * kSvgCellWidth + 16;
    const int height = kSvgTop + static_cast<int>(grid.rows) * kSvgCellHeight + 16;
    h << "<figure><figcaption>" << markup_escape(strategy)
      << "</figcaption>\n<svg class=\"heatmap\" data-strategy=\"" << markup_escape(strategy)
      << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\">\n";
    write_svg_axes(h, grid);
    for (std::size_t r = 0; r < grid.rows; ++r) {
        if (grid.down)
            h << "<text x=\"" << kSvgLeft - 8 << "\" y=\""
              << kSvgTop + static_cast<int>(r) * kSvgCellHeight + kSvgCellHeight / 2 + 4
              << "\" text-anchor=\"end\">" << value_text((*grid.down)["values"][r].get<double>())
              << "</text>\n";
        for (std::size_t c = 0; c < grid.columns; ++c)
            write_svg_cell(h, grid, strategy, r, c);
    }
    // Drawn after the cells so no cell covers them.
    write_svg_boundaries(h, grid, strategy);
    h << "</svg></figure>\n";
}

// The heat maps: violation rate per setting, the boundary between safe and unsafe settings
// drawn as a thick line.
void write_heat_maps_html(std::ostream& h, const json& compare) {
    if (compare["sweep"].empty())
        return;
    const SweepGrid grid(compare);
    h << "<h2>Violation rate over the settings</h2>\n<p>Each cell: runs that violated a "
         "check, k of n. Green: none did; red, deeper as more did; grey: not judged. The "
         "thick line is the boundary between safe and unsafe settings.</p>\n";
    const std::vector<std::string> strategies = compare["strategies"];
    for (const std::string& strategy : strategies)
        write_heat_map_svg(h, grid, strategy);
}

// The checks that applied to some strategy in some run: the table's columns.
std::vector<std::string> applicable_checks(const json& settings) {
    std::set<std::string> names;
    for (const json& s : settings) {
        for (const auto& [strategy, stats] : s["strategies"].items()) {
            for (const auto& [name, counts] : stats["checks"].items()) {
                if (counts["not_applicable"].get<int>() < counts["runs"].get<int>())
                    names.insert(name);
            }
        }
    }
    return checker::Report::in_check_order(names);
}

std::string counts_cell(const json& counts) {
    const bool bad = counts["violated"].get<int>() > 0;
    return std::string("<td class=\"") + (bad ? "bad" : "ok") + "\">" + k_of_n(counts) +
           " <span class=\"ci\">(" + interval_text(counts) + ")</span></td>";
}

// "300.0 (100.0-500.0)": a spread's median, then its range.
std::string spread_html(const json& spread, const char* format) {
    return number_text(spread["median"], format) + " (" + number_text(spread["min"], format) + "-" +
           number_text(spread["max"], format) + ")";
}

void write_strategy_row(std::ostream& h, const std::string& strategy, const json& stats,
                        const std::vector<std::string>& checks) {
    h << "<tr><td>" << markup_escape(strategy) << "</td><td>" << stats["runs"].get<int>() << "</td>"
      << counts_cell(stats["verdict"]);
    for (const auto& name : checks) {
        if (stats["checks"].contains(name) && stats["checks"][name]["not_applicable"].get<int>() <
                                                  stats["checks"][name]["runs"].get<int>())
            h << counts_cell(stats["checks"][name]);
        else
            h << "<td>n/a</td>";
    }
    h << "<td>" << spread_html(stats["cycles_per_s"], "%.1f") << "</td><td>"
      << spread_html(stats["acquire_p99_ms"], "%.3f") << "</td><td class=\"server-cost\">";
    if (const json& us = stats.value("server_us_per_cycle", json()); us.is_object())
        h << spread_html(us, "%.1f");
    else
        h << "not measured";
    h << "</td><td>" << markup_escape(stats["reading"].get<std::string>()) << "</td></tr>\n";
}

// The table, per setting: k of n and the interval for every check, throughput, p99.
void write_setting_tables(std::ostream& h, const json& compare) {
    const json& settings = compare["settings"];
    const std::vector<std::string> strategies = compare["strategies"];
    const std::vector<std::string> checks = applicable_checks(settings);
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const std::string label = setting_label(compare, i);
        if (!label.empty())
            h << "<h2>At " << markup_escape(label) << "</h2>\n";
        h << "<table class=\"compare\"><tr><th>strategy</th><th>runs</th><th>any check "
             "violated</th>";
        for (const auto& name : checks)
            h << "<th>" << markup_escape(name) << "</th>";
        h << "<th>cycles/s median (min-max)</th><th>acquire p99 ms median (min-max)</th>"
             "<th>server CPU us per cycle median (min-max)</th><th>reading</th></tr>\n";
        for (const std::string& strategy : strategies)
            write_strategy_row(h, strategy, settings[i]["strategies"][strategy], checks);
        h << "</table>\n";
    }
}

void write_html_foot(std::ostream& h) {
    h << "<p class=\"ci\">k of n: runs in which the check found a violation, of the runs done; "
         "in brackets the Wilson 95% interval of the violation rate. Each run's own folder "
         "holds its report, story and timeline.</p>\n";
    // Tells a headless browser (the test) that every heat map was laid out with a size.
    h << "<script>window.addEventListener('load',function(){var n=0;"
         "document.querySelectorAll('svg.heatmap').forEach(function(m){"
         "var b=m.getBoundingClientRect();if(b.width>0&&b.height>0)n++;});"
         "document.body.setAttribute('data-heatmaps-drawn',String(n));});</script>\n";
    h << "</body></html>\n";
}

}  // namespace

std::string compare_html(const json& compare) {
    std::ostringstream h;
    write_html_head(h, compare);
    write_html_intro(h, compare);
    write_heat_maps_html(h, compare);
    write_setting_tables(h, compare);
    write_html_foot(h);
    return h.str();
}

}  // namespace lockbench
