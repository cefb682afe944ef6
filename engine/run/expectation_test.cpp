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

TEST(ExpectationTest, ALinearizabilityViolationCountsForAHolderInFlightThoughNotRefuting) {
    // T8: holder 0 was paused and its late unlock deleted 5's lock; the refutation itself names
    // only 5's ops, `processes` every process with an op in flight in the refuted window.
    auto lin = [](json processes) {
        json c = check(false, std::move(processes));
        c["refuting_processes"] = json{5};
        return checker::Report::from_json({{"valid", false},
                                           {"checks", {{"linearizability", c}}},
                                           {"violations", json::array()}});
    };
    FaultEvidence paused_0;
    paused_0.aimed_at_holders = true;
    paused_0.holder_processes = {0};
    const auto expectation = Expectation::parse("violates:linearizability");
    EXPECT_EQ(expectation.met_by(lin(json{0, 5}), paused_0), true);
    EXPECT_EQ(expectation.met_by(lin(json{5}), paused_0), false);
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

TEST(ExpectationTest, ARateTermParsesAndBadRatesAreRefusedNamingTheTerm) {
    const auto e =
        Expectation::parse("violates:linearizability,violates:mutual_exclusion in >= 3 of 5");
    ASSERT_EQ(e.terms.size(), 2u);
    EXPECT_FALSE(e.terms[0].rate.has_value());
    ASSERT_TRUE(e.terms[1].rate.has_value());
    EXPECT_TRUE(e.terms[1].rate->at_least);
    EXPECT_EQ(e.terms[1].rate->k, 3);
    EXPECT_EQ(e.terms[1].rate->n, 5);
    EXPECT_EQ(e.terms[1].check, "mutual_exclusion");
    EXPECT_EQ(e.rate_texts(), "violates:mutual_exclusion in >= 3 of 5");
    EXPECT_TRUE(e.has_rates());
    EXPECT_FALSE(Expectation::parse("safe").has_rates());
    EXPECT_FALSE(e.only_rates());
    EXPECT_TRUE(Expectation::parse("violates:mutual_exclusion in >= 2 of 3").only_rates());
    EXPECT_FALSE(Expectation::parse("safe").only_rates());
    const auto at_most = Expectation::parse("safe in <= 0 of 4");
    EXPECT_FALSE(at_most.terms[0].rate->at_least);

    struct Bad {
        const char* text;
        const char* says;
    };
    for (const Bad& bad : {
             Bad{"violates:mutual_exclusion in 3 of 5", "a rate reads"},
             Bad{"violates:mutual_exclusion in >= 3 out of 5", "a rate reads"},
             Bad{"violates:mutual_exclusion in >= 3 of", "a rate reads"},
             Bad{"violates:mutual_exclusion in >= x of 5", "'x' is not a whole number"},
             Bad{"violates:mutual_exclusion in >= -1 of 5", "'-1' is not a whole number"},
             Bad{"violates:mutual_exclusion in >= 6 of 5", "0 <= K <= N"},
             Bad{"violates:mutual_exclusion in >= 0 of 0", "0 <= K <= N"},
             Bad{"violates:bogus in >= 1 of 5", "'violates:bogus' is not"},
         }) {
        try {
            Expectation::parse(bad.text);
            ADD_FAILURE() << bad.text << " was accepted";
        } catch (const std::invalid_argument& refused) {
            EXPECT_NE(std::string(refused.what()).find(bad.says), std::string::npos)
                << bad.text << ": " << refused.what();
        }
    }
}

TEST(ExpectationTest, OneRunLeavesRateTermsUnjudged) {
    const auto clean = report(check(true), check(true), check(true), liveness(0));
    const auto overlap = report(check(false, {1, 2}), check(true), check(true), liveness(0));
    const auto mixed = Expectation::parse("safe:resource,violates:mutual_exclusion in >= 1 of 5");
    // The plain term decides one run, whatever the rate term's outcome in it.
    EXPECT_EQ(mixed.met_by(clean), true);
    EXPECT_EQ(mixed.met_by(overlap), true);
    EXPECT_EQ(mixed.terms_met_by(clean), (std::vector<std::optional<bool>>{true, false}));
    EXPECT_EQ(mixed.terms_met_by(overlap), (std::vector<std::optional<bool>>{true, true}));
    // Only rates: one run cannot say.
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion in >= 1 of 5").met_by(overlap),
              std::nullopt);
}

TEST(ExpectationTest, RepeatedRunsJudgeRatesAndEveryRunForPlainTerms) {
    using Runs = std::vector<std::vector<std::optional<bool>>>;
    const auto e =
        Expectation::parse("violates:linearizability,violates:mutual_exclusion in >= 3 of 5");
    // 3 of 5 is 60 %: 2 of 3 runs (67 %) is enough, 1 of 3 is not.
    EXPECT_EQ(e.met_across(Runs{{true, true}, {true, false}, {true, true}}), true);
    EXPECT_EQ(e.met_across(Runs{{true, true}, {true, false}, {true, false}}), false);
    EXPECT_EQ(
        e.met_across(Runs{{true, true}, {true, true}, {true, true}, {true, false}, {true, false}}),
        true);
    // A plain term must hold in every run.
    EXPECT_EQ(e.met_across(Runs{{true, true}, {false, true}, {true, true}}), false);
    EXPECT_EQ(e.met_across(Runs{{true, true}, {std::nullopt, true}, {true, true}}), std::nullopt);
    // Undecided runs count only where they change nothing: 1 held + 1 undecided of 3 could be
    // 67 % or 33 %.
    EXPECT_EQ(e.met_across(Runs{{true, true}, {true, std::nullopt}, {true, false}}), std::nullopt);
    EXPECT_EQ(e.met_across(Runs{{true, false}, {true, std::nullopt}, {true, false}}), false);
    EXPECT_EQ(e.met_across(Runs{}), std::nullopt);

    const auto rarely = Expectation::parse("violates:mutual_exclusion in <= 1 of 5");
    EXPECT_EQ(rarely.met_across(Runs{{false}, {false}, {false}, {false}, {true}}), true);
    EXPECT_EQ(rarely.met_across(Runs{{false}, {false}, {false}, {true}, {true}}), false);
    EXPECT_EQ(rarely.met_across(Runs{{false}, {false}, {false}, {false}, {std::nullopt}}), true);
    EXPECT_EQ(rarely.met_across(Runs{{true}, {false}, {false}, {false}, {std::nullopt}}),
              std::nullopt);
    // With one run, a rate is judged like any other: k of 1 against K/N.
    EXPECT_EQ(rarely.met_across(Runs{{true}}), false);
    EXPECT_EQ(Expectation::rate_met({true, 1, 5}, 1, 0, 1), true);
}

TEST(ExpectationTest, EvidenceComesFromTheNemesisReport) {
    const std::vector<FaultFiring> nemesis = {
        {.fault = "pause-client",
         .target = {{"holder", "k0"}},
         .at_s = 0.5,
         .due = 1,
         .took_effect = 1,
         .processes = std::vector<std::int64_t>{4}},
        {.fault = "kill-server",
         .target = {{"node", 0}},
         .at_s = 1,
         .due = 1,
         .took_effect = 0,
         .missed = "1 of 1 firing(s) never took effect: ..."}};
    const FaultEvidence e = FaultEvidence::from_nemesis_report(nemesis);
    EXPECT_FALSE(e.conclusive);
    EXPECT_TRUE(e.aimed_at_holders);
    EXPECT_EQ(e.holder_processes, (std::vector<std::int64_t>{4}));
}

}  // namespace
}  // namespace lockbench
