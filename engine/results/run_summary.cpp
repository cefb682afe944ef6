#include "engine/results/run_summary.hpp"

#include <limits>

#include "engine/results/result_fields.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

using Fields = json_input::JsonObject<SummaryError>;

template <typename T>
json optional_json(const std::optional<T>& value) {
    return value ? json(*value) : json(nullptr);
}

json latency_json(const LatencySummary& l) {
    return json{
        {"count", l.count}, {"p50", l.p50}, {"p99", l.p99}, {"p999", l.p999}, {"max", l.max}};
}

json strings_json(const std::vector<std::string>& list) {
    json out = json::array();
    for (const auto& s : list)
        out.push_back(s);
    return out;
}

// ---- reading

using result_fields::object_at;
using result_fields::required_count;
using result_fields::required_int;

std::vector<std::string> required_strings(Fields& f, const std::string& field) {
    const json& list = f.required_array(field);
    std::vector<std::string> out;
    for (std::size_t i = 0; i < list.size(); ++i)
        out.push_back(f.string_of(list[i], f.at(field) + "/" + std::to_string(i)));
    return out;
}

// A section another room writes: absent, or of the kind it writes.
std::optional<json> section(Fields& f, const std::string& field, bool object_only = true) {
    const json* v = f.find(field);
    if (!v)
        return std::nullopt;
    if (object_only ? !v->is_object() : !(v->is_object() || v->is_null()))
        f.fail(f.at(field), std::string("must be an object") + (object_only ? "" : " or null") +
                                ", not " + json_input::type_name(*v));
    return *v;
}

LatencySummary read_latency(Fields& parent, const std::string& field) {
    Fields f = object_at(parent, field);
    return {.count = required_count(f, "count"),
            .p50 = f.required_number("p50", 0),
            .p99 = f.required_number("p99", 0),
            .p999 = f.required_number("p999", 0),
            .max = f.required_number("max", 0)};
}

std::map<std::string, OpCounts> read_ops(Fields& top) {
    const json& ops = top.require("ops");
    const Fields ops_object(ops, top.origin(), "/ops");  // an object, or the path in an error
    std::map<std::string, OpCounts> out;
    for (const auto& [op, counts] : ops.items()) {
        Fields c(counts, top.origin(), "/ops/" + op);
        out[op] = {.ok = required_count(c, "ok"),
                   .fail = required_count(c, "fail"),
                   .info = required_count(c, "info")};
    }
    return out;
}

// Each object of the array `field`, read by `read` with its own JSON path.
template <class Read>
auto read_each(Fields& top, const std::string& field, Read read) {
    const json& items = top.required_array(field);
    std::vector<decltype(read(std::declval<Fields&>()))> out;
    out.reserve(items.size());
    for (std::size_t i = 0; i < items.size(); ++i) {
        Fields item(items[i], top.origin(), top.at(field) + "/" + std::to_string(i));
        out.push_back(read(item));
    }
    return out;
}

SecondCounts read_second(Fields& s) {
    return {.t = required_count(s, "t"),
            .cycles = required_count(s, "cycles"),
            .errors = required_count(s, "errors")};
}

FaultWindow read_fault_window(Fields& w) {
    FaultWindow window{.fault = w.required_string("fault"),
                       .target = w.require("target"),  // whatever its fault class wrote
                       .start_s = w.required_number("start_s", 0)};
    if (const json& end = w.require("end_s"); !end.is_null())
        window.end_s = w.number_of(end, w.at("end_s"), 0);
    return window;
}

FaultFiring read_fault_firing(Fields& f) {
    FaultFiring firing{.fault = f.required_string("fault"),
                       .target = f.require("target"),
                       .point = f.optional_string("point"),
                       .at_s = f.required_number("at_s", 0),
                       .due = required_int(f, "due"),
                       .took_effect = required_int(f, "took_effect"),
                       .missed = f.string_or_null("missed")};
    if (const json* processes = f.optional_array("processes")) {
        firing.processes.emplace();
        for (std::size_t p = 0; p < processes->size(); ++p) {
            const json& process = (*processes)[p];
            if (!process.is_number_integer()) {
                f.fail(f.at("processes") + "/" + std::to_string(p),
                       "must be a process number, not " + process.dump());
            }
            firing.processes->push_back(process.get<std::int64_t>());
        }
    }
    return firing;
}

