// compare.json's one writer and one reader: a comparison with every part filled reads back
// through the strict reader and writes again byte for byte, a file written before the fields
// added since reads with their one meaning, and a field missing or of the wrong type - or a
// format or version this build does not know - is a CompareError naming the file and the
// field's JSON path. (A real comparison's compare.json is read back in compare_scenario_test.)

#include "engine/results/compare_file.hpp"

#include <string>

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using nlohmann::json;

CompareCounts counts(int violated, int valid, double low, double high) {
    const int runs = violated + valid;
    return {.violated = violated,
            .valid = valid,
            .runs = runs,
            .violation_rate = static_cast<double>(violated) / runs,
            .wilson_95 = {low, high}};
}

// Two strategies at two settings of a one-axis sweep, one run failed, one interrupted, the
// machine measured: every optional part of the format once present and once absent.
CompareFile a_comparison() {
    CompareFile c;
    c.kind = "compare";
    c.scenario = "short-lease";
    c.strategies = {"set_nx_px", "fenced"};
    c.repeat = 1;
    c.duration_s = 0.5;
    c.seed = 7;
    c.sweep = {{.field = "lease_ms", .path = "lease_ms", .values = {2, 5000}}};
    for (double lease : {2.0, 5000.0}) {
        CompareSetting setting;
        setting.at = {{"lease_ms", lease}};
        setting.strategies["set_nx_px"] = {
            .runs = 1,
            .verdict = counts(1, 0, 0.2065, 1),
            .checks = {{"mutual_exclusion", counts(1, 0, 0.2065, 1)}},
            .expected = "violates:mutual_exclusion in >= 1 of 2",
            .as_expected = 0,
            .expectation_met = true,
            .rate_terms = {{.term = "violates:mutual_exclusion in >= 1 of 2",
                            .held = 1,
                            .undecided = 0,
                            .runs = 1,
                            .met = true}},
            .cycles_per_s = {.median = 1200.5, .min = 1200.5, .max = 1200.5},
            .acquire_p99_ms = {.median = 0.25, .min = 0.25, .max = 0.25},
            .server_us_per_cycle = CompareSpread{.median = 12.5, .min = 12.5, .max = 12.5},
            .run_folders = {"20261127T000000Z-short-lease"},
            .reading = "set_nx_px broke mutual exclusion in 1 of 1 runs"};
        setting.strategies["fenced"] = {.runs = 0,
                                        .verdict = {.wilson_95 = {0, 1}},
                                        .run_folders = {},
                                        .reading = "fenced: no run finished"};
        c.settings.push_back(setting);
    }
    c.runs_planned = 4;
    c.runs = {
        {.round = 1,
         .setting = 1,
         .strategy = "set_nx_px",
         .run = "20261127T000000Z-short-lease",
         .verdict = checker::Verdict::Invalid,
         .checks = {{"mutual_exclusion", checker::Verdict::Invalid},
                    {"fencing", checker::Verdict::NotApplicable},
                    {"liveness", checker::Verdict::Unknown}},
         .unknown_reasons = {"a fault never fired"},
         .expected = "violates:mutual_exclusion in >= 1 of 2",
         .as_expected = std::nullopt,
         .cycles_per_s = 1200.5,
         .acquire_p99_ms = 0.25,
         .server_us_per_cycle = 12.5,
         .expected_terms = json::array({{{"term", "violates:mutual_exclusion"}, {"met", true}}}),
         .exit_code = 0}};
    c.failed = {{.round = 1,
                 .setting = 0,
                 .strategy = "fenced",
                 .error = "redis-server: cannot start",
                 .exit_code = 4}};
    c.runs_done = 1;
    c.interrupted = true;
    c.complete = false;
    c.interrupted_run = "20261127T000001Z-short-lease";
    c.yardstick = json{{"not_measured", "--no-yardstick"}};
    c.reading = "set_nx_px violated something at 2 of 2 settings (lease_ms=2, lease_ms=5000)";
    return c;
}

std::string written(const CompareFile& c) {
    return c.to_json().dump(2) + "\n";
}

CompareFile read(const json& j) {
    return CompareFile::from_json(j, "compare.json");
}

// The CompareError from_json throws for `j`, or "" when it reads.
std::string error_of(const json& j) {
    try {
        read(j);
    } catch (const CompareError& e) {
        return e.what();
    }
    return "";
}

