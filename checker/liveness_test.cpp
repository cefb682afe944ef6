#include "liveness.hpp"

#include <gtest/gtest.h>

#include "history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using testing::run_check;

LivenessOptions bound_1s() {
    LivenessOptions options;
    options.liveness_bound_ms = 1000;
    return options;
}

// Process 1 takes k0 and crashes holding it at 0.5 s.
const char* kHolderCrashes = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"invoke","process":1,"f":"read","key":"k0","value":null,"time":300000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":500000000}
)";

TEST(Liveness, AnOrphanedKeyWithWaitersPastTheBoundIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, std::string(kHolderCrashes) + R"(
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":600000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":700000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":1000000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1100000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":3000000000}
)");
    EXPECT_EQ(check.violation_count(), 1u);
    const json r = check.result();
    EXPECT_EQ(r["valid"], false);
    EXPECT_EQ(r["deadlocks"], 1);
    EXPECT_EQ(r["violations"], 1);
    EXPECT_EQ(r["orphaned"], 1);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0]["kind"], "deadlock");
    EXPECT_EQ(v[0]["key"], "k0");
    EXPECT_EQ(v[0]["message"],
              "k0: process 1 crashed holding it at 0.500 s; nobody was granted it for 2.500 s "
              "(until the end of the history) while process 2 was trying to acquire it (from "
              "0.600 s)");
    EXPECT_EQ(v[0]["witness"]["holder"], 1);
    EXPECT_EQ(v[0]["witness"]["crash_index"], 3);
    EXPECT_EQ(v[0]["witness"]["first_waiter"], 2);
    EXPECT_TRUE(v[0]["witness"]["regranted_ns"].is_null());
    EXPECT_DOUBLE_EQ(v[0]["witness"]["orphaned_ms"].get<double>(), 2500.0);
}

// T6: process 1's acquire ran on the server but its reply was lost; the process retired. Nobody
// holds k0 of record, yet nobody can get it: a lock without expiry is held by nobody alive.
TEST(Liveness, AnAcquireWithoutAnswerOnAFreeKeyThenNoGrantPastTheBoundIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":100000000}
{"type":"info","process":1,"f":"acquire","key":"k0","value":null,"time":400000000,"error":"timeout"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":500000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":600000000,"error":"held"}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":null,"time":2000000000}
{"type":"fail","process":3,"f":"acquire","key":"k0","value":null,"time":2100000000,"error":"held"}
)");
    ASSERT_EQ(check.violation_count(), 1u);
    const json v = check.violations();
    EXPECT_EQ(v[0]["kind"], "deadlock");
    EXPECT_EQ(v[0]["witness"]["cause"], "lost-acquire");
    EXPECT_EQ(v[0]["witness"]["holder"], 1);
    EXPECT_EQ(v[0]["witness"]["first_waiter"], 2);
    EXPECT_EQ(v[0]["message"],
              "k0: process 1's acquire got no answer (it may hold the lock) at 0.400 s; nobody was "
              "granted it for 1.700 s (until the end of the history) while process 2 was trying "
              "to acquire it (from 0.500 s)");
}

// The same lost answer on a lock that expires: another client gets it within the bound.
TEST(Liveness, AnAcquireWithoutAnswerFollowedByAGrantWithinTheBoundIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":100000000}
{"type":"info","process":1,"f":"acquire","key":"k0","value":null,"time":400000000,"error":"timeout"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":500000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":900000000}
{"type":"invoke","process":2,"f":"release","key":"k0","value":{"token":"b"},"time":3000000000}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned"], 1);
}

// An acquire that times out while a live process holds the key of record orphans nothing: the
// long wait is that holder's doing, not a lost grant's.
TEST(Liveness, AnAcquireWithoutAnswerWhileTheKeyIsHeldOfRecordIsNoOrphan) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":300000000}
{"type":"info","process":2,"f":"acquire","key":"k0","value":null,"time":600000000,"error":"timeout"}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":null,"time":700000000}
{"type":"fail","process":3,"f":"acquire","key":"k0","value":null,"time":3000000000,"error":"held"}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned"], 0);
}

TEST(Liveness, AReGrantWithinTheBoundIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, std::string(kHolderCrashes) + R"(
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":600000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":800000000}
{"type":"invoke","process":3,"f":"write","key":"x","value":1,"time":9000000000}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["valid"], true);
    EXPECT_EQ(check.result()["orphaned"], 1);
}

