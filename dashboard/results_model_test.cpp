// summary.json and results-folder reading: every summary is read by the engine's one strict
// reader (RunSummary::from_json) and what it rejects is an error naming the file and the field;
// the samples are written by its one writer (RunSummary::to_json), as a run writes them.

#include "dashboard/results_model.hpp"

#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"

namespace lockbench::dashboard {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

// A run of set_nx_px that broke mutual exclusion, as its summary.json has it.
lockbench::RunSummary sample_run() {
    lockbench::RunSummary s;
    s.strategy = "set_nx_px";
    s.scenario = "pause";
    s.seed = 7;
    s.clients = 4;
    s.duration_s = 2.5;
    s.cycles = 300;
    s.cycles_per_s = 120.0;
    s.acquire = {.count = 300, .p50 = 0.1, .p99 = 2, .p999 = 3, .max = 4};
    s.release = {.count = 300, .p50 = 0.2, .p99 = 1, .p999 = 1.5, .max = 9};
    s.timeseries = {{.t = 0, .cycles = 100, .errors = 0},
                    {.t = 1, .cycles = 150, .errors = 2},
                    {.t = 2, .cycles = 50, .errors = 0}};
    s.faults = {{.fault = "pause-client", .target = "c3", .start_s = 1.0, .end_s = 1.5},
                {.fault = "kill-server", .target = {{"node", 0}}, .start_s = 2.0}};
    s.verdict.verdict = checker::Verdict::Invalid;
    s.verdict.checks.push_back(
        {"mutual_exclusion", {{"valid", false}, {"violations", 1}, {"processes", {1, 2}}}});
    s.verdict.witnesses.push_back(
        {.kind = "mutual_exclusion",
         .key = "k0",
         .evidence = {{"a", {{"process", 1}, {"start", 100}, {"end", 900}}},
                      {"b", {{"process", 2}, {"start_ns", 400}, {"end_ns", 1200}}}}});
    s.expected = "violates:mutual_exclusion";
    return s;
}

json sample_summary() {
    return sample_run().to_json();
}

SummaryView read_view(const json& j) {
    return read_summary(j, "r/summary.json");
}

TEST(ResultsModelTest, ReadsTheServerCostWhereTheSummaryHasIt) {
    // A summary from before server_cost: nothing to show, no problem.
    const SummaryView old = read_view(sample_summary());
    EXPECT_EQ(old.server_us_per_cycle(), std::nullopt);
    EXPECT_EQ(old.engine_us_per_cycle(), std::nullopt);
    EXPECT_EQ(old.bottleneck(), std::nullopt);
    lockbench::RunSummary run = sample_run();
    run.server_cost = json::parse(R"({"cycles": 300, "total": {"cpu_us_per_cycle": 12.5},
        "engine": {"cpu_us_per_cycle": 30.25}, "bottleneck": {"side": "engine"}})");
    const SummaryView s = read_view(run.to_json());
    EXPECT_EQ(s.server_us_per_cycle(), 12.5);
    EXPECT_EQ(s.engine_us_per_cycle(), 30.25);
    EXPECT_EQ(s.bottleneck(), "engine");
    // No server measured: total is null.
    (*run.server_cost)["total"] = nullptr;
    EXPECT_EQ(read_view(run.to_json()).server_us_per_cycle(), std::nullopt);
}

TEST(ResultsModelTest, ReadsEveryFieldTheDashboardDraws) {
    SummaryView s = read_view(sample_summary());
    EXPECT_EQ(s.strategy, "set_nx_px");
    EXPECT_EQ(s.scenario, "pause");
    EXPECT_DOUBLE_EQ(s.cycles_per_s, 120.0);
    EXPECT_DOUBLE_EQ(s.release.max, 9);
    ASSERT_EQ(s.timeseries.size(), 3u);
    ASSERT_EQ(s.faults.size(), 2u);
    EXPECT_EQ(fault_label(s.faults[0]), "pause client c3");
    EXPECT_DOUBLE_EQ(fault_end_s(s.faults[0]), 1.5);
    // Never healed before the run ended: drawn as the instant it began.
    EXPECT_EQ(s.faults[1].end_s, std::nullopt);
    EXPECT_DOUBLE_EQ(fault_end_s(s.faults[1]), 2.0);
    EXPECT_EQ(s.validity, Validity::invalid);
    ASSERT_EQ(s.verdict.witnesses.size(), 1u);
    EXPECT_EQ(s.outcome(), "violates:mutual_exclusion");
    // as_expected is null: unknown. The engine judged it; the dashboard does not judge again.
    EXPECT_EQ(s.met_expectation(), std::nullopt);
    lockbench::RunSummary met = sample_run();
    met.as_expected = true;
    EXPECT_EQ(read_view(met.to_json()).met_expectation(), std::optional<bool>(true));
}

