#include "checker/mutual_exclusion.hpp"

#include <gtest/gtest.h>

#include "checker/history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using namespace testing;  // numbered histories, their builders, run_check

TEST(MutualExclusion, OverlappingExclusiveHoldsAreOneViolationNamingBoth) {
    MutualExclusionCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":400000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"c1-4","mode":"exclusive"},"time":500000000}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":1100000000}
{"type":"ok","process":3,"f":"acquire","key":"k0","value":{"token":"c3-7","mode":"exclusive"},"time":1204000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"c1-4"},"time":1500000000}
{"type":"fail","process":1,"f":"release","key":"k0","value":null,"time":1501000000,"error":"not-held"}
{"type":"invoke","process":3,"f":"release","key":"k0","value":{"token":"c3-7"},"time":2000000000}
{"type":"ok","process":3,"f":"release","key":"k0","value":null,"time":2001000000}
)");
    EXPECT_EQ(check.violation_count(), 1u);
    const json result = check.result();
    EXPECT_EQ(result["valid"], false);
    EXPECT_EQ(result["violations"], 1);
    EXPECT_EQ(result["holds"], 2);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0]["kind"], "mutual_exclusion");
    EXPECT_EQ(v[0]["key"], "k0");
    EXPECT_EQ(v[0]["message"],
              "k0: process 3 (token c3-7) acquired at 1.204 s while process 1 (token c1-4) held "
              "it since 0.500 s");
    const json& w = v[0]["witness"];
    EXPECT_EQ(w["key"], "k0");
    EXPECT_EQ(w["first"], (json{{"process", 1},
                                {"token", "c1-4"},
                                {"mode", "exclusive"},
                                {"start_ns", 500000000},
                                {"end_ns", 1500000000},
                                {"start_index", 1}}));
    EXPECT_EQ(w["second"]["process"], 3);
    EXPECT_EQ(w["second"]["token"], "c3-7");
    EXPECT_EQ(w["second"]["start_ns"], 1204000000);
    EXPECT_EQ(w["second"]["end_ns"], 2000000000);
    EXPECT_EQ(w["second"]["start_index"], 3);
    EXPECT_EQ(w["overlap_ns"], 1500000000 - 1204000000);
}

// A paused holder and the grants made under it: three pairs, one incident (T1's story); a second
// key's overlap is a second incident. The count stays exact when only one is listed.
TEST(MutualExclusion, OverlapsUnderOneHoldAreOneIncident) {
    const std::string history =
        granted(0, "k0", "long", 100000000, 100000000) +
        // Three grants while process 0 holds k0, each released.
        granted(1, "k0", "a", 200000000, 300000000) + released(1, "k0", "a", 310000000, 310000000) +
        granted(2, "k0", "b", 320000000, 400000000) + released(2, "k0", "b", 410000000, 410000000) +
        granted(1, "k0", "c", 420000000, 500000000) + released(1, "k0", "c", 510000000, 510000000) +
        release_failed(0, "k0", "long", 900000000, 900000000, "not-held") +
        granted(3, "k1", "x", 950000000, 950000000) + granted(4, "k1", "y", 960000000, 970000000);
    MutualExclusionCheck check;
    run_check(check, history);
    EXPECT_EQ(check.violation_count(), 4u);
    const json result = check.result();
    EXPECT_EQ(result["incidents"], 2);
    ASSERT_EQ(result["incident_list"].size(), 2u);
    const json& first = result["incident_list"][0];
    EXPECT_EQ(first["key"], "k0");
    EXPECT_EQ(first["process"], 0);
    EXPECT_EQ(first["token"], "long");
    EXPECT_EQ(first["start_ns"], 100000000);
    EXPECT_EQ(first["end_ns"], 900000000);
    EXPECT_EQ(first["grants"], 3);
    EXPECT_EQ(first["processes"], json::parse("[1, 2]"));
    EXPECT_EQ(first["first_overlap_ns"], 300000000);
    EXPECT_EQ(first["last_overlap_ns"], 500000000);
    EXPECT_EQ(first["message"],
              "k0: process 0 (token long) held it from 0.100 s to 0.900 s; 3 grants to processes "
              "1, 2 overlapped it from 0.300 s to 0.500 s");
    EXPECT_EQ(result["incident_list"][1]["message"],
              "k1: process 3 (token x) held it from 0.950 s to the end; 1 grant to process 4 "
              "overlapped it at 0.970 s");

    MutualExclusionCheck capped(1);
    run_check(capped, history);
    EXPECT_EQ(capped.result()["incidents"], 2);
    EXPECT_EQ(capped.result()["incident_list"].size(), 1u);
}

