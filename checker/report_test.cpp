#include "checker/report.hpp"

#include <gtest/gtest.h>

namespace lockbench::checker {
namespace {

using nlohmann::json;

// compare's table, a repeated suite's lines and Report::from_json list checks in one order: the
// described one, then those this build does not know, by name.
TEST(Report, ChecksComeInTheDescribedOrderThenTheUnknownOnesByName) {
    EXPECT_EQ(
        Report::in_check_order({"zeta", "resource", "liveness", "alpha", "mutual_exclusion"}),
        (std::vector<std::string>{"mutual_exclusion", "resource", "liveness", "alpha", "zeta"}));
    EXPECT_EQ(Report::in_check_order({}), std::vector<std::string>{});

    const Report read = Report::from_json(
        json{{"checks", {{"zeta", json::object()}, {"linearizability", json::object()}}}});
    ASSERT_EQ(read.checks.size(), 2u);
    EXPECT_EQ(read.checks[0].name, "linearizability");
    EXPECT_EQ(read.checks[1].name, "zeta");
}

// A run whose adapter reported late grants says how many the check placed (HISTORY.md).
TEST(Report, TheLinearizabilityLineCountsTheLateGrantsPlaced) {
    const auto line_of = [](const json& linearizability) {
        const std::string text = format_report(Report::from_json(
            json{{"valid", true}, {"checks", {{"linearizability", linearizability}}}}));
        const auto at = text.find("linearizability");
        return at == std::string::npos ? text : text.substr(at, text.find('\n', at) - at);
    };
    const json check{
        {"valid", true}, {"model", "mutex"}, {"ops", 87}, {"keys", 2}, {"elapsed_s", 0.0}};
    EXPECT_EQ(line_of(check).find("late grant"), std::string::npos) << line_of(check);
    json placed = check;
    placed["late_grants_placed"] = 2;
    EXPECT_NE(line_of(placed).find("mutex, 87 ops on 2 keys, 0.00 s, 2 late grants placed"),
              std::string::npos)
        << line_of(placed);
    placed["abandoned_acquires_placed"] = 1;
    EXPECT_NE(line_of(placed).find("0.00 s, 2 late grants placed, 1 abandoned acquire placed"),
              std::string::npos)
        << line_of(placed);
}

}  // namespace
}  // namespace lockbench::checker
