#include "engine/run/expectation.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using nlohmann::json;

// A report as the checker writes it: per check its verdict and the processes in its violations.
json check(bool valid, json processes = json::array()) {
    return {{"valid", valid}, {"violations", valid ? 0 : 1}, {"processes", processes}};
}

checker::Report report(json me, json fencing, json resource, json liveness) {
    const bool all = me["valid"] == true && fencing["valid"] == true && resource["valid"] == true &&
                     liveness["valid"] == true;
    return checker::Report::from_json({{"valid", all},
                                       {"checks",
                                        {{"mutual_exclusion", me},
                                         {"fencing", fencing},
                                         {"resource", resource},
                                         {"liveness", liveness}}},
                                       {"violations", json::array()}});
}

json liveness(int deadlocks, json holders = json::array()) {
    return {{"valid", deadlocks == 0},       {"violations", deadlocks}, {"deadlocks", deadlocks},
            {"deadlock_processes", holders}, {"processes", holders},    {"starved", 0},
            {"starvation_bound_ms", nullptr}};
}

TEST(ExpectationTest, ParsesTermsAndRejectsUnknownOnes) {
    EXPECT_EQ(Expectation::parse("safe").terms.size(), 1u);
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion,safe:resource").terms.size(), 2u);
    EXPECT_EQ(Expectation::parse("violates:linearizability,saves:fencing").terms.size(), 2u);
    EXPECT_THROW(Expectation::parse("unsafe"), std::invalid_argument);
    EXPECT_THROW(Expectation::parse("violates:everything"), std::invalid_argument);
    EXPECT_THROW(Expectation::parse("saves:resource"), std::invalid_argument);
    EXPECT_THROW(Expectation::parse(""), std::invalid_argument);
}

TEST(ExpectationTest, JudgesAReportExactly) {
    auto clean = report(check(true), check(true), check(true), liveness(0));
    auto overlap = report(check(false, {1, 2}), check(true), check(false, {1, 2}), liveness(0));
    auto saved = report(check(false, {1, 2}), check(true), check(true), liveness(0));
    auto deadlock = report(check(true), check(true), check(true), liveness(1, {4}));

    EXPECT_EQ(Expectation::parse("safe").met_by(clean), true);
    EXPECT_EQ(Expectation::parse("safe").met_by(overlap), false);
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion").met_by(overlap), true);
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion").met_by(clean), false);
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion,safe:resource").met_by(saved), true);
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion,safe:resource").met_by(overlap), false);
    EXPECT_EQ(Expectation::parse("deadlocks").met_by(deadlock), true);
    EXPECT_EQ(Expectation::parse("deadlocks").met_by(clean), false);
}

TEST(ExpectationTest, UnknownWhenAJudgeIsMissingButAMissStillDecides) {
    const auto unknown =
        checker::Report::from_json({{"valid", "unknown"}, {"violations", json::array()}});
    const auto clean = report(check(true), check(true), check(true), liveness(0));
    EXPECT_EQ(Expectation::parse("safe").met_by(unknown), std::nullopt);
    EXPECT_EQ(Expectation::parse("violates:linearizability").met_by(clean), std::nullopt);
    EXPECT_EQ(Expectation::parse("violates:linearizability,violates:fencing").met_by(clean), false);
}

TEST(ExpectationTest, AViolationMayShowInEitherOfTheChecksItNames) {
    const auto clean = report(check(true), check(true), check(true), liveness(0));
    const auto only_me = report(check(false, {1, 2}), check(true), check(true), liveness(0));
    const auto only_resource = report(check(true), check(true), check(false, {3}), liveness(0));
    const auto either = Expectation::parse("violates:mutual_exclusion|resource");
    ASSERT_EQ(either.terms.size(), 1u);
    EXPECT_EQ(either.met_by(only_me), true);
    EXPECT_EQ(either.met_by(only_resource), true);
    EXPECT_EQ(either.met_by(clean), false);

    json na = {{"valid", "not-applicable"}, {"violations", 0}, {"reason", "no fences"}};
    const auto no_fences = report(check(true), na, check(true), liveness(0));
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion|fencing").met_by(no_fences),
              std::nullopt);

    // Aimed at a holder, the alternative counts only if it names that holder too.
    FaultEvidence holder;
    holder.aimed_at_holders = true;
    holder.holder_processes = {3};
    EXPECT_EQ(either.met_by(only_resource, holder), true);
    EXPECT_EQ(either.met_by(only_me, holder), false);

    EXPECT_THROW(Expectation::parse("violates:mutual_exclusion|"), std::invalid_argument);
    EXPECT_THROW(Expectation::parse("violates:mutual_exclusion|bogus"), std::invalid_argument);
    EXPECT_THROW(Expectation::parse("safe:mutual_exclusion|resource"), std::invalid_argument);
}

