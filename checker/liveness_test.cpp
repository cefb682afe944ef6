#include "checker/liveness.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "checker/check.hpp"
#include "checker/history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using namespace testing;  // numbered histories, their builders, run_check

LivenessOptions bound_1s() {
    LivenessOptions options;
    options.liveness_bound_ms = 1000;
    return options;
}

// Process 1 takes k0 and crashes holding it at 0.5 s.
const std::string kHolderCrashes = granted(1, "k0", "a", 100000000, 200000000) +
                                   event("invoke", 1, "read", "k0", "null", 300000000) +
                                   crashed(1, 500000000);

TEST(Liveness, AnOrphanedKeyWithWaitersPastTheBoundIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, kHolderCrashes + refused(2, "k0", 600000000, 700000000) +
                         refused(2, "k0", 1000000000, 1100000000) +
                         event("invoke", 2, "acquire", "k0", "null", 3000000000));
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
              "k0: process 1 (token a), granted it at 0.200 s, crashed holding it at 0.500 s; it "
              "has no lease, so only a release frees it, and process 2 was still waiting for it "
              "at 3.000 s (waiting since 3.000 s), 2.500 s after that; nobody was granted it "
              "until the end of the history");
    EXPECT_EQ(v[0]["witness"]["cause"], "crash");
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
    run_check(check, in_doubt(1, "acquire", "k0", "null", 100000000, 400000000) +
                         refused(2, "k0", 500000000, 600000000) +
                         refused(3, "k0", 2000000000, 2100000000));
    ASSERT_EQ(check.violation_count(), 1u);
    const json v = check.violations();
    EXPECT_EQ(v[0]["kind"], "deadlock");
    EXPECT_EQ(v[0]["witness"]["cause"], "lost-acquire");
    EXPECT_EQ(v[0]["witness"]["holder"], 1);
    // Process 2's refusal came within the bound; process 3's, past it, proves the lock stuck.
    EXPECT_EQ(v[0]["witness"]["first_waiter"], 3);
    EXPECT_EQ(v[0]["witness"]["waiter_refused"], true);
    EXPECT_EQ(v[0]["message"],
              "k0: process 1's acquire got no answer (it may hold the lock) at 0.400 s; it has no "
              "lease, so only a release frees it, and process 3 was refused it at 2.100 s "
              "(waiting since 2.000 s), 1.700 s after that; nobody was granted it until the end "
              "of the history");
}

// The same lost answer on a lock that expires: another client gets it within the bound.
TEST(Liveness, AnAcquireWithoutAnswerFollowedByAGrantWithinTheBoundIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, in_doubt(1, "acquire", "k0", "null", 100000000, 400000000) +
                         granted(2, "k0", "b", 500000000, 900000000) +
                         event("invoke", 2, "release", "k0", token_value("b"), 3000000000));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned"], 1);
}

// An acquire that times out while a live process holds the key of record orphans nothing: the
// long wait is that holder's doing, not a lost grant's.
TEST(Liveness, AnAcquireWithoutAnswerWhileTheKeyIsHeldOfRecordIsNoOrphan) {
    LivenessCheck check(bound_1s());
    run_check(check, granted(1, "k0", "a", 100000000, 200000000) +
                         in_doubt(2, "acquire", "k0", "null", 300000000, 600000000) +
                         refused(3, "k0", 700000000, 3000000000));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned"], 0);
}

TEST(Liveness, AReGrantWithinTheBoundIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, kHolderCrashes + granted(2, "k0", "b", 600000000, 800000000) +
                         event("invoke", 3, "write", "x", "1", 9000000000));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["valid"], true);
    EXPECT_EQ(check.result()["orphaned"], 1);
}

// Process 2 waits across the bound and gives up; process 3, who asked only after that, is the
// first that can have got the lock.
TEST(Liveness, AReGrantPastTheBoundIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, kHolderCrashes + refused(2, "k0", 600000000, 1800000000) +
                         granted(3, "k0", "b", 1900000000, 2000000000));
    ASSERT_EQ(check.violation_count(), 1u);
    const json w = check.violations()[0]["witness"];
    EXPECT_EQ(w["regranted_ns"], 2000000000);
    EXPECT_EQ(w["ended_by"], "grant");
    EXPECT_EQ(w["first_waiter"], 2);
    EXPECT_EQ(w["waiter_refused"], true);
    EXPECT_DOUBLE_EQ(w["orphaned_ms"].get<double>(), 1500.0);
    EXPECT_DOUBLE_EQ(w["waited_past_bound_ms"].get<double>(), 1300.0);
}

// The same wait, but the grant's acquire began before the bound ran out: it may have been made
// before it, so nothing proves the key stuck.
TEST(Liveness, AReGrantWhoseAcquireBeganWithinTheBoundIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, kHolderCrashes + event("invoke", 2, "acquire", "k0", "null", 600000000) +
                         event("invoke", 3, "acquire", "k0", "null", 1400000000) +
                         event("fail", 2, "acquire", "k0", "null", 1800000000, "held") +
                         event("ok", 3, "acquire", "k0", token_value("b"), 2000000000));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned"], 1);
}

