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

json latency_json(const LatencyHistogram& h) {
    return json{{"count", h.count()},
                {"p50", ms(h.quantile(0.5))},
                {"p99", ms(h.quantile(0.99))},
                {"p999", ms(h.quantile(0.999))},
                {"max", ms(h.max())}};
}

// How evenly the lock went round: cycles per client, every client counted.
// How the clients reached Redis: a figure of throughput means something else over a few shared,
// auto-pipelined connections than over one per client (`--connections`).
json connections_json(const Workload& w) {
    if (w.shares_connections())
        return json{{"mode", "shared"}, {"per_server", w.connections}};
    return json{{"mode", "per-client"}, {"per_server", w.clients}};
}

json fairness_json(std::vector<std::uint64_t> cycles_per_client, int clients) {
    cycles_per_client.resize(static_cast<std::size_t>(std::max(clients, 0)), 0);
    const Fairness f = fairness_of(cycles_per_client);
    return json{{"clients", f.clients},
                {"cycles_min", f.min},
                {"cycles_median", f.median},
                {"cycles_max", f.max},
                {"jain_index", f.jain ? json(*f.jain) : json(nullptr)}};
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

// {"holder": "k0"} -> "holder of k0"; {"client": 3} -> "client 3"; {"node": 0} -> "node 0".
std::string describe_target(const json& target) {
    if (target.is_object()) {
        if (target.contains("holder"))
            return "holder of " + target["holder"].get<std::string>();
        if (target.contains("client"))
            return "client " + target["client"].dump();
        if (target.contains("node"))
            return "node " + target["node"].dump();
    }
    return target.is_string() ? target.get<std::string>() : target.dump();
}

json ops_json(const ClientStats& st) {
    json ops = json::object();
    for (std::size_t i = 0; i < st.ops.size(); ++i) {
        const auto& c = st.ops[i];
        ops[std::string(to_string(static_cast<Op>(i)))] = {
            {"ok", c.ok}, {"fail", c.fail}, {"info", c.info}};
    }
    return ops;
}

// Cycles and errors per second of the run, a zero for each second without.
json timeseries_json(const ClientStats& st, double elapsed_s) {
    json series = json::array();
    auto seconds = static_cast<std::size_t>(std::ceil(elapsed_s));
    for (std::size_t s = 0; s < seconds; ++s) {
        series.push_back(
            {{"t", s},
             {"cycles", s < st.cycles_per_second.size() ? st.cycles_per_second[s] : 0},
             {"errors", s < st.errors_per_second.size() ? st.errors_per_second[s] : 0}});
    }
    return series;
}

json endpoints_json(const std::vector<Endpoint>& endpoints) {
    json out = json::array();
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
        if (!f["missed"].is_null()) {
            verdict.add_unknown_reason("fault " + f["fault"].get<std::string>() + " (" +
                                       describe_target(f["target"]) + ", at " +
                                       seconds_text(f["at_s"].get<double>()) +
                                       "): " + f["missed"].get<std::string>());
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

void add_open_loop(json& summary, const Workload& w, const ClientStats& st, double elapsed_s) {
    if (!w.rate) {
        summary["open_loop"] = nullptr;
        return;
    }
    // What the rate asked for and what the clients managed: a run that fell behind says so
    // instead of silently measuring less load (docs/cli.md, closed and open loop).
    summary["latency_ms"]["acquire_corrected"] = latency_json(st.acquire_latency_corrected);
    const double window = std::min(elapsed_s, w.duration_s);
    summary["open_loop"] = {
        {"target_per_s", w.rate->per_s},
        {"arrivals", to_string(w.rate->arrivals)},
        {"due", st.arrivals_due},
        {"started", st.arrivals_started},
        {"achieved_per_s", window > 0 ? static_cast<double>(st.arrivals_started) / window : 0.0},
        {"kept", static_cast<double>(st.arrivals_started) >=
                     kRateKept * static_cast<double>(st.arrivals_due)}};
}

void add_expectation(json& summary, const Workload& w, const checker::Report& verdict,
                     const FaultEvidence& evidence) {
    auto expected = w.expect.find(w.strategy);
    if (expected == w.expect.end()) {
        summary["expected"] = nullptr;
        summary["as_expected"] = nullptr;
        return;
    }
    summary["expected"] = expected->second;
    const Expectation expectation = Expectation::parse(expected->second);
    auto met = expectation.met_by(verdict, evidence);
    summary["as_expected"] = met ? json(*met) : json(nullptr);
    // Each term's outcome, so that runs repeated together can judge rates over them.
    json terms = json::array();
    const auto outcomes = expectation.terms_met_by(verdict, evidence);
    for (std::size_t i = 0; i < outcomes.size(); ++i) {
        terms.push_back({{"term", expectation.terms[i].text},
                         {"met", outcomes[i] ? json(*outcomes[i]) : json(nullptr)}});
    }
    summary["expected_terms"] = terms;
    if (expectation.has_rates())
        summary["rates_not_judged"] = expectation.rate_texts();
}

}  // namespace

RunJudgement RunJudgement::of(const json& summary, const std::string& origin) {
    json_input::JsonObject<SummaryError> top(summary, origin, "");
    json_input::JsonObject<SummaryError> verdict(top.require("verdict"), origin, "/verdict");
    RunJudgement judgement;
    judgement.verdict = verdict_at(verdict, verdict.require("valid"), "/verdict/valid");
    if (const json* expected = top.find("expected"); expected && !expected->is_null())
        judgement.expected = top.string_of(*expected, "/expected");
    // Older summaries lack it; null says the run could not tell.
    if (const json* met = top.find("as_expected"); met && !met->is_null()) {
        if (!met->is_boolean())
            top.fail("/as_expected",
                     "must be true, false or null, not " + json_input::type_name(*met));
        judgement.as_expected = met->get<bool>();
    }
    return judgement;
}

json make_summary(const SummaryInputs& in, const std::filesystem::path& history_path) {
    const auto& w = in.workload;
    const auto& st = in.stats;
    checker::Report verdict = judge(history_path, w.checks);
    const std::size_t reasons_before = verdict.unknown_reasons.size();
    add_what_the_history_cannot_show(verdict, in);
    FaultEvidence evidence = FaultEvidence::from_nemesis_report(in.nemesis);
    evidence.conclusive = evidence.conclusive && verdict.unknown_reasons.size() == reasons_before;

    json summary{
        {"strategy", w.strategy},
        {"scenario", w.name},
        {"seed", w.seed},
        {"clients", w.clients},
        {"connections", connections_json(w)},
        {"duration_s", in.elapsed_s},
        {"interrupted", in.interrupted},
        {"throughput",
         {{"cycles", st.cycles},
          {"cycles_per_s", in.elapsed_s > 0 ? static_cast<double>(st.cycles) / in.elapsed_s : 0}}},
        {"latency_ms",
         {{"acquire", latency_json(st.acquire_latency)},
          {"release", latency_json(st.release_latency)}}},
        {"ops", ops_json(st)},
        {"timeseries", timeseries_json(st, in.elapsed_s)},
        {"faults", in.faults},
        {"nemesis", in.nemesis},
        {"verdict", verdict.to_json()},
        {"history", {{"file", "history.jsonl"}, {"events", in.history_events}}},
        {"redis",
         {{"mode", in.deployment_embedded ? "embedded" : "external"},
          {"endpoints", endpoints_json(in.endpoints)},
          {"key_prefix", in.key_prefix}}},
        {"clients_answered", st.clients_answered},
        {"fairness", fairness_json(st.cycles_per_client, w.clients)},
        {"engine",
         {{"threads", w.threads},
          {"cpu_s", in.engine_cpu_s},
          {"cpu_share", in.elapsed_s > 0 ? in.engine_cpu_s / in.elapsed_s : 0}}},
    };
    if (!in.adapter.is_null())
        summary["adapter"] = in.adapter;
    // What the verdict alone would not tell about the run's set-up.
    json notes = json::array();
    if (std::string fence = w.unused_fence_note(); !fence.empty())
        notes.push_back(std::move(fence));
    for (const auto& note : in.notes)
        notes.push_back(note);
    summary["notes"] = notes;
    add_open_loop(summary, w, st, in.elapsed_s);
    add_expectation(summary, w, verdict, evidence);
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
void write_report_head(std::ostream& out, const json& s) {
    char line[512];
    out << "lockbench run: " << s["scenario"].get<std::string>() << " / "
        << s["strategy"].get<std::string>()
        << (s["interrupted"].get<bool>() ? "  (INTERRUPTED)" : "") << "\n";
    std::string clients = std::to_string(s["clients"].get<int>());
    if (const auto c = s.find("connections");
        c != s.end() && c->is_object() && c->value("mode", "") == "shared") {
        clients += " sharing " + std::to_string(c->value("per_server", 0)) +
                   " auto-pipelined connections per server";
    }
    std::snprintf(line, sizeof line, "clients %s, seed %llu, %.2f s\n", clients.c_str(),
                  static_cast<unsigned long long>(s["seed"].get<std::uint64_t>()),
                  s["duration_s"].get<double>());
    out << line;
    for (const auto& note : s.value("notes", json::array()))
        out << "note        " << note.get<std::string>() << "\n";
}

// Throughput, the machine it was measured on, what the servers spent, and how evenly the
// clients got the lock.
void write_report_throughput(std::ostream& out, const json& s) {
    char line[512];
    std::snprintf(line, sizeof line, "throughput  %.1f cycles/s (%llu cycles)\n",
                  s["throughput"]["cycles_per_s"].get<double>(),
                  static_cast<unsigned long long>(s["throughput"]["cycles"].get<std::uint64_t>()));
    out << line;
    out << format_machine(s.value("yardstick", json()),
                          s["throughput"]["cycles_per_s"].get<double>());
    // A summary from before the servers were metered has no server_cost.
    if (const auto& cost = s.value("server_cost", json()); cost.is_object())
        out << "cost        " << server_cost_line(cost) << "\n";
    if (const auto& f = s.value("fairness", json()); f.is_object() && f["jain_index"].is_number()) {
        std::snprintf(line, sizeof line,
                      "fairness    cycles per client: min %llu, median %.1f, max %llu; Jain's "
                      "index %.3f\n",
                      static_cast<unsigned long long>(f["cycles_min"].get<std::uint64_t>()),
                      f["cycles_median"].get<double>(),
                      static_cast<unsigned long long>(f["cycles_max"].get<std::uint64_t>()),
                      f["jain_index"].get<double>());
        out << line;
    }
}

void write_report_latencies(std::ostream& out, const json& s) {
    char line[512];
    for (const char* op : {"acquire", "release"}) {
        const auto& l = s["latency_ms"][op];
        std::snprintf(line, sizeof line,
                      "%-8s    p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms\n", op,
                      l["p50"].get<double>(), l["p99"].get<double>(), l["p999"].get<double>(),
                      l["max"].get<double>());
        out << line;
    }
}

// An open-loop run: the acquire latency from when each arrival was due, and whether the clients
// kept the rate asked.
void write_report_open_loop(std::ostream& out, const json& s) {
    const auto& open = s["open_loop"];
    if (!open.is_object())
        return;
    char line[512];
    const auto& l = s["latency_ms"]["acquire_corrected"];
    std::snprintf(line, sizeof line,
                  "acquire from when due (coordinated omission corrected):\n"
                  "            p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms\n",
                  l["p50"].get<double>(), l["p99"].get<double>(), l["p999"].get<double>(),
                  l["max"].get<double>());
    out << line;
    const auto due = open["due"].get<std::uint64_t>();
    const auto started = open["started"].get<std::uint64_t>();
    std::snprintf(line, sizeof line,
                  "rate        target %.1f/s %s, achieved %.1f/s: %llu of %llu due arrivals "
                  "started\n",
                  open["target_per_s"].get<double>(), open["arrivals"].get<std::string>().c_str(),
                  open["achieved_per_s"].get<double>(), static_cast<unsigned long long>(started),
                  static_cast<unsigned long long>(due));
    out << line;
    if (!open["kept"].get<bool>()) {
        std::snprintf(
            line, sizeof line,
            "RATE NOT KEPT: only %.1f %% of the due arrivals started - the clients "
            "fell behind, so Redis saw less load than asked (try more --clients)\n",
            due ? 100.0 * static_cast<double>(started) / static_cast<double>(due) : 100.0);
        out << line;
    }
}

// Each operation's ok/fail/info counts, then each fault and whether it took effect.
void write_report_ops_and_faults(std::ostream& out, const json& s) {
    char line[512];
    for (const auto& [op, c] : s["ops"].items()) {
        std::snprintf(line, sizeof line, "%-8s    ok %llu  fail %llu  info %llu\n", op.c_str(),
                      static_cast<unsigned long long>(c["ok"].get<std::uint64_t>()),
                      static_cast<unsigned long long>(c["fail"].get<std::uint64_t>()),
                      static_cast<unsigned long long>(c["info"].get<std::uint64_t>()));
        out << line;
    }
    for (const auto& f : s["nemesis"]) {
        std::snprintf(line, sizeof line, "fault       %s on %s at %s: took effect %d of %d%s\n",
                      f["fault"].get<std::string>().c_str(), describe_target(f["target"]).c_str(),
                      seconds_text(f["at_s"].get<double>()).c_str(), f["took_effect"].get<int>(),
                      f["due"].get<int>(), f["missed"].is_null() ? "" : "  <- NOT ALL FIRED");
        out << line;
    }
}

// The checker's verdict and report, then the scenario's expectation and whether it held.
void write_report_verdict(std::ostream& out, const json& s) {
    const auto v = checker::Report::from_json(s["verdict"]);
    const std::uint64_t count = v.violation_count();
    out << "verdict     " << checker::verdict_word(v.verdict) << ", " << count << " violation(s)";
    if (v.witnesses.size() < count)
        out << " (" << v.witnesses.size() << " listed)";
    out << "\n" << checker::format_report(v);
    const RunJudgement judgement = RunJudgement::of(s);
    if (!judgement.expected)
        return;
    out << "expected    " << *judgement.expected << " -> "
        << (!judgement.as_expected   ? "unknown"
            : *judgement.as_expected ? "as expected"
                                     : "UNEXPECTED")
        << "\n";
    if (s.contains("rates_not_judged")) {
        out << "            not judged in one run: " << s["rates_not_judged"].get<std::string>()
            << " (a rate needs repeated runs: run --repeat N)\n";
    }
}

}  // namespace

std::string make_report(const json& s) {
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