TEST(ExpectationTest, ACheckThatDoesNotApplyCannotBeSafe) {
    json na = {{"valid", "not-applicable"}, {"violations", 0}, {"reason", "no fences"}};
    const auto r = report(check(true), na, check(true), liveness(0));
    EXPECT_EQ(Expectation::parse("safe:fencing").met_by(r), std::nullopt);
    EXPECT_EQ(Expectation::parse("violates:fencing").met_by(r), std::nullopt);
}

TEST(ExpectationTest, SafetyMeansNothingWhenAFaultNeverFired) {
    const auto clean = report(check(true), check(true), check(true), liveness(0));
    const auto overlap = report(check(false, {1, 2}), check(true), check(true), liveness(0));
    FaultEvidence unfired;
    unfired.conclusive = false;
    EXPECT_EQ(Expectation::parse("safe").met_by(clean, unfired), std::nullopt);
    EXPECT_EQ(Expectation::parse("safe:resource").met_by(clean, unfired), std::nullopt);
    // Nor does the absence of the violation the fault was to cause...
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion").met_by(clean, unfired), std::nullopt);
    // ...but a violation found anyway is found.
    EXPECT_EQ(Expectation::parse("safe").met_by(overlap, unfired), false);
}

TEST(ExpectationTest, AViolationCountsOnlyIfItInvolvesTheFaultedHolder) {
    const auto overlap = report(check(false, {1, 2}), check(true), check(true), liveness(0));
    FaultEvidence paused_3;
    paused_3.aimed_at_holders = true;
    paused_3.holder_processes = {3};
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion").met_by(overlap, paused_3), false);
    FaultEvidence paused_2 = paused_3;
    paused_2.holder_processes = {2};
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion").met_by(overlap, paused_2), true);
    // A deadlock too must be the faulted holder's orphan.
    const auto orphan_4 = report(check(true), check(true), check(true), liveness(1, {4}));
    EXPECT_EQ(Expectation::parse("deadlocks").met_by(orphan_4, paused_3), false);
}

TEST(ExpectationTest, AFenceSaveCountsOnlyForTheFaultedWriter) {
    json fencing = check(true);
    fencing["saves"] = 1;
    fencing["saved_processes"] = json{5};
    const auto r = report(check(false, {5, 6}), fencing, check(true), liveness(0));
    FaultEvidence paused_5;
    paused_5.aimed_at_holders = true;
    paused_5.holder_processes = {5};
    EXPECT_EQ(Expectation::parse("saves:fencing").met_by(r, paused_5), true);
    paused_5.holder_processes = {6};
    EXPECT_EQ(Expectation::parse("saves:fencing").met_by(r, paused_5), false);
    json none = check(true);
    none["saves"] = 0;
    none["saved_processes"] = json::array();
    EXPECT_EQ(Expectation::parse("saves:fencing")
                  .met_by(report(check(true), none, check(true), liveness(0))),
              false);
}

TEST(ExpectationTest, EvidenceComesFromTheNemesisReport) {
    const json nemesis = json::parse(R"([
        {"fault": "pause-client", "target": {"holder": "k0"}, "at_s": 0.5, "due": 1,
         "took_effect": 1, "missed": null, "processes": [4]},
        {"fault": "kill-server", "target": {"node": 0}, "at_s": 1, "due": 1, "took_effect": 0,
         "missed": "1 of 1 firing(s) never took effect: ..."}
    ])");
    const FaultEvidence e = FaultEvidence::from_nemesis_report(nemesis);
    EXPECT_FALSE(e.conclusive);
    EXPECT_TRUE(e.aimed_at_holders);
    EXPECT_EQ(e.holder_processes, (std::vector<std::int64_t>{4}));
}

}  // namespace
}  // namespace lockbench