TEST(Liveness, AnOrphanNobodyWantsIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, kHolderCrashes + granted(2, "k1", "", 600000000, 700000000) +
                         event("invoke", 3, "write", "x", "1", 9000000000));
    EXPECT_EQ(check.violation_count(), 0u);
}

TEST(Liveness, AWaiterAlreadyBlockedAtTheCrashCounts) {
    LivenessCheck check(bound_1s());
    run_check(check, granted(1, "k0", "a", 100000000, 200000000) +
                         event("invoke", 2, "acquire", "k0", "null", 300000000) +
                         crashed(1, 500000000) + event("invoke", 3, "write", "x", "1", 4000000000));
    ASSERT_EQ(check.violation_count(), 1u);
    EXPECT_EQ(check.violations()[0]["witness"]["first_waiter"], 2);
}

// Process 2 tries k0 three times, giving up twice, with think time between the attempts; its
// third acquire waits 2.4 s for the grant.
const std::string kLongWait =
    refused(2, "k0", 100000000, 200000000) + refused(2, "k0", 1000000000, 1100000000, "no-quorum") +
    granted(2, "k0", "", 2400000000, 4800000000) + released(2, "k0", "", 4900000000, 5000000000);

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
    // hold k0 - for at most the 2000 ms it asked for (plus the grace a holder that is gone gets
    // for late expiry). Process 2 is refused at 2.1 s, within that; without a lease (seed 001)
    // the lock would never free, and the same refusal past the 1 s bound is a deadlock.
    const char* history = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":2000},"time":100000000}
{"type":"info","process":1,"f":"acquire","key":"k0","value":null,"time":350000000,"error":"timeout"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":2000},"time":400000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":500000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":2000},"time":2000000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":2100000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":2000},"time":3900000000}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":3950000000}
)";
    LivenessCheck leased(bound_1s());
    run_check(leased, history);
    EXPECT_EQ(leased.violation_count(), 0u);
    EXPECT_EQ(leased.result()["orphaned"], 1);
    EXPECT_EQ(leased.result()["orphaned_by"]["lost-acquire"], 1);

    std::string no_lease = history;
    for (std::size_t at; (at = no_lease.find(R"(,"lease_ms":2000)")) != std::string::npos;)
        no_lease.erase(at, std::string(R"(,"lease_ms":2000)").size());
    LivenessCheck forever(bound_1s());
    run_check(forever, no_lease);
    EXPECT_EQ(forever.result()["deadlocks"], 1);
    EXPECT_EQ(forever.result()["deadlock_processes"], (json{1}));
    EXPECT_EQ(forever.violations()[0]["witness"]["regranted_ns"], 3950000000);
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
    // Process 3 died with its acquire in flight and process 4's got no answer: either may have
    // taken k0, or neither. Nobody was refused it, so process 2's unanswered wait proves nothing
    // about a lock (the server may not have answered at all): no deadlock.
    EXPECT_EQ(r["orphaned"], 2);
    EXPECT_EQ(r["deadlocks"], 0);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 1u);
    EXPECT_EQ(v[0]["kind"], "starvation");
    EXPECT_EQ(v[0]["witness"]["process"], 2);
    EXPECT_EQ(v[0]["witness"]["granted"], false);
}

// Issue 26, item 1: a ZooKeeper release that cannot reach the restarting server fails, the lock
// node stays under the live session, and every acquire is refused until the run ends at 6 s.
// The 4 s session timeout (the acquire's lease_ms) runs from the failed release: 5.350 s.
const char* kZooKeeperReleasesFail = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":4000},"time":800000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"/lockbench/locks/k0/lock-0000000007","fence":7,"mode":"exclusive"},"time":850000000}
{"type":"invoke","process":2,"f":"acquire","key":"k1","value":{"mode":"exclusive","lease_ms":4000},"time":780000000}
{"type":"ok","process":2,"f":"acquire","key":"k1","value":{"token":"/lockbench/locks/k1/lock-0000000005","fence":5,"mode":"exclusive"},"time":800000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"/lockbench/locks/k0/lock-0000000007"},"time":1000000000}
{"type":"invoke","process":2,"f":"release","key":"k1","value":{"token":"/lockbench/locks/k1/lock-0000000005"},"time":1000000000}
{"type":"fail","process":1,"f":"release","key":"k0","value":null,"time":1350000000,"error":"connect: Connection refused"}
{"type":"fail","process":2,"f":"release","key":"k1","value":null,"time":1350000000,"error":"connect: Connection refused"}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":4000},"time":2500000000}
{"type":"invoke","process":4,"f":"acquire","key":"k1","value":{"mode":"exclusive","lease_ms":4000},"time":2500000000}
{"type":"fail","process":3,"f":"acquire","key":"k0","value":null,"time":3500000000,"error":"held"}
{"type":"fail","process":4,"f":"acquire","key":"k1","value":null,"time":3500000000,"error":"held"}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":4000},"time":3510000000}
{"type":"invoke","process":4,"f":"acquire","key":"k1","value":{"mode":"exclusive","lease_ms":4000},"time":3510000000}
{"type":"fail","process":3,"f":"acquire","key":"k0","value":null,"time":4510000000,"error":"held"}
{"type":"fail","process":4,"f":"acquire","key":"k1","value":null,"time":4510000000,"error":"held"}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":4000},"time":5000000000}
{"type":"invoke","process":4,"f":"acquire","key":"k1","value":{"mode":"exclusive","lease_ms":4000},"time":5000000000}
{"type":"fail","process":3,"f":"acquire","key":"k0","value":null,"time":6000000000,"error":"held"}
{"type":"fail","process":4,"f":"acquire","key":"k1","value":null,"time":6000000000,"error":"held"}
)";

