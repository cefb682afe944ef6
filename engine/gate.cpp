#include "gate.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <utility>
#include <vector>

#include "json_reader.hpp"
#include "report.hpp"

namespace lockbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kBaselineVersion = 1;
constexpr const char* kRefreshCommand =
    "build/release/engine/lockbench suite --quick --out results && "
    "build/release/engine/lockbench gate --write-baseline results/baseline.json";
constexpr const char* kMedianReference = "median";

// --- Reading: lenient about fields we do not use (suite.json grows), strict about those we do. ---

using Fields = json_input::JsonObject<GateInputError>;

double median_of(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Throughput as the median of the per-second samples (robust to one stalled or bursty second on
// a shared host), and its relative median absolute deviation as the run's noise.
struct Throughput {
    double median = 0;
    double noise = 0;  // relative MAD: 0.05 is 5%
    std::size_t samples = 0;
};

Throughput throughput_of(const std::vector<double>& per_second, double duration_s,
                         double cycles_per_s) {
    // The last entry covers a partial second (a 2.5 s run has 3): it would read as a drop.
    auto full = static_cast<std::size_t>(std::floor(duration_s));
    std::vector<double> samples(
        per_second.begin(),
        per_second.begin() + static_cast<std::ptrdiff_t>(std::min(full, per_second.size())));
    Throughput t;
    t.samples = samples.size();
    if (samples.empty()) {
        // Under one full second there is nothing to take a median of, nor any noise to measure.
        t.median = cycles_per_s;
        return t;
    }
    t.median = median_of(samples);
    std::vector<double> deviations;
    for (double s : samples)
        deviations.push_back(std::fabs(s - t.median));
    t.noise = t.median > 0 ? median_of(deviations) / t.median : 0;
    return t;
}

using Key = std::pair<std::string, std::string>;  // (scenario, strategy)

struct CurrentRun {
    std::string scenario;
    std::string strategy;
    bool faults = false;
    std::optional<std::string> expected;
    std::optional<bool> as_expected;
    std::string got;  // the outcome in words, for UNEXPECTED OUTCOME and UNKNOWN
    double cycles_per_s = 0;
    Throughput throughput;
};

struct CurrentSuite {
    bool quick = false;
    bool interrupted = false;
    std::vector<CurrentRun> runs;
    std::map<Key, std::size_t> index;
};

std::string outcome_words(Fields& f) {
    const json* valid = f.find("valid");
    const checker::Verdict verdict = checker::verdict_of(valid ? *valid : json());
    if (verdict != checker::Verdict::Invalid)
        return verdict == checker::Verdict::Valid ? "valid" : "unknown";
    std::string kinds;
    if (const json* k = f.find("violation_kinds"); k && k->is_array()) {
        for (const auto& kind : *k)
            kinds +=
                (kinds.empty() ? "" : ",") + (kind.is_string() ? kind.get<std::string>() : "?");
    }
    return kinds.empty() ? "violations" : "violations: " + kinds;
}

CurrentSuite parse_current(const json& j, const std::string& origin) {
    Fields top(j, origin, "");
    CurrentSuite suite;
    suite.quick = top.required_boolean("quick");
    suite.interrupted = top.required_boolean("interrupted");
    const json& runs = top.required_array("runs");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::string path = "/runs/" + std::to_string(i);
        Fields f(runs[i], origin, path);
        CurrentRun r;
        r.scenario = f.required_string("scenario");
        r.strategy = f.required_string("strategy");
        r.faults = f.required_boolean("faults");
        r.expected = f.string_or_null("expected");
        r.as_expected = f.boolean_or_null("as_expected");
        r.got = outcome_words(f);
        r.cycles_per_s = f.required_number("cycles_per_s", 0);
        double duration = f.required_number("duration_s", 0);
        const json& series = f.required_array("cycles_per_second");
        std::vector<double> per_second;
        for (std::size_t s = 0; s < series.size(); ++s) {
            per_second.push_back(
                f.number_of(series[s], f.at("cycles_per_second") + "/" + std::to_string(s), 0));
        }
        r.throughput = throughput_of(per_second, duration, r.cycles_per_s);
        Key key{r.scenario, r.strategy};
        if (auto [it, fresh] = suite.index.emplace(key, suite.runs.size()); !fresh) {
            f.fail(path, "a second run of " + r.scenario + " x " + r.strategy +
                             " (first at /runs/" + std::to_string(it->second) + ")");
        }
        suite.runs.push_back(std::move(r));
    }
    return suite;
}

struct BaselineRun {
    std::string scenario;
    std::string strategy;
    bool faults = false;
    std::optional<std::string> expected;
    double cycles_per_s = 0;
    double median = 0;
    double noise = 0;
};

struct Baseline {
    std::string created;
    bool quick = false;
    std::vector<BaselineRun> runs;
    std::map<Key, std::size_t> index;
};

Baseline parse_baseline(const json& j, const std::string& origin) {
    Fields top(j, origin, "");
    const json& version = top.require("version");
    if (version != json(kBaselineVersion)) {
        top.fail("/version", "must be " + std::to_string(kBaselineVersion) + ", not " +
                                 version.dump() + " (refresh it: " + kRefreshCommand + ")");
    }
    Baseline b;
    b.created = top.required_string("created");
    b.quick = top.required_boolean("quick");
    const json& runs = top.required_array("runs");
    if (runs.empty())
        top.fail("/runs", "is empty: a gate against nothing would pass anything");
    for (std::size_t i = 0; i < runs.size(); ++i) {
        std::string path = "/runs/" + std::to_string(i);
        Fields f(runs[i], origin, path);
        BaselineRun r;
        r.scenario = f.required_string("scenario");
        r.strategy = f.required_string("strategy");
        r.faults = f.required_boolean("faults");
        r.expected = f.string_or_null("expected");
        r.cycles_per_s = f.required_number("cycles_per_s", 0);
        r.median = f.required_number("median_cycles_per_s", 0);
        r.noise = f.required_number("noise", 0);
        // Informational, written by make_baseline; checked so a hand edit fails loudly.
        f.optional_number("normalised", 0);
        if (const json* ref = f.find("reference"); ref && !ref->is_null() && !ref->is_string())
            f.fail(f.at("reference"), "must be a string or null, not " + type_name(*ref));
        Key key{r.scenario, r.strategy};
        if (auto [it, fresh] = b.index.emplace(key, b.runs.size()); !fresh) {
            f.fail(path, "a second entry for " + r.scenario + " x " + r.strategy +
                             " (first at /runs/" + std::to_string(it->second) + ")");
        }
        b.runs.push_back(std::move(r));
    }
    return b;
}

// --- Comparing ---

// The reference one side of a scenario is normalised by.
struct Reference {
    std::string name;  // the reference strategy, or kMedianReference
    double median = 0;
    double noise = 0;
};

struct Row {
    Key key;
    const BaselineRun* base = nullptr;
    const CurrentRun* cur = nullptr;
    std::vector<std::string> problems;  // in order of severity
    std::vector<std::string> reasons;
    std::optional<std::string> reference;
    std::optional<double> base_norm, cur_norm, change_pct, combined_noise;
    bool compared = false;
};

std::string pct(double fraction) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
    return buf;
}

