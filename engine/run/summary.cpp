#include "engine/run/summary.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "checker/check.hpp"
#include "engine/ci/throughput_stats.hpp"
#include "engine/ci/yardstick.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/server_cost.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

// An open-loop run kept its rate when at least this share of the due arrivals started.
constexpr double kRateKept = 0.99;

double ms(std::chrono::nanoseconds ns) {
    return static_cast<double>(ns.count()) / 1e6;
}

LatencySummary latency_of(const LatencyHistogram& h) {
    return {.count = h.count(),
            .p50 = ms(h.quantile(0.5)),
            .p99 = ms(h.quantile(0.99)),
            .p999 = ms(h.quantile(0.999)),
            .max = ms(h.max())};
}

// How evenly the lock went round: cycles per client, every client counted.
FairnessSummary fairness_summary(std::vector<std::uint64_t> cycles_per_client, int clients) {
    cycles_per_client.resize(static_cast<std::size_t>(std::max(clients, 0)), 0);
    const Fairness f = fairness_of(cycles_per_client);
    return {.clients = f.clients,
            .cycles_min = f.min,
            .cycles_median = f.median,
            .cycles_max = f.max,
            .jain_index = f.jain};
}

checker::Report judge(const std::filesystem::path& history_path, const CheckSettings& settings) {
    checker::CheckOptions options;
    options.model = checker::parse_model(settings.model).value_or(checker::Model::None);
    options.linearizability.time_limit = std::chrono::duration<double>(settings.time_limit_s);
    options.liveness_bound_ms = settings.liveness_bound_ms;
    options.starvation_bound_ms = settings.starvation_bound_ms;
    try {
        return checker::check_history(history_path, options);
    } catch (const checker::HistoryError& e) {
        // The engine wrote this history; a malformed line is our bug, reported rather than hidden.
        checker::Report report;
        report.error = std::string("history.jsonl is malformed: ") + e.what();
        report.add_unknown_reason(*report.error);
        return report;
    }
}

std::string seconds_text(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f s", s);
    return buf;
}

std::map<std::string, OpCounts> ops_of(const ClientStats& st) {
    std::map<std::string, OpCounts> ops;
    for (std::size_t i = 0; i < st.ops.size(); ++i) {
        const auto& c = st.ops[i];
        ops[std::string(to_string(static_cast<Op>(i)))] = {
            .ok = c.ok, .fail = c.fail, .info = c.info};
    }
    return ops;
}

// Cycles and errors per second of the run, a zero for each second without.
std::vector<SecondCounts> timeseries_of(const ClientStats& st, double elapsed_s) {
    std::vector<SecondCounts> series;
    auto seconds = static_cast<std::size_t>(std::ceil(elapsed_s));
    for (std::size_t s = 0; s < seconds; ++s) {
        series.push_back({.t = s,
                          .cycles = s < st.cycles_per_second.size() ? st.cycles_per_second[s] : 0,
                          .errors = s < st.errors_per_second.size() ? st.errors_per_second[s] : 0});
    }
    return series;
}

std::vector<std::string> endpoint_names(const std::vector<Endpoint>& endpoints) {
    std::vector<std::string> out;
    for (const auto& e : endpoints)
        out.push_back(e.to_string());
    return out;
}

// What the history alone cannot show: whether the run exercised what it was meant to. A
// violation found is real whatever else happened (false beats unknown); a "valid" from a
// run that did not do what it was asked is not.
void add_what_the_history_cannot_show(checker::Report& verdict, const SummaryInputs& in) {
    const auto& w = in.workload;
    const auto& st = in.stats;
    for (const auto& f : in.nemesis) {
        if (f.missed) {
            verdict.add_unknown_reason("fault " + f.fault + " (" + describe_target(f.target) +
                                       ", at " + seconds_text(f.at_s) + "): " + *f.missed);
        }
    }
    for (const auto& reason : in.unknown_reasons)
        verdict.add_unknown_reason(reason);
    if (st.cycles == 0)
        verdict.add_unknown_reason("no cycle completed: no lock was both granted and released");
    // At a rate, a client none of whose arrivals fell due was never asked to do anything.
    const std::uint64_t asked = w.rate ? st.clients_due : static_cast<std::uint64_t>(w.clients);
    if (st.clients_answered * 2 < asked) {
        verdict.add_unknown_reason(std::to_string(asked - st.clients_answered) + " of " +
                                   std::to_string(asked) + " clients " +
                                   (w.rate ? "with an arrival due " : "") +
                                   "never got an answer from Redis");
    }
}