// etcd-leader-killed, as a CI run saw it: process 0's release got no answer while the leader was
// being killed, and a second leader kill at 3.01 s let a new leader take over by 3.5 s, which
// renewed every lease (etcd: to its full TTL plus an election timeout). Process 9 refused at
// 5.792 s is past the lease counted from the release, but not from the renewal.
std::string etcd_release_in_doubt(bool renewal, std::int64_t fault_time_ns) {
    std::string history = R"(
{"type":"invoke","process":0,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":3000},"time":900000000}
{"type":"ok","process":0,"f":"acquire","key":"k0","value":{"token":"t0","fence":123,"mode":"exclusive"},"time":1004000000}
{"type":"invoke","process":0,"f":"release","key":"k0","value":{"token":"t0"},"time":1011000000}
{"type":"info","process":"nemesis","f":"kill-etcd","value":{"node":0,"role":"leader"},"time":1016000000}
{"type":"info","process":0,"f":"release","key":"k0","value":null,"time":2513000000,"error":"adapter: release timeout"}
{"type":"info","process":"nemesis","f":"kill-etcd","value":{"node":1,"role":"leader"},"time":3010000000}
)";
    if (renewal) {
        history +=
            R"({"type":"info","process":"nemesis","f":"leases-renewed","value":{"service":"etcd","node":2,"term":4,"fault_time":)" +
            std::to_string(fault_time_ns) + R"(,"by_ms":1000},"time":3500000000}
)";
    }
    return history +
           R"({"type":"invoke","process":9,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":3000},"time":4792000000}
{"type":"fail","process":9,"f":"acquire","key":"k0","value":null,"time":5792000000,"error":"held"}
)";
}

TEST(Liveness, ALeaseANewLeaderRenewedIsNoDeadlockWithinItsRenewedBound) {
    LivenessCheck unrenewed;
    run_check(unrenewed, etcd_release_in_doubt(false, 0));
    EXPECT_EQ(unrenewed.result()["deadlocks"], 1);  // what the checker said before it knew

    LivenessCheck renewed;
    run_check(renewed, etcd_release_in_doubt(true, 3010000000));
    const json r = renewed.result();
    EXPECT_EQ(r["valid"], true) << renewed.violations().dump(1);
    EXPECT_EQ(r["deadlocks"], 0);
    EXPECT_EQ(r["orphaned"], 1);

    // A renewal after a fault the lease had already outlived reaches nothing: still a deadlock.
    LivenessCheck too_late;
    run_check(too_late, etcd_release_in_doubt(true, 5600000000));
    EXPECT_EQ(too_late.result()["deadlocks"], 1);
}