std::string num(double d) {
    std::ostringstream os;
    os << d;
    return os.str();
}

std::string utc_iso_now() {
    std::time_t t = std::time(nullptr);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char buf[32];
    std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return buf;
}

// Normalises the fault-free runs of one scenario that both sides have, by the same reference on
// both sides, and judges each drop.
void compare_scenario(const std::vector<Row*>& rows, const GateOptions& options) {
    std::vector<Row*> common;
    for (Row* r : rows) {
        if (r->base && r->cur && !r->base->faults && !r->cur->faults)
            common.push_back(r);
    }
    if (common.empty())
        return;
    auto named = std::find_if(common.begin(), common.end(), [&](const Row* r) {
        return r->key.second == options.reference_strategy;
    });
    // Baseline and current references for `judged`: the named strategy, or else the median of
    // the other strategies both sides ran - never one that includes `judged` itself, which would
    // halve a drop in a two-strategy scenario. A strategy added or dropped since the baseline
    // does not move it. The median of several runs is less noisy than one; taking the median of
    // their noises overstates its noise, which errs towards passing.
    auto references_for = [&](const Row* judged) -> std::optional<std::pair<Reference, Reference>> {
        if (named != common.end()) {
            return std::pair{Reference{options.reference_strategy, (*named)->base->median,
                                       (*named)->base->noise},
                             Reference{options.reference_strategy, (*named)->cur->throughput.median,
                                       (*named)->cur->throughput.noise}};
        }
        std::vector<double> mb, nb, mc, nc;
        for (const Row* r : common) {
            if (r == judged)
                continue;
            mb.push_back(r->base->median);
            nb.push_back(r->base->noise);
            mc.push_back(r->cur->throughput.median);
            nc.push_back(r->cur->throughput.noise);
        }
        if (mb.empty())
            return std::nullopt;
        return std::pair{Reference{kMedianReference, median_of(mb), median_of(nb)},
                         Reference{kMedianReference, median_of(mc), median_of(nc)}};
    };
    for (Row* r : common) {
        const auto refs = references_for(r);
        double base_median = r->base->median, cur_median = r->cur->throughput.median;
        if (cur_median <= 0 && base_median > 0) {
            // Normalisation would hide this if every strategy stopped at once.
            r->compared = true;
            r->problems.push_back("SLOWER");
            r->reasons.push_back("completed no cycles (baseline " + num(base_median) + "/s)");
            continue;
        }
        if (!refs) {
            r->reasons.push_back("throughput not compared: no other strategy in this scenario");
            continue;
        }
        const auto& [ref_b, ref_c] = *refs;
        r->reference = ref_b.name;
        if (ref_b.median <= 0 || ref_c.median <= 0) {
            r->reasons.push_back("throughput not compared: the reference completed no cycles");
            continue;
        }
        bool is_reference = r->key.second == ref_b.name;
        double base_norm = base_median / ref_b.median, cur_norm = cur_median / ref_c.median;
        // A run's ratio carries its own noise and its reference's; a run divided by itself
        // carries none. Independent errors add in squares.
        auto squared = [&](double own, double reference) {
            return is_reference ? 0 : own * own + reference * reference;
        };
        double combined = std::sqrt(squared(r->base->noise, ref_b.noise) +
                                    squared(r->cur->throughput.noise, ref_c.noise));
        r->compared = true;
        r->base_norm = base_norm;
        r->cur_norm = cur_norm;
        r->combined_noise = combined;
        if (base_norm <= 0)
            continue;
        double change = cur_norm / base_norm - 1;
        r->change_pct = change * 100;
        double drop = -change;
        bool beyond_limit = cur_norm < base_norm * (1 - options.max_drop_pct / 100);
        bool beyond_noise = drop > options.noise_factor * combined;
        std::string noise_words = pct(options.noise_factor * combined) + " (" +
                                  num(options.noise_factor) + "x noise " + pct(combined) + ")";
        if (beyond_limit && beyond_noise) {
            r->problems.push_back("SLOWER");
            r->reasons.push_back("drop " + pct(drop) + " > " + num(options.max_drop_pct) +
                                 "% limit and > " + noise_words);
        } else if (beyond_limit) {
            r->reasons.push_back("drop " + pct(drop) + " > " + num(options.max_drop_pct) +
                                 "% limit but within " + noise_words);
        }
    }
}