TEST(CompareFileTest, EveryPartReadsBackAndWritesAgainByteForByte) {
    const std::string text = written(a_comparison());
    const CompareFile back = read(json::parse(text));
    EXPECT_EQ(written(back), text);
    ASSERT_EQ(back.settings.size(), 2u);
    const CompareStrategyStats* unsafe = back.stats_at("set_nx_px", 1, 0);
    ASSERT_NE(unsafe, nullptr);
    EXPECT_EQ(back.settings[1].at.at("lease_ms"), 5000);
    EXPECT_EQ(unsafe->verdict.violated, 1);
    EXPECT_EQ(unsafe->verdict.wilson_95.first, 0.2065);
    EXPECT_EQ(unsafe->server_us_per_cycle->median, 12.5);
    EXPECT_EQ(unsafe->expectation_met, true);
    ASSERT_EQ(unsafe->rate_terms.size(), 1u);
    EXPECT_EQ(unsafe->rate_terms[0].met, true);
    EXPECT_EQ(back.stats_at("fenced", 0, 0)->server_us_per_cycle.has_value(), false);
    EXPECT_EQ(back.stats_at("fenced", 0, 0)->cycles_per_s.median, std::nullopt);
    EXPECT_EQ(back.stats_at("fenced", 2, 0), nullptr);
    EXPECT_EQ(back.runs.at(0).checks.at("fencing"), checker::Verdict::NotApplicable);
    EXPECT_EQ(back.runs.at(0).as_expected, std::nullopt);
    EXPECT_EQ(back.failed.at(0).exit_code, 4);
    EXPECT_EQ(back.interrupted_run, "20261127T000001Z-short-lease");
    EXPECT_EQ(back.seed, 7u);
}

TEST(CompareFileTest, WithoutTheOptionalPartsNoneIsWritten) {
    CompareFile c = a_comparison();
    c.interrupted_run.reset();
    c.yardstick.reset();
    const json j = c.to_json();
    EXPECT_FALSE(j.contains("interrupted_run"));
    EXPECT_FALSE(j.contains("yardstick"));
    EXPECT_EQ(written(read(j)), written(c));
}

// compare.json before the servers' cost and rate terms were kept: absent means not measured,
// no rate, undecided.
TEST(CompareFileTest, AFileWrittenBeforeTheFieldsAddedSinceReads) {
    json j = a_comparison().to_json();
    json& stats = j["settings"][0]["strategies"]["set_nx_px"];
    stats.erase("server_us_per_cycle");
    stats.erase("rate_terms");
    stats.erase("expectation_met");
    j["runs"][0].erase("server_us_per_cycle");
    j["runs"][0].erase("expected_terms");
    const CompareFile c = read(j);
    const CompareStrategyStats& s = c.settings[0].strategies.at("set_nx_px");
    EXPECT_FALSE(s.server_us_per_cycle.has_value());
    EXPECT_TRUE(s.rate_terms.empty());
    EXPECT_EQ(s.expectation_met, std::nullopt);
    EXPECT_EQ(c.runs[0].server_us_per_cycle, std::nullopt);
    EXPECT_EQ(c.runs[0].expected_terms, json::array());
}

TEST(CompareFileTest, AnotherFormatOrVersionIsRefused) {
    json j = a_comparison().to_json();
    j["format"] = "lockbench-ramp";
    EXPECT_EQ(error_of(j), "compare.json: /format: \"lockbench-ramp\" is not lockbench-compare");
    j = a_comparison().to_json();
    j["version"] = 2;
    EXPECT_EQ(error_of(j), "compare.json: /version: 2 is not one this build reads (1)");
    j.erase("version");
    EXPECT_EQ(error_of(j), "compare.json: /version: missing");
}

TEST(CompareFileTest, NotAnObjectIsRefused) {
    EXPECT_EQ(error_of(json::array()), "compare.json: /: must be an object, not an array");
}

TEST(CompareFileTest, AMissingTopLevelFieldIsNamed) {
    for (const char* field : {"kind", "scenario", "strategies", "repeat", "duration_s", "seed",
                              "confidence", "sweep", "settings", "runs_planned", "runs", "failed",
                              "runs_done", "interrupted", "complete", "reading"}) {
        json j = a_comparison().to_json();
        j.erase(field);
        EXPECT_EQ(error_of(j), std::string("compare.json: /") + field + ": missing");
    }
}

TEST(CompareFileTest, AMissingStrategyFieldIsNamedByItsPath) {
    json j = a_comparison().to_json();
    j["settings"][1]["strategies"]["fenced"].erase("runs");
    EXPECT_EQ(error_of(j), "compare.json: /settings/1/strategies/fenced/runs: missing");
    j = a_comparison().to_json();
    j["settings"][0]["strategies"]["set_nx_px"]["checks"]["mutual_exclusion"].erase("wilson_95");
    EXPECT_EQ(error_of(j),
              "compare.json: /settings/0/strategies/set_nx_px/checks/mutual_exclusion/wilson_95: "
              "missing");
}