void add_open_loop(RunSummary& summary, const Workload& w, const ClientStats& st,
                   double elapsed_s) {
    if (!w.rate)
        return;
    // What the rate asked for and what the clients managed: a run that fell behind says so
    // instead of silently measuring less load (docs/cli.md, closed and open loop).
    summary.acquire_corrected = latency_of(st.acquire_latency_corrected);
    const double window = std::min(elapsed_s, w.duration_s);
    summary.open_loop = OpenLoopSummary{
        .target_per_s = w.rate->per_s,
        .arrivals = std::string(to_string(w.rate->arrivals)),
        .due = st.arrivals_due,
        .started = st.arrivals_started,
        .achieved_per_s = window > 0 ? static_cast<double>(st.arrivals_started) / window : 0.0,
        .kept = static_cast<double>(st.arrivals_started) >=
                kRateKept * static_cast<double>(st.arrivals_due)};
}

void add_expectation(RunSummary& summary, const Workload& w, const checker::Report& verdict,
                     const FaultEvidence& evidence) {
    auto expected = w.expect.find(w.strategy);
    if (expected == w.expect.end())
        return;
    summary.expected = expected->second;
    const Expectation expectation = Expectation::parse(expected->second);
    summary.as_expected = expectation.met_by(verdict, evidence);
    // Each term's outcome, so that runs repeated together can judge rates over them.
    const auto outcomes = expectation.terms_met_by(verdict, evidence);
    for (std::size_t i = 0; i < outcomes.size(); ++i)
        summary.expected_terms.push_back({expectation.terms[i].text, outcomes[i]});
    if (expectation.has_rates())
        summary.rates_not_judged = expectation.rate_texts();
}

}  // namespace

RunSummary make_summary(const SummaryInputs& in, const std::filesystem::path& history_path) {
    const auto& w = in.workload;
    const auto& st = in.stats;
    checker::Report verdict = judge(history_path, w.checks);
    const std::size_t reasons_before = verdict.unknown_reasons.size();
    add_what_the_history_cannot_show(verdict, in);
    FaultEvidence evidence = FaultEvidence::from_nemesis_report(in.nemesis);
    evidence.conclusive = evidence.conclusive && verdict.unknown_reasons.size() == reasons_before;

    RunSummary summary{
        .strategy = w.strategy,
        .scenario = w.name,
        .seed = w.seed,
        .clients = w.clients,
        // How the clients reached Redis: a figure of throughput means something else over a few
        // shared, auto-pipelined connections than over one per client (`--connections`).
        .connections_mode = w.shares_connections() ? "shared" : "per-client",
        .connections_per_server = w.shares_connections() ? w.connections : w.clients,
        .duration_s = in.elapsed_s,
        .interrupted = in.interrupted,
        .cycles = st.cycles,
        .cycles_per_s = in.elapsed_s > 0 ? static_cast<double>(st.cycles) / in.elapsed_s : 0,
        .acquire = latency_of(st.acquire_latency),
        .release = latency_of(st.release_latency),
        .ops = ops_of(st),
        .timeseries = timeseries_of(st, in.elapsed_s),
        .faults = in.faults,
        .nemesis = in.nemesis,
        .history_events = in.history_events,
        .redis_mode = in.deployment_embedded ? "embedded" : "external",
        .redis_endpoints = endpoint_names(in.endpoints),
        .key_prefix = in.key_prefix,
        .clients_answered = st.clients_answered,
        .fairness = fairness_summary(st.cycles_per_client, w.clients),
        .engine_threads = w.threads,
        .engine_cpu_s = in.engine_cpu_s,
        .engine_cpu_share = in.elapsed_s > 0 ? in.engine_cpu_s / in.elapsed_s : 0,
    };
    if (!in.adapter.is_null())
        summary.adapter = in.adapter;
    // What the verdict alone would not tell about the run's set-up.
    if (std::string fence = w.unused_fence_note(); !fence.empty())
        summary.notes.push_back(std::move(fence));
    for (const auto& note : in.notes)
        summary.notes.push_back(note);
    add_open_loop(summary, w, st, in.elapsed_s);
    add_expectation(summary, w, verdict, evidence);
    summary.verdict = std::move(verdict);
    return summary;
}