std::optional<OpenLoopSummary> read_open_loop(Fields& top) {
    const json& open = top.require("open_loop");
    if (open.is_null())
        return std::nullopt;
    Fields f(open, top.origin(), "/open_loop");
    return OpenLoopSummary{.target_per_s = f.required_number("target_per_s", 0),
                           .arrivals = f.required_string("arrivals"),
                           .due = required_count(f, "due"),
                           .started = required_count(f, "started"),
                           .achieved_per_s = f.required_number("achieved_per_s", 0),
                           .kept = f.required_boolean("kept")};
}

std::vector<TermOutcome> read_expected_terms(Fields& top) {
    std::vector<TermOutcome> out;
    const json* terms = top.optional_array("expected_terms");
    if (!terms)
        return out;
    for (std::size_t i = 0; i < terms->size(); ++i) {
        Fields t((*terms)[i], top.origin(), "/expected_terms/" + std::to_string(i));
        out.push_back({.term = t.required_string("term"), .met = t.optional_boolean("met")});
    }
    return out;
}

// `verdict`: its `valid` strictly, the rest as the checker reads its own report.
checker::Report verdict_of_summary(Fields& top) {
    const json& verdict = top.require("verdict");
    Fields f(verdict, top.origin(), "/verdict");
    checker::Report report = checker::Report::from_json(verdict);
    report.verdict = verdict_at(f, f.require("valid"), "/verdict/valid");
    return report;
}

}  // namespace

namespace {

// server_cost.<side>.cpu_us_per_cycle, where that side was measured.
std::optional<double> cpu_us_per_cycle(const std::optional<json>& server_cost, const char* side) {
    if (!server_cost || !server_cost->is_object())
        return std::nullopt;
    const json measured = server_cost->value(side, json());
    if (!measured.is_object())
        return std::nullopt;
    const json per_cycle = measured.value("cpu_us_per_cycle", json());
    return per_cycle.is_number() ? std::optional(per_cycle.get<double>()) : std::nullopt;
}

}  // namespace

std::optional<double> RunSummary::server_us_per_cycle() const {
    return cpu_us_per_cycle(server_cost, "total");
}

std::optional<double> RunSummary::engine_us_per_cycle() const {
    return cpu_us_per_cycle(server_cost, "engine");
}

std::optional<std::string> RunSummary::bottleneck() const {
    if (!server_cost || !server_cost->is_object())
        return std::nullopt;
    const json bottleneck = server_cost->value("bottleneck", json::object());
    const json side = bottleneck.is_object() ? bottleneck.value("side", json()) : json();
    return side.is_string() ? std::optional(side.get<std::string>()) : std::nullopt;
}

json FairnessSummary::to_json() const {
    return json{{"clients", clients},
                {"cycles_min", cycles_min},
                {"cycles_median", cycles_median},
                {"cycles_max", cycles_max},
                {"jain_index", optional_json(jain_index)}};
}

json RunSummary::expected_terms_json() const {
    json terms = json::array();
    for (const auto& t : expected_terms)
        terms.push_back({{"term", t.term}, {"met", optional_json(t.met)}});
    return terms;
}

json RunSummary::to_json() const {
    json ops_json = json::object();
    for (const auto& [op, c] : ops)
        ops_json[op] = {{"ok", c.ok}, {"fail", c.fail}, {"info", c.info}};
    json series = json::array();
    for (const auto& s : timeseries)
        series.push_back({{"t", s.t}, {"cycles", s.cycles}, {"errors", s.errors}});
    json fault_windows = json::array();
    for (const auto& w : faults)
        fault_windows.push_back(w.to_json());
    json firings = json::array();
    for (const auto& f : nemesis)
        firings.push_back(f.to_json());
    json s{
        {"strategy", strategy},
        {"scenario", scenario},
        {"seed", seed},
        {"clients", clients},
        {"connections", {{"mode", connections_mode}, {"per_server", connections_per_server}}},
        {"duration_s", duration_s},
        {"interrupted", interrupted},
        {"throughput", {{"cycles", cycles}, {"cycles_per_s", cycles_per_s}}},
        {"latency_ms", {{"acquire", latency_json(acquire)}, {"release", latency_json(release)}}},
        {"ops", ops_json},
        {"timeseries", series},
        {"faults", fault_windows},
        {"nemesis", firings},
        {"verdict", verdict.to_json()},
        {"history", {{"file", "history.jsonl"}, {"events", history_events}}},
        {"redis",
         {{"mode", redis_mode},
          {"endpoints", strings_json(redis_endpoints)},
          {"key_prefix", key_prefix}}},
        {"clients_answered", clients_answered},
        {"fairness", fairness.to_json()},
        {"engine",
         {{"threads", engine_threads}, {"cpu_s", engine_cpu_s}, {"cpu_share", engine_cpu_share}}},
        {"notes", strings_json(notes)},
        {"expected", optional_json(expected)},
        {"as_expected", optional_json(as_expected)},
    };
    if (acquire_corrected)
        s["latency_ms"]["acquire_corrected"] = latency_json(*acquire_corrected);
    if (open_loop) {
        s["open_loop"] = {{"target_per_s", open_loop->target_per_s},
                          {"arrivals", open_loop->arrivals},
                          {"due", open_loop->due},
                          {"started", open_loop->started},
                          {"achieved_per_s", open_loop->achieved_per_s},
                          {"kept", open_loop->kept}};
    } else {
        s["open_loop"] = nullptr;
    }
    if (expected)
        s["expected_terms"] = expected_terms_json();
    if (rates_not_judged)
        s["rates_not_judged"] = *rates_not_judged;
    for (const auto& [name, value] :
         {std::pair<const char*, const std::optional<json>*>{"adapter", &adapter},
          {"server_cost", &server_cost},
          {"zookeeper", &zookeeper},
          {"etcd", &etcd},
          {"inventory", &inventory},
          {"topology", &topology},
          {"yardstick", &yardstick},
          {"cleanup", &cleanup}}) {
        if (*value)
            s[name] = **value;
    }
    return s;
}