TEST(CompareFileTest, AFieldOfTheWrongTypeIsNamedByItsPath) {
    json j = a_comparison().to_json();
    j["settings"][0]["strategies"]["set_nx_px"]["verdict"]["violated"] = "1";
    EXPECT_EQ(error_of(j),
              "compare.json: /settings/0/strategies/set_nx_px/verdict/violated: must be an "
              "integer, not a string");
    j = a_comparison().to_json();
    j["settings"][0]["strategies"]["set_nx_px"]["cycles_per_s"]["median"] = "fast";
    EXPECT_EQ(error_of(j),
              "compare.json: /settings/0/strategies/set_nx_px/cycles_per_s/median: must be a "
              "number, not a string");
    j = a_comparison().to_json();
    j["settings"][0]["strategies"]["set_nx_px"]["server_us_per_cycle"] = 12.5;
    EXPECT_EQ(error_of(j),
              "compare.json: /settings/0/strategies/set_nx_px/server_us_per_cycle: must be an "
              "object, not a number");
    j = a_comparison().to_json();
    j["settings"][0]["at"]["lease_ms"] = "2";
    EXPECT_EQ(error_of(j), "compare.json: /settings/0/at/lease_ms: must be a number, not a string");
    j = a_comparison().to_json();
    j["sweep"][0]["values"][1] = nullptr;
    EXPECT_EQ(error_of(j), "compare.json: /sweep/0/values/1: must be a number, not null");
    j = a_comparison().to_json();
    j["strategies"][1] = 2;
    EXPECT_EQ(error_of(j), "compare.json: /strategies/1: must be a string, not a number");
    j = a_comparison().to_json();
    j["complete"] = "no";
    EXPECT_EQ(error_of(j), "compare.json: /complete: must be true or false, not a string");
}

TEST(CompareFileTest, ARateTermIsRead) {
    json j = a_comparison().to_json();
    j["settings"][0]["strategies"]["set_nx_px"]["rate_terms"][0].erase("met");
    EXPECT_EQ(error_of(j),
              "compare.json: /settings/0/strategies/set_nx_px/rate_terms/0/met: missing");
    j = a_comparison().to_json();
    j["settings"][0]["strategies"]["set_nx_px"]["rate_terms"][0]["held"] = 1.5;
    EXPECT_EQ(error_of(j),
              "compare.json: /settings/0/strategies/set_nx_px/rate_terms/0/held: must be an "
              "integer, not a number");
}

TEST(CompareFileTest, AWilsonIntervalIsTwoNumbers) {
    json j = a_comparison().to_json();
    j["settings"][0]["strategies"]["set_nx_px"]["verdict"]["wilson_95"] = {0.2};
    EXPECT_EQ(error_of(j),
              "compare.json: /settings/0/strategies/set_nx_px/verdict/wilson_95: must be [low, "
              "high], not [0.2]");
}

TEST(CompareFileTest, ARunsVerdictIsOneTheCheckerWrites) {
    json j = a_comparison().to_json();
    j["runs"][0]["checks"]["fencing"] = "n/a";
    EXPECT_EQ(error_of(j),
              "compare.json: /runs/0/checks/fencing: must be true, false, \"unknown\" or "
              "\"not-applicable\", not \"n/a\"");
    j = a_comparison().to_json();
    j["runs"][0].erase("verdict");
    EXPECT_EQ(error_of(j), "compare.json: /runs/0/verdict: missing");
}

TEST(CompareFileTest, AFailuresFieldsAreRequired) {
    json j = a_comparison().to_json();
    j["failed"][0]["exit_code"] = -4;
    EXPECT_EQ(error_of(j),
              "compare.json: /failed/0/exit_code: must be between 0 and 2147483647, not -4");
    j = a_comparison().to_json();
    j["failed"][0].erase("error");
    EXPECT_EQ(error_of(j), "compare.json: /failed/0/error: missing");
}

TEST(CompareFileTest, TheMachineAndTheInterruptedRunHaveTheirTypes) {
    json j = a_comparison().to_json();
    j["yardstick"] = "fast";
    EXPECT_EQ(error_of(j), "compare.json: /yardstick: must be an object, not a string");
    j = a_comparison().to_json();
    j["interrupted_run"] = 3;
    EXPECT_EQ(error_of(j),
              "compare.json: /interrupted_run: must be a string or null, not a number");
}

}  // namespace
}  // namespace lockbench
