#include "resource.hpp"

#include <gtest/gtest.h>

#include "history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using testing::run_check;

TEST(Resource, IncrementsUnderALockAreValid) {
    ResourceCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"read","key":"k0","value":null,"time":1}
{"type":"ok","process":1,"f":"read","key":"k0","value":null,"time":2}
{"type":"invoke","process":1,"f":"write","key":"k0","value":1,"time":3}
{"type":"ok","process":1,"f":"write","key":"k0","value":1,"time":4}
{"type":"invoke","process":2,"f":"read","key":"k0","value":null,"time":5}
{"type":"ok","process":2,"f":"read","key":"k0","value":1,"time":6}
{"type":"invoke","process":2,"f":"write","key":"k0","value":2,"time":7}
{"type":"ok","process":2,"f":"write","key":"k0","value":2,"time":8}
{"type":"invoke","process":2,"f":"write","key":"k1","value":1,"time":9}
{"type":"ok","process":2,"f":"write","key":"k1","value":1,"time":10}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result(),
              (json{{"valid", true}, {"violations", 0}, {"reads", 2}, {"writes", 3}, {"keys", 2}}));
}

TEST(Resource, ALostUpdateNamesBothWrites) {
    // T1: process 1 read 10 and paused; process 2 read 10 and wrote 11; process 1 then wrote 11.
    ResourceCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"read","key":"k0","value":null,"time":100000000}
{"type":"ok","process":1,"f":"read","key":"k0","value":10,"time":110000000}
{"type":"invoke","process":2,"f":"read","key":"k0","value":null,"time":700000000}
{"type":"ok","process":2,"f":"read","key":"k0","value":10,"time":710000000}
{"type":"invoke","process":2,"f":"write","key":"k0","value":11,"time":720000000}
{"type":"ok","process":2,"f":"write","key":"k0","value":11,"time":730000000}
{"type":"invoke","process":1,"f":"write","key":"k0","value":11,"time":1500000000}
{"type":"ok","process":1,"f":"write","key":"k0","value":11,"time":1510000000}
{"type":"invoke","process":3,"f":"write","key":"k0","value":9,"time":1600000000}
{"type":"ok","process":3,"f":"write","key":"k0","value":9,"time":1610000000}
)");
    EXPECT_EQ(check.violation_count(), 2u);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0]["kind"], "resource");
    EXPECT_EQ(v[0]["key"], "k0");
    EXPECT_EQ(v[0]["message"],
              "k0: process 1 wrote 11 at 1.510 s over 11 written by process 2 at 0.730 s: an "
              "update was lost");
    EXPECT_EQ(
        v[0]["witness"],
        (json{
            {"key", "k0"},
            {"overwritten", {{"process", 2}, {"value", 11}, {"time_ns", 730000000}, {"index", 5}}},
            {"write", {{"process", 1}, {"value", 11}, {"time_ns", 1510000000}, {"index", 7}}}}));
    EXPECT_EQ(v[1]["witness"]["write"]["value"], 9);
    EXPECT_EQ(v[1]["witness"]["overwritten"]["value"], 11);
    EXPECT_EQ(check.result()["valid"], false);
}

TEST(Resource, OnlyAcceptedWritesCount) {
    ResourceCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"write","key":"k0","value":11,"time":1}
{"type":"ok","process":1,"f":"write","key":"k0","value":11,"time":2}
{"type":"invoke","process":2,"f":"write","key":"k0","value":11,"time":3}
{"type":"info","process":2,"f":"write","key":"k0","value":11,"time":4,"error":"timeout"}
{"type":"invoke","process":3,"f":"write","key":"k0","value":11,"time":5,"fence":3}
{"type":"fail","process":3,"f":"write","key":"k0","value":11,"time":6,"fence":3,"error":"stale-fence"}
{"type":"invoke","process":4,"f":"write","key":"k0","value":12,"time":7}
{"type":"ok","process":4,"f":"write","key":"k0","value":12,"time":8}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["writes"], 2);
}

TEST(Resource, KeepsAtMostMaxViolationsWitnesses) {
    ResourceCheck check(1);
    run_check(check, R"(
{"type":"invoke","process":1,"f":"write","key":"k0","value":5,"time":1}
{"type":"ok","process":1,"f":"write","key":"k0","value":5,"time":2}
{"type":"invoke","process":1,"f":"write","key":"k0","value":5,"time":3}
{"type":"ok","process":1,"f":"write","key":"k0","value":5,"time":4}
{"type":"invoke","process":1,"f":"write","key":"k0","value":4,"time":5}
{"type":"ok","process":1,"f":"write","key":"k0","value":4,"time":6}
)");
    EXPECT_EQ(check.violation_count(), 2u);
    EXPECT_EQ(check.result()["violations"], 2);
    EXPECT_EQ(check.violations().size(), 1u);
}

}  // namespace
}  // namespace lockbench::checker
