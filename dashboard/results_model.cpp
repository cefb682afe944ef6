#include "dashboard/results_model.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "checker/json_object.hpp"
#include "checker/report.hpp"

namespace lockbench::dashboard {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

std::string read_file(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in)
        throw std::runtime_error("cannot read");
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// Witness times are ns since the run start; `start_index` and the like are history positions.
bool is_time_key(const std::string& k) {
    if (k.ends_with("_index"))
        return false;
    return k == "start" || k == "end" || k == "time" || k.starts_with("start_") ||
           k.starts_with("end_") || k.ends_with("_ns") || k.ends_with("_time");
}

void collect_times(const json& j, const std::string& key, std::int64_t& lo, std::int64_t& hi,
                   bool& any) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            collect_times(it.value(), it.key(), lo, hi, any);
    } else if (j.is_array()) {
        for (const auto& e : j)
            collect_times(e, key, lo, hi, any);
    } else if (j.is_number_integer() && is_time_key(key)) {
        auto v = j.get<std::int64_t>();
        lo = any ? std::min(lo, v) : v;
        hi = any ? std::max(hi, v) : v;
        any = true;
    }
}

void collect_processes(const json& j, const std::string& key, std::vector<std::int64_t>& out) {
    if (j.is_object()) {
        for (auto it = j.begin(); it != j.end(); ++it)
            collect_processes(it.value(), it.key(), out);
    } else if (j.is_array()) {
        for (const auto& e : j)
            collect_processes(e, key, out);
    } else if (j.is_number_integer() && key == "process") {
        out.push_back(j.get<std::int64_t>());
    }
}

// `.tmp-<stamp>-<scenario>-<pid>` or `<stamp>-<scenario>[-n]` → scenario, for runs whose files
// do not say it (a run in progress has only history.jsonl).
std::string scenario_from_folder(std::string name) {
    if (name.starts_with(".tmp-")) {
        name = name.substr(5);
        if (auto dash = name.rfind('-'); dash != std::string::npos)
            name = name.substr(0, dash);
    }
    if (auto dash = name.find('-'); dash != std::string::npos)
        return name.substr(dash + 1);
    return name;
}

}  // namespace

std::string fault_label(const FaultWindow& window) {
    std::string name = window.fault;
    std::replace(name.begin(), name.end(), '-', ' ');
    std::string whom = describe_target(window.target);
    // pause-client {"client":1} is "pause client 1", not "pause client client 1"; and
    // kill-cluster-master {"master_of":"k0"} is "kill cluster master of k0".
    const std::string subject = whom.starts_with("the ") ? whom.substr(4) : whom;
    if (const auto space = subject.find(' ');
        space != std::string::npos && name.ends_with(" " + subject.substr(0, space)))
        whom = subject.substr(space + 1);
    // partition-hosts {"shape":"hosts"} is "partition hosts", not "partition hosts hosts".
    if (whom.empty() || name.ends_with(" " + whom))
        return name;
    return name + " " + whom;
}

double fault_end_s(const FaultWindow& window) {
    return window.end_s.value_or(window.start_s);
}

std::vector<TimePoint> SummaryView::rate_series() const {
    std::vector<TimePoint> out;
    out.reserve(timeseries.size());
    for (const auto& p : timeseries) {
        const auto t = static_cast<double>(p.t);
        double len = 1.0;
        if (duration_s > t && duration_s - t < 1.0)
            len = duration_s - t;
        // A sliver of a bucket (a few ms) would turn a handful of cycles into a huge spike.
        if (len < 0.2)
            continue;
        out.push_back(
            {t, static_cast<double>(p.cycles) / len, static_cast<double>(p.errors) / len});
    }
    return out;
}

std::string SummaryView::outcome() const {
    switch (validity) {
        case Validity::valid:
            return "safe";
        case Validity::invalid: {
            std::string checks;
            for (const auto& name : violated_checks)
                checks += (checks.empty() ? "" : ",") + name;
            return "violates" + (checks.empty() ? std::string() : ":" + checks);
        }
        case Validity::unknown:
            break;
    }
    return "unknown";
}

std::pair<std::int64_t, std::int64_t> incident_window(const Incident& incident) {
    return incident.span(incident.last_overlap_ns);
}

std::string SummaryView::short_outcome() const {
    if (validity != Validity::invalid)
        return outcome();
    std::string out;
    for (std::string name : violated_checks) {
        std::replace(name.begin(), name.end(), '_', ' ');
        out += (out.empty() ? "" : ", ") + name;
    }
    return out.empty() ? "violates" : out;
}