void judge_outcome(Row& r) {
    if (!r.cur) {
        r.problems.push_back("MISSING");
        r.reasons.push_back("in the baseline, not in this suite run");
        return;
    }
    std::string expected = r.cur->expected.value_or("nothing stated");
    if (!r.cur->as_expected.has_value()) {
        r.problems.push_back("UNKNOWN");
        r.reasons.push_back(r.cur->expected ? "expected " + expected + ", outcome " + r.cur->got
                                            : "no expectation stated for this strategy");
    } else if (!*r.cur->as_expected) {
        r.problems.push_back("UNEXPECTED OUTCOME");
        r.reasons.push_back("expected " + expected + ", got " + r.cur->got);
    }
    if (r.base && r.base->expected != r.cur->expected) {
        r.reasons.push_back("expectation changed from " +
                            r.base->expected.value_or("nothing stated") + " to " + expected);
    }
    if (!r.base)
        r.reasons.push_back("new: not in the baseline");
    else if (r.base->faults || r.cur->faults)
        r.reasons.push_back("faults injected: outcome only");
}

json optional_number(const std::optional<double>& d) {
    return d ? json(*d) : json(nullptr);
}

json row_json(const Row& r) {
    json j{{"scenario", r.key.first},
           {"strategy", r.key.second},
           {"verdict", r.problems.empty() ? "ok" : r.problems.front()},
           {"problems", r.problems},
           {"reasons", r.reasons},
           {"faults", (r.base && r.base->faults) || (r.cur && r.cur->faults)},
           {"compared", r.compared},
           {"reference", r.reference ? json(*r.reference) : json(nullptr)},
           {"change_pct", optional_number(r.change_pct)},
           {"combined_noise", optional_number(r.combined_noise)}};
    j["baseline"] = r.base ? json{{"expected", r.base->expected ? json(*r.base->expected) : json()},
                                  {"normalised", optional_number(r.base_norm)},
                                  {"median_cycles_per_s", r.base->median},
                                  {"cycles_per_s", r.base->cycles_per_s},
                                  {"noise", r.base->noise}}
                           : json(nullptr);
    j["current"] =
        r.cur
            ? json{{"expected", r.cur->expected ? json(*r.cur->expected) : json()},
                   {"as_expected", r.cur->as_expected ? json(*r.cur->as_expected) : json(nullptr)},
                   {"outcome", r.cur->got},
                   {"normalised", optional_number(r.cur_norm)},
                   {"median_cycles_per_s", r.cur->throughput.median},
                   {"cycles_per_s", r.cur->cycles_per_s},
                   {"noise", r.cur->throughput.noise},
                   {"samples", r.cur->throughput.samples}}
            : json(nullptr);
    return j;
}

