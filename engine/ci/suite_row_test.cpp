#include "engine/ci/suite_row.hpp"

#include <string>

#include <gtest/gtest.h>

#include "engine/ci/suite.hpp"

namespace lockbench {
namespace {

using nlohmann::json;

SuiteRow a_run() {
    return {.scenario = "t1-holder-paused",
            .strategy = "set_nx_px",
            .dir = "t1-holder-paused.set_nx_px",
            .cycles_per_s = 397.5,
            .cycles_per_second = {400, 395},
            .duration_s = 2.5,
            .faults = true,
            .acquire_p50_ms = 0.05,
            .acquire_p99_ms = 231.25,
            .server_us_per_cycle = 86.0,
            .bottleneck = "server",
            .valid = checker::Verdict::Invalid,
            .violations = 315,
            .violation_kinds = {"mutual_exclusion", "resource"},
            .linearizability = checker::Verdict::Valid,
            .expected = "violates:mutual_exclusion",
            .as_expected = true,
            .attempts = 2,
            .wall_s = 4.5};
}

// suite.json's row as the gate, the dashboard and scripts read it: every field, its JSON type
// (a whole number of cycles stays an integer, a verdict its word), none added, none renamed.
TEST(SuiteRowTest, ARunsRowIsWrittenAsSuiteJsonHasIt) {
    EXPECT_EQ(a_run().to_json().dump(),
              R"({"acquire_p50_ms":0.05,"acquire_p99_ms":231.25,"as_expected":true,"attempts":2,)"
              R"("bottleneck":"server","cycles_per_s":397.5,"cycles_per_second":[400,395],)"
              R"("dir":"t1-holder-paused.set_nx_px","duration_s":2.5,)"
              R"("expected":"violates:mutual_exclusion","faults":true,"linearizability":true,)"
              R"("scenario":"t1-holder-paused","server_us_per_cycle":86.0,)"
              R"("strategy":"set_nx_px","unknown_reasons":[],"valid":false,)"
              R"("violation_kinds":["mutual_exclusion","resource"],"violations":315,)"
              R"("wall_s":4.5})");
    SuiteRow unmeasured = a_run();
    unmeasured.server_us_per_cycle.reset();
    unmeasured.bottleneck.reset();
    unmeasured.linearizability.reset();
    unmeasured.as_expected.reset();
    unmeasured.valid = checker::Verdict::Unknown;
    const json j = unmeasured.to_json();
    EXPECT_EQ(j["server_us_per_cycle"], nullptr);
    EXPECT_EQ(j["bottleneck"], nullptr);
    EXPECT_EQ(j["linearizability"], "not-run");
    EXPECT_EQ(j["as_expected"], nullptr);
    EXPECT_EQ(j["valid"], "unknown");
}

// What to_json writes, from_json reads back whole: a single run, a run of a repeated suite with
// its round, and a repeated pair with its counts.
TEST(SuiteRowTest, FromJsonReadsBackWhatToJsonWrote) {
    const SuiteRow run = a_run();
    EXPECT_EQ(SuiteRow::from_json(run.to_json(), "suite.json", "/runs/0").to_json(), run.to_json());

    SuiteRow round = a_run();
    round.round = 2;
    const SuiteRow round_read = SuiteRow::from_json(round.to_json(), "suite.json", "/runs/0");
    EXPECT_EQ(round_read.round, 2);
    EXPECT_FALSE(round_read.repeated);
    EXPECT_EQ(round_read.to_json()["repeat"], 2);

    SuiteRow pair = a_run();
    pair.repeated = RepeatedRuns{
        .repeat = 3,
        .runs = 3,
        .dirs = {"a.r1", "a.r2", "a.r3"},
        .violated_runs = 2,
        .as_expected_runs = 2,
        .checks = {{"mutual_exclusion",
                    {.counts = {.violated = 2, .valid = 1, .unknown = 0, .not_applicable = 0},
                     .runs = 3}}},
        .rate_terms = {{.term = "violates:mutual_exclusion in >= 2 of 3",
                        .held = 2,
                        .undecided = 0,
                        .runs = 3,
                        .met = true}}};
    const json written = pair.to_json();
    EXPECT_EQ(written["repeat"], 3);
    EXPECT_EQ(written["checks"],
              json::parse(R"({"mutual_exclusion": {"violated": 2, "valid": 1, "unknown": 0,
                                                   "not_applicable": 0, "runs": 3}})"));
    const SuiteRow pair_read = SuiteRow::from_json(written, "suite.json", "/runs/0");
    ASSERT_TRUE(pair_read.repeated);
    EXPECT_FALSE(pair_read.round);
    EXPECT_EQ(pair_read.repeated->rate_terms.at(0).met, true);
    EXPECT_EQ(pair_read.to_json(), written);
}

std::string error_of(const json& row) {
    try {
        SuiteRow::from_json(row, "suite.json", "/runs/1");
    } catch (const SuiteInputError& e) {
        return e.what();
    }
    return "read without an error";
}

// A mistyped field is one error naming the file and the field's JSON path, never a default
// quietly read in its place (a typo'd verdict is not "unknown", a string is not "as expected").
TEST(SuiteRowTest, AMistypedFieldIsAnErrorNamingItsJsonPath) {
    json row = a_run().to_json();
    row["as_expected"] = "yes";
    EXPECT_EQ(error_of(row),
              "suite.json: /runs/1/as_expected: must be true, false or null, not a string");
    row = a_run().to_json();
    row["valid"] = "maybe";
    EXPECT_EQ(error_of(row),
              "suite.json: /runs/1/valid: must be true, false, \"unknown\" or "
              "\"not-applicable\", not \"maybe\"");
    row = a_run().to_json();
    row["cycles_per_second"] = json::array({400, -1});
    EXPECT_EQ(error_of(row),
              "suite.json: /runs/1/cycles_per_second/1: must be a whole number of cycles, not -1");
    row = a_run().to_json();
    row["violation_kinds"] = json::array({"resource", 3});
    EXPECT_EQ(error_of(row),
              "suite.json: /runs/1/violation_kinds/1: must be a string, not a number");
    row = a_run().to_json();
    row["cycles_per_s"] = "fast";
    EXPECT_EQ(error_of(row), "suite.json: /runs/1/cycles_per_s: must be a number, not a string");
    row = a_run().to_json();
    row["runs"] = 3;
    row["rate_terms"] = json::parse(R"([{"term": "t", "held": 1, "undecided": 0, "runs": 3,
                                         "met": "no"}])");
    EXPECT_EQ(error_of(row),
              "suite.json: /runs/1/rate_terms/0/met: must be true, false or null, not a string");
}

// The table and JUnit read a table through the same reader: the row's path in the error.
TEST(SuiteRowTest, TheTableOfAMistypedSuiteJsonSaysWhere) {
    json table = {{"interrupted", false},
                  {"runs", json::array({a_run().to_json(), a_run().to_json()})}};
    table["runs"][1]["as_expected"] = 1;
    try {
        format_table(table);
        FAIL() << "formatted";
    } catch (const SuiteInputError& e) {
        EXPECT_EQ(std::string(e.what()),
                  "suite.json: /runs/1/as_expected: must be true, false or null, not a number");
    }
}

}  // namespace
}  // namespace lockbench