// The targets as the engine's nemesis writes them (NemesisContext::open_window), in words.
TEST(ResultsModelTest, FaultLabelsAreWordsFromTheFaultsFieldsNotJson) {
    const auto label = [](const char* fault, const char* target) {
        lockbench::RunSummary run = sample_run();
        run.faults = {{.fault = fault,
                       .target = target ? json::parse(target) : json(),
                       .start_s = 1,
                       .end_s = 2}};
        return fault_label(read_view(run.to_json()).faults.at(0));
    };
    EXPECT_EQ(label("pause-client", R"({"client":1,"process":1})"), "pause client 1 (process 1)");
    EXPECT_EQ(label("pause-client", R"({"holder":"k0"})"), "pause client the holder of k0");
    EXPECT_EQ(label("kill-etcd", R"({"node":0,"role":"leader"})"), "kill etcd node 0 (leader)");
    EXPECT_EQ(label("stall", R"({"client":2,"point":"in-release"})"),
              "stall client 2 (at in-release)");
    EXPECT_EQ(label("pause-server", R"({"node":1})"), "pause server node 1");
    EXPECT_EQ(label("kill-cluster-master", R"({"master_of":"k0"})"), "kill cluster master of k0");
    EXPECT_EQ(label("partition-hosts", R"({"shape":"hosts"})"), "partition hosts");
    EXPECT_EQ(label("partition", R"("the network")"), "partition the network");
    EXPECT_EQ(label("pause-server", R"("leader")"), "pause server leader");
    EXPECT_EQ(label("reset-connections", nullptr), "reset connections");
}

// The checker keeps at most 100 witnesses per check but counts every violation; the matrix shows
// the count, not the length of the witness list.
TEST(ResultsModelTest, ViolationCountIsTheCheckersCountNotTheWitnessList) {
    EXPECT_EQ(read_view(sample_summary()).violation_count, 1u);
    lockbench::RunSummary run = sample_run();
    run.verdict.checks = {{"mutual_exclusion", {{"valid", false}, {"violations", 4000}}},
                          {"resource", {{"valid", false}, {"violations", 12}}},
                          {"fencing", {{"valid", true}, {"violations", 0}}}};
    const SummaryView s = read_view(run.to_json());
    EXPECT_EQ(s.verdict.witnesses.size(), 1u);
    EXPECT_EQ(s.violation_count, 4012u);
    EXPECT_EQ(s.outcome(), "violates:mutual_exclusion,resource");
}

TEST(ResultsModelTest, PartialLastBucketIsScaledAndSliversDropped) {
    SummaryView s = read_view(sample_summary());
    auto rate = s.rate_series();
    ASSERT_EQ(rate.size(), 3u);
    EXPECT_DOUBLE_EQ(rate[2].cycles, 100.0);  // 50 cycles in the last 0.5 s
    s.duration_s = 2.05;
    EXPECT_EQ(s.rate_series().size(), 2u);
}

// Summaries of older lockbench versions: the fields added since whose absence has one meaning
// read as that meaning; one the strict reader needs is an error naming it.
TEST(ResultsModelTest, AnOlderSummaryReadsOrNamesTheFieldItLacks) {
    json before_connections = sample_summary();
    before_connections.erase("connections");
    before_connections.erase("notes");
    before_connections.erase("expected");
    before_connections.erase("as_expected");
    const SummaryView s = read_view(before_connections);
    EXPECT_EQ(s.connections_mode, "per-client");
    EXPECT_EQ(s.connections_per_server, 4);
    EXPECT_TRUE(s.notes.empty());
    EXPECT_EQ(s.expected, std::nullopt);
    EXPECT_EQ(s.outcome(), "violates:mutual_exclusion");

    json before_fairness = sample_summary();
    before_fairness.erase("fairness");
    try {
        read_view(before_fairness);
        FAIL() << "a summary without fairness was read";
    } catch (const SummaryError& e) {
        EXPECT_STREQ(e.what(), "r/summary.json: /fairness: missing");
    }
}