TEST(Liveness, AReGrantPastTheBoundIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, std::string(kHolderCrashes) + R"(
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":600000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":2000000000}
)");
    ASSERT_EQ(check.violation_count(), 1u);
    const json w = check.violations()[0]["witness"];
    EXPECT_EQ(w["regranted_ns"], 2000000000);
    EXPECT_DOUBLE_EQ(w["orphaned_ms"].get<double>(), 1500.0);
}

TEST(Liveness, AnOrphanNobodyWantsIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, std::string(kHolderCrashes) + R"(
{"type":"invoke","process":2,"f":"acquire","key":"k1","value":null,"time":600000000}
{"type":"ok","process":2,"f":"acquire","key":"k1","value":null,"time":700000000}
{"type":"invoke","process":3,"f":"write","key":"x","value":1,"time":9000000000}
)");
    EXPECT_EQ(check.violation_count(), 0u);
}

TEST(Liveness, AWaiterAlreadyBlockedAtTheCrashCounts) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":300000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":500000000}
{"type":"invoke","process":3,"f":"write","key":"x","value":1,"time":4000000000}
)");
    ASSERT_EQ(check.violation_count(), 1u);
    EXPECT_EQ(check.violations()[0]["witness"]["first_waiter"], 2);
}

// Process 2 tries k0 three times, giving up twice, with think time between the attempts; its
// third acquire waits 2.4 s for the grant.
const char* kLongWait = R"(
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":100000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":200000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":1000000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1100000000,"error":"no-quorum"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":2400000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":null,"time":4800000000}
{"type":"invoke","process":2,"f":"release","key":"k0","value":null,"time":4900000000}
{"type":"ok","process":2,"f":"release","key":"k0","value":null,"time":5000000000}
)";

TEST(Liveness, AWaitIsOneAcquireNotTheThinkTimeBetweenAttempts) {
    LivenessCheck check(bound_1s());
    run_check(check, kLongWait);
    EXPECT_EQ(check.violation_count(), 0u);  // starvation not judged without a bound
    const json r = check.result();
    EXPECT_DOUBLE_EQ(r["max_wait_ms"].get<double>(), 2400.0);
    EXPECT_EQ(r["waits"], 3);
    EXPECT_TRUE(r["starvation_bound_ms"].is_null());
}

TEST(Liveness, AWaitPastTheStarvationBoundIsStarvationOncePerProcess) {
    LivenessOptions options = bound_1s();
    options.starvation_bound_ms = 1000;
    LivenessCheck check(options);
    run_check(check, kLongWait);
    EXPECT_EQ(check.violation_count(), 1u);
    const json r = check.result();
    EXPECT_EQ(r["valid"], false);
    EXPECT_EQ(r["starved"], 1);
    EXPECT_EQ(r["starved_processes"], (json{2}));
    EXPECT_EQ(r["starvation_bound_ms"], 1000);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0]["kind"], "starvation");
    EXPECT_EQ(v[0]["key"], "k0");
    EXPECT_EQ(v[0]["message"],
              "process 2 waited 2.400 s for k0 (from 2.400 s) until it was granted at 4.800 s, "
              "over the starvation bound of 1000 ms");
    EXPECT_EQ(v[0]["witness"]["granted"], true);
}

TEST(Liveness, ALostAcquireOrphanEndsWithItsLease) {
    // T6 on a lease lock: the acquire's reply was lost, so a process that never learnt it may
    // hold k0 - for at most the 400 ms it asked for. Waiters that give up and think meanwhile
    // do not make a deadlock out of it; without a lease (seed 001) it would be one.
    const char* history = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":400},"time":100000000}
{"type":"info","process":1,"f":"acquire","key":"k0","value":null,"time":350000000,"error":"timeout"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":400},"time":400000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":500000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":400},"time":2900000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":2950000000}
)";
    LivenessCheck leased(bound_1s());
    run_check(leased, history);
    EXPECT_EQ(leased.violation_count(), 0u);
    EXPECT_EQ(leased.result()["orphaned"], 1);

    std::string no_lease = history;
    for (std::size_t at; (at = no_lease.find(R"(,"lease_ms":400)")) != std::string::npos;)
        no_lease.erase(at, std::string(R"(,"lease_ms":400)").size());
    LivenessCheck forever(bound_1s());
    run_check(forever, no_lease);
    EXPECT_EQ(forever.result()["deadlocks"], 1);
    EXPECT_EQ(forever.result()["deadlock_processes"], (json{1}));
}