std::string format_machine(const json& y, std::optional<double> run_cycles_per_s) {
    if (!y.is_object())
        return "";
    if (const auto machine = Yardstick::from_json(y)) {
        const YardstickPoint& one = machine->points.front();
        const YardstickPoint& many = machine->reference();
        char line[512];
        std::snprintf(line, sizeof line,
                      "machine     redis-benchmark: %.0f cycles/s on %d connection%s, %.0f/s on "
                      "%d (SET NX PX + release, back to back)\n",
                      one.cycles_per_s, one.connections, one.connections == 1 ? "" : "s",
                      many.cycles_per_s, many.connections);
        std::string out = line;
        // A fraction alone ("0.043x") read as "lockbench is slow": it is the run's workload (holds,
        // waits, think times) against the machine's bare round trips.
        if (run_cycles_per_s && many.cycles_per_s > 0) {
            std::snprintf(line, sizeof line,
                          "            this run's %.1f cycles/s are %.1f%% of the %d-connection "
                          "figure: a reference for comparing machines, not lockbench's speed\n",
                          *run_cycles_per_s, 100 * *run_cycles_per_s / many.cycles_per_s,
                          many.connections);
            out += line;
        }
        return out;
    }
    if (const auto reason = y.find("not_measured"); reason != y.end() && reason->is_string())
        return "machine     not measured: " + reason->get<std::string>() + "\n";
    return "";
}