// A refusal past the old bound that came before the renewal's event (the nemesis sees the new
// leader a little after it took over) is no evidence once the event moves the bound.
TEST(Liveness, ARenewalSeenAfterTheRefusalStillMovesTheBound) {
    LivenessCheck check;
    run_check(check, R"(
{"type":"invoke","process":0,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":1000},"time":100000000}
{"type":"ok","process":0,"f":"acquire","key":"k0","value":{"token":"t0","mode":"exclusive"},"time":200000000}
{"type":"invoke","process":0,"f":"release","key":"k0","value":{"token":"t0"},"time":300000000}
{"type":"info","process":0,"f":"release","key":"k0","value":null,"time":400000000,"error":"timeout"}
{"type":"invoke","process":9,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":1000},"time":1500000000}
{"type":"fail","process":9,"f":"acquire","key":"k0","value":null,"time":1700000000,"error":"held"}
{"type":"info","process":"nemesis","f":"leases-renewed","value":{"service":"etcd","fault_time":350000000,"by_ms":1000},"time":1750000000}
)");
    EXPECT_EQ(check.result()["deadlocks"], 0) << check.violations().dump(1);
}

TEST(Liveness, AFailedZooKeeperReleaseLeavingTheNodeBehindIsADeadlock) {
    LivenessCheck check;  // the default 10 s bound plays no part: these locks have a lease
    run_check(check, kZooKeeperReleasesFail);
    const json r = check.result();
    EXPECT_EQ(r["valid"], false);
    EXPECT_EQ(r["deadlocks"], 2);
    EXPECT_EQ(r["deadlock_processes"], (json{1, 2}));
    EXPECT_EQ(r["orphaned"], 2);
    EXPECT_EQ(r["orphaned_by"]["failed-release"], 2);
    const json v = check.violations();
    ASSERT_EQ(v.size(), 2u);
    EXPECT_EQ(v[0]["key"], "k0");
    EXPECT_EQ(v[0]["message"],
              "k0: process 1 (token /lockbench/locks/k0/lock-0000000007), granted it at 0.850 s, "
              "failed to release it at 1.350 s (connect: Connection refused); its lease of 4000 "
              "ms ran out by 5.350 s, yet process 3 was refused it at 6.000 s (waiting since "
              "5.000 s), 0.650 s past the lease; nobody was granted it until the end of the "
              "history");
    const json& w = v[0]["witness"];
    EXPECT_EQ(w["cause"], "failed-release");
    EXPECT_EQ(w["holder"], 1);
    EXPECT_EQ(w["token"], "/lockbench/locks/k0/lock-0000000007");
    EXPECT_EQ(w["granted_ns"], 850000000);
    EXPECT_EQ(w["orphaned_ns"], 1350000000);
    EXPECT_EQ(w["orphaned_index"], 6);
    EXPECT_EQ(w["error"], "connect: Connection refused");
    EXPECT_EQ(w["lease_ms"], 4000);
    EXPECT_EQ(w["bound_ns"], 5350000000);
    EXPECT_EQ(w["first_waiter"], 3);
    EXPECT_DOUBLE_EQ(w["waited_past_bound_ms"].get<double>(), 650.0);
    EXPECT_EQ(w["ended_by"], "end");
    EXPECT_EQ(v[1]["witness"]["holder"], 2);
    EXPECT_EQ(v[1]["witness"]["first_waiter"], 4);
}

// The refusals up to 4.51 s came while the session could still have been running out; had the
// history ended there, nothing would prove the lock stuck.
TEST(Liveness, RefusalsWithinTheLeaseOfAFailedReleaseAreNoDeadlock) {
    const std::string history = kZooKeeperReleasesFail;
    LivenessCheck check;
    run_check(
        check,
        history.substr(
            0,
            history.find(
                R"({"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":4000},"time":5000000000})")));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned"], 2);
}

// Seed 001's lock has no expiry: a release that failed leaves it locked for good.
const char* kSeedReleaseFails = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"c1-1"},"time":200000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"c1-1"},"time":400000000}
{"type":"fail","process":1,"f":"release","key":"k0","value":null,"time":500000000,"error":"Connection refused"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":600000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":700000000,"error":"held"}
)";

TEST(Liveness, AFailedReleaseOfALockWithoutLeaseIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, std::string(kSeedReleaseFails) + R"(
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":2000000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":2100000000,"error":"held"}
)");
    ASSERT_EQ(check.violation_count(), 1u);
    EXPECT_EQ(check.result()["deadlock_processes"], (json{1}));
    const json v = check.violations();
    EXPECT_EQ(v[0]["message"],
              "k0: process 1 (token c1-1), granted it at 0.200 s, failed to release it at 0.500 "
              "s (Connection refused); it has no lease, so only a release frees it, and process 2 "
              "was refused it at 2.100 s (waiting since 2.000 s), 1.600 s after that; nobody was "
              "granted it until the end of the history");
    EXPECT_EQ(v[0]["witness"]["cause"], "failed-release");
    EXPECT_TRUE(v[0]["witness"]["lease_ms"].is_null());
    EXPECT_TRUE(v[0]["witness"]["bound_ns"].is_null());
}

// The failed release is sent again with the grant's token - under another process id, as after
// an `info` - and frees the lock. Process 2's acquire at 2 s then gets no answer: a slow server,
// not a stuck lock. Without the second release the same wait is a deadlock.
TEST(Liveness, AFailedReleaseReleasedAgainByTokenIsNoDeadlock) {
    const std::string rerelease = R"(
{"type":"invoke","process":5,"f":"release","key":"k0","value":{"token":"c1-1"},"time":1200000000}
{"type":"ok","process":5,"f":"release","key":"k0","value":null,"time":1250000000}
)";
    const std::string later = R"(
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":2000000000}
{"type":"info","process":2,"f":"acquire","key":"k0","value":null,"time":2300000000,"error":"timeout"}
)";
    LivenessCheck released(bound_1s());
    run_check(released, kSeedReleaseFails + rerelease + later);
    EXPECT_EQ(released.violation_count(), 0u);
    EXPECT_EQ(released.result()["orphaned_by"]["failed-release"], 1);

    LivenessCheck stuck(bound_1s());
    run_check(stuck, kSeedReleaseFails + later);
    EXPECT_EQ(stuck.result()["deadlocks"], 1);
}