std::string row_line(const Row& r) {
    auto fixed = [](const std::optional<double>& d, const char* format) {
        if (!d)
            return std::string("-");
        char buf[32];
        std::snprintf(buf, sizeof buf, format, *d);
        return std::string(buf);
    };
    bool faults = (r.base && r.base->faults) || (r.cur && r.cur->faults);
    std::string noise = "-";
    if (faults) {
        noise = "faults";
    } else if (r.base || r.cur) {
        noise = (r.base ? pct(r.base->noise) : "-") + "/" +
                (r.cur ? pct(r.cur->throughput.noise) : "-");
    }
    std::string verdict;
    for (const auto& p : r.problems)
        verdict += (verdict.empty() ? "" : ", ") + p;
    if (verdict.empty())
        verdict = "ok";
    std::string reasons;
    for (const auto& why : r.reasons)
        reasons += (reasons.empty() ? "" : "; ") + why;
    if (!reasons.empty())
        verdict += ": " + reasons;
    char line[1024];
    std::snprintf(
        line, sizeof line, "%-36s %-15s %9s %9s %8s %13s %10s  %s\n", r.key.first.c_str(),
        r.key.second.c_str(), fixed(r.base_norm, "%.3f").c_str(), fixed(r.cur_norm, "%.3f").c_str(),
        fixed(r.change_pct, "%+.1f%%").c_str(), noise.c_str(),
        fixed(r.cur ? std::optional<double>(r.cur->throughput.median) : std::nullopt, "%.0f")
            .c_str(),
        verdict.c_str());
    return line;
}

}  // namespace