TEST(ResultsModelTest, WrongTypesNameTheFileAndTheirPath) {
    json j = sample_summary();
    j["latency_ms"]["acquire"]["p50"] = "fast";
    try {
        read_view(j);
        FAIL() << "no error";
    } catch (const SummaryError& e) {
        EXPECT_STREQ(e.what(),
                     "r/summary.json: /latency_ms/acquire/p50: must be a number, not a string");
    }
}

TEST(ResultsModelTest, WitnessWindowAndProcessesFromAnyShape) {
    const SummaryView s = read_view(sample_summary());
    auto w = witness_window(s.verdict.witnesses[0].evidence);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->first, 100);
    EXPECT_EQ(w->second, 1200);
    EXPECT_EQ(witness_processes(s.verdict.witnesses[0].evidence),
              (std::vector<std::int64_t>{1, 2}));
    EXPECT_FALSE(witness_window(json::object()).has_value());
}

class ResultsFolderTest : public ::testing::Test {
  protected:
    void write(const fs::path& rel, const std::string& text) {
        fs::create_directories((dir_ / rel).parent_path());
        std::ofstream(dir_ / rel) << text;
    }
    lockbench::testing::TempDir scratch_;
    const fs::path& dir_ = scratch_.path();
};

// A ramp of one strategy at 1 and 4 clients, as its ramp.json has it.
lockbench::RampFile sample_ramp() {
    lockbench::RampFile ramp{.scenario = "baseline", .clients = {1, 4}, .duration_s = 1};
    ramp.curves["fenced"] = {{.clients = 1,
                              .cycles_per_s = 600,
                              .acquire_p50_ms = 0.03,
                              .acquire_p99_ms = 0.08,
                              .fairness = {.clients = 1,
                                           .cycles_min = 600,
                                           .cycles_median = 600,
                                           .cycles_max = 600,
                                           .jain_index = 1.0},
                              .run = "20260101T000000Z-baseline"},
                             {.clients = 4,
                              .cycles_per_s = 1000,
                              .acquire_p50_ms = 0.05,
                              .acquire_p99_ms = 20,
                              .fairness = {.clients = 4},
                              .run = "20260101T000001Z-baseline"}};
    return ramp;
}

TEST_F(ResultsFolderTest, ARampsCurvesAreReadThroughItsOneReader) {
    write("ramp-20260101T000000Z-baseline/ramp.json", sample_ramp().to_json().dump());
    const ResultsScan scan = scan_results(dir_);
    EXPECT_TRUE(scan.errors.empty()) << scan.errors.front();
    ASSERT_EQ(scan.ramps.size(), 1u);
    const Ramp& ramp = scan.ramps[0];
    EXPECT_EQ(ramp.name, "ramp-20260101T000000Z-baseline");
    EXPECT_EQ(ramp.scenario, "baseline");
    EXPECT_EQ(ramp.point_count(), 2u);
    ASSERT_EQ(ramp.curves.at("fenced").size(), 2u);
    EXPECT_EQ(ramp.curves.at("fenced")[1].clients, 4);
    EXPECT_DOUBLE_EQ(ramp.curves.at("fenced")[1].acquire_p99_ms, 20);
    EXPECT_EQ(ramp.curves.at("fenced")[0].fairness.jain_index, 1.0);
    EXPECT_FALSE(ramp.curves.at("fenced")[1].fairness.jain_index);
}

TEST_F(ResultsFolderTest, ARampPointWithoutThroughputIsAnErrorNamingItsPath) {
    json ramp = sample_ramp().to_json();
    ramp["curves"]["fenced"][0].erase("cycles_per_s");
    write("ramp-20260101T000000Z-baseline/ramp.json", ramp.dump());
    const ResultsScan scan = scan_results(dir_);
    EXPECT_TRUE(scan.ramps.empty());
    EXPECT_EQ(scan.errors, std::vector<std::string>{"ramp-20260101T000000Z-baseline/ramp.json: "
                                                    "/curves/fenced/0/cycles_per_s: missing"});
}