// Issue 26, item 3: the holder of a 300 ms lease crashes; its only waiter gives up at 0.31 s;
// an unrelated event comes 20 s later. Nobody waited past the lease: valid, exit 0.
TEST(Liveness, ACrashedLeaseHolderAndAWaiterThatGaveUpAreNoDeadlock) {
    const std::string history = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":0}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a","mode":"exclusive"},"time":50000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":100000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":120000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":310000000,"error":"held"}
{"type":"invoke","process":3,"f":"read","key":"x","value":null,"time":20000000000}
{"type":"ok","process":3,"f":"read","key":"x","value":null,"time":20001000000}
)";
    LivenessCheck check;
    run_check(check, history);
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned_by"]["crash"], 1);

    // What `lockbench check` runs on it.
    std::istringstream in{numbered(history)};
    const Report report = check_history(in, CheckOptions{});
    EXPECT_EQ(report.verdict, Verdict::Valid);
    EXPECT_EQ(exit_code(report.verdict), 0);
}

// A crashed lease holder's lock frees itself: a waiter gets it after the lease.
TEST(Liveness, ACrashedLeaseHoldersLockGrantedAfterTheLeaseIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":500000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":600000000}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":650000000}
{"type":"fail","process":3,"f":"acquire","key":"k0","value":null,"time":700000000,"error":"held"}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"b"},"time":820000000}
{"type":"invoke","process":4,"f":"write","key":"x","value":1,"time":9000000000}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned"], 1);
}

// The same crash, but the lock outlives its lease by far: the service kept it.
TEST(Liveness, ACrashedLeaseHoldersLockRefusedLongAfterTheLeaseIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":500000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":1150000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1190000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":1300000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1400000000,"error":"held"}
)");
    // 0.8 s bound, plus 250 ms and half the lease for a holder that is gone: 1.2 s.
    ASSERT_EQ(check.violation_count(), 1u);
    const json w = check.violations()[0]["witness"];
    EXPECT_EQ(w["cause"], "crash");
    EXPECT_EQ(w["bound_ns"], 800000000);
    EXPECT_EQ(w["deadline_ns"], 1200000000);
    EXPECT_EQ(w["waited_until_ns"], 1400000000);
}

// A crashed holder whose acquire asked `asked_ms` and was granted `applied` (the ok's lease_ms,
// the lease the service really applied), refused to process 2 at 1.19 s and 1.4 s.
std::string crashed_holder_refused_until_1400ms(std::int64_t asked_ms,
                                                std::optional<std::int64_t> applied) {
    const std::string asked = R"({"mode":"exclusive","lease_ms":)" + std::to_string(asked_ms) + "}";
    const std::string granted = applied
                                    ? R"({"token":"a","lease_ms":)" + std::to_string(*applied) + "}"
                                    : R"({"token":"a"})";
    return R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":)" +
           asked + R"(,"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":)" +
           granted + R"(,"time":200000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":500000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":)" +
           asked + R"(,"time":1150000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1190000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":)" +
           asked + R"(,"time":1300000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1400000000,"error":"held"}
)";
}

TEST(Liveness, ACrashedHoldersLockIsDueBackAfterTheLeaseItWasGrantedNotTheOneAsked) {
    // Asked 300 ms, applied 2 s: the lock is due back at 0.5 + 2 s, plus 250 ms and half the
    // lease - refusals at 1.4 s are no deadlock.
    LivenessCheck longer(bound_1s());
    run_check(longer, crashed_holder_refused_until_1400ms(300, 2000));
    EXPECT_EQ(longer.violation_count(), 0u);
    EXPECT_EQ(longer.result()["orphaned"], 1);

    // Asked 2 s, applied 300 ms: due back at 0.8 s, deadline 1.2 s - the 1.4 s refusal is one.
    LivenessCheck asked_alone(bound_1s());
    run_check(asked_alone, crashed_holder_refused_until_1400ms(2000, std::nullopt));
    EXPECT_EQ(asked_alone.violation_count(), 0u);
    LivenessCheck shorter(bound_1s());
    run_check(shorter, crashed_holder_refused_until_1400ms(2000, 300));
    ASSERT_EQ(shorter.violation_count(), 1u);
    const json w = shorter.violations()[0]["witness"];
    EXPECT_EQ(w["cause"], "crash");
    EXPECT_EQ(w["bound_ns"], 800000000);
    EXPECT_EQ(w["deadline_ns"], 1200000000);
    EXPECT_EQ(w["waited_until_ns"], 1400000000);
    EXPECT_EQ(shorter.violations()[0]["witness"]["lease_ms"], 300);
}

// A refusal past the bound that a grant may explain: process 3's acquire began before it and
// may have been granted first. Had it begun after the refusal, the lock was stuck until then.
TEST(Liveness, ARefusalAnEarlierAcquiresGrantMayExplainIsNoDeadlock) {
    const auto history = [](const char* regrant_invoke_ns) {
        return std::string(R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":500000000}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":)") +
               regrant_invoke_ns + R"(}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":1250000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1300000000,"error":"held"}
{"type":"ok","process":3,"f":"acquire","key":"k0","value":{"token":"b"},"time":1400000000}
)";
    };
    LivenessCheck explained(bound_1s());
    run_check(explained, history("1240000000"));
    EXPECT_EQ(explained.violation_count(), 0u);

    // Reordered by time: process 3 now asks after the refusal.
    std::string late = history("1350000000");
    const std::string p3 = late.substr(late.find(R"({"type":"invoke","process":3)"));
    const std::string p3_invoke = p3.substr(0, p3.find('\n') + 1);
    late.erase(late.find(p3_invoke), p3_invoke.size());
    late.insert(late.find(R"({"type":"ok","process":3)"), p3_invoke);
    LivenessCheck stuck(bound_1s());
    run_check(stuck, late);
    ASSERT_EQ(stuck.violation_count(), 1u);
    EXPECT_EQ(stuck.violations()[0]["witness"]["regranted_ns"], 1400000000);
}

