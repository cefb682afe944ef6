#include "checker/fencing.hpp"

#include <gtest/gtest.h>

#include "checker/history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using testing::run_check;

// Three consecutive holds of k0 with the given fences, each writing once with its fence.
std::string holds_with_fences(int first, int second, int third) {
    std::string text;
    const int fences[] = {first, second, third};
    for (int i = 0; i < 3; ++i) {
        const std::string p = std::to_string(i + 1);
        const std::string t = std::to_string((i + 1) * 1000);
        const std::string fence = std::to_string(fences[i]);
        text += R"({"type":"invoke","process":)" + p +
                R"(,"f":"acquire","key":"k0","value":null,"time":)" + t + "0}\n";
        text += R"({"type":"ok","process":)" + p +
                R"(,"f":"acquire","key":"k0","value":{"token":"c)" + p + R"(","fence":)" + fence +
                R"(},"time":)" + t + "1}\n";
        text += R"({"type":"invoke","process":)" + p + R"(,"f":"release","key":"k0","time":)" + t +
                "2}\n";
        text +=
            R"({"type":"ok","process":)" + p + R"(,"f":"release","key":"k0","time":)" + t + "3}\n";
    }
    return text;
}

TEST(Fencing, IncreasingFencesAreValid) {
    FencingCheck check;
    run_check(check, holds_with_fences(3, 4, 9));
    EXPECT_EQ(check.violation_count(), 0u);
    const json r = check.result();
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["grants_with_fence"], 3);
    EXPECT_EQ(r["violations"], 0);
}

TEST(Fencing, AFenceThatGoesBackIsAViolation) {
    FencingCheck check;
    run_check(check, holds_with_fences(5, 9, 7));
    ASSERT_EQ(check.violation_count(), 1u);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0]["kind"], "fencing");
    EXPECT_EQ(v[0]["key"], "k0");
    EXPECT_EQ(v[0]["message"],
              "k0: process 3 (token c3) was granted fence 7 at 0.000 s, not above fence 9 "
              "granted to process 2 (token c2) at 0.000 s");
    EXPECT_EQ(v[0]["witness"]["what"], "grant");
    EXPECT_EQ(v[0]["witness"]["earlier"]["fence"], 9);
    EXPECT_EQ(v[0]["witness"]["earlier"]["process"], 2);
    EXPECT_EQ(v[0]["witness"]["later"]["fence"], 7);
    EXPECT_EQ(v[0]["witness"]["later"]["index"], 9);
    EXPECT_EQ(check.result()["repeated_fences"], 1);
}

TEST(Fencing, ARepeatedFenceIsAViolation) {
    FencingCheck check;
    run_check(check, holds_with_fences(5, 9, 9));
    EXPECT_EQ(check.violation_count(), 1u);
    EXPECT_EQ(check.result()["valid"], false);
}

TEST(Fencing, DoesNotApplyWithoutFences) {
    FencingCheck check;
    run_check(check, testing::granted(1, "k0", "a", 1, 2) + testing::write_ok(1, "k0", 1, 3, 4));
    EXPECT_EQ(check.result()["valid"], "not-applicable");
    EXPECT_EQ(check.result()["reason"], "no fencing numbers were issued");
    EXPECT_EQ(check.violation_count(), 0u);
}

TEST(Fencing, GrantsThatOverlapInRealTimeAreNotOrdered) {
    // The grant of fence 5 returned after the grant of 6 was requested: a delayed reply, not a
    // counter that went back. A grant requested after 6 came back must exceed it.
    FencingCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":1}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":2}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b","fence":6},"time":3}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a","fence":5},"time":4}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":null,"time":5}
{"type":"ok","process":3,"f":"acquire","key":"k0","value":{"token":"c","fence":6},"time":6}
)");
    EXPECT_EQ(check.violation_count(), 1u);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0]["witness"]["later"]["process"], 3);
    EXPECT_EQ(v[0]["witness"]["earlier"]["fence"], 6);
    EXPECT_EQ(check.result()["processes"], (json{2, 3}));
}

TEST(Fencing, ANestedGrantKeepsItsFence) {
    FencingCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":1}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a","fence":4},"time":2}
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":3}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a","fence":4},"time":4}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["grants_with_fence"], 1);
}

const char* kAcceptedFence9 = R"(
{"type":"invoke","process":2,"f":"write","key":"k0","value":5,"fence":9,"time":1000000000}
{"type":"ok","process":2,"f":"write","key":"k0","value":5,"fence":9,"time":1100000000}
)";

TEST(Fencing, AnAcceptedStaleWriteIsAViolation) {
    FencingCheck check;
    run_check(check, std::string(kAcceptedFence9) + R"(
{"type":"invoke","process":1,"f":"write","key":"k0","value":5,"fence":7,"time":2000000000}
{"type":"ok","process":1,"f":"write","key":"k0","value":5,"fence":7,"time":2300000000}
)");
    ASSERT_EQ(check.violation_count(), 1u);
    const json v = check.violations()[0];
    EXPECT_EQ(v["message"],
              "k0: the resource accepted a write with fence 7 by process 1 at 2.300 s after it had "
              "accepted fence 9 from process 2 at 1.100 s");
    EXPECT_EQ(v["witness"]["what"], "write");
    EXPECT_EQ(v["witness"]["earlier"]["process"], 2);
    EXPECT_EQ(v["witness"]["later"]["process"], 1);
    EXPECT_EQ(check.result()["stale_writes_accepted"], 1);
    EXPECT_EQ(check.result()["saves"], 0);
}

TEST(Fencing, ARejectedStaleWriteIsASave) {
    FencingCheck check;
    run_check(check, std::string(kAcceptedFence9) + R"(
{"type":"invoke","process":1,"f":"write","key":"k0","value":5,"fence":7,"time":2000000000}
{"type":"fail","process":1,"f":"write","key":"k0","value":5,"fence":7,"time":2300000000,"error":"stale-fence"}
{"type":"invoke","process":3,"f":"write","key":"k0","value":6,"fence":8,"time":2400000000}
{"type":"info","process":3,"f":"write","key":"k0","value":6,"fence":8,"time":2500000000,"error":"timeout"}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["valid"], true);
    EXPECT_EQ(check.result()["saves"], 1);
    EXPECT_EQ(check.result()["saved_processes"], (json{1}));
    EXPECT_EQ(check.result()["writes_with_fence"], 1);
}

TEST(Fencing, ConcurrentWritesAreJudgedByWhatWasAcceptedWhenTheyWereSent) {
    // Fence 7 was sent before fence 9 was accepted: the register may well have taken 7 first,
    // and only the replies came back in the other order.
    FencingCheck check;
    run_check(check, R"(
{"type":"invoke","process":2,"f":"write","key":"k0","value":5,"fence":9,"time":10}
{"type":"invoke","process":1,"f":"write","key":"k0","value":5,"fence":7,"time":20}
{"type":"ok","process":2,"f":"write","key":"k0","value":5,"fence":9,"time":30}
{"type":"ok","process":1,"f":"write","key":"k0","value":5,"fence":7,"time":40}
)");
    EXPECT_EQ(check.violation_count(), 0u);
}

}  // namespace
}  // namespace lockbench::checker
