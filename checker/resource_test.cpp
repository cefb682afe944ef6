#include "checker/resource.hpp"

#include <string>

#include <gtest/gtest.h>

#include "checker/history_testing.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using namespace testing;  // numbered histories, their builders, run_check

TEST(Resource, IncrementsUnderALockAreValid) {
    ResourceCheck check;
    run_check(check, granted(1, "k0", "a", 1, 1) + event("invoke", 1, "read", "k0", "null", 1) +
                         event("ok", 1, "read", "k0", "null", 2) + write_ok(1, "k0", 1, 3, 4) +
                         released(1, "k0", "a", 4, 4) + granted(2, "k0", "b", 5, 5) +
                         read_ok(2, "k0", 1, 5, 6) + write_ok(2, "k0", 2, 7, 8) +
                         granted(2, "k1", "c", 9, 9) + write_ok(2, "k1", 1, 9, 10));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result(), (json{{"valid", true},
                                    {"violations", 0},
                                    {"processes", json::array()},
                                    {"reads", 2},
                                    {"writes", 3},
                                    {"unguarded_writes", 0},
                                    {"keys", 2}}));
}

// T1's start: process 1 read 10 under its lock and paused past its lease; process 2 got the lock.
const std::string kProcess2GrantedWhileProcess1Paused =
    granted_leased(1, "k0", "a", 300, 90000000, 100000000) +
    read_ok(1, "k0", 10, 100000000, 110000000) +
    granted_leased(2, "k0", "b", 300, 200000000, 690000000);

// T1: then process 2 read 10 and wrote 11; process 1 woke up and wrote 11 too.
const std::string kPausedHolder =
    kProcess2GrantedWhileProcess1Paused + read_ok(2, "k0", 10, 700000000, 710000000) +
    write_ok(2, "k0", 11, 720000000, 730000000) + write_ok(1, "k0", 11, 1500000000, 1510000000) +
    write_ok(2, "k0", 9, 1600000000, 1610000000);

TEST(Resource, ALostUpdateNamesBothWritesAndBothProcesses) {
    ResourceCheck check;
    run_check(check, kPausedHolder);
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
            {"overwritten", {{"process", 2}, {"value", 11}, {"time_ns", 730000000}, {"index", 9}}},
            {"write", {{"process", 1}, {"value", 11}, {"time_ns", 1510000000}, {"index", 11}}}}));
    EXPECT_EQ(v[1]["witness"]["write"]["value"], 9);
    EXPECT_EQ(v[1]["witness"]["overwritten"]["value"], 11);
    EXPECT_EQ(check.result()["valid"], false);
    EXPECT_EQ(check.result()["processes"], (json{1, 2}));
}

// After the stale write set the counter back from 12 to 11, the next holder read 11 and wrote 12:
// that increment lost nothing. One stale write is one lost update, not one per later write until
// the counter climbs back past 12.
TEST(Resource, AStaleWriteCountsOnceNotForEveryWriteAfterIt) {
    ResourceCheck check;
    run_check(check, kProcess2GrantedWhileProcess1Paused +
                         write_ok(2, "k0", 11, 720000000, 730000000) +
                         write_ok(2, "k0", 12, 740000000, 750000000) +
                         write_ok(1, "k0", 11, 1500000000, 1510000000) +
                         write_ok(2, "k0", 12, 1600000000, 1610000000) +
                         write_ok(2, "k0", 13, 1700000000, 1710000000));
    EXPECT_EQ(check.violation_count(), 1u);
    ASSERT_EQ(check.violations().size(), 1u);
    EXPECT_EQ(check.violations()[0]["witness"]["write"]["value"], 11);
    EXPECT_EQ(check.violations()[0]["witness"]["overwritten"]["value"], 12);
}

