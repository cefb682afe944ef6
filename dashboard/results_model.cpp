#include "results_model.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "report.hpp"

namespace lockbench::dashboard {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& what) {
    throw std::runtime_error(path + ": " + what);
}

// Missing and null both mean "not reported yet": older summaries lack fields newer ones have.
const json* field(const json& obj, const char* name) {
    if (!obj.is_object())
        return nullptr;
    auto it = obj.find(name);
    if (it == obj.end() || it->is_null())
        return nullptr;
    return &*it;
}

double number(const json& obj, const char* name, const std::string& path, double fallback = 0) {
    const json* v = field(obj, name);
    if (!v)
        return fallback;
    if (!v->is_number())
        fail(path + "/" + name, "must be a number, not " + std::string(v->type_name()));
    return v->get<double>();
}

std::string text(const json& obj, const char* name, const std::string& path) {
    const json* v = field(obj, name);
    if (!v)
        return {};
    if (v->is_string())
        return v->get<std::string>();
    if (v->is_number())
        return v->dump();
    fail(path + "/" + name, "must be a string, not " + std::string(v->type_name()));
}

const json& object(const json& obj, const char* name, const std::string& path) {
    static const json empty = json::object();
    const json* v = field(obj, name);
    if (!v)
        return empty;
    if (!v->is_object())
        fail(path + "/" + name, "must be an object, not " + std::string(v->type_name()));
    return *v;
}

const json& array(const json& obj, const char* name, const std::string& path) {
    static const json empty = json::array();
    const json* v = field(obj, name);
    if (!v)
        return empty;
    if (!v->is_array())
        fail(path + "/" + name, "must be an array, not " + std::string(v->type_name()));
    return *v;
}

LatencyStats parse_latency(const json& j, const std::string& path) {
    return {number(j, "count", path), number(j, "p50", path), number(j, "p99", path),
            number(j, "p999", path), number(j, "max", path)};
}

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

std::string FaultWindow::label() const {
    return target.empty() ? fault : fault + " " + target;
}

std::vector<TimePoint> RunSummary::rate_series() const {
    std::vector<TimePoint> out;
    out.reserve(timeseries.size());
    for (const auto& p : timeseries) {
        double len = 1.0;
        if (duration_s > p.t && duration_s - p.t < 1.0)
            len = duration_s - p.t;
        // A sliver of a bucket (a few ms) would turn a handful of cycles into a huge spike.
        if (len < 0.2)
            continue;
        out.push_back({p.t, p.cycles / len, p.errors / len});
    }
    return out;
}