TEST(Liveness, OpenWaitsAreMeasuredToTheEndAndCrashesEndThem) {
    LivenessOptions options = bound_1s();
    options.starvation_bound_ms = 2000;
    LivenessCheck check(options);
    run_check(check, R"(
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":1000000000}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":null,"time":1000000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":3,"client":1},"time":2000000000}
{"type":"invoke","process":4,"f":"acquire","key":"k0","value":null,"time":2000000000}
{"type":"info","process":4,"f":"acquire","key":"k0","value":null,"time":2500000000,"error":"timeout"}
{"type":"invoke","process":5,"f":"write","key":"x","value":1,"time":4000000000}
)");
    const json r = check.result();
    EXPECT_DOUBLE_EQ(r["max_wait_ms"].get<double>(), 3000.0);
    EXPECT_EQ(r["waits"], 3);
    EXPECT_EQ(r["starved"], 1);
    // Process 4's unanswered acquire on a free key may have taken it for good: from 2.5 s to the
    // end nobody gets k0 while process 2 waits - a deadlock too, listed first.
    EXPECT_EQ(r["deadlocks"], 1);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0]["kind"], "deadlock");
    EXPECT_EQ(v[1]["kind"], "starvation");
    EXPECT_EQ(v[1]["witness"]["process"], 2);
    EXPECT_EQ(v[1]["witness"]["granted"], false);
}

TEST(Liveness, HandoffRunsFromTheReleaseInvokeToTheNextGrantWhenSomeoneWaits) {
    LivenessCheck check;
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":0}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":null,"time":1000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":2000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":null,"time":10000000}
{"type":"ok","process":1,"f":"release","key":"k0","value":null,"time":11000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":null,"time":12000000}
{"type":"invoke","process":2,"f":"release","key":"k0","value":null,"time":20000000}
{"type":"ok","process":2,"f":"release","key":"k0","value":null,"time":21000000}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":null,"time":30000000}
{"type":"ok","process":3,"f":"acquire","key":"k0","value":null,"time":31000000}
)");
    const json h = check.result()["handoff_ms"];
    EXPECT_EQ(h["count"], 1);
    EXPECT_DOUBLE_EQ(h["p50"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(h["p99"].get<double>(), 2.0);
    EXPECT_DOUBLE_EQ(h["max"].get<double>(), 2.0);
}

TEST(Liveness, HandoffPercentiles) {
    // 100 handoffs of 1 ms, 2 ms, ... 100 ms.
    std::string text;
    std::int64_t t = 0;
    text += R"({"type":"invoke","process":0,"f":"acquire","key":"k","value":null,"time":0})"
            "\n";
    text += R"({"type":"ok","process":0,"f":"acquire","key":"k","value":null,"time":0})"
            "\n";
    for (int i = 1; i <= 100; ++i) {
        const std::string holder = std::to_string(i - 1);
        const std::string next = std::to_string(i);
        text += R"({"type":"invoke","process":)" + next +
                R"(,"f":"acquire","key":"k","value":null,"time":)" + std::to_string(t) + "}\n";
        t += 1'000'000;
        text += R"({"type":"invoke","process":)" + holder +
                R"(,"f":"release","key":"k","value":null,"time":)" + std::to_string(t) + "}\n";
        t += std::int64_t{i} * 1'000'000;
        text += R"({"type":"ok","process":)" + next +
                R"(,"f":"acquire","key":"k","value":null,"time":)" + std::to_string(t) + "}\n";
        text += R"({"type":"ok","process":)" + holder +
                R"(,"f":"release","key":"k","value":null,"time":)" + std::to_string(t) + "}\n";
    }
    LivenessCheck check;
    run_check(check, text);
    const json h = check.result()["handoff_ms"];
    EXPECT_EQ(h["count"], 100);
    EXPECT_NEAR(h["p50"].get<double>(), 50.0, 50.0 * 0.005);
    EXPECT_NEAR(h["p99"].get<double>(), 99.0, 99.0 * 0.005);
    EXPECT_DOUBLE_EQ(h["max"].get<double>(), 100.0);
}

}  // namespace
}  // namespace lockbench::checker