// T13: process 1 sent its write in time, and the network delivered it late - after process 2,
// granted the lock when process 1's lease ran out, had written 11 and 12. The late write set the
// counter back to 11; process 3 read 11 and wrote 12, no more than a write completed before it
// was sent: an update was lost, counted once.
TEST(Resource, AWriteDeliveredLateSetsTheCounterBackAndTheNextWriteShowsIt) {
    ResourceCheck check;
    run_check(check, granted_leased(1, "k0", "a", 300, 90000000, 100000000) +
                         read_ok(1, "k0", 10, 100000000, 110000000) +
                         event("invoke", 1, "write", "k0", "11", 120000000) +  // delivered at 0.8 s
                         granted_leased(2, "k0", "b", 300, 200000000, 500000000) +
                         read_ok(2, "k0", 10, 500000000, 510000000) +
                         write_ok(2, "k0", 11, 520000000, 530000000) +
                         write_ok(2, "k0", 12, 540000000, 550000000) +
                         released(2, "k0", "b", 560000000, 570000000) +
                         event("ok", 1, "write", "k0", "11", 800000000) +
                         release_failed(1, "k0", "a", 810000000, 820000000, "not-held") +
                         granted_leased(3, "k0", "c", 300, 900000000, 900000000) +
                         read_ok(3, "k0", 11, 905000000, 910000000) +
                         write_ok(3, "k0", 12, 920000000, 930000000) +
                         write_ok(3, "k0", 13, 940000000, 950000000));
    EXPECT_EQ(check.violation_count(), 1u);
    ASSERT_EQ(check.violations().size(), 1u);
    EXPECT_EQ(check.violations()[0]["message"],
              "k0: process 3 wrote 12 at 0.930 s, below 12 written by process 2 at 0.550 s "
              "before it was sent: process 1's write of 11, delivered at 0.800 s, had set the "
              "counter back - an update was lost");
    EXPECT_EQ(check.violations()[0]["witness"]["overwritten"]["process"], 2);
    EXPECT_EQ(check.violations()[0]["witness"]["write"]["process"], 3);
    EXPECT_EQ(check.violations()[0]["witness"]["late"]["process"], 1);
    EXPECT_EQ(check.result()["processes"], (json{1, 2, 3}));  // the late writer among them
}

TEST(Resource, KeepsAtMostMaxViolationsWitnessesButCountsThemAll) {
    ResourceCheck check(1);
    run_check(check, kPausedHolder);
    EXPECT_EQ(check.violation_count(), 2u);
    EXPECT_EQ(check.result()["violations"], 2);
    EXPECT_EQ(check.violations().size(), 1u);
}

TEST(Resource, OnlyAcceptedWritesUnderALockCount) {
    ResourceCheck check;
    run_check(check, granted(1, "k0", "a", 1, 1) + write_ok(1, "k0", 11, 1, 2) +
                         event("invoke", 1, "write", "k0", "11", 3) +
                         event("info", 1, "write", "k0", "11", 4, "timeout") +
                         granted_fenced(3, "k0", "c", 3, 5, 5) +
                         write_event("invoke", 3, "k0", 11, 3, 5) +
                         write_event("fail", 3, "k0", 11, 3, 6, "stale-fence") +
                         write_ok(5, "k0", 3, 7, 8) + write_ok(3, "k0", 12, 9, 10));
    // The info and the refused write are not known to have happened; process 5 wrote without a
    // lock, which is not this check's business.
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result()["writes"], 2);
    EXPECT_EQ(check.result()["unguarded_writes"], 1);
}

TEST(Resource, WritesThatOverlapInRealTimeAreNotOrdered) {
    // A reply can arrive after a later write's: only a write that completed before another
    // was sent is certainly older.
    ResourceCheck check;
    run_check(check, granted(1, "k0", "a", 1, 1) + granted(2, "k0", "b", 1, 1) +
                         event("invoke", 1, "write", "k0", "5", 2) +
                         event("invoke", 2, "write", "k0", "6", 3) +
                         event("ok", 2, "write", "k0", "6", 4) +
                         event("ok", 1, "write", "k0", "5", 5));
    EXPECT_EQ(check.violation_count(), 0u);
}

TEST(Resource, DoesNotApplyWithoutWritesUnderALock) {
    // A Jepsen register history: reads, writes and cas, no lock anywhere.
    ResourceCheck check;
    run_check(check, write_ok(1, "r", 3, 1, 2) + write_ok(2, "r", 1, 3, 4));
    EXPECT_EQ(check.violation_count(), 0u);
    EXPECT_EQ(check.result(), (json{{"valid", "not-applicable"},
                                    {"violations", 0},
                                    {"reason", "the history has no lock operations"}}));
}

}  // namespace
}  // namespace lockbench::checker
