#include "engine/run/ramp.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <sstream>

#include "checker/check.hpp"
#include "engine/run/result_folder.hpp"
#include "engine/run/run.hpp"

namespace lockbench {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr std::size_t kMaxPoints = 64;

int parse_count(const std::string& text, const std::string& whole) {
    std::size_t used = 0;
    long value = 0;
    try {
        value = std::stol(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (text.empty() || used != text.size() || value < 1 || value > 1'000'000)
        throw WorkloadError("--clients-ramp " + whole + ": '" + text +
                            "' is not a client count (1 or more)");
    return static_cast<int>(value);
}

// Every point is validated before any runs: a bad count fails in a second, not an hour in.
std::vector<Workload> plan_points(const RampOptions& options) {
    std::vector<Workload> plan;
    for (const std::string& strategy : options.strategies) {
        for (int clients : options.clients) {
            Workload w = options.workload;
            w.strategy = strategy;
            w.clients = clients;
            w.validate();
            plan.push_back(std::move(w));
        }
    }
    return plan;
}

RampFile ramp_header(const RampOptions& options) {
    RampFile ramp{.scenario = options.workload.name,
                  .clients = options.clients,
                  .duration_s = options.workload.duration_s};
    if (options.machine)
        ramp.yardstick = options.machine->to_json();
    else if (!options.machine_not_measured.empty())
        ramp.yardstick = json{{"not_measured", options.machine_not_measured}};
    return ramp;
}

// The progress of one point on stderr: "[2/6] set_nx_px with 4 clients" while it runs, and with
// --progress-lines "[2/6] set_nx_px with 4 clients: 1234.5 cycles/s, valid (2.6 s)" after.
class PointProgress {
  public:
    PointProgress(const RampOptions& options, std::size_t number, std::size_t points,
                  const Workload& w)
        : options_(options), number_(number), points_(points), w_(w) {
        if (options.progress) {
            std::fprintf(stderr, "\r\x1b[K[%zu/%zu] %s with %d clients", number, points,
                         w.strategy.c_str(), w.clients);
        }
        started_ = std::chrono::steady_clock::now();
    }
    void finished(const std::string& what) const {
        if (!options_.progress_lines)
            return;
        std::fprintf(
            stderr, "[%zu/%zu] %s with %d clients: %s (%.1f s)\n", number_, points_,
            w_.strategy.c_str(), w_.clients, what.c_str(),
            std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
    }

  private:
    const RampOptions& options_;
    std::size_t number_, points_;
    const Workload& w_;
    std::chrono::steady_clock::time_point started_;
};

// Called from the catch block of the point's run: names the exception being handled.
void record_failed_point(RampOutcome& outcome, const Workload& w, const RampOptions& options) {
    const RunFailure failure = run_failure(std::current_exception());
    std::fprintf(stderr, "%sfailed: %s with %d clients: %s\n", options.progress ? "\r\x1b[K" : "",
                 w.strategy.c_str(), w.clients, failure.message.c_str());
    outcome.ramp.failed.push_back({.strategy = w.strategy,
                                   .clients = w.clients,
                                   .error = failure.message,
                                   .exit_code = failure.exit_code});
    outcome.failure_exit_code = std::max(outcome.failure_exit_code, failure.exit_code);
}

// The point cut short is written like any interrupted run, inside the ramp's folder: the table
// names it, so no folder there is unaccounted for. It is not on the curve, which would plot a
// shorter, unfinished measurement beside whole ones.
void record_interrupted_point(RampFile& ramp, const Workload& w, const RunOutcome& r) {
    ramp.interrupted_point = RampCutShort{
        .strategy = w.strategy, .clients = w.clients, .run = r.dir.filename().string()};
}

// A point's verdict in its progress line and in ramp.txt: "valid", "INVALID", "unknown",
// "not-applicable" (a violation shouts).
std::string point_verdict_word(checker::Verdict verdict) {
    switch (verdict) {
        case checker::Verdict::Valid:
            return "valid";
        case checker::Verdict::Invalid:
            return "INVALID";
        case checker::Verdict::Unknown:
            return "unknown";
        case checker::Verdict::NotApplicable:
            break;
    }
    return "not-applicable";
}

void record_point(RampOutcome& outcome, const Workload& w, const RunOutcome& r,
                  const PointProgress& progress) {
    const RunSummary& s = r.summary;
    const checker::Verdict verdict = s.verdict.verdict;
    char throughput[64];
    std::snprintf(throughput, sizeof throughput, "%.1f cycles/s, ", s.cycles_per_s);
    progress.finished(throughput + point_verdict_word(verdict));
    outcome.verdict = checker::combine(outcome.verdict, verdict);
    outcome.ramp.curves[w.strategy].push_back({.clients = w.clients,
                                               .cycles_per_s = s.cycles_per_s,
                                               .acquire_p50_ms = s.acquire.p50,
                                               .acquire_p99_ms = s.acquire.p99,
                                               .fairness = s.fairness,
                                               .engine_cpu_share = s.engine_cpu_share,
                                               .verdict = verdict,
                                               .run = r.dir.filename().string()});
}

}  // namespace

std::vector<int> parse_clients_ramp(const std::string& text) {
    std::vector<int> points;
    if (text.find(':') != std::string::npos) {
        std::vector<std::string> parts;
        std::stringstream in(text);
        for (std::string part; std::getline(in, part, ':');)
            parts.push_back(part);
        if (parts.size() != 2 && parts.size() != 3)
            throw WorkloadError("--clients-ramp " + text + ": write START:STEP:END or START:END");
        const int start = parse_count(parts.front(), text);
        const int step = parts.size() == 3 ? parse_count(parts[1], text) : 1;
        const int end = parse_count(parts.back(), text);
        if (end < start)
            throw WorkloadError("--clients-ramp " + text + ": END is below START");
        for (long c = start; c <= end && points.size() <= kMaxPoints; c += step)
            points.push_back(static_cast<int>(c));
    } else {
        std::stringstream in(text);
        for (std::string part; std::getline(in, part, ',');) {
            const int c = parse_count(part, text);
            if (!points.empty() && c <= points.back())
                throw WorkloadError("--clients-ramp " + text +
                                    ": list the client counts in increasing order");
            points.push_back(c);
        }
    }
    if (points.size() < 2)
        throw WorkloadError("--clients-ramp " + text + ": a curve needs at least two points");
    if (points.size() > kMaxPoints)
        throw WorkloadError("--clients-ramp " + text + ": more than " + std::to_string(kMaxPoints) +
                            " points; take a larger STEP");
    return points;
}

RampOutcome run_ramp(const RampOptions& options) {
    const std::vector<Workload> plan = plan_points(options);
    RampOutcome outcome;
    ResultFolder folder(options.out_dir,
                        "ramp-" + utc_stamp() + "-" + safe_name(options.workload.name));
    outcome.ramp = ramp_header(options);
    for (std::size_t i = 0; i < plan.size(); ++i) {
        if (options.interrupt && options.interrupt->load()) {
            outcome.interrupted = true;
            break;
        }
        const Workload& w = plan[i];
        const PointProgress progress(options, i + 1, plan.size(), w);
        RunOutcome r;
        try {
            r = run_workload({.workload = w,
                              .redis = options.redis,
                              .zookeeper = options.zookeeper,
                              .out_dir = folder.tmp(),
                              .interrupt = options.interrupt,
                              .label = w.strategy + "-c" + std::to_string(w.clients)});
        } catch (...) {
            // A point that could not be run (too few file descriptors for its clients, say) is
            // that point's error: the points before it are kept, and the rest are still tried.
            record_failed_point(outcome, w, options);
            continue;
        }
        if (r.interrupted) {
            record_interrupted_point(outcome.ramp, w, r);
            outcome.interrupted = true;
            progress.finished("interrupted");
            break;
        }
        record_point(outcome, w, r, progress);
    }
    if (options.progress)
        std::fprintf(stderr, "\r\x1b[K");
    outcome.ramp.interrupted = outcome.interrupted;
    write_atomically(folder.tmp() / "ramp.json", outcome.ramp.to_json().dump(2) + "\n");
    write_atomically(folder.tmp() / "ramp.txt", format_ramp(outcome.ramp));
    outcome.dir = folder.commit();
    return outcome;
}

std::string format_ramp(const RampFile& ramp) {
    std::ostringstream out;
    out << "ramp: " << ramp.scenario << ", " << ramp.duration_s << " s per point"
        << (ramp.interrupted ? "  (INTERRUPTED)" : "") << "\n";
    for (const auto& [strategy, points] : ramp.curves) {
        out << "\n" << strategy << "\n";
        char line[160];
        std::snprintf(line, sizeof line, "%9s %12s %10s %10s %8s %10s %8s  %s\n", "clients",
                      "cycles/s", "acq p50", "acq p99", "Jain", "min/max", "cpu", "verdict");
        out << line;
        for (const RampPoint& p : points) {
            const FairnessSummary& f = p.fairness;
            const std::string jain =
                f.jain_index ? std::to_string(*f.jain_index).substr(0, 5) : std::string("-");
            const std::string spread =
                std::to_string(f.cycles_min) + "/" + std::to_string(f.cycles_max);
            const std::string verdict = point_verdict_word(p.verdict);
            std::snprintf(line, sizeof line, "%9d %12.1f %8.3fms %8.3fms %8s %10s %7.0f%%  %s\n",
                          p.clients, p.cycles_per_s, p.acquire_p50_ms, p.acquire_p99_ms,
                          jain.c_str(), spread.c_str(), 100.0 * p.engine_cpu_share,
                          verdict.c_str());
            out << line;
        }
    }
    if (const auto& cut = ramp.interrupted_point) {
        out << "\ninterrupted\n  " << cut->strategy << " with " << cut->clients
            << " clients: cut short, not on the curve (its run: " << cut->run << ")\n";
    }
    if (!ramp.failed.empty())
        out << "\nfailed\n";
    for (const RampFailure& f : ramp.failed)
        out << "  " << f.strategy << " with " << f.clients << " clients: " << f.error << "\n";
    return out.str();
}

}  // namespace lockbench