std::string RunSummary::outcome() const {
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

std::string RunSummary::short_outcome() const {
    if (validity != Validity::invalid)
        return outcome();
    std::string out;
    for (std::string name : violated_checks) {
        std::replace(name.begin(), name.end(), '_', ' ');
        out += (out.empty() ? "" : ", ") + name;
    }
    return out.empty() ? "violates" : out;
}

bool RunSummary::only_liveness_violated() const {
    return validity == Validity::invalid && !violated_checks.empty() &&
           std::all_of(violated_checks.begin(), violated_checks.end(),
                       [](const std::string& c) { return c == "liveness"; });
}

std::optional<bool> RunSummary::met_expectation() const {
    // The engine judged the expectation with the checker's report and the faults' evidence;
    // a second judgement here could only disagree with it.
    return as_expected;
}

RunSummary parse_summary(const json& j) {
    if (!j.is_object())
        fail("", "must be an object, not " + std::string(j.type_name()));
    RunSummary s;
    s.strategy = text(j, "strategy", "");
    s.scenario = text(j, "scenario", "");
    s.seed = static_cast<std::uint64_t>(number(j, "seed", ""));
    s.clients = static_cast<int>(number(j, "clients", ""));
    s.duration_s = number(j, "duration_s", "");
    if (const json* v = field(j, "interrupted"); v && v->is_boolean())
        s.interrupted = v->get<bool>();

    const json& tp = object(j, "throughput", "");
    s.cycles = number(tp, "cycles", "/throughput");
    s.cycles_per_s = number(tp, "cycles_per_s", "/throughput");

    const json& lat = object(j, "latency_ms", "");
    s.acquire = parse_latency(object(lat, "acquire", "/latency_ms"), "/latency_ms/acquire");
    s.release = parse_latency(object(lat, "release", "/latency_ms"), "/latency_ms/release");

    const json& ts = array(j, "timeseries", "");
    for (std::size_t i = 0; i < ts.size(); ++i) {
        std::string path = "/timeseries/" + std::to_string(i);
        s.timeseries.push_back({number(ts[i], "t", path, static_cast<double>(i)),
                                number(ts[i], "cycles", path), number(ts[i], "errors", path)});
    }

    const json& faults = array(j, "faults", "");
    for (std::size_t i = 0; i < faults.size(); ++i) {
        std::string path = "/faults/" + std::to_string(i);
        const json& f = faults[i];
        FaultWindow w;
        w.raw = f;
        if (f.is_object()) {
            w.fault = text(f, "fault", path);
            if (w.fault.empty())
                w.fault = text(f, "f", path);
            w.start_s = number(f, "start_s", path);
            w.end_s = number(f, "end_s", path, w.start_s);
            if (const json* t = field(f, "target"))
                w.target = t->is_string() ? t->get<std::string>() : t->dump();
        } else {
            w.fault = f.dump();
        }
        s.faults.push_back(std::move(w));
    }

    const json& verdict = object(j, "verdict", "");
    array(verdict, "violations", "/verdict");  // must be a list, as the checker writes it
    // Read with the checker's own report type: the verdict, the exact count and the checks
    // that found something are the checker's, decoded in one place.
    const auto report = checker::Report::from_json(verdict);
    switch (report.verdict) {
        case checker::Verdict::Valid:
            s.validity = Validity::valid;
            break;
        case checker::Verdict::Invalid:
            s.validity = Validity::invalid;
            break;
        case checker::Verdict::Unknown:
        case checker::Verdict::NotApplicable:
            s.validity = Validity::unknown;
            break;
    }
    for (const auto& v : report.witnesses) {
        Violation out;
        if (v.is_object()) {
            out.kind = text(v, "kind", "/verdict/violations");
            out.key = text(v, "key", "/verdict/violations");
            out.message = text(v, "message", "/verdict/violations");
            if (const json* w = field(v, "witness"))
                out.witness = *w;
        }
        s.violations.push_back(std::move(out));
    }
    s.violation_count = report.violation_count();
    for (const auto& check : report.checks) {
        if (check.verdict() == checker::Verdict::Invalid)
            s.violated_checks.push_back(check.name);
    }
    s.unknown_reasons = report.unknown_reasons;

    if (const json* e = field(j, "expected"); e && e->is_string())
        s.expected = e->get<std::string>();
    if (const json* a = field(j, "as_expected"); a && a->is_boolean())
        s.as_expected = a->get<bool>();
    return s;
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
            run.summary = parse_summary(*s);
        } catch (const std::exception& e) {
            run.errors.push_back(run.name + "/summary.json: " + e.what());
        }
    } else if (!run.in_progress && !fs::exists(dir / "summary.json", ec)) {
        run.errors.push_back(run.name + "/summary.json: missing");
    }
    if (!fs::exists(run.history_path(), ec))
        run.errors.push_back(run.name + "/history.jsonl: missing");
    return run;
}

ResultsScan scan_results(const fs::path& dir) {
    ResultsScan scan;
    scan.dir = dir;
    std::error_code ec;
    if (!fs::is_directory(dir, ec)) {
        scan.errors.push_back(dir.string() + ": not a results folder");
        return scan;
    }
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
    if (scan.runs.empty() && scan.errors.empty())
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