TEST_F(ResultsFolderTest, ScansRunsInStartOrderWithInProgressLast) {
    write("20260101T000002Z-b/summary.json", sample_summary().dump());
    write("20260101T000002Z-b/history.jsonl", "");
    lockbench::RunSummary a = sample_run();
    a.strategy = "fenced";
    a.scenario = "a";
    write("20260101T000001Z-a/summary.json", a.to_json().dump());
    write("20260101T000001Z-a/history.jsonl", "");
    write(".tmp-20260101T000003Z-live-123/history.jsonl", "");
    write(".git/x", "");
    write("baseline.json", "{}");
    ResultsScan scan = scan_results(dir_);
    EXPECT_TRUE(scan.errors.empty()) << scan.errors.front();
    ASSERT_EQ(scan.runs.size(), 3u);
    EXPECT_EQ(scan.runs[0].scenario(), "a");
    EXPECT_EQ(scan.runs[1].scenario(), "pause");
    EXPECT_TRUE(scan.runs[2].in_progress);
    EXPECT_EQ(scan.runs[2].scenario(), "live");
}

TEST_F(ResultsFolderTest, BrokenFilesBecomeMessagesNamingTheFile) {
    write("20260101T000001Z-x/summary.json", "{ not json");
    write("20260101T000001Z-x/workload.json", R"({"name":"x","strategy":"redlock"})");
    write("20260101T000002Z-y/history.jsonl", "");
    ResultsScan scan = scan_results(dir_);
    ASSERT_EQ(scan.runs.size(), 2u);
    EXPECT_EQ(scan.runs[0].strategy(), "redlock");
    ASSERT_EQ(scan.errors.size(), 3u);
    EXPECT_NE(scan.errors[0].find("20260101T000001Z-x/summary.json: "), std::string::npos);
    EXPECT_NE(scan.errors[1].find("20260101T000001Z-x/history.jsonl: missing"), std::string::npos);
    EXPECT_NE(scan.errors[2].find("20260101T000002Z-y/summary.json: missing"), std::string::npos);
}

TEST_F(ResultsFolderTest, AMistypedIncidentFieldIsAnErrorNamingItsPath) {
    json summary = sample_summary();
    summary["verdict"]["checks"]["mutual_exclusion"] = {
        {"incidents", 1}, {"incident_list", {{{"key", "k0"}, {"process", "one"}}}}};
    write("20260101T000001Z-x/summary.json", summary.dump());
    write("20260101T000001Z-x/history.jsonl", "");
    const ResultsScan scan = scan_results(dir_);
    ASSERT_EQ(scan.runs.size(), 1u);
    EXPECT_FALSE(scan.runs[0].summary.has_value());
    ASSERT_EQ(scan.errors.size(), 1u);
    EXPECT_EQ(scan.errors[0],
              "20260101T000001Z-x/summary.json: /verdict/checks/mutual_exclusion/incident_list/0/"
              "process: must be an integer, not a string");
}

// A summary the strict reader rejects (here, one of the first days' without `fairness`): its run is
// still listed, by what workload.json says, and the error names the folder and the field.
TEST_F(ResultsFolderTest, ARejectedSummaryIsAnErrorNamingTheFieldAndTheRunStaysListed) {
    json summary = sample_summary();
    summary.erase("fairness");
    write("20260101T000001Z-x/summary.json", summary.dump());
    write("20260101T000001Z-x/workload.json", R"({"name":"x","strategy":"redlock"})");
    write("20260101T000001Z-x/history.jsonl", "");
    const ResultsScan scan = scan_results(dir_);
    ASSERT_EQ(scan.runs.size(), 1u);
    EXPECT_FALSE(scan.runs[0].summary.has_value());
    EXPECT_EQ(scan.runs[0].strategy(), "redlock");
    EXPECT_EQ(scan.errors,
              std::vector<std::string>{"20260101T000001Z-x/summary.json: /fairness: missing"});
}

TEST_F(ResultsFolderTest, EmptyAndMissingFoldersSaySo) {
    EXPECT_NE(scan_results(dir_).errors.at(0).find("no runs yet"), std::string::npos);
    EXPECT_NE(scan_results(dir_ / "nope").errors.at(0).find("not a results folder"),
              std::string::npos);
}

}  // namespace
}  // namespace lockbench::dashboard