bool SummaryView::only_liveness_violated() const {
    return validity == Validity::invalid && !violated_checks.empty() &&
           std::all_of(violated_checks.begin(), violated_checks.end(),
                       [](const std::string& c) { return c == "liveness"; });
}

std::optional<bool> SummaryView::met_expectation() const {
    // The engine judged the expectation with the checker's report and the faults' evidence;
    // a second judgement here could only disagree with it.
    return as_expected;
}

namespace {

Validity validity_of(checker::Verdict verdict) {
    switch (verdict) {
        case checker::Verdict::Valid:
            return Validity::valid;
        case checker::Verdict::Invalid:
            return Validity::invalid;
        case checker::Verdict::Unknown:
        case checker::Verdict::NotApplicable:
            break;
    }
    return Validity::unknown;
}

}  // namespace

SummaryView view_of(lockbench::RunSummary summary, const std::string& origin) {
    SummaryView view;
    static_cast<lockbench::RunSummary&>(view) = std::move(summary);
    const checker::Report& report = view.verdict;
    view.validity = validity_of(report.verdict);
    view.violation_count = report.violation_count();
    try {
        // The checker's one reader of its incidents.
        view.incidents = checker::listed_incidents(report);
        view.incident_count = checker::incident_count(report);
    } catch (const checker::IncidentError& e) {
        throw SummaryError((origin.empty() ? "" : origin + ": ") + e.what());
    }
    for (const auto& check : report.checks) {
        if (check.verdict() == checker::Verdict::Invalid)
            view.violated_checks.push_back(check.name);
    }
    return view;
}

SummaryView read_summary(const json& j, const std::string& origin) {
    return view_of(lockbench::RunSummary::from_json(j, origin), origin);
}

std::string Run::strategy() const {
    if (summary && !summary->strategy.empty())
        return summary->strategy;
    if (auto it = workload.find("strategy");
        workload.is_object() && it != workload.end() && it->is_string())
        return it->get<std::string>();
    return "?";
}

std::string Run::scenario() const {
    if (summary && !summary->scenario.empty())
        return summary->scenario;
    if (auto it = workload.find("name");
        workload.is_object() && it != workload.end() && it->is_string())
        return it->get<std::string>();
    return scenario_from_folder(name);
}

Run load_run(const fs::path& dir) {
    Run run;
    run.dir = dir;
    run.name = dir.filename().string();
    run.in_progress = run.name.starts_with(".tmp-");
    std::error_code ec;

    auto read_json = [&](const char* file) -> std::optional<json> {
        fs::path p = dir / file;
        if (!fs::exists(p, ec))
            return std::nullopt;
        try {
            return json::parse(read_file(p));
        } catch (const std::exception& e) {
            std::string what = e.what();
            // nlohmann's "[json.exception.parse_error.101] " tag means nothing to a reader.
            if (what.starts_with("[json.exception."))
                what = what.substr(what.find(']') + 2);
            run.errors.push_back(run.name + "/" + file + ": " + what);
            return std::nullopt;
        }
    };

    if (auto w = read_json("workload.json"))
        run.workload = std::move(*w);
    if (auto s = read_json("summary.json")) {
        try {
            run.summary = read_summary(*s, run.name + "/summary.json");
        } catch (const SummaryError& e) {
            run.errors.push_back(e.what());
        }
    } else if (!run.in_progress && !fs::exists(dir / "summary.json", ec)) {
        run.errors.push_back(run.name + "/summary.json: missing");
    }
    if (!fs::exists(run.history_path(), ec))
        run.errors.push_back(run.name + "/history.jsonl: missing");
    return run;
}

namespace {

bool is_comparison_folder(const std::string& name) {
    return name.starts_with("compare-") || name.starts_with("repeat-");
}

// Reads dir/compare.json through CompareFile's one reader into `scan`, or says why not, naming
// the file.
void add_comparison(const fs::path& dir, const std::string& name, ResultsScan& scan) {
    const std::string origin = name + "/compare.json";
    try {
        std::ifstream in(dir / "compare.json");
        if (!in)
            throw CompareError(origin + ": cannot read");
        Comparison c;
        static_cast<lockbench::CompareFile&>(c) =
            lockbench::CompareFile::from_json(json::parse(in), origin);
        c.dir = dir;
        c.name = name;
        scan.comparisons.push_back(std::move(c));
    } catch (const CompareError& e) {
        scan.errors.push_back(e.what());
    } catch (const json::exception& e) {
        scan.errors.push_back(origin + ": " + e.what());
    }
}

// Reads dir/ramp.json through RampFile's one reader into `scan`, or says why not, naming the
// file as `origin`.
void add_ramp(const fs::path& dir, const std::string& name, const std::string& origin,
              ResultsScan& scan) {
    try {
        std::ifstream in(dir / "ramp.json");
        if (!in)
            throw RampError(origin + ": cannot read");
        Ramp ramp;
        static_cast<lockbench::RampFile&>(ramp) =
            lockbench::RampFile::from_json(json::parse(in), origin);
        ramp.dir = dir;
        ramp.name = name;
        scan.ramps.push_back(std::move(ramp));
    } catch (const RampError& e) {
        scan.errors.push_back(e.what());
    } catch (const json::exception& e) {
        scan.errors.push_back(origin + ": " + e.what());
    }
}

std::string folder_name_of(const fs::path& dir) {
    fs::path p = fs::absolute(dir).lexically_normal();
    if (p.filename().empty())  // "x/" normalises to an empty last component
        p = p.parent_path();
    return p.filename().string();
}

}  // namespace