// A release whose reply was lost: it may have freed the lock, and a waiter gets it promptly.
TEST(Liveness, AnInDoubtReleaseFollowedByAPromptReGrantIsNoDeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":900000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"a"},"time":1000000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1100000000,"error":"held"}
{"type":"info","process":1,"f":"release","key":"k0","value":null,"time":1300000000,"error":"timeout"}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":1310000000}
{"type":"ok","process":3,"f":"acquire","key":"k0","value":{"token":"b"},"time":1350000000}
{"type":"invoke","process":4,"f":"write","key":"x","value":1,"time":9000000000}
)");
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["orphaned_by"]["in-doubt-release"], 1);
}

// An in-doubt release with no grant after it: the lock may still be there, but only a refusal
// past its lease proves it; then it is a deadlock naming the release.
TEST(Liveness, AnInDoubtReleaseRefusedPastItsLeaseIsADeadlock) {
    LivenessCheck check(bound_1s());
    run_check(check, R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":200000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"a"},"time":1000000000}
{"type":"info","process":1,"f":"release","key":"k0","value":null,"time":1300000000,"error":"timeout"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":1800000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":1810000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":2100000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":2110000000,"error":"held"}
)");
    ASSERT_EQ(check.violation_count(), 1u);
    const json w = check.violations()[0]["witness"];
    EXPECT_EQ(w["cause"], "in-doubt-release");
    EXPECT_EQ(w["error"], "timeout");
    EXPECT_EQ(w["deadline_ns"], 2050000000);
    EXPECT_EQ(w["waited_until_ns"], 2110000000);
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

namespace late_grants {

// Process 5 asks for k0 with a 2 s lease; its adapter answers in doubt at 0.4 s; the library
// grants that acquire at 0.5 s. Without the late grant the orphan would run out by 2.4 s (plus
// the grace a lost acquire gets, 3.65 s); granted at 0.5 s its lease runs to 2.5 s (3.75 s).
const char* kLeased = R"({"mode":"exclusive","lease_ms":2000})";
const std::string kAnsweredInDoubtThenGranted =
    in_doubt(5, "acquire", "k0", kLeased, 100000000, 400000000) +
    late_granted(5, "k0", 500000000, "t5");

std::string refused_leased(int process, std::int64_t asked, std::int64_t failed) {
    return event("invoke", process, "acquire", "k0", kLeased, asked) +
           event("fail", process, "acquire", "k0", "null", failed, "held");
}

}  // namespace late_grants

// The adapter released the late grant at 0.51 s: the lock was free from then, so a refusal at
// 1 s with nobody holding it proves it stuck - though the lease would have covered it.
TEST(Liveness, ALateGrantItsAdapterReleasedEndsTheOrphanAtTheRelease) {
    using namespace late_grants;
    const std::string released =
        kAnsweredInDoubtThenGranted + late_released(5, "k0", 510000000, true);

    LivenessCheck within_grace(bound_1s());
    run_check(within_grace, released + refused_leased(2, 600000000, 700000000));
    EXPECT_EQ(within_grace.violation_count(), 0u);

    LivenessCheck check(bound_1s());
    run_check(check, released + refused_leased(2, 900000000, 1000000000));
    ASSERT_EQ(check.violation_count(), 1u);
    EXPECT_EQ(check.result()["deadlock_processes"], (json{5}));
    const json v = check.violations();
    EXPECT_EQ(v[0]["message"],
              "k0: process 5's acquire, answered in doubt at 0.400 s, was granted by the library "
              "at 0.500 s (token t5) and released by its adapter at 0.510 s, yet process 2 was "
              "refused it at 1.000 s (waiting since 0.900 s), 0.490 s after the release; nobody "
              "was granted it until the end of the history");
    const json& w = v[0]["witness"];
    EXPECT_EQ(w["cause"], "lost-acquire");
    EXPECT_EQ(w["token"], "t5");
    EXPECT_EQ(w["granted_ns"], 500000000);
    EXPECT_EQ(w["late_granted_ns"], 500000000);
    EXPECT_EQ(w["late_released_ns"], 510000000);
    EXPECT_TRUE(w["late_release_failed_ns"].is_null());
    EXPECT_EQ(w["orphaned_ns"], 400000000);
    EXPECT_EQ(w["bound_ns"], 510000000);
    EXPECT_EQ(w["deadline_ns"], 760000000);
}

// Two acquires of k0 in doubt, process 5's granted late and released at 0.51 s, process 6's not
// claimed: its node (ZooKeeper's queue) may hold the lock from then on, so process 2's refusal at
// 1 s proves nothing stuck. zk-server-restarted's test run saw exactly this: a deadlock reported
// for a lock that was held by the next in-doubt acquire's node until its client deleted it.
TEST(Liveness, ARefusalAfterALateGrantsReleaseWhileAnotherAcquireIsInDoubtIsNoDeadlock) {
    using namespace late_grants;
    const std::string two_in_doubt = kAnsweredInDoubtThenGranted +
                                     in_doubt(6, "acquire", "k0", kLeased, 150000000, 450000000) +
                                     late_released(5, "k0", 510000000, true);
    LivenessCheck check(bound_1s());
    run_check(check, two_in_doubt + refused_leased(2, 900000000, 1000000000));
    EXPECT_EQ(check.violation_count(), 0u) << check.violations().dump(2);
    EXPECT_EQ(check.result()["deadlocks"], 0);
}

// The same, but the library gave process 6's acquire up at 0.48 s (`abandoned`): its node is
// gone, nothing is left in doubt that may hold the lock, and the refusal at 1 s proves it stuck.
TEST(Liveness, AnAbandonedAcquireNoLongerExcusesARefusalAfterALateGrantsRelease) {
    using namespace late_grants;
    const std::string abandoned =
        kAnsweredInDoubtThenGranted + in_doubt(6, "acquire", "k0", kLeased, 150000000, 450000000) +
        late_abandoned(6, "k0", 480000000) + late_released(5, "k0", 510000000, true);
    LivenessCheck check(bound_1s());
    run_check(check, abandoned + refused_leased(2, 900000000, 1000000000));
    ASSERT_EQ(check.violation_count(), 1u);
    EXPECT_EQ(check.result()["deadlock_processes"], (json{5}));
    // Abandoned on another key, it excuses the refusal as before.
    LivenessCheck other_key(bound_1s());
    std::string elsewhere = abandoned;
    const std::string on_k0 = R"("key":"k0","value":{"process":6,"phase":"abandoned"})";
    elsewhere.replace(elsewhere.find(on_k0), on_k0.size(),
                      R"("key":"k1","value":{"process":6,"phase":"abandoned"})");
    run_check(other_key, elsewhere + refused_leased(2, 900000000, 1000000000));
    EXPECT_EQ(other_key.violation_count(), 0u) << other_key.violations().dump(2);
}

// A release that failed - or never reported - leaves the lock to its lease, which counts from
// the late grant: a refusal at 3.7 s is within it, one at 3.8 s past it.
TEST(Liveness, ALateGrantWhoseReleaseFailedHoldsUntilItsLeaseFromTheGrant) {
    using namespace late_grants;
    const std::string failed =
        kAnsweredInDoubtThenGranted + late_released(5, "k0", 510000000, false);
    for (const std::string& history : {failed, kAnsweredInDoubtThenGranted}) {
        LivenessCheck within(bound_1s());
        run_check(within, history + refused_leased(2, 900000000, 1000000000) +
                              refused_leased(2, 3600000000, 3700000000));
        EXPECT_EQ(within.violation_count(), 0u) << history;
        EXPECT_EQ(within.result()["orphaned_by"]["lost-acquire"], 1);
    }

    LivenessCheck check(bound_1s());
    run_check(check, failed + refused_leased(2, 3700000000, 3800000000));
    ASSERT_EQ(check.violation_count(), 1u);
    const json v = check.violations();
    EXPECT_EQ(v[0]["message"],
              "k0: process 5's acquire, answered in doubt at 0.400 s, was granted by the library "
              "at 0.500 s (token t5), and its adapter failed to release it at 0.510 s; its lease "
              "of 2000 ms ran out by 2.500 s, yet process 2 was refused it at 3.800 s (waiting "
              "since 3.700 s), 1.300 s past the lease; nobody was granted it until the end of "
              "the history");
    EXPECT_EQ(v[0]["witness"]["late_release_failed_ns"], 510000000);
    EXPECT_TRUE(v[0]["witness"]["late_released_ns"].is_null());
    EXPECT_EQ(v[0]["witness"]["deadline_ns"], 3750000000);
}

// Seed 001's lock has no expiry: granted late and never released, it is held by nobody alive,
// and a waiter still waiting past the liveness bound proves it stuck (without the late grant the
// acquire may never have taken effect, and only a refusal would). Released by the adapter, the
// same wait proves nothing.
TEST(Liveness, ALateGrantOfALockWithoutExpiryNeverReleasedIsADeadlockWhileOthersWait) {
    const std::string in_doubt_acquire = in_doubt(5, "acquire", "k0", "null", 100000000, 400000000);
    const std::string waiter = event("invoke", 2, "acquire", "k0", "null", 600000000) +
                               read_ok(3, "x", 0, 2900000000, 3000000000);

    LivenessCheck stuck(bound_1s());
    run_check(stuck, in_doubt_acquire + late_granted(5, "k0", 500000000, "t5") + waiter);
    ASSERT_EQ(stuck.violation_count(), 1u);
    EXPECT_EQ(stuck.result()["deadlock_processes"], (json{5}));
    const json v = stuck.violations();
    EXPECT_EQ(v[0]["message"],
              "k0: process 5's acquire, answered in doubt at 0.400 s, was granted by the library "
              "at 0.500 s (token t5); it has no lease, so only a release frees it, and process 2 "
              "was still waiting for it at 3.000 s (waiting since 0.600 s), 2.500 s after that; "
              "nobody was granted it until the end of the history");
    EXPECT_EQ(v[0]["witness"]["deadline_ns"], 1500000000);
    EXPECT_TRUE(v[0]["witness"]["bound_ns"].is_null());

    LivenessCheck released(bound_1s());
    run_check(released, in_doubt_acquire + late_granted(5, "k0", 500000000, "t5") +
                            late_released(5, "k0", 800000000, true) + waiter);
    EXPECT_EQ(released.violation_count(), 0u);

    LivenessCheck unknown(bound_1s());  // no late grant: it may never have been granted
    run_check(unknown, in_doubt_acquire + waiter);
    EXPECT_EQ(unknown.violation_count(), 0u);
}

// The grant can be recorded before the `info` answer it overtook; and an acquire answered in
// doubt while another process held the key of record is no orphan until the library grants it.
TEST(Liveness, ALateGrantBeforeItsAnswerOrOverAReleasedHoldStillCounts) {
    const std::string waiter = event("invoke", 2, "acquire", "k0", "null", 600000000) +
                               read_ok(3, "x", 0, 2900000000, 3000000000);
    LivenessCheck overtaken(bound_1s());
    run_check(overtaken, event("invoke", 5, "acquire", "k0", "null", 100000000) +
                             late_granted(5, "k0", 350000000) +
                             event("info", 5, "acquire", "k0", "null", 400000000, "timeout") +
                             waiter);
    ASSERT_EQ(overtaken.violation_count(), 1u);
    EXPECT_EQ(overtaken.violations()[0]["witness"]["late_granted_ns"], 350000000);
    EXPECT_EQ(overtaken.violations()[0]["witness"]["deadline_ns"], 1400000000);

    LivenessCheck after_holder(bound_1s());
    run_check(after_holder, granted(1, "k0", "a", 0, 50000000) +
                                in_doubt(5, "acquire", "k0", "null", 100000000, 400000000) +
                                released(1, "k0", "a", 450000000, 460000000) +
                                late_granted(5, "k0", 500000000) + waiter);
    ASSERT_EQ(after_holder.violation_count(), 1u);
    EXPECT_EQ(after_holder.violations()[0]["witness"]["holder"], 5);
    EXPECT_EQ(after_holder.result()["orphaned_by"]["lost-acquire"], 1);

    // Orphaned at its answer, freed by process 1's grant, then granted late: one orphan counted.
    LivenessCheck granted_between(bound_1s());
    run_check(granted_between, in_doubt(5, "acquire", "k0", "null", 100000000, 400000000) +
                                   granted(1, "k0", "a", 410000000, 420000000) +
                                   released(1, "k0", "a", 450000000, 460000000) +
                                   late_granted(5, "k0", 500000000) + waiter);
    ASSERT_EQ(granted_between.violation_count(), 1u);
    EXPECT_EQ(granted_between.violations()[0]["witness"]["late_granted_ns"], 500000000);
    EXPECT_EQ(granted_between.result()["orphaned"], 1);
}

// A late grant that names no in-doubt acquire (another key, a process never seen, a release
// never granted, a value without process or phase) changes nothing here: the linearizability
// check names it.
TEST(Liveness, ALateGrantWhoseAcquireIsNotFoundIsPassedOver) {
    const std::string history =
        kHolderCrashes + in_doubt(6, "acquire", "k1", "null", 100000000, 200000000) +
        refused(2, "k0", 600000000, 700000000) + refused(2, "k0", 1000000000, 1100000000) +
        event("invoke", 2, "acquire", "k0", "null", 3000000000);
    const std::string strays =
        late_granted(6, "k0", 300000000) + late_granted(9, "k0", 310000000) +
        late_released(7, "k0", 320000000, true) + late_released(6, "k1", 330000000, true) +
        R"({"type":"info","process":"library","f":"late-grant","key":"k0","value":{"phase":"granted"},"time":340000000})"
        "\n"
        R"({"type":"info","process":"library","f":"late-grant","key":"k0","value":null,"time":350000000})"
        "\n"
        R"({"type":"info","process":"library","f":"late-grant","key":"k1","value":{"process":6,"phase":"gone"},"time":360000000})"
        "\n";
    LivenessCheck plain(bound_1s());
    run_check(plain, history);
    const std::size_t at = history.find(R"({"type":"invoke","process":2)");
    LivenessCheck with_strays(bound_1s());
    run_check(with_strays, history.substr(0, at) + strays + history.substr(at));
    EXPECT_EQ(with_strays.violation_count(), 1u);
    EXPECT_EQ(with_strays.result(), plain.result());
    EXPECT_EQ(with_strays.violations(), plain.violations());
}

}  // namespace
}  // namespace lockbench::checker