GateResult run_gate(const json& baseline, const json& current, const GateOptions& options) {
    Baseline base = parse_baseline(baseline, options.baseline_name);
    CurrentSuite cur = parse_current(current, options.current_name);

    std::map<Key, Row> rows;  // sorted by (scenario, strategy): the report reads like the suite's
    for (const auto& b : base.runs) {
        Row& r = rows[{b.scenario, b.strategy}];
        r.key = {b.scenario, b.strategy};
        r.base = &b;
    }
    for (const auto& c : cur.runs) {
        Row& r = rows[{c.scenario, c.strategy}];
        r.key = {c.scenario, c.strategy};
        r.cur = &c;
    }
    for (auto& [key, r] : rows)
        judge_outcome(r);
    std::map<std::string, std::vector<Row*>> by_scenario;
    for (auto& [key, r] : rows)
        by_scenario[key.first].push_back(&r);
    for (const auto& [scenario, scenario_rows] : by_scenario)
        compare_scenario(scenario_rows, options);

    std::vector<std::string> notes;
    std::size_t problems = 0;
    if (cur.interrupted) {
        ++problems;
        notes.push_back("INTERRUPTED: the suite run did not finish");
    }
    if (base.quick != cur.quick) {
        notes.push_back(std::string("the baseline is from a ") + (base.quick ? "quick" : "full") +
                        " suite, this run is " + (cur.quick ? "quick" : "full") +
                        ": throughput compares runs of different lengths");
    }
    for (const auto& [key, r] : rows)
        problems += r.problems.size();

    GateResult result;
    result.pass = problems == 0;
    std::ostringstream out;
    out << "baseline: " << options.baseline_name << " (created " << base.created << ", "
        << (base.quick ? "quick" : "full") << " suite)\n";
    out << "current:  " << options.current_name << " (" << (cur.quick ? "quick" : "full")
        << " suite)\n";
    out << "throughput: fault-free runs, median per-second cycles / " << options.reference_strategy
        << "'s in the same scenario (median of strategies where absent); SLOWER = drop > "
        << num(options.max_drop_pct) << "% and > " << num(options.noise_factor) << "x noise\n";
    for (const auto& n : notes)
        out << "note: " << n << "\n";
    char header[256];
    std::snprintf(header, sizeof header, "%-36s %-15s %9s %9s %8s %13s %10s  %s\n", "scenario",
                  "strategy", "base norm", "cur norm", "change", "noise b/c", "cycles/s",
                  "verdict");
    out << header;
    json rows_json = json::array();
    for (const auto& [key, r] : rows) {
        out << row_line(r);
        rows_json.push_back(row_json(r));
    }
    if (result.pass)
        out << "gate: PASS\n";
    else
        out << "gate: FAIL (" << problems << (problems == 1 ? " problem)\n" : " problems)\n");
    result.report = out.str();
    result.json = {
        {"pass", result.pass},
        {"problems", problems},
        {"interrupted", cur.interrupted},
        {"max_drop_pct", options.max_drop_pct},
        {"noise_factor", options.noise_factor},
        {"reference_strategy", options.reference_strategy},
        {"baseline",
         {{"file", options.baseline_name}, {"created", base.created}, {"quick", base.quick}}},
        {"current", {{"file", options.current_name}, {"quick", cur.quick}}},
        {"notes", notes},
        {"rows", rows_json}};
    return result;
}

