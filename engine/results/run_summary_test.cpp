// summary.json's one writer and one reader: what a real run writes reads back through the strict
// reader and writes again byte for byte, and a field missing or of the wrong type is a
// SummaryError naming the file and the field's JSON path.

#include "engine/results/run_summary.hpp"

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/run/run.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::TempDir;

std::string text_of(const fs::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    return text.str();
}

// The summary.json of one short run on an embedded redis-server.
std::string summary_json_of(const std::string& workload) {
    TempDir out;
    const RunOutcome r = run_workload(
        {.workload = Workload::from_json(json::parse(workload)), .out_dir = out.path()});
    return text_of(r.dir / "summary.json");
}

void expect_round_trip(const std::string& written) {
    const RunSummary read = RunSummary::from_json(json::parse(written), "summary.json");
    EXPECT_EQ(read.to_json().dump(2) + "\n", written);
}

// Every section a plain run writes: no expectation (null), closed loop, the servers' cost, the
// embedded servers' cleanup (null).
TEST(RunSummaryTest, APlainRunsSummaryReadsBackUnchanged) {
    const std::string written = summary_json_of(R"({"name": "plain", "clients": 4, "keys": 2,
        "duration_s": 0.5, "hold_ms": 1})");
    expect_round_trip(written);
    const RunSummary s = RunSummary::from_json(json::parse(written), "summary.json");
    EXPECT_EQ(s.scenario, "plain");
    EXPECT_EQ(s.expected, std::nullopt);
    EXPECT_EQ(s.open_loop.has_value(), false);
    EXPECT_GT(s.cycles, 0u);
    EXPECT_EQ(s.verdict.verdict, checker::Verdict::Valid);
    ASSERT_TRUE(s.cleanup.has_value());
    EXPECT_TRUE(s.cleanup->is_null());
}

// At a rate, with an expectation that has a rate term: open_loop, the corrected latency,
// expected_terms and rates_not_judged.
TEST(RunSummaryTest, ARunAtARateWithARateTermReadsBackUnchanged) {
    const std::string written = summary_json_of(R"({"name": "rated", "clients": 4, "keys": 2,
        "duration_s": 0.5, "hold_ms": 1, "rate": {"per_s": 100, "arrivals": "fixed"},
        "expect": {"set_nx_px": "safe,violates:mutual_exclusion in <= 1 of 5"}})");
    expect_round_trip(written);
    const RunSummary s = RunSummary::from_json(json::parse(written), "summary.json");
    ASSERT_TRUE(s.open_loop.has_value());
    EXPECT_EQ(s.open_loop->target_per_s, 100);
    ASSERT_TRUE(s.acquire_corrected.has_value());
    EXPECT_EQ(s.expected, "safe,violates:mutual_exclusion in <= 1 of 5");
    EXPECT_EQ(s.as_expected, true);
    ASSERT_EQ(s.expected_terms.size(), 2u);
    EXPECT_EQ(s.expected_terms[0].term, "safe");
    EXPECT_EQ(s.expected_terms[0].met, true);
    EXPECT_EQ(s.rates_not_judged, "violates:mutual_exclusion in <= 1 of 5");
}

// A summary.json changed by hand or damaged: one line with the file and the JSON path.
TEST(RunSummaryTest, AMistypedOrMissingFieldIsNamedByItsPath) {
    const json good = json::parse(summary_json_of(R"({"name": "plain", "clients": 2, "keys": 1,
        "duration_s": 0.3, "hold_ms": 1})"));
    struct Damage {
        std::string pointer;
        std::optional<json> value;  // nullopt: the field removed
        std::string error;
    };
    const std::vector<Damage> damages{
        {"/throughput/cycles_per_s", "fast", "must be a number, not a string"},
        {"/verdict/valid", "yes",
         "must be true, false, \"unknown\" or \"not-applicable\", not \"yes\""},
        {"/latency_ms/acquire/p99", std::nullopt, "missing"},
        {"/timeseries/0/cycles", -1, "must be a whole number, not -1"},
        {"/as_expected", "true", "must be true, false or null, not a string"},
        {"/expected", 1, "must be a string or null, not a number"},
        {"/server_cost", "none", "must be an object, not a string"}};
    for (const Damage& d : damages) {
        json damaged = good;
        const json::json_pointer at(d.pointer);
        if (d.value)
            damaged[at] = *d.value;
        else
            damaged[at.parent_pointer()].erase(at.back());
        std::string error = "(read without an error)";
        try {
            RunSummary::from_json(damaged, "r/summary.json");
        } catch (const SummaryError& e) {
            error = e.what();
        }
        EXPECT_EQ(error, "r/summary.json: " + d.pointer + ": " + d.error);
    }
}

// A summary from before expectations were judged in the run: nothing expected, nothing met.
TEST(RunSummaryTest, AnOlderSummaryWithoutAnExpectationReadsAsExpectingNothing) {
    json older = json::parse(summary_json_of(R"({"name": "plain", "clients": 2, "keys": 1,
        "duration_s": 0.3, "hold_ms": 1})"));
    older.erase("expected");
    older.erase("as_expected");
    const RunSummary s = RunSummary::from_json(older, "summary.json");
    EXPECT_EQ(s.expected, std::nullopt);
    EXPECT_EQ(s.as_expected, std::nullopt);
}

// A summary from before --connections and notes: every client had its own connection to each
// server, and nothing was noted. One from before fairness has no such reading: it is named.
TEST(RunSummaryTest, AnOlderSummaryWithoutConnectionsOrNotesReadsAsPerClientWithNone) {
    const json good = json::parse(summary_json_of(R"({"name": "plain", "clients": 3, "keys": 1,
        "duration_s": 0.3, "hold_ms": 1})"));
    json older = good;
    older.erase("connections");
    older.erase("notes");
    const RunSummary s = RunSummary::from_json(older, "summary.json");
    EXPECT_EQ(s.connections_mode, "per-client");
    EXPECT_EQ(s.connections_per_server, 3);
    EXPECT_TRUE(s.notes.empty());
    EXPECT_EQ(s.to_json()["connections"], good["connections"]);

    json oldest = good;
    oldest.erase("fairness");
    std::string error = "(read without an error)";
    try {
        RunSummary::from_json(oldest, "r/summary.json");
    } catch (const SummaryError& e) {
        error = e.what();
    }
    EXPECT_EQ(error, "r/summary.json: /fairness: missing");
}

TEST(RunSummaryTest, TheServersCostPerCycleIsEveryMeasuredNodeTogether) {
    RunSummary s;
    EXPECT_EQ(s.server_us_per_cycle(), std::nullopt);
    s.server_cost =
        json{{"total", {{"cpu_us_per_cycle", 12.5}}}, {"bottleneck", {{"side", "engine"}}}};
    EXPECT_EQ(s.server_us_per_cycle(), 12.5);
    EXPECT_EQ(s.engine_us_per_cycle(), std::nullopt);
    EXPECT_EQ(s.bottleneck(), "engine");
    s.server_cost = json{{"engine", {{"cpu_us_per_cycle", 30.25}}}};
    EXPECT_EQ(s.engine_us_per_cycle(), 30.25);
    EXPECT_EQ(s.server_us_per_cycle(), std::nullopt);
    s.server_cost = json{{"total", {{"cpu_us_per_cycle", nullptr}}}};
    EXPECT_EQ(s.server_us_per_cycle(), std::nullopt);
    EXPECT_EQ(s.bottleneck(), std::nullopt);
}

}  // namespace
}  // namespace lockbench