TEST(MutualExclusion, ConsecutiveHoldsAreValid) {
    MutualExclusionCheck check;
    // The second grant comes after the first release's invoke, before its reply: still fine.
    run_check(check, granted(1, "k0", "a", 1, 2) + event("invoke", 2, "acquire", "k0", "null", 3) +
                         event("invoke", 1, "release", "k0", token_value("a"), 4) +
                         event("ok", 2, "acquire", "k0", token_value("b"), 5) +
                         event("ok", 1, "release", "k0", "null", 6) + granted(1, "k1", "c", 7, 8));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["valid"], true);
    EXPECT_EQ(check.result()["holds"], 3);
    EXPECT_EQ(check.result()["open_at_end"], 2);
    EXPECT_TRUE(check.violations().empty());
}

TEST(MutualExclusion, SharedHoldsMayOverlapButNotAnExclusiveOne) {
    MutualExclusionCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"r","value":{"mode":"shared"},"time":1000000000}
{"type":"ok","process":1,"f":"acquire","key":"r","value":{"token":"s1","mode":"shared"},"time":1000000000}
{"type":"invoke","process":2,"f":"acquire","key":"r","value":{"mode":"shared"},"time":2000000000}
{"type":"ok","process":2,"f":"acquire","key":"r","value":{"token":"s2","mode":"shared"},"time":2000000000}
{"type":"invoke","process":1,"f":"release","key":"r","value":{"token":"s1"},"time":3000000000}
{"type":"ok","process":1,"f":"release","key":"r","value":null,"time":3000000000}
{"type":"invoke","process":3,"f":"acquire","key":"r","value":{"mode":"exclusive"},"time":4000000000}
{"type":"ok","process":3,"f":"acquire","key":"r","value":{"token":"x3","mode":"exclusive"},"time":4000000000}
{"type":"invoke","process":2,"f":"release","key":"r","value":{"token":"s2"},"time":5000000000}
{"type":"ok","process":2,"f":"release","key":"r","value":null,"time":5000000000}
{"type":"invoke","process":3,"f":"release","key":"r","value":{"token":"x3"},"time":6000000000}
{"type":"ok","process":3,"f":"release","key":"r","value":null,"time":6000000000}
)");
    ASSERT_EQ(check.violation_count(), 1u);
    const json v = check.violations();
    EXPECT_EQ(v[0]["message"],
              "r: process 3 (token x3) acquired exclusive at 4.000 s while process 2 (token s2) "
              "held it shared since 2.000 s");
    EXPECT_EQ(v[0]["witness"]["first"]["mode"], "shared");
    EXPECT_EQ(v[0]["witness"]["second"]["mode"], "exclusive");
    EXPECT_EQ(v[0]["witness"]["overlap_ns"], 1000000000);
}

TEST(MutualExclusion, ReentrantNestingIsOneHoldEndingAtTheLastRelease) {
    const std::string nested =
        granted(1, "k", "a", 10, 20) + granted(1, "k", "a", 30, 40) + released(1, "k", "a", 50, 60);
    {
        // Another grant between the inner and the outer release: the hold is still open.
        MutualExclusionCheck check;
        run_check(check, nested + granted(2, "k", "b", 70, 80) + released(1, "k", "a", 90, 100));
        EXPECT_EQ(check.violation_count(), 1u);
        EXPECT_EQ(check.result()["holds"], 2);
        EXPECT_EQ(check.result()["nested_grants"], 1);
        EXPECT_EQ(check.violations()[0]["witness"]["first"]["end_ns"], 90);
    }
    {
        MutualExclusionCheck check;
        run_check(check, nested + released(1, "k", "a", 90, 100) + granted(2, "k", "b", 110, 120));
        EXPECT_EQ(check.violation_count(), 0u);
        EXPECT_EQ(check.result()["holds"], 2);
    }
}