ResultsScan scan_results(const fs::path& dir) {
    ResultsScan scan;
    scan.dir = dir;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        scan.errors.push_back(dir.string() + ": not a results folder");
        return scan;
    }
    if (fs::exists(dir / "ramp.json", ec)) {
        // A ramp's own folder: its point runs are the curve's points, as in a results folder.
        add_ramp(dir, folder_name_of(dir), (dir / "ramp.json").string(), scan);
        return scan;
    }
    const bool comparison_folder = fs::exists(dir / "compare.json", ec);
    if (comparison_folder)
        add_comparison(dir, folder_name_of(dir), scan);
    std::vector<fs::path> folders;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        if (it->is_directory(ec))
            folders.push_back(it->path());
    }
    if (ec)
        scan.errors.push_back(dir.string() + ": " + ec.message());
    // `.tmp-` sorts before digits; order in-progress runs last, as the newest.
    std::sort(folders.begin(), folders.end(), [](const fs::path& a, const fs::path& b) {
        bool ta = a.filename().string().starts_with(".tmp-");
        bool tb = b.filename().string().starts_with(".tmp-");
        if (ta != tb)
            return tb;
        return a.filename() < b.filename();
    });
    for (const auto& f : folders) {
        std::string name = f.filename().string();
        // Other hidden folders are not runs (editor or VCS droppings); an unfinished suite's
        // folder is `.tmp-suite-…` and holds runs, not run files.
        if (name.starts_with(".") && !name.starts_with(".tmp-"))
            continue;
        if (name.starts_with(".tmp-ramp-"))
            continue;  // a ramp still running: its curves appear when it is done
        if (name.starts_with("ramp-")) {
            // A ramp's runs are its points, seen on its curves, not in the verdict matrix.
            add_ramp(f, name, name + "/ramp.json", scan);
            continue;
        }
        if (name.starts_with(".tmp-compare-") || name.starts_with(".tmp-repeat-"))
            continue;  // a comparison still running: its table appears when it is done
        if (is_comparison_folder(name) && fs::exists(f / "compare.json", ec)) {
            // Its runs are ordinary runs (repeats of one workload): cells counting them.
            ResultsScan inner = scan_results(f);
            scan.errors.insert(scan.errors.end(), inner.errors.begin(), inner.errors.end());
            for (auto& r : inner.runs)
                scan.runs.push_back(std::move(r));
            for (auto& c : inner.comparisons)
                scan.comparisons.push_back(std::move(c));
            continue;
        }
        if (name.starts_with("suite-") || name.starts_with(".tmp-suite-")) {
            // `lockbench suite` writes its runs one level down: results/suite-<time>/<run>/.
            ResultsScan inner = scan_results(f);
            scan.errors.insert(scan.errors.end(), inner.errors.begin(), inner.errors.end());
            for (auto& r : inner.runs)
                scan.runs.push_back(std::move(r));
            continue;
        }
        Run run = load_run(f);
        scan.errors.insert(scan.errors.end(), run.errors.begin(), run.errors.end());
        scan.runs.push_back(std::move(run));
    }
    if (scan.runs.empty() && scan.ramps.empty() && scan.comparisons.empty() && scan.errors.empty())
        scan.errors.push_back(dir.string() + ": no runs yet (run `lockbench run --out " +
                              dir.string() + "`)");
    return scan;
}

std::optional<std::pair<std::int64_t, std::int64_t>> witness_window(const json& witness) {
    std::int64_t lo = 0;
    std::int64_t hi = 0;
    bool any = false;
    collect_times(witness, "", lo, hi, any);
    if (!any)
        return std::nullopt;
    return std::make_pair(lo, hi);
}

std::vector<std::int64_t> witness_processes(const json& witness) {
    std::vector<std::int64_t> out;
    collect_processes(witness, "", out);
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
}

}  // namespace lockbench::dashboard