RunSummary RunSummary::from_json(const json& j, const std::string& origin) {
    Fields top(j, origin, "");
    RunSummary s;
    s.strategy = top.required_string("strategy");
    s.scenario = top.required_string("scenario");
    s.seed = required_count(top, "seed");
    s.clients = required_int(top, "clients");
    // Absent before --connections: every client had its own connection to each server.
    s.connections_per_server = s.clients;
    if (top.find("connections")) {
        Fields c = object_at(top, "connections");
        s.connections_mode = c.required_string("mode");
        if (s.connections_mode != "per-client" && s.connections_mode != "shared")
            c.fail(c.at("mode"), "must be per-client or shared, not " + s.connections_mode);
        s.connections_per_server = required_int(c, "per_server");
    }
    s.duration_s = top.required_number("duration_s", 0);
    s.interrupted = top.required_boolean("interrupted");
    {
        Fields t = object_at(top, "throughput");
        s.cycles = required_count(t, "cycles");
        s.cycles_per_s = t.required_number("cycles_per_s", 0);
    }
    {
        Fields l = object_at(top, "latency_ms");
        s.acquire = read_latency(l, "acquire");
        s.release = read_latency(l, "release");
        if (l.find("acquire_corrected"))
            s.acquire_corrected = read_latency(l, "acquire_corrected");
    }
    s.ops = read_ops(top);
    s.timeseries = read_each(top, "timeseries", read_second);
    s.faults = read_each(top, "faults", read_fault_window);
    s.nemesis = read_each(top, "nemesis", read_fault_firing);
    s.verdict = verdict_of_summary(top);
    {
        Fields h = object_at(top, "history");
        h.required_string("file");
        s.history_events = required_count(h, "events");
    }
    {
        Fields r = object_at(top, "redis");
        s.redis_mode = r.required_string("mode");
        s.redis_endpoints = required_strings(r, "endpoints");
        s.key_prefix = r.required_string("key_prefix");
    }
    s.clients_answered = required_count(top, "clients_answered");
    s.fairness = result_fields::read_fairness(top);
    {
        Fields e = object_at(top, "engine");
        s.engine_threads = required_int(e, "threads");
        s.engine_cpu_s = e.required_number("cpu_s", 0);
        s.engine_cpu_share = e.required_number("cpu_share", 0);
    }
    // Absent before runs noted anything: none.
    if (top.find("notes"))
        s.notes = required_strings(top, "notes");
    s.open_loop = read_open_loop(top);
    // Null (or, in older summaries, absent): the scenario expects nothing of this strategy.
    s.expected = top.optional_string("expected");
    s.as_expected = top.optional_boolean("as_expected");
    s.expected_terms = read_expected_terms(top);
    s.rates_not_judged = top.optional_string("rates_not_judged");
    s.adapter = section(top, "adapter");
    s.server_cost = section(top, "server_cost");
    s.zookeeper = section(top, "zookeeper");
    s.etcd = section(top, "etcd");
    s.inventory = section(top, "inventory");
    s.topology = section(top, "topology");
    s.yardstick = section(top, "yardstick");
    s.cleanup = section(top, "cleanup", false);
    return s;
}

}  // namespace lockbench