json make_baseline(const json& suite_table, const GateOptions& options) {
    CurrentSuite suite = parse_current(suite_table, options.current_name);
    if (suite.interrupted) {
        throw GateInputError(options.current_name +
                             ": /interrupted: the suite did not finish; a baseline must be whole");
    }
    for (std::size_t i = 0; i < suite.runs.size(); ++i) {
        const auto& r = suite.runs[i];
        if (r.as_expected != true) {
            throw GateInputError(options.current_name + ": /runs/" + std::to_string(i) +
                                 "/as_expected: " + r.scenario + " x " + r.strategy + " is " +
                                 (r.as_expected ? "not as expected" : "unknown") +
                                 "; a baseline must be a known-good suite");
        }
    }
    if (suite.runs.empty())
        throw GateInputError(options.current_name + ": /runs: is empty");

    // The same choice of reference run_gate makes, within this one suite.
    std::map<std::string, std::vector<const CurrentRun*>> by_scenario;
    for (const auto& r : suite.runs) {
        if (!r.faults)
            by_scenario[r.scenario].push_back(&r);
    }
    std::map<std::string, Reference> references;
    for (const auto& [scenario, runs] : by_scenario) {
        auto named = std::find_if(runs.begin(), runs.end(), [&](const CurrentRun* r) {
            return r->strategy == options.reference_strategy;
        });
        if (named != runs.end()) {
            references[scenario] = {options.reference_strategy, (*named)->throughput.median, 0};
        } else {
            std::vector<double> medians;
            for (const CurrentRun* r : runs)
                medians.push_back(r->throughput.median);
            references[scenario] = {kMedianReference, median_of(medians), 0};
        }
    }

    json runs = json::array();
    for (const auto& r : suite.runs) {
        json normalised = nullptr, reference = nullptr;
        if (!r.faults) {
            const Reference& ref = references.at(r.scenario);
            reference = ref.name;
            if (ref.median > 0)
                normalised = r.throughput.median / ref.median;
        }
        runs.push_back({{"scenario", r.scenario},
                        {"strategy", r.strategy},
                        {"expected", r.expected ? json(*r.expected) : json(nullptr)},
                        {"faults", r.faults},
                        {"normalised", normalised},
                        {"reference", reference},
                        {"median_cycles_per_s", r.throughput.median},
                        {"cycles_per_s", r.cycles_per_s},
                        {"noise", r.throughput.noise},
                        {"samples", r.throughput.samples}});
    }
    return {{"version", kBaselineVersion}, {"created", utc_iso_now()},
            {"quick", suite.quick},        {"reference_strategy", options.reference_strategy},
            {"refresh", kRefreshCommand},  {"runs", runs}};
}

fs::path latest_suite_dir(const fs::path& results_dir) {
    // suite-YYYYMMDDTHHMMSSZ: anything else (a run folder, suite-x.tmp) is not a finished name.
    auto is_suite_name = [](const std::string& name) {
        static constexpr std::string_view kPattern = "suite-DDDDDDDDTDDDDDDZ";
        if (name.size() != kPattern.size())
            return false;
        for (std::size_t i = 0; i < name.size(); ++i) {
            bool ok =
                kPattern[i] == 'D' ? (name[i] >= '0' && name[i] <= '9') : name[i] == kPattern[i];
            if (!ok)
                return false;
        }
        return true;
    };
    std::error_code ec;
    std::optional<fs::path> newest;
    for (const auto& entry : fs::directory_iterator(results_dir, ec)) {
        std::string name = entry.path().filename().string();
        std::error_code dir_ec;
        if (!is_suite_name(name) || !entry.is_directory(dir_ec))
            continue;
        if (!newest || name > newest->filename().string())
            newest = entry.path();
    }
    if (ec)
        throw GateInputError(results_dir.string() + ": " + ec.message());
    if (!newest) {
        throw GateInputError(results_dir.string() +
                             ": no suite-YYYYMMDDTHHMMSSZ folder (run `lockbench suite` first)");
    }
    return *newest;
}

json load_gate_json(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in)
        throw GateInputError(path.string() + ": cannot open");
    try {
        return json::parse(in);
    } catch (const json::parse_error& e) {
        throw GateInputError(path.string() + ": not valid JSON: " + e.what());
    }
}

}  // namespace lockbench