// Holds that end - by a crash, a failed release, a refusal - before the next grant: no overlap,
// and the result counts the holds as each case says.
TEST(MutualExclusion, HoldsEndedBeforeTheNextGrantOverlapNothing) {
    struct Case {
        const char* name;
        std::string history;
        json result_has;
    };
    const Case cases[] = {
        {"ACrashEndsTheHold",
         granted(1, "k", "a", 10, 20) + event("invoke", 1, "read", "k", "null", 25) +
             crashed(1, 30) + granted(2, "k", "b", 40, 50),
         {{"ended_by_crash", 1}}},
        // The lease holder crashes; the lock frees itself when the lease runs out and a waiter
        // gets it. The crashed hold ended at the crash.
        {"ACrashedLeaseHoldersLockGrantedAfterTheLease",
         R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":500000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":600000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":820000000}
{"type":"invoke","process":2,"f":"release","key":"k0","value":{"token":"b"},"time":900000000}
{"type":"ok","process":2,"f":"release","key":"k0","value":null,"time":910000000}
)",
         {{"holds", 2}, {"ended_by_crash", 1}, {"open_at_end", 0}}},
        // A live holder's release fails (the server was unreachable) and the lease frees the
        // lock; the holder goes on and is granted it again after another process had it. The
        // failed release ended its hold: the client stopped relying on the lock.
        {"AFailedReleaseOfALeaseLockThenLaterGrants",
         R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"a"},"time":300000000}
{"type":"fail","process":1,"f":"release","key":"k0","value":null,"time":350000000,"error":"Connection refused"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":400000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":450000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":900000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":910000000}
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":950000000}
{"type":"invoke","process":2,"f":"release","key":"k0","value":{"token":"b"},"time":1000000000}
{"type":"ok","process":2,"f":"release","key":"k0","value":null,"time":1010000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"c"},"time":1020000000}
)",
         {{"holds", 3}, {"open_at_end", 1}}},
        // Seed 001's lock has no lease: after a failed release only the release sent again (by
        // token, under a fresh id) frees it, and then the waiter gets it.
        {"AFailedReleaseOfALockWithoutLeaseReleasedAgain",
         granted(1, "k0", "c1-1", 100000000, 200000000) +
             release_failed(1, "k0", "c1-1", 400000000, 500000000, "Connection refused") +
             refused(2, "k0", 600000000, 700000000) +
             released(5, "k0", "c1-1", 1200000000, 1250000000) +
             granted(2, "k0", "c2-1", 1300000000, 1350000000),
         {{"holds", 2}, {"open_at_end", 1}}},
        // A waiter that gives up holds nothing: its refusal and the think time after it overlap
        // no one, and its next attempt is granted only after the holder released.
        {"AWaiterThatGivesUpHoldsNothing",
         granted(1, "k0", "a", 100000000, 200000000) + refused(2, "k0", 250000000, 310000000) +
             in_doubt(2, "acquire", "k0", "null", 320000000, 400000000) +
             released(1, "k0", "a", 500000000, 510000000) +
             granted(3, "k0", "b", 600000000, 610000000),
         {{"holds", 2}}},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        MutualExclusionCheck check;
        run_check(check, c.history);
        EXPECT_EQ(check.violation_count(), 0u);
        json result = check.result();
        for (const auto& field : c.result_has.items())
            EXPECT_EQ(result[field.key()], field.value()) << field.key();
    }
}

TEST(MutualExclusion, AHoldOpenAtTheEndOverlapsALaterGrant) {
    MutualExclusionCheck check;
    run_check(check, granted(1, "k", "a", 1000, 2000) +
                         event("invoke", 1, "read", "k", "null", 3000) +
                         granted(2, "k", "b", 4000, 5000) +
                         event("invoke", 2, "release", "k", token_value("b"), 6000) +
                         event("invoke", 3, "write", "x", "1", 9000));
    ASSERT_EQ(check.violation_count(), 1u);
    const json w = check.violations()[0]["witness"];
    EXPECT_TRUE(w["first"]["end_ns"].is_null());
    EXPECT_EQ(w["second"]["end_ns"], 6000);
    EXPECT_EQ(w["overlap_ns"], 1000);
    EXPECT_EQ(check.result()["open_at_end"], 1);

    // Both open at the end: the overlap runs to the last event.
    MutualExclusionCheck both_open;
    run_check(both_open, granted(1, "k", "a", 1000, 2000) + granted(2, "k", "b", 4000, 5000) +
                             event("invoke", 3, "write", "x", "1", 9000));
    EXPECT_EQ(both_open.violations()[0]["witness"]["overlap_ns"], 4000);
}

TEST(MutualExclusion, InfoOpsEndHoldsAtTheReleaseInvokeAndGrantNothing) {
    MutualExclusionCheck check;
    run_check(check,
              granted(1, "k", "a", 10, 20) + in_doubt(1, "release", "k", token_value("a"), 30, 40) +
                  in_doubt(2, "acquire", "k", "null", 50, 60) + granted(5, "k", "c", 70, 80));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["holds"], 2);
}

TEST(MutualExclusion, ReleaseWithoutAHoldIsIgnored) {
    // Seed 001: `finally { unlock(); }` after a failed acquire releases someone else's lock; the
    // releaser held nothing, so its release does not end the real holder's hold.
    MutualExclusionCheck check;
    run_check(check, granted(1, "k", "a", 10, 20) + refused(2, "k", 30, 40) +
                         released(2, "k", "", 50, 60) + granted(3, "k", "c", 70, 80));
    EXPECT_EQ(check.violation_count(), 1u);
    EXPECT_EQ(check.violations()[0]["witness"]["first"]["process"], 1);
    EXPECT_EQ(check.violations()[0]["witness"]["second"]["process"], 3);
}

TEST(MutualExclusion, CountsEveryPairButKeepsAtMostMaxViolationsWitnesses) {
    MutualExclusionCheck check(3);
    std::string text;
    for (int p = 0; p < 5; ++p)
        text += granted(p, "k", "", 10 * p, 10 * p + 5);
    run_check(check, text);
    EXPECT_EQ(check.violation_count(), 10u);  // 5 holds, every pair overlaps
    EXPECT_EQ(check.result()["violations"], 10);
    EXPECT_EQ(check.violations().size(), 3u);
}

}  // namespace
}  // namespace lockbench::checker
