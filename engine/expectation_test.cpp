#include "expectation.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

using nlohmann::json;

json report(bool me, bool fencing, bool resource, std::vector<std::string> kinds = {}) {
    json violations = json::array();
    for (const auto& k : kinds)
        violations.push_back({{"kind", k}});
    bool all = me && fencing && resource && kinds.empty();
    return {{"valid", all},
            {"checks",
             {{"mutual_exclusion", {{"valid", me}}},
              {"fencing", {{"valid", fencing}}},
              {"resource", {{"valid", resource}}},
              {"liveness", {{"valid", kinds.empty()}}}}},
            {"violations", violations}};
}

TEST(ExpectationTest, ParsesTermsAndRejectsUnknownOnes) {
    EXPECT_EQ(Expectation::parse("safe").terms.size(), 1u);
    EXPECT_EQ(Expectation::parse("violates:mutual_exclusion,safe:resource").terms.size(), 2u);
    EXPECT_THROW(Expectation::parse("unsafe"), std::invalid_argument);
    EXPECT_THROW(Expectation::parse("violates:everything"), std::invalid_argument);
    EXPECT_THROW(Expectation::parse(""), std::invalid_argument);
}

TEST(ExpectationTest, JudgesAReportExactly) {
    auto clean = report(true, true, true);
    auto overlap = report(false, true, false, {"mutual-exclusion", "lost-update"});
    auto saved = report(false, true, true, {"mutual-exclusion"});
    auto deadlock = report(true, true, true, {"deadlock"});

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
    json unknown = {{"valid", "unknown"}, {"violations", json::array()}};
    EXPECT_EQ(Expectation::parse("safe").met_by(unknown), std::nullopt);
    EXPECT_EQ(Expectation::parse("violates:linearizability").met_by(report(true, true, true)),
              std::nullopt);
    EXPECT_EQ(Expectation::parse("violates:linearizability,violates:fencing")
                  .met_by(report(true, true, true)),
              false);
}

}  // namespace
}  // namespace lockbench