namespace {

// "lockbench run: t1 / set_nx_px", then the run's size and its notes.
void write_report_head(std::ostream& out, const RunSummary& s) {
    char line[512];
    out << "lockbench run: " << s.scenario << " / " << s.strategy
        << (s.interrupted ? "  (INTERRUPTED)" : "") << "\n";
    std::string clients = std::to_string(s.clients);
    if (s.connections_mode == "shared") {
        clients += " sharing " + std::to_string(s.connections_per_server) +
                   " auto-pipelined connections per server";
    }
    std::snprintf(line, sizeof line, "clients %s, seed %llu, %.2f s\n", clients.c_str(),
                  static_cast<unsigned long long>(s.seed), s.duration_s);
    out << line;
    for (const auto& note : s.notes)
        out << "note        " << note << "\n";
}

// Throughput, the machine it was measured on, what the servers spent, and how evenly the
// clients got the lock.
void write_report_throughput(std::ostream& out, const RunSummary& s) {
    char line[512];
    std::snprintf(line, sizeof line, "throughput  %.1f cycles/s (%llu cycles)\n", s.cycles_per_s,
                  static_cast<unsigned long long>(s.cycles));
    out << line;
    out << format_machine(s.yardstick.value_or(json()), s.cycles_per_s);
    // A summary from before the servers were metered has no server_cost.
    if (s.server_cost && s.server_cost->is_object())
        out << "cost        " << server_cost_line(*s.server_cost) << "\n";
    if (const auto& f = s.fairness; f.jain_index) {
        std::snprintf(line, sizeof line,
                      "fairness    cycles per client: min %llu, median %.1f, max %llu; Jain's "
                      "index %.3f\n",
                      static_cast<unsigned long long>(f.cycles_min), f.cycles_median,
                      static_cast<unsigned long long>(f.cycles_max), *f.jain_index);
        out << line;
    }
}

void write_latency_line(std::ostream& out, const char* format, const LatencySummary& l) {
    char line[512];
    std::snprintf(line, sizeof line, format, l.p50, l.p99, l.p999, l.max);
    out << line;
}

void write_report_latencies(std::ostream& out, const RunSummary& s) {
    out << "acquire ";
    write_latency_line(out, "    p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms\n",
                       s.acquire);
    out << "release ";
    write_latency_line(out, "    p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms\n",
                       s.release);
}

// An open-loop run: the acquire latency from when each arrival was due, and whether the clients
// kept the rate asked.
void write_report_open_loop(std::ostream& out, const RunSummary& s) {
    if (!s.open_loop || !s.acquire_corrected)
        return;
    const OpenLoopSummary& open = *s.open_loop;
    char line[512];
    out << "acquire from when due (coordinated omission corrected):\n";
    write_latency_line(out, "            p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms\n",
                       *s.acquire_corrected);
    std::snprintf(line, sizeof line,
                  "rate        target %.1f/s %s, achieved %.1f/s: %llu of %llu due arrivals "
                  "started\n",
                  open.target_per_s, open.arrivals.c_str(), open.achieved_per_s,
                  static_cast<unsigned long long>(open.started),
                  static_cast<unsigned long long>(open.due));
    out << line;
    if (!open.kept) {
        std::snprintf(
            line, sizeof line,
            "RATE NOT KEPT: only %.1f %% of the due arrivals started - the clients "
            "fell behind, so Redis saw less load than asked (try more --clients)\n",
            open.due ? 100.0 * static_cast<double>(open.started) / static_cast<double>(open.due)
                     : 100.0);
        out << line;
    }
}

// Each operation's ok/fail/info counts, then each fault and whether it took effect.
void write_report_ops_and_faults(std::ostream& out, const RunSummary& s) {
    char line[512];
    for (const auto& [op, c] : s.ops) {
        std::snprintf(line, sizeof line, "%-8s    ok %llu  fail %llu  info %llu\n", op.c_str(),
                      static_cast<unsigned long long>(c.ok),
                      static_cast<unsigned long long>(c.fail),
                      static_cast<unsigned long long>(c.info));
        out << line;
    }
    for (const auto& f : s.nemesis) {
        std::snprintf(line, sizeof line, "fault       %s on %s at %s: took effect %d of %d%s\n",
                      f.fault.c_str(), describe_target(f.target).c_str(),
                      seconds_text(f.at_s).c_str(), f.took_effect, f.due,
                      f.missed ? "  <- NOT ALL FIRED" : "");
        out << line;
    }
}

// The checker's verdict and report, then the scenario's expectation and whether it held.
void write_report_verdict(std::ostream& out, const RunSummary& s) {
    out << verdict_line(s) << checker::format_report(s.verdict) << expected_line(s);
    if (s.expected && s.rates_not_judged) {
        out << "            not judged in one run: " << *s.rates_not_judged
            << " (a rate needs repeated runs: run --repeat N)\n";
    }
}

}  // namespace

std::string verdict_line(const RunSummary& s) {
    const checker::Report& v = s.verdict;
    const std::uint64_t count = v.violation_count();
    std::string line = "verdict     " + std::string(checker::verdict_word(v.verdict)) + ", " +
                       std::to_string(count) + " violation(s)";
    if (v.witnesses.size() < count)
        line += " (" + std::to_string(v.witnesses.size()) + " listed)";
    return line + "\n";
}

std::string expected_line(const RunSummary& s) {
    if (!s.expected)
        return "";
    return "expected    " + *s.expected + " -> " +
           (!s.as_expected   ? "unknown"
            : *s.as_expected ? "as expected"
                             : "UNEXPECTED") +
           "\n";
}

std::string make_report(const RunSummary& s) {
    std::ostringstream out;
    write_report_head(out, s);
    write_report_throughput(out, s);
    write_report_latencies(out, s);
    write_report_open_loop(out, s);
    write_report_ops_and_faults(out, s);
    write_report_verdict(out, s);
    return out.str();
}

}  // namespace lockbench
