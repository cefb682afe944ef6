#pragma once

// One run's summary (summary.json, its fields in docs/results.md), typed: built once by
// make_summary and the run's last step, written to JSON in one place (RunSummary::to_json) and read
// back in one place (RunSummary::from_json), so report.txt, the suite's row, compare's runs, the
// ramp's points, the command line and the dashboard read typed fields instead of decoding
// `valid`, `as_expected` or a throughput each their own way. The nemesis's report and fault windows
// are typed too (fault_records.hpp); the sections other rooms write (the servers' cost, the
// deployment's parts, the yardstick) are kept as they wrote them. Its room (engine/results) uses
// the checker only, so the dashboard may read it too.

#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/json_object.hpp"
#include "checker/report.hpp"
#include "engine/results/fault_records.hpp"
#include "engine/results/op_counts.hpp"

namespace lockbench {

// A summary.json that cannot be read: a field missing or of the wrong type, named by its JSON path.
class SummaryError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A `valid` field read strictly: checker::to_json's encodings (true, false, "unknown",
// "not-applicable"), decoded by checker::verdict_of; anything else is an Error at `path`, where
// verdict_of alone would read a typo as "unknown".
template <class Error>
checker::Verdict verdict_at(const json_input::JsonObject<Error>& reader, const nlohmann::json& v,
                            const std::string& path) {
    const bool known = v.is_boolean() || v == "unknown" || v == "not-applicable";
    if (!known) {
        reader.fail(path,
                    "must be true, false, \"unknown\" or \"not-applicable\", not " + v.dump());
    }
    return checker::verdict_of(v);
}

// latency_ms.acquire and the others, in milliseconds.
struct LatencySummary {
    std::uint64_t count = 0;
    double p50 = 0, p99 = 0, p999 = 0, max = 0;
};

// One second of the run (timeseries).
struct SecondCounts {
    std::uint64_t t = 0, cycles = 0, errors = 0;
};

// How evenly the lock went round: cycles per client, every client counted.
struct FairnessSummary {
    std::uint64_t clients = 0;
    std::uint64_t cycles_min = 0;
    double cycles_median = 0;
    std::uint64_t cycles_max = 0;
    std::optional<double> jain_index;  // null: no cycle at all

    // summary.json's `fairness` (and ramp.json's, per point).
    nlohmann::json to_json() const;
};

// At a `rate`: what it asked for and what the clients managed.
struct OpenLoopSummary {
    double target_per_s = 0;
    std::string arrivals;
    std::uint64_t due = 0;
    std::uint64_t started = 0;
    double achieved_per_s = 0;
    bool kept = true;
};

// One term of the expectation and whether this run met it (null: it could not tell).
struct TermOutcome {
    std::string term;
    std::optional<bool> met;
};

struct RunSummary {
    std::string strategy;
    std::string scenario;
    std::uint64_t seed = 0;
    int clients = 0;
    // How the clients reached the servers: "per-client", or "shared" (--connections).
    std::string connections_mode = "per-client";
    int connections_per_server = 0;
    double duration_s = 0;
    bool interrupted = false;
    std::uint64_t cycles = 0;
    double cycles_per_s = 0;
    LatencySummary acquire;
    LatencySummary release;
    std::optional<LatencySummary> acquire_corrected;  // at a rate only
    std::map<std::string, OpCounts> ops;              // each operation's ok, fail and info
    std::vector<SecondCounts> timeseries;
    std::vector<FaultWindow> faults;   // when each fault acted, as the nemesis kept it
    std::vector<FaultFiring> nemesis;  // Nemesis::report: did each fault fire
    checker::Report verdict;
    std::uint64_t history_events = 0;
    std::string redis_mode = "embedded";  // "external": the user's servers
    std::vector<std::string> redis_endpoints;
    std::string key_prefix;
    std::uint64_t clients_answered = 0;
    FairnessSummary fairness;
    int engine_threads = 0;
    double engine_cpu_s = 0;
    double engine_cpu_share = 0;
    std::vector<std::string> notes;
    std::optional<OpenLoopSummary> open_loop;
    std::optional<std::string> expected;  // nullopt: the scenario expects nothing of it
    // nullopt: nothing expected, or the run could not tell (a check said unknown; rates only).
    std::optional<bool> as_expected;
    std::vector<TermOutcome> expected_terms;      // written only with `expected`
    std::optional<std::string> rates_not_judged;  // the expectation's rate terms

    // Written by other rooms, kept as written; nullopt: absent from summary.json (where it does
    // not apply, or in a summary from before it).
    std::optional<nlohmann::json> adapter;      // a lock library's: its library, processes, …
    std::optional<nlohmann::json> server_cost;  // server_cost.hpp
    std::optional<nlohmann::json> zookeeper;    // its strategies: mode, servers, hosts
    std::optional<nlohmann::json> etcd;         // its strategies: mode, servers, endpoints
    std::optional<nlohmann::json> inventory;    // the user's deployment file
    std::optional<nlohmann::json> topology;     // the network lab's hosts
    std::optional<nlohmann::json> yardstick;    // yardstick.hpp, or {"not_measured": why}
    std::optional<nlohmann::json> cleanup;      // server_cleanup.hpp; null on embedded servers

    // The servers' CPU per lock cycle, every measured node together; nullopt where not measured.
    std::optional<double> server_us_per_cycle() const;
    // The engine's CPU per lock cycle, as server_cost measured it; nullopt where not measured.
    std::optional<double> engine_us_per_cycle() const;
    // server_cost's bottleneck side ("engine", "server", "both", "neither"); nullopt without one.
    std::optional<std::string> bottleneck() const;
    // expected_terms as summary.json has them (what judge_repeated reads).
    nlohmann::json expected_terms_json() const;

    // Exactly summary.json's object.
    nlohmann::json to_json() const;
    // The one reader of a summary.json: every field to_json writes is required but the sections
    // that are absent when they do not apply and the fields older lockbench versions did not
    // write yet, where their absence has one meaning (`connections`: per-client, one connection
    // per client and server; `notes`: none; `expected`, `as_expected`: nothing expected); a field
    // missing otherwise, or one of the wrong type, is a SummaryError naming
    // `origin` and its JSON path ("run/summary.json: /throughput/cycles_per_s: must be a number,
    // not a string").
    static RunSummary from_json(const nlohmann::json& j, const std::string& origin);
};

}  // namespace lockbench
