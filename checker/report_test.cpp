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

}  // namespace
}  // namespace lockbench::checker
