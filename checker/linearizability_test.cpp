#include "checker/linearizability.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/check.hpp"
#include "checker/history.hpp"
#include "checker/history_generator.hpp"
#include "checker/history_testing.hpp"
#include "checker/jepsen_history.hpp"
#include "checker/report.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using testing::events_of;

// Builds one event; `index` and `time` are assigned by `run` from the position in the list.
struct Ev {
    Event event;
    Ev& key(std::string name) {
        event.key = std::move(name);
        return *this;
    }
    Ev& number(std::optional<std::int64_t> value) {
        event.number = value;
        return *this;
    }
    Ev& cas(std::int64_t from, std::int64_t to) {
        event.cas = std::pair{from, to};
        return *this;
    }
    Ev& shared() {
        event.mode = LockMode::Shared;
        return *this;
    }
    Ev& lease(std::int64_t ms) {
        event.lease_ms = ms;
        return *this;
    }
    Ev& token(std::string t) {
        event.token = std::move(t);
        return *this;
    }
    operator Event() const { return event; }  // NOLINT: lets a list of Ev be a history
};

Ev make(EventType type, std::int64_t process, std::string f, std::string error = "") {
    Ev ev;
    ev.event.type = type;
    ev.event.process = process;
    ev.event.f = std::move(f);
    ev.event.key = "k";
    ev.event.error = std::move(error);
    return ev;
}
Ev invoke(std::int64_t p, std::string f) {
    return make(EventType::Invoke, p, std::move(f));
}
Ev ok(std::int64_t p, std::string f) {
    return make(EventType::Ok, p, std::move(f));
}
Ev info(std::int64_t p, std::string f) {
    return make(EventType::Info, p, std::move(f));
}
Ev fail(std::int64_t p, std::string f, std::string error) {
    return make(EventType::Fail, p, std::move(f), std::move(error));
}
Ev crash(std::int64_t target) {
    Ev ev = make(EventType::Info, kNemesisProcess, "crash");
    ev.event.key = "";
    ev.event.target = target;
    return ev;
}

// Event i happens at i ms, so a lease of a few ms spans a few events.
constexpr std::int64_t kEventSpacingNs = 1'000'000;

json run(Model model, std::vector<Event> events, LinearizabilityOptions options = {}) {
    LinearizabilityChecker checker(model);
    for (std::size_t i = 0; i < events.size(); ++i) {
        events[i].index = i;
        events[i].line = i + 1;
        events[i].time = static_cast<std::int64_t>(i) * kEventSpacingNs;
        checker.on_event(events[i]);
    }
    return checker.check(options);
}

// The search's own witness: the passes before it (which would answer first) are off.
LinearizabilityOptions search_alone() {
    LinearizabilityOptions options;
    options.refute = false;
    return options;
}

const json& witness_of(const json& result) {
    return result.at("violations").at(0).at("witness");
}

// The unplaceable op's process and invoke index, to assert the witness exactly.
using ProcessAndIndex = std::pair<std::int64_t, std::uint64_t>;
ProcessAndIndex unplaceable(const json& result) {
    const json& op = result.at("violations").at(0).at("witness").at("unplaceable");
    return {op.at("process").get<std::int64_t>(), op.at("invoke_index").get<std::uint64_t>()};
}

std::vector<std::uint64_t> prefix_invokes(const json& result) {
    std::vector<std::uint64_t> out;
    for (const json& op : result.at("violations").at(0).at("witness").at("longest_prefix")) {
        out.push_back(op.at("invoke_index").get<std::uint64_t>());
    }
    return out;
}

TEST(ModelNames, RoundTrip) {
    for (Model m :
         {Model::None, Model::Mutex, Model::RwLock, Model::Register, Model::UnownedMutex}) {
        EXPECT_EQ(parse_model(to_string(m)), m);
    }
    EXPECT_EQ(to_string(Model::RwLock), "rwlock");
    EXPECT_EQ(parse_model("cas-register"), Model::Register);  // Knossos's name
    EXPECT_FALSE(parse_model("unknown-model").has_value());
}

// ---------------------------------------------------------------- mutex

TEST(MutexModel, SequentialHandoffIsLinearizable) {
    const json r = run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"), invoke(1, "acquire"),
                                      invoke(0, "release"), ok(0, "release"), ok(1, "acquire"),
                                      invoke(1, "release"), ok(1, "release")});
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["model"], "mutex");
    EXPECT_EQ(r["keys"], 1);
    EXPECT_EQ(r["ops"], 4);
    EXPECT_TRUE(r["violations"].empty());
    EXPECT_FALSE(r.contains("reason"));
}

TEST(MutexModel, DoubleGrantIsNotLinearizable) {
    // Without a lease nothing but a release frees the lock.
    const json r =
        run(Model::Mutex,
            {invoke(0, "acquire"), ok(0, "acquire"), invoke(1, "acquire"), ok(1, "acquire"),
             invoke(0, "release"), ok(0, "release"), invoke(1, "release"), ok(1, "release")},
            search_alone());
    ASSERT_EQ(r["valid"], false);
    ASSERT_EQ(r["violations"].size(), 1U);
    const json& v = r["violations"][0];
    EXPECT_EQ(v["kind"], "linearizability");
    EXPECT_EQ(v["key"], "k");
    EXPECT_EQ(v["message"],
              "k: not linearizable against mutex: process 1's acquire (index 2) cannot be placed "
              "after 1 op; by then the model had the lock held by process 0");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
    EXPECT_EQ(prefix_invokes(r), std::vector<std::uint64_t>{0});
    EXPECT_EQ(v["witness"]["longest_prefix_omitted"], 0);
    const json expected_op = {{"process", 1},      {"f", "acquire"},    {"value", "exclusive"},
                              {"output", nullptr}, {"invoke_index", 2}, {"complete_index", 3},
                              {"status", "ok"}};
    EXPECT_EQ(v["witness"]["unplaceable"], expected_op);
}

TEST(MutexModel, ReentrantHolderMayAcquireAgain) {
    const json r =
        run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"), invoke(0, "acquire"),
                           ok(0, "acquire"), invoke(0, "release"), ok(0, "release"),
                           invoke(1, "acquire"), fail(1, "acquire", "held"), invoke(0, "release"),
                           ok(0, "release"), invoke(1, "acquire"), ok(1, "acquire")});
    EXPECT_EQ(r["valid"], true);
}

TEST(MutexModel, ReleaseByNonHolderIsNotLinearizable) {
    const json r = run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"), invoke(1, "release"),
                                      ok(1, "release")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
}

TEST(MutexModel, FailedHeldAcquireWithNobodyHoldingIsNotLinearizable) {
    const json r =
        run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"), invoke(0, "release"),
                           ok(0, "release"), invoke(1, "acquire"), fail(1, "acquire", "held")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(r["violations"][0]["message"],
              "k: not linearizable against mutex: process 1's acquire (failed, held) (index 4) "
              "cannot be placed after 2 ops; by then the model had the lock free");
    EXPECT_EQ(r["violations"][0]["witness"]["unplaceable"]["status"], "fail");
}

TEST(MutexModel, FailedHeldAcquireConcurrentWithAHoldIsLinearizable) {
    const json r =
        run(Model::Mutex, {invoke(1, "acquire"), invoke(0, "acquire"), ok(0, "acquire"),
                           invoke(0, "release"), ok(0, "release"), fail(1, "acquire", "held")});
    EXPECT_EQ(r["valid"], true);
}

TEST(MutexModel, FailureThatDidNotHappenIsDropped) {
    // "no-quorum" changes nothing and observes nothing: a Redlock minority grant.
    const json r = run(Model::Mutex, {invoke(1, "acquire"), fail(1, "acquire", "no-quorum"),
                                      invoke(0, "release"), fail(0, "release", "connection")});
    EXPECT_EQ(r["valid"], true);
}

TEST(MutexModel, NotHeldReleaseObservesTheLockWasLost) {
    // Process 0 never lost the lock as far as any op shows: a not-held release contradicts it.
    const json lost = run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"),
                                         invoke(0, "release"), fail(0, "release", "not-held")});
    ASSERT_EQ(lost["valid"], false);
    EXPECT_EQ(unplaceable(lost), ProcessAndIndex(0, 2));
    // A release by a process that never held it is refused as not-held: fine.
    const json never = run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"),
                                          invoke(1, "release"), fail(1, "release", "not-held")});
    EXPECT_EQ(never["valid"], true);
}

TEST(MutexModel, InfoAcquireMustHaveTakenEffect) {
    // Only process 0's timed-out acquire can explain why process 1 was refused.
    const json r = run(Model::Mutex, {invoke(0, "acquire"), info(0, "acquire"),
                                      invoke(1, "acquire"), fail(1, "acquire", "held")});
    EXPECT_EQ(r["valid"], true);
    // Without it, the same refusal is impossible.
    const json without = run(Model::Mutex, {invoke(1, "acquire"), fail(1, "acquire", "held")});
    EXPECT_EQ(without["valid"], false);
}

TEST(MutexModel, InfoAcquireMustNeverHaveTakenEffect) {
    // Had process 0's acquire taken effect at any point, a later grant could not happen: the
    // lock would be held by 0 before 1's acquire, or from some point after 2's acquire on.
    const json r = run(Model::Mutex, {invoke(0, "acquire"), info(0, "acquire"),
                                      invoke(1, "acquire"), ok(1, "acquire"), invoke(1, "release"),
                                      ok(1, "release"), invoke(2, "acquire"), ok(2, "acquire")});
    EXPECT_EQ(r["valid"], true);
}

TEST(MutexModel, CrashedProcessKeepsTheLock) {
    // Without a lease the model never frees a dead holder's lock.
    const json r = run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"), crash(0),
                                      invoke(1, "acquire"), ok(1, "acquire")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 3));
}

TEST(MutexModel, CrashedProcessNeverCompletes) {
    std::vector<Event> history = {invoke(0, "acquire"), crash(0), ok(0, "acquire"),
                                  invoke(1, "acquire"), ok(1, "acquire")};
    // After the crash, process 0's "ok" is ignored: its acquire is indeterminate, so it may
    // never have taken effect.
    EXPECT_EQ(run(Model::Mutex, history)["valid"], true);
    history.erase(history.begin() + 1);
    EXPECT_EQ(run(Model::Mutex, history)["valid"], false);
}

TEST(MutexModel, OpsInFlightAtTheEndAreIndeterminate) {
    const json r =
        run(Model::Mutex, {invoke(0, "acquire"), invoke(1, "acquire"), ok(1, "acquire"),
                           invoke(1, "release"), invoke(2, "acquire"), fail(2, "acquire", "held")});
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["ops"], 4);
}

TEST(MutexModel, IgnoresOtherOpsAndNemesis) {
    Ev pause = make(EventType::Info, kNemesisProcess, "pause");
    const json r =
        run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire"), pause, invoke(0, "read"),
                           ok(0, "read").number(3), invoke(0, "renew"),
                           fail(0, "renew", "not-held"), invoke(0, "release"), ok(0, "release")});
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["ops"], 2);
}

// ---------------------------------------------------------------- leases

TEST(MutexLease, AGrantAfterTheLeaseMayHaveRunOutIsLinearizable) {
    // T1: process 0 (lease 2 ms from its invoke at 0 ms) is paused; process 1 is granted at 4 ms
    // and 0's late release is answered not-held. The service behaved: a lease ran out.
    const json r =
        run(Model::Mutex, {invoke(0, "acquire").lease(2), ok(0, "acquire"), invoke(1, "acquire"),
                           invoke(2, "read"), ok(1, "acquire"), invoke(0, "release"),
                           fail(0, "release", "not-held"), invoke(1, "release"), ok(1, "release")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
}

TEST(MutexLease, AGrantWhileTheLeaseCertainlyRunsIsNotLinearizable) {
    // T4: the server forgot process 0's lock (100 ms lease) and granted it again at 3 ms.
    const json r = run(Model::Mutex, {invoke(0, "acquire").lease(100), ok(0, "acquire"),
                                      invoke(1, "acquire").lease(100), ok(1, "acquire")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
    // Refuted without the search (lock_refutation.cpp), which names the holder too.
    EXPECT_EQ(witness_of(r)["refuted_by"], "granted-while-held");
    EXPECT_EQ(r["processes"], (json{0, 1}));
}

TEST(MutexLease, NotHeldIsConsistentOnlyOnceTheLeaseMayHaveRunOut) {
    const json during = run(Model::Mutex, {invoke(0, "acquire").lease(100), ok(0, "acquire"),
                                           invoke(0, "release"), fail(0, "release", "not-held")});
    EXPECT_EQ(during["valid"], false);
    const json after =
        run(Model::Mutex, {invoke(0, "acquire").lease(1), ok(0, "acquire"), invoke(1, "read"),
                           invoke(0, "release"), fail(0, "release", "not-held")});
    EXPECT_EQ(after["valid"], true);
}

TEST(MutexLease, ALeaseStartsNoEarlierThanTheReleaseBeforeIt) {
    // T5: process 1 waited from 2 ms, but could only be granted after process 0's release (invoked
    // at 3 ms), so its 5 ms lease runs at least to 8 ms: process 2's grant returned at 7 ms cannot
    // follow it, one returned at 8 ms can. Measured from 1's invoke alone, both would seem fine.
    const auto history = [](int gap) {
        std::vector<Event> h{invoke(0, "acquire"), ok(0, "acquire"), invoke(1, "acquire").lease(5),
                             invoke(0, "release"), ok(0, "release"), ok(1, "acquire")};
        for (int i = 0; i < gap; ++i)
            h.push_back(invoke(10 + i, "read"));  // only time passes
        h.push_back(invoke(2, "acquire").lease(5));
        h.push_back(ok(2, "acquire"));
        return h;
    };
    EXPECT_EQ(run(Model::Mutex, history(0))["valid"], false);
    EXPECT_EQ(run(Model::Mutex, history(1))["valid"], true);
}

// The lease the service applied (the acquire ok's lease_ms: etcd rounds a TTL up to whole
// seconds) is the one a grant expires by, not the one its invoke asked for.
std::vector<Event> second_grant_at_3ms(std::int64_t asked_ms, std::optional<std::int64_t> applied) {
    Ev granted = ok(0, "acquire");
    if (applied)
        granted.event.lease_ms = applied;
    return {invoke(0, "acquire").lease(asked_ms), granted, invoke(1, "acquire").lease(asked_ms),
            ok(1, "acquire")};
}

TEST(MutexLease, AGrantWhileTheAppliedLeaseRunsIsNotLinearizableThoughTheAskedOneRanOut) {
    // Asked 1 ms, so without the ok's lease process 1's grant at 3 ms is fine.
    EXPECT_EQ(run(Model::Mutex, second_grant_at_3ms(1, std::nullopt))["valid"], true);
    const json r = run(Model::Mutex, second_grant_at_3ms(1, 100));
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
    EXPECT_EQ(witness_of(r)["refuted_by"], "granted-while-held");
    const json searched = run(Model::Mutex, second_grant_at_3ms(1, 100), search_alone());
    ASSERT_EQ(searched["valid"], false) << searched.dump(2);
    EXPECT_EQ(unplaceable(searched), ProcessAndIndex(1, 2));
}

TEST(MutexLease, AGrantAfterTheAppliedLeaseMayHaveRunOutIsLinearizableThoughTheAskedOneRuns) {
    // Asked 100 ms, so without the ok's lease process 1's grant at 3 ms is a violation.
    EXPECT_EQ(run(Model::Mutex, second_grant_at_3ms(100, std::nullopt))["valid"], false);
    const json r = run(Model::Mutex, second_grant_at_3ms(100, 1));
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(run(Model::Mutex, second_grant_at_3ms(100, 1), search_alone())["valid"], true);
}

TEST(MutexLease, AReleaseActsForTheGrantItsTokenNames) {
    // Process 0's write timed out, so its cleanup release runs as process 5 (Jepsen's rule).
    const json r = run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire").token("t0"),
                                      invoke(5, "release").token("t0"), ok(5, "release"),
                                      invoke(1, "acquire"), ok(1, "acquire").token("t1")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
}

TEST(MutexLease, ARetriedReleaseAcknowledgesTheFirst) {
    // T7: the first release ran but its reply was lost; the lock passed to process 1; the retry
    // (same token, new process id) is answered with the first one's result.
    const json r = run(Model::Mutex, {invoke(0, "acquire"), ok(0, "acquire").token("t0"),
                                      invoke(0, "release").token("t0"), invoke(1, "acquire"),
                                      ok(1, "acquire").token("t1"), info(0, "release"),
                                      invoke(6, "release").token("t0"), ok(6, "release")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    // A release that is no retry cannot free someone else's lock.
    const json stray = run(Model::Mutex, {invoke(1, "acquire"), ok(1, "acquire").token("t1"),
                                          invoke(6, "release").token("t0"), ok(6, "release")});
    EXPECT_EQ(stray["valid"], false);
}

// cluster-master-killed: process 0's release could not reach the dead master (a failure that did
// not happen), so its grant stayed until its lease (3 ms) ran out. Its next acquire (30 ms) may
// have come after that - a new grant, which its one release ends - so process 1 may follow it.
// The model cannot tell a re-entry from a new grant there, and must not assume the re-entry.
std::vector<Event> regrant_after_failed_release(bool shared) {
    const auto acquire = [shared](std::int64_t p, std::int64_t lease) {
        Ev ev = invoke(p, "acquire").lease(lease);
        return shared ? ev.shared() : ev;
    };
    return {acquire(0, 3),
            ok(0, "acquire").token("t0"),
            invoke(0, "release").token("t0"),
            fail(0, "release", "cannot connect"),
            acquire(1, 30),
            acquire(0, 30),
            invoke(2, "read"),
            ok(0, "acquire").token("t1"),
            invoke(0, "release").token("t1"),
            ok(0, "release"),
            ok(1, "acquire").token("t2")};
}

TEST(MutexLease, AnAcquireAfterTheHoldersLeaseMayHaveRunOutMayBeANewGrant) {
    const json r = run(Model::Mutex, regrant_after_failed_release(false));
    EXPECT_EQ(r["valid"], true) << r.dump(2);
}

TEST(MutexLease, AnAmbiguousReacquireStaysHeldForWhatRequiresIt) {
    // Either reading stays open until an op tells them apart: a second release by process 0 says
    // it was a re-entry.
    auto reentered = regrant_after_failed_release(false);
    reentered.pop_back();  // process 1's acquire stays in flight
    reentered.push_back(invoke(0, "release").token("t0"));
    reentered.push_back(ok(0, "release"));
    EXPECT_EQ(run(Model::Mutex, reentered)["valid"], true) << run(Model::Mutex, reentered).dump(2);
    // Process 0 re-acquired while its 100 ms lease certainly ran: a re-entry, which its one
    // release does not end, so process 1's grant cannot follow.
    std::vector<Event> certain{invoke(0, "acquire").lease(100),
                               ok(0, "acquire").token("t0"),
                               invoke(1, "acquire").lease(100),
                               invoke(0, "acquire").lease(100),
                               ok(0, "acquire").token("t1"),
                               invoke(0, "release").token("t1"),
                               ok(0, "release"),
                               ok(1, "acquire").token("t2")};
    EXPECT_EQ(run(Model::Mutex, certain)["valid"], false);
}

TEST(MutexLease, AHeldRefusalDoesNotChooseAReadingForTheOpsBeforeIt) {
    // After process 1's second acquire (its 1 ms lease may have run out) and one release, the lock
    // is free or still process 1's. Process 0's grant says free; process 1's "held" refusal,
    // concurrent with it, is then process 0's hold. Placing the refusal first (it changes no
    // reading) would keep only "still process 1's" and refuse process 0's grant.
    const std::vector<Event> history{invoke(1, "acquire").lease(1),
                                     ok(1, "acquire"),
                                     invoke(1, "acquire"),
                                     ok(1, "acquire"),
                                     invoke(1, "release"),
                                     ok(1, "release"),
                                     invoke(1, "acquire").lease(3),
                                     invoke(0, "acquire").lease(3),
                                     ok(0, "acquire"),
                                     fail(1, "acquire", "held")};
    EXPECT_EQ(run(Model::Mutex, history)["valid"], true);
    EXPECT_EQ(run(Model::RwLock, history)["valid"], true);
}

TEST(RwLockLease, AnAcquireAfterTheHoldersLeaseMayHaveRunOutMayBeANewGrant) {
    EXPECT_EQ(run(Model::RwLock, regrant_after_failed_release(false))["valid"], true);
    EXPECT_EQ(run(Model::RwLock, regrant_after_failed_release(true))["valid"], true);
}

TEST(RwLockLease, AReaderWhoseLeaseRanOutNoLongerExcludesAWriter) {
    const json r =
        run(Model::RwLock, {invoke(0, "acquire").shared().lease(1), ok(0, "acquire"),
                            invoke(1, "read"), invoke(2, "acquire").lease(5), ok(2, "acquire")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    const json running =
        run(Model::RwLock, {invoke(0, "acquire").shared().lease(50), ok(0, "acquire"),
                            invoke(2, "acquire").lease(5), ok(2, "acquire")});
    EXPECT_EQ(running["valid"], false);
}

// ---------------------------------------------------------------- rwlock

TEST(RwLockModel, ReadersShare) {
    const json r = run(Model::RwLock, {invoke(0, "acquire").shared(), invoke(1, "acquire").shared(),
                                       ok(0, "acquire").shared(), ok(1, "acquire").shared(),
                                       invoke(0, "release"), invoke(1, "release"), ok(1, "release"),
                                       ok(0, "release"), invoke(2, "acquire"), ok(2, "acquire")});
    EXPECT_EQ(r["valid"], true);
}

TEST(RwLockModel, WriterOverlappingAReaderIsNotLinearizable) {
    const json r = run(Model::RwLock,
                       {invoke(0, "acquire").shared(), ok(0, "acquire").shared(),
                        invoke(1, "acquire"), ok(1, "acquire"), invoke(0, "release"),
                        ok(0, "release"), invoke(1, "release"), ok(1, "release")},
                       search_alone());
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
    EXPECT_EQ(r["violations"][0]["message"],
              "k: not linearizable against rwlock: process 1's acquire (index 2) cannot be placed "
              "after 1 op; by then the model had the lock shared by process 0");
}

TEST(RwLockModel, ReaderOverlappingAWriterIsNotLinearizable) {
    const json r = run(Model::RwLock, {invoke(0, "acquire"), ok(0, "acquire"),
                                       invoke(1, "acquire").shared(), ok(1, "acquire").shared()});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(r["violations"][0]["witness"]["unplaceable"]["value"], "shared");
}

TEST(RwLockModel, WriterMayDowngrade) {
    // Exclusive, then shared by the same process; releases give back the shared hold first.
    const json r =
        run(Model::RwLock,
            {invoke(0, "acquire"), ok(0, "acquire"), invoke(0, "acquire").shared(),
             ok(0, "acquire").shared(), invoke(0, "release"), ok(0, "release"),
             invoke(1, "acquire").shared(), fail(1, "acquire", "held"), invoke(0, "release"),
             ok(0, "release"), invoke(1, "acquire"), ok(1, "acquire")});
    EXPECT_EQ(r["valid"], true);
}

TEST(RwLockModel, SharedRefusedAsHeldWhileOnlyReadersHoldIsNotLinearizable) {
    const json r = run(Model::RwLock, {invoke(0, "acquire").shared(), ok(0, "acquire").shared(),
                                       invoke(1, "acquire").shared(), fail(1, "acquire", "held")});
    ASSERT_EQ(r["valid"], false);
    // An exclusive request refused while a reader holds is what "held" means.
    const json exclusive =
        run(Model::RwLock, {invoke(0, "acquire").shared(), ok(0, "acquire").shared(),
                            invoke(1, "acquire"), fail(1, "acquire", "held")});
    EXPECT_EQ(exclusive["valid"], true);
}

// ---------------------------------------------------------------- register

TEST(RegisterModel, InitialReadIsNull) {
    EXPECT_EQ(run(Model::Register, {invoke(0, "read"), ok(0, "read")})["valid"], true);
    EXPECT_EQ(run(Model::Register, {invoke(0, "read"), ok(0, "read").number(0)})["valid"], false);
}

// The search's own witness: the refutation pass (which would answer first) is off.
TEST(RegisterModel, StaleReadIsNotLinearizable) {
    const json r =
        run(Model::Register,
            {invoke(0, "write").number(1), ok(0, "write").number(1), invoke(1, "write").number(2),
             ok(1, "write").number(2), invoke(2, "read"), ok(2, "read").number(1)},
            search_alone());
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(2, 4));
    EXPECT_EQ(prefix_invokes(r), (std::vector<std::uint64_t>{0, 2}));
    EXPECT_EQ(r["violations"][0]["witness"]["unplaceable"]["output"], 1);
    EXPECT_EQ(r["violations"][0]["witness"]["longest_prefix"][0]["value"], 1);
}

TEST(RegisterModel, ConcurrentCasOneWinsIsLinearizable) {
    // Knossos's cas-register shape: two cas from the same value race; exactly one may win.
    const json r =
        run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                              invoke(1, "cas").cas(1, 2), invoke(2, "cas").cas(1, 3),
                              invoke(3, "read"), ok(1, "cas").cas(1, 2), fail(2, "cas", ""),
                              ok(3, "read").number(1), invoke(0, "read"), ok(0, "read").number(2)});
    EXPECT_EQ(r["valid"], true);
}

TEST(RegisterModel, ConcurrentCasBothWinningIsNotLinearizable) {
    const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                         invoke(1, "cas").cas(1, 2), invoke(2, "cas").cas(1, 3),
                                         ok(1, "cas").cas(1, 2), ok(2, "cas").cas(1, 3)});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(r["violations"][0]["witness"]["unplaceable"]["value"], json::array({1, 3}));
    EXPECT_EQ(prefix_invokes(r), (std::vector<std::uint64_t>{0, 2}));
}

TEST(RegisterModel, FailedCasWithMismatchIsAnObservation) {
    // Nothing else ran: the register held 1, so a cas from 1 cannot have found another value.
    const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                         invoke(1, "cas").cas(1, 2), fail(1, "cas", "mismatch")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
    // With a concurrent write of 5 it could have.
    const json concurrent =
        run(Model::Register,
            {invoke(0, "write").number(1), ok(0, "write").number(1), invoke(2, "write").number(5),
             invoke(1, "cas").cas(1, 2), fail(1, "cas", "mismatch"), ok(2, "write").number(5)});
    EXPECT_EQ(concurrent["valid"], true);
}

TEST(RegisterModel, FailedCasWithoutItsConditionDidNotHappen) {
    // Jepsen's meaning of fail: the cas did not happen, and that says nothing about the value.
    for (const char* error : {"", "timeout-retried", "no-leader"}) {
        const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                             invoke(1, "cas").cas(1, 2), fail(1, "cas", error)});
        EXPECT_EQ(r["valid"], true) << error;
    }
}

TEST(RegisterModel, InfoWriteMustHaveTakenEffect) {
    // The read of 7 only fits if the timed-out write happened, even after it "returned".
    const json r =
        run(Model::Register, {invoke(0, "write").number(7), info(0, "write"), invoke(1, "read"),
                              ok(1, "read"), invoke(1, "read"), ok(1, "read").number(7)});
    EXPECT_EQ(r["valid"], true);
}

TEST(RegisterModel, InfoWriteMustNeverHaveTakenEffect) {
    const json r = run(Model::Register, {invoke(0, "write").number(7), info(0, "write"),
                                         invoke(1, "write").number(1), ok(1, "write").number(1),
                                         invoke(1, "read"), ok(1, "read").number(1)});
    EXPECT_EQ(r["valid"], true);
    // Whereas an ok write of 7 cannot vanish before a read of null.
    const json lost = run(Model::Register, {invoke(0, "write").number(7), ok(0, "write"),
                                            invoke(1, "read"), ok(1, "read")});
    EXPECT_EQ(lost["valid"], false);
}

TEST(RegisterModel, WriteInFlightAtTheEndMayTakeEffect) {
    const json r = run(Model::Register,
                       {invoke(0, "write").number(3), invoke(1, "read"), ok(1, "read").number(3)});
    EXPECT_EQ(r["valid"], true);
}

TEST(RegisterModel, StaleFenceWriteDidNotHappen) {
    const json r =
        run(Model::Register,
            {invoke(0, "write").number(1), ok(0, "write").number(1), invoke(1, "write").number(9),
             fail(1, "write", "stale-fence"), invoke(0, "read"), ok(0, "read").number(1)});
    EXPECT_EQ(r["valid"], true);
}

// ---------------------------------------------------------------- refutation before the search

// The invoke indices of a refutation's proof ops, in the order the witness lists them.
std::vector<std::uint64_t> proof_invokes(const json& result) {
    std::vector<std::uint64_t> out;
    for (const json& p : witness_of(result).at("proof")) {
        out.push_back(p.at("op").at("invoke_index").get<std::uint64_t>());
    }
    return out;
}

TEST(Refutation, AReadOfAValueNothingWritesIsRefutedWithoutASearch) {
    // The write of 2 is in doubt: it may take effect any time, but it writes 2, not 3.
    const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                         invoke(1, "write").number(2), invoke(2, "read"),
                                         ok(2, "read").number(3), info(1, "write")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(witness_of(r)["refuted_by"], "unwritten-value");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(2, 3));
    EXPECT_EQ(proof_invokes(r), std::vector<std::uint64_t>{});
    EXPECT_EQ(r["violations"][0]["message"],
              "k: not linearizable against register: process 2's read (index 3) returned 3, a "
              "value no write or cas writes");
    EXPECT_EQ(r["refuting_processes"], json::array({2}));
    // Process 1's write in doubt was in flight during the read, though it writes another value.
    EXPECT_EQ(r["processes"], (json{1, 2}));
}

TEST(Refutation, AReadOfAValueWrittenOnlyAfterItReturnedIsRefuted) {
    const json r = run(Model::Register, {invoke(0, "read"), ok(0, "read").number(5),
                                         invoke(1, "write").number(5), info(1, "write")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(witness_of(r)["refuted_by"], "unwritten-value");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(0, 0));
    EXPECT_EQ(proof_invokes(r), std::vector<std::uint64_t>{2});
}

TEST(Refutation, AWriteInDoubtInvokedBeforeTheReadReturnedMayHaveProducedIt) {
    // It may take effect after its info, or even after the history ends: nothing to refute.
    const json r = run(Model::Register, {invoke(0, "write").number(5), invoke(1, "read"),
                                         ok(1, "read").number(5), info(0, "write")});
    EXPECT_EQ(r["valid"], true);
}

TEST(Refutation, ACasExpectingAValueNothingWroteIsRefuted) {
    const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                         invoke(1, "cas").cas(2, 3), ok(1, "cas").cas(2, 3)});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(witness_of(r)["refuted_by"], "unwritten-value");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
    // A cas [4, 4] does not write what it expects before it compares.
    const json self = run(Model::Register, {invoke(0, "cas").cas(4, 4), ok(0, "cas").cas(4, 4)});
    ASSERT_EQ(self["valid"], false);
    EXPECT_EQ(witness_of(self)["refuted_by"], "unwritten-value");
}

TEST(Refutation, AFailedCasObservesAndWritesNothing) {
    // --fail-means observation: the failed cas [1, 7] saw "not 1"; it never wrote 7.
    LinearizabilityOptions observing;
    observing.every_fail_observes = true;
    const json r = run(Model::Register,
                       {invoke(0, "cas").cas(1, 7), fail(0, "cas", "timeout-retried"),
                        invoke(1, "read"), ok(1, "read").number(7)},
                       observing);
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(witness_of(r)["refuted_by"], "unwritten-value");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
}

TEST(Refutation, TheInitialValueOptionIsAValueWritten) {
    LinearizabilityOptions starts_at_3;
    starts_at_3.initial_value = 3;
    EXPECT_EQ(
        run(Model::Register, {invoke(0, "read"), ok(0, "read").number(3)}, starts_at_3)["valid"],
        true);
    const json nil = run(Model::Register, {invoke(0, "read"), ok(0, "read")}, starts_at_3);
    ASSERT_EQ(nil["valid"], false);
    EXPECT_EQ(witness_of(nil)["refuted_by"], "unwritten-value");
    EXPECT_EQ(nil["violations"][0]["message"],
              "k: not linearizable against register: process 0's read (index 0) returned null, "
              "but the register starts at 3 and no op writes null");
}

TEST(Refutation, AStaleReadOfAUniqueValueIsRefuted) {
    const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                         invoke(1, "write").number(2), ok(1, "write").number(2),
                                         invoke(2, "read"), ok(2, "read").number(1)});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(witness_of(r)["refuted_by"], "stale-read");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(2, 4));
    EXPECT_EQ(proof_invokes(r), (std::vector<std::uint64_t>{0, 2}));
    EXPECT_EQ(witness_of(r)["longest_prefix"], json::array());
    EXPECT_EQ(witness_of(r)["final_path"][0]["model"], "inconsistent");
}

TEST(Refutation, AStaleReadIsProvenByAReadOfTheNewerValueInDoubt) {
    // The write of 2 is in doubt, but the read of 2 proves it took effect before the last read.
    const json r = run(Model::Register,
                       {invoke(0, "write").number(1), ok(0, "write").number(1),
                        invoke(1, "write").number(2), invoke(2, "read"), ok(2, "read").number(2),
                        info(1, "write"), invoke(3, "read"), ok(3, "read").number(1)});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(witness_of(r)["refuted_by"], "stale-read");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(3, 6));
    EXPECT_EQ(proof_invokes(r), (std::vector<std::uint64_t>{0, 2, 3}));
    // A read of null after an ok write is stale too: the initial value never comes back.
    const json nil = run(Model::Register, {invoke(0, "write").number(7), ok(0, "write").number(7),
                                           invoke(1, "read"), ok(1, "read")});
    ASSERT_EQ(nil["valid"], false);
    EXPECT_EQ(witness_of(nil)["refuted_by"], "stale-read");
    EXPECT_EQ(proof_invokes(nil), std::vector<std::uint64_t>{0});
}

TEST(Refutation, OverlappingWritesMayTakeEffectInEitherOrder) {
    // The write of 2 began before the write of 1 returned: 2 then 1 is a linearization.
    const json r = run(Model::Register, {invoke(0, "write").number(1), invoke(1, "write").number(2),
                                         ok(0, "write").number(1), ok(1, "write").number(2),
                                         invoke(2, "read"), ok(2, "read").number(1)});
    EXPECT_EQ(r["valid"], true);
}

TEST(Refutation, AValueWrittenTwiceIsLeftToTheSearch) {
    // 1 is written again after 2: the read of 1 is fine, and only the search may say so.
    const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                         invoke(1, "write").number(2), ok(1, "write").number(2),
                                         invoke(0, "write").number(1), invoke(2, "read"),
                                         ok(2, "read").number(1), info(0, "write")});
    EXPECT_EQ(r["valid"], true);
}

// ---------------------------------------------------------------- unique values, no search

TEST(UniqueValues, ALinearizationIsBuiltWithoutSearch) {
    // The cas in doubt took effect (2 was read), after the write of 1 and before the write of 3.
    const json r =
        run(Model::Register,
            {invoke(0, "write").number(1), invoke(1, "cas").cas(1, 2), ok(0, "write").number(1),
             invoke(2, "read"), ok(2, "read").number(2), invoke(0, "write").number(3),
             ok(0, "write").number(3), invoke(2, "read"), ok(2, "read").number(3), info(1, "cas")});
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(UniqueValues, AnUnobservedWriteInDoubtNeedNotHaveTakenEffect) {
    const json r = run(Model::Register,
                       {invoke(0, "write").number(1), ok(0, "write").number(1),
                        invoke(1, "write").number(2), invoke(2, "read"), ok(2, "read").number(1),
                        invoke(2, "cas").cas(2, 5), fail(2, "cas", "mismatch"), info(1, "write")});
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(UniqueValues, WhatThePassCannotLinearizeIsLeftToTheSearch) {
    // Both cas expect 1: they cannot both succeed, and the pass does not claim otherwise.
    const json r = run(Model::Register, {invoke(0, "write").number(1), ok(0, "write").number(1),
                                         invoke(1, "cas").cas(1, 2), invoke(2, "cas").cas(1, 3),
                                         ok(1, "cas").cas(1, 2), ok(2, "cas").cas(1, 3)});
    EXPECT_EQ(r["valid"], false);
    EXPECT_EQ(r["keys_without_search"], 0);
    EXPECT_EQ(witness_of(r)["unplaceable"]["value"], json::array({1, 3}));
}

// Issue 32's bar: 100 processes, many ops, 20 % in doubt, unique values - decided in seconds
// (the search alone runs out of memory).
TEST(UniqueValues, AHundredProcessesWithAFifthInDoubtAreDecided) {
    testing::SimulatedRegisterGenerator generator(
        {.seed = 7, .processes = 100, .ops = 50'000, .in_doubt_ratio = 0.2, .unique_values = true});
    LinearizabilityChecker checker(Model::Register);
    for (const Event& e : events_of(generator.generate())) {
        checker.on_event(e);
    }
    LinearizabilityOptions options;
    options.every_fail_observes = true;
    options.time_limit = std::chrono::seconds(10);
    const json r = checker.check(options);
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["keys_without_search"], 1);
    EXPECT_LT(r["elapsed_s"].get<double>(), 2.0);
}

// Issue 32's measurement: one impossible read among 10,000 ops, 5 % of them in doubt. The search
// alone runs out of memory after ~20 s; the refutation answers at once, naming the read.
TEST(Refutation, OneImpossibleReadAmongManyOpsInDoubtIsRefutedAtOnce) {
    testing::SimulatedRegisterGenerator generator(
        {.seed = 32,
         .processes = 10,
         .ops = 10'000,
         .in_doubt_ratio = 0.05,
         .corruption = testing::SimulatedRegisterOptions::Corruption::ReadNeverWritten});
    const std::vector<Event> events = events_of(generator.generate());
    ASSERT_TRUE(generator.corrupted_index());
    LinearizabilityChecker checker(Model::Register);
    for (const Event& e : events) {
        checker.on_event(e);
    }
    LinearizabilityOptions options;
    options.every_fail_observes = true;
    options.time_limit = std::chrono::duration<double>(1.0);
    const json r = checker.check(options);
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(witness_of(r)["refuted_by"], "unwritten-value");
    EXPECT_EQ(witness_of(r)["unplaceable"]["complete_index"], *generator.corrupted_index());
    EXPECT_EQ(witness_of(r)["unplaceable"]["output"],
              testing::SimulatedRegisterGenerator::kNeverWritten);
}

// ---------------------------------------------------------------- partitions and limits

TEST(Partitioning, OneBadKeyMakesTheWholeHistoryInvalidAndIsNamed) {
    std::vector<Event> history;
    for (int k = 0; k < 6; ++k) {
        const std::string key = "key" + std::to_string(k);
        history.push_back(invoke(k, "write").number(k).key(key));
        history.push_back(ok(k, "write").number(k).key(key));
        history.push_back(invoke(k, "read").key(key));
        // key3 reads a value nobody wrote to it (4 went to key4).
        history.push_back(ok(k, "read").number(k == 3 ? 4 : k).key(key));
    }
    LinearizabilityOptions options = search_alone();
    options.threads = 3;
    const json r = run(Model::Register, history, options);
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(r["keys"], 6);
    EXPECT_EQ(r["ops"], 12);
    ASSERT_EQ(r["violations"].size(), 1U);
    EXPECT_EQ(r["violations"][0]["key"], "key3");
    EXPECT_EQ(r["violations"][0]["message"],
              "key3: not linearizable against register: process 3's read (index 14) cannot be "
              "placed after 1 op; by then the model had the register at 3");
}

// Every write is concurrent with every other and the final read sees a value nobody wrote, so
// the search must refute every order of the writes: 2^n linearized sets.
std::vector<Event> exploding_register_history(int writers) {
    std::vector<Event> history;
    for (int p = 0; p < writers; ++p) {
        history.push_back(invoke(p, "write").number(p));
    }
    for (int p = 0; p < writers; ++p) {
        history.push_back(ok(p, "write").number(p));
    }
    history.push_back(invoke(writers, "read"));
    history.push_back(ok(writers, "read").number(-1));
    return history;
}

TEST(Limits, TimeLimitAnswersUnknownQuickly) {
    LinearizabilityOptions options = search_alone();
    options.time_limit = std::chrono::milliseconds(1);
    const auto started = std::chrono::steady_clock::now();
    const json r = run(Model::Register, exploding_register_history(40), options);
    const auto elapsed = std::chrono::steady_clock::now() - started;
    EXPECT_EQ(r["valid"], "unknown");
    EXPECT_EQ(r["reason"], "time limit");
    EXPECT_TRUE(r["violations"].empty());
    EXPECT_LT(elapsed, std::chrono::milliseconds(500));
}

TEST(Limits, MemoryLimitAnswersUnknown) {
    LinearizabilityOptions options = search_alone();
    options.memory_limit_bytes = std::size_t{4} << 20;
    const json r = run(Model::Register, exploding_register_history(40), options);
    EXPECT_EQ(r["valid"], "unknown");
    EXPECT_EQ(r["reason"], "memory limit");
}

// An unknown says how far the search got: the history up to the final read is decided, and the
// write in doubt since the start is still in doubt there.
std::vector<Event> exploding_with_one_in_doubt() {
    std::vector<Event> history = {invoke(99, "write").number(99)};
    for (const Event& e : exploding_register_history(40)) {
        history.push_back(e);
    }
    history.push_back(info(99, "write"));
    return history;
}

TEST(Limits, AnUnknownReportsTheProvedPrefixAndTheOpsInDoubtThere) {
    for (const bool memory : {false, true}) {
        LinearizabilityOptions options = search_alone();
        if (memory) {
            options.memory_limit_bytes = std::size_t{4} << 20;
        } else {
            options.time_limit = std::chrono::milliseconds(50);
        }
        const json r = run(Model::Register, exploding_with_one_in_doubt(), options);
        ASSERT_EQ(r["valid"], "unknown");
        ASSERT_EQ(r["partial"].size(), 1U);
        const json& partial = r["partial"][0];
        EXPECT_EQ(partial["key"], "k");
        EXPECT_EQ(partial["decided_ops"], 41);
        EXPECT_EQ(partial["ops"], 42);
        EXPECT_EQ(partial["index"], 81);
        EXPECT_EQ(partial["time_ns"], 81 * kEventSpacingNs);
        EXPECT_EQ(partial["in_doubt"], 1);
        EXPECT_EQ(partial["in_doubt_ops"][0]["process"], 99);
        EXPECT_EQ(partial["summary"],
                  "k: decided up to op 41 of 42 (event 81, t=0.081 s), 1 operation in doubt there");
        // The text report says it on the check's line.
        Report report;
        report.checks.push_back(CheckResult{"linearizability", r});
        report.compose();
        EXPECT_NE(format_report(report).find(
                      "(" + std::string(memory ? "memory" : "time") +
                      " limit); k: decided up to op 41 of 42 (event 81, t=0.081 s), 1 operation in "
                      "doubt there\n"),
                  std::string::npos)
            << format_report(report);
    }
}

TEST(Partitioning, AViolationStopsTheSearchOfOtherKeys) {
    std::vector<Event> history = exploding_register_history(40);
    for (Event& e : history) {
        e.key = "slow";
    }
    std::vector<Event> bad = {invoke(100, "read").key("bad"), ok(100, "read").number(5).key("bad")};
    history.insert(history.end(), bad.begin(), bad.end());
    LinearizabilityOptions options = search_alone();
    options.threads = 2;
    options.time_limit = std::chrono::seconds(60);
    const auto started = std::chrono::steady_clock::now();
    const json r = run(Model::Register, history, options);
    EXPECT_LT(std::chrono::steady_clock::now() - started, std::chrono::seconds(10));
    ASSERT_EQ(r["valid"], false);  // false beats the unknown of the stopped key
    EXPECT_FALSE(r.contains("reason"));
    ASSERT_EQ(r["violations"].size(), 1U);
    EXPECT_EQ(r["violations"][0]["key"], "bad");
}

TEST(Partitioning, TimeLimitAcrossThreads) {
    std::vector<Event> history;
    for (const char* key : {"a", "b", "c"}) {
        for (Event e : exploding_register_history(40)) {
            e.key = key;
            e.process += 100 * (key[0] - 'a');
            history.push_back(e);
        }
    }
    LinearizabilityOptions options = search_alone();
    options.threads = 2;
    options.time_limit = std::chrono::milliseconds(20);
    const json r = run(Model::Register, history, options);
    EXPECT_EQ(r["valid"], "unknown");
    EXPECT_EQ(r["reason"], "time limit");
    EXPECT_EQ(r["keys"], 3);
}

TEST(Limits, SmallExplosionIsRefutedExactly) {
    const json r = run(Model::Register, exploding_register_history(10), search_alone());
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(10, 20));
    EXPECT_EQ(prefix_invokes(r).size(), 10U);
}

TEST(Witness, PrefixIsCappedAtTheLastFiftyOps) {
    std::vector<Event> history;
    for (int i = 0; i < 70; ++i) {
        history.push_back(invoke(0, "write").number(i));
        history.push_back(ok(0, "write").number(i));
    }
    history.push_back(invoke(1, "read"));
    history.push_back(ok(1, "read").number(3));
    const json r = run(Model::Register, history, search_alone());
    ASSERT_EQ(r["valid"], false);
    const json& witness = r["violations"][0]["witness"];
    EXPECT_EQ(witness["longest_prefix"].size(), 50U);
    EXPECT_EQ(witness["longest_prefix_omitted"], 20);
    EXPECT_EQ(witness["longest_prefix"][0]["invoke_index"], 40);
    EXPECT_EQ(witness["longest_prefix"][49]["invoke_index"], 138);
    EXPECT_EQ(witness["unplaceable"]["invoke_index"], 140);
    EXPECT_NE(r["violations"][0]["message"].get<std::string>().find("after 70 ops"),
              std::string::npos);
}

// ---------------------------------------------------------------- many waiters

json check_jsonl(Model model, const std::string& jsonl) {
    LinearizabilityChecker checker(model);
    std::istringstream in(jsonl);
    HistoryReader reader(in);
    Event event;
    while (reader.next(event)) {
        checker.on_event(event);
    }
    return checker.check({});
}

std::size_t count_of(const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) {
        ++n;
    }
    return n;
}

// 50 clients waiting up to 2 s for one key's 1 s lease, holding it 5 ms: `lockbench run --clients
// 50 --keys 1 --wait-ms 2000 --hold-ms 5` ended unknown at the memory limit on such a history.
std::string fifty_waiters(std::size_t events = 6000) {
    return testing::WaitingLockHistoryGenerator({.seed = 26, .processes = 50}).generate(events);
}

// A refusal with the lock free borrows the grant in doubt whose lease runs out before the next
// grant returns, not the ok one returning first: that one, held from then on, would be taken over
// by p4 and its own ok release could never be placed (lock_tokens.cpp).
TEST(ManyWaiters, ARefusalIsExplainedByTheGrantInDoubtThatIsGoneBeforeTheNextGrant) {
    const json r =
        run(Model::Mutex,
            {invoke(1, "acquire").lease(1), invoke(2, "acquire").lease(2), invoke(3, "acquire"),
             fail(3, "acquire", "held"), invoke(4, "acquire"), ok(4, "acquire").token("t4"),
             invoke(4, "release").token("t4"), ok(4, "release"), ok(1, "acquire").token("t1"),
             invoke(1, "release").token("t1"), ok(1, "release"), info(2, "acquire")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(ManyWaiters, FiftyClientsWaitingOnOneLeaseLockAreDecidedValid) {
    const std::string jsonl = fifty_waiters();
    // The shape the test is about: refusals, and replies in doubt.
    ASSERT_GT(count_of(jsonl, "\"error\":\"held\""), 10U);
    ASSERT_GT(count_of(jsonl, "\"type\":\"info\""), 5U);
    EXPECT_EQ(check_jsonl(Model::Mutex, jsonl)["valid"], true);
    EXPECT_EQ(check_jsonl(Model::RwLock, jsonl)["valid"], true);
}

// The same history with one holder's release answered "not-held" 5 ms into its 1 s lease: the
// lock service lost the lock, and the search must still say so among 50 waiters.
TEST(ManyWaiters, ALockLostWhileItsLeaseRunsIsRefutedAmongFiftyWaiters) {
    // Refuting means exhausting every reading of the history before the lost lock: a shorter one
    // (still every waiter at once) keeps that within the search's time limit under the
    // sanitizers, which run it ten times slower.
    std::string jsonl = fifty_waiters(1500);
    ASSERT_GT(count_of(jsonl, "\"error\":\"held\""), 10U);
    const std::string release_ok = "\"type\":\"ok\",\"process\":";
    std::size_t at = jsonl.find("\n", jsonl.size() / 2);
    while ((at = jsonl.find(release_ok, at)) != std::string::npos) {
        const std::size_t line_end = jsonl.find('\n', at);
        if (jsonl.substr(at, line_end - at).find("\"f\":\"release\"") != std::string::npos) {
            break;
        }
        at = line_end;
    }
    ASSERT_NE(at, std::string::npos);
    const std::size_t line_end = jsonl.find('\n', at);
    jsonl.replace(line_end - 1, 1, ",\"error\":\"not-held\"}");
    jsonl.replace(at, release_ok.size(), "\"type\":\"fail\",\"process\":");
    const json mutex = check_jsonl(Model::Mutex, jsonl);
    EXPECT_EQ(mutex["valid"], false);
    EXPECT_EQ(check_jsonl(Model::RwLock, jsonl)["valid"], false);
}

TEST(ModelNone, ChecksNothing) {
    const json r = run(Model::None, {invoke(0, "acquire"), ok(0, "acquire"), invoke(1, "acquire"),
                                     ok(1, "acquire")});
    EXPECT_EQ(r["valid"], "not-applicable");
    EXPECT_EQ(r["model"], "none");
    EXPECT_EQ(r["keys"], 0);
}

TEST(ModelNames, ARegisterModelOnALockHistoryDoesNotApply) {
    const json r = run(Model::Register, {invoke(0, "acquire"), ok(0, "acquire")});
    EXPECT_EQ(r["valid"], "not-applicable");
    EXPECT_EQ(r["reason"], "the history has no read, write or cas operations");
}

// ---------------------------------------------------------------- randomized cross-check

// An independent statement of the models and of linearizability: try every order of the ops
// that respects real time, with every info op either placed somewhere after its invoke or left
// out. Only feasible for a handful of ops, which is the point: it is obviously right. Leases as
// HISTORY.md reads them: an op takes effect at the latest at its return; a grant's lease starts
// no earlier than its invoke and than every op placed before it; ops take effect in the order
// placed, so none later than an op placed after it returns.
constexpr std::int64_t kForever = std::numeric_limits<std::int64_t>::max();

struct BruteOp {
    std::string f;
    EventType status = EventType::Info;
    std::string error;
    std::int64_t process = 0;
    std::optional<std::int64_t> number;
    std::pair<std::int64_t, std::int64_t> cas{0, 0};
    LockMode mode = LockMode::Exclusive;
    std::optional<std::int64_t> lease_ms;
    std::size_t call = 0;
    std::size_t ret = std::numeric_limits<std::size_t>::max();
    std::int64_t call_ns = 0;
    std::int64_t ret_ns = kForever;  // an info may take effect at any time
};

struct BruteHold {
    int depth = 0;
    std::int64_t ends_no_earlier_than = kForever;
};

struct BruteState {
    std::optional<std::int64_t> value;            // register
    std::map<std::int64_t, BruteHold> exclusive;  // process -> hold (mutex and rwlock)
    std::map<std::int64_t, BruteHold> shared;
    std::int64_t now = 0;  // no op placed so far took effect before this
};

// `displaced_end`: a lease the op's grant needs to have run out ended then, so the grant took
// effect, and its lease starts, no earlier.
std::optional<BruteState> brute_step_one(Model model, BruteState s, const BruteOp& op,
                                         std::int64_t displaced_end = 0);

// Every state `op` may lead to (none: it cannot happen here). `status` Fail means the failure was
// observed (an error that means "did not happen" was filtered out before). The one choice: a
// holder's acquire after its lease may be over is a re-entry, or a new grant if the lease was.
std::vector<BruteState> brute_step(Model model, const BruteState& s, const BruteOp& op) {
    std::vector<BruteState> out;
    if (auto next = brute_step_one(model, s, op)) {
        out.push_back(std::move(*next));
    }
    if (model == Model::Mutex || model == Model::RwLock) {
        auto& holders = op.mode == LockMode::Exclusive ? s.exclusive : s.shared;
        const auto own = holders.find(op.process);
        if (op.f == "acquire" && op.status != EventType::Fail && own != holders.end() &&
            own->second.ends_no_earlier_than != kForever &&
            op.ret_ns >= own->second.ends_no_earlier_than) {
            BruteState lapsed = s;
            (op.mode == LockMode::Exclusive ? lapsed.exclusive : lapsed.shared).erase(op.process);
            if (auto next = brute_step_one(model, lapsed, op, own->second.ends_no_earlier_than)) {
                out.push_back(std::move(*next));
            }
        }
    }
    return out;
}

std::optional<BruteState> brute_step_one(Model model, BruteState s, const BruteOp& op,
                                         std::int64_t displaced_end) {
    const bool observed_failure = op.status == EventType::Fail;
    if (model == Model::Register) {
        if (op.f == "read") {
            if (op.status == EventType::Info) {
                return s;
            }
            return s.value == op.number ? std::optional{s} : std::nullopt;
        }
        if (op.f == "write") {
            s.value = op.number;
            return s;
        }
        const bool matches = s.value == op.cas.first;
        if (observed_failure) {
            return matches ? std::nullopt : std::optional{s};
        }
        if (!matches) {
            return std::nullopt;
        }
        s.value = op.cas.second;
        return s;
    }
    if (model == Model::UnownedMutex) {  // one lock, no owner, no lease
        const bool held = !s.exclusive.empty();
        if (op.f == "acquire") {
            if (observed_failure || held)
                return observed_failure && held ? std::optional{s} : std::nullopt;
            s.exclusive[0].depth = 1;
            return s;
        }
        if (observed_failure)
            return held ? std::nullopt : std::optional{s};
        if (!held)
            return std::nullopt;
        s.exclusive.clear();
        return s;
    }
    const std::int64_t p = op.process;
    const auto may_be_over = [&](const BruteHold& h) {
        return h.ends_no_earlier_than != kForever && op.ret_ns >= h.ends_no_earlier_than;
    };
    if (op.f == "acquire" && observed_failure) {
        const bool exclusive = op.mode == LockMode::Exclusive;
        const bool conflict = !s.exclusive.empty() || (exclusive && !s.shared.empty());
        return conflict ? std::optional{s} : std::nullopt;
    }
    s.now = std::max(s.now, op.call_ns);
    const auto ends_from = [&](std::int64_t start) {
        return op.lease_ms ? start + *op.lease_ms * 1'000'000 : kForever;
    };
    const std::int64_t ends = ends_from(s.now);
    if (op.f == "acquire") {
        auto& mine = op.mode == LockMode::Exclusive ? s.exclusive : s.shared;
        if (op.mode == LockMode::Exclusive && s.exclusive.contains(p)) {
            auto& h = s.exclusive[p];
            ++h.depth;
            h.ends_no_earlier_than = std::max(h.ends_no_earlier_than, ends);
            return s;
        }
        // Everyone this grant excludes must be someone whose lease may be over: they are gone.
        for (auto* holders : {&s.exclusive, &s.shared}) {
            const bool excluded = op.mode == LockMode::Exclusive || holders == &s.exclusive;
            if (!excluded) {
                continue;
            }
            for (auto it = holders->begin(); it != holders->end();) {
                const bool own_shared =
                    holders == &s.shared && it->first == p && op.mode == LockMode::Shared;
                if (own_shared) {
                    ++it;
                } else if (it->first == p && holders == &s.exclusive) {
                    ++it;  // a writer taking a shared hold: a downgrade
                } else if (may_be_over(it->second)) {
                    displaced_end = std::max(displaced_end, it->second.ends_no_earlier_than);
                    it = holders->erase(it);
                } else {
                    return std::nullopt;
                }
            }
        }
        const std::int64_t granted_ends = ends_from(std::max(s.now, displaced_end));
        auto& h = mine[p];
        ++h.depth;
        h.ends_no_earlier_than =
            h.depth == 1 ? granted_ends : std::max(h.ends_no_earlier_than, granted_ends);
        return s;
    }
    auto& holders_of = s.shared.contains(p) ? s.shared : s.exclusive;
    const bool holds = holders_of.contains(p);
    if (observed_failure) {
        // not-held: fine from a non-holder; from the holder only once its lease may be over.
        if (!holds) {
            return s;
        }
        if (!may_be_over(holders_of[p])) {
            return std::nullopt;
        }
        holders_of.erase(p);
        return s;
    }
    if (!holds) {
        return std::nullopt;
    }
    if (--holders_of[p].depth == 0) {
        holders_of.erase(p);
    }
    return s;
}

bool brute_search(Model model, const std::vector<BruteOp>& ops, std::vector<bool>& used,
                  const BruteState& state) {
    bool all_required_placed = true;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        all_required_placed &= used[i] || ops[i].status == EventType::Info;
    }
    if (all_required_placed) {
        return true;
    }
    for (std::size_t c = 0; c < ops.size(); ++c) {
        if (used[c]) {
            continue;
        }
        bool must_wait = false;
        for (std::size_t x = 0; x < ops.size(); ++x) {
            must_wait |= !used[x] && ops[x].status != EventType::Info && ops[x].ret < ops[c].call;
        }
        if (must_wait) {
            continue;
        }
        // Ops take effect in order: none later than any op still to be placed returns.
        BruteOp bounded = ops[c];
        for (std::size_t x = 0; x < ops.size(); ++x) {
            if (!used[x] && ops[x].status != EventType::Info) {
                bounded.ret_ns = std::min(bounded.ret_ns, ops[x].ret_ns);
            }
        }
        for (const BruteState& next : brute_step(model, state, bounded)) {
            used[c] = true;
            const bool found = brute_search(model, ops, used, next);
            used[c] = false;
            if (found) {
                return true;
            }
        }
    }
    return false;
}

// every_fail_observes and initial_value: as LinearizabilityOptions's.
bool brute_force_linearizable(Model model, const std::vector<Event>& history,
                              bool every_fail_observes = false,
                              std::optional<std::int64_t> initial_value = std::nullopt) {
    std::vector<BruteOp> ops;
    std::map<std::int64_t, std::size_t> open;
    for (std::size_t i = 0; i < history.size(); ++i) {
        const Event& e = history[i];
        const std::int64_t at = static_cast<std::int64_t>(i) * kEventSpacingNs;
        if (e.type == EventType::Invoke) {
            BruteOp op;
            op.f = e.f;
            op.process = e.process;
            op.number = e.number;
            op.cas = e.cas.value_or(std::pair<std::int64_t, std::int64_t>{0, 0});
            op.mode = e.mode;
            op.lease_ms = e.lease_ms;
            op.call = i;
            op.call_ns = at;
            open[e.process] = ops.size();
            ops.push_back(op);
            continue;
        }
        BruteOp& op = ops[open.at(e.process)];
        op.status = e.type;
        op.error = e.error;
        if (e.type != EventType::Info) {
            op.ret = i;
            op.ret_ns = at;
        }
        if (e.type == EventType::Ok && op.f == "read") {
            op.number = e.number;
        }
    }
    std::erase_if(ops, [&](const BruteOp& op) {
        const bool conditional = op.f == "cas" || op.f == "acquire" || op.f == "release";
        return op.status == EventType::Fail && !(every_fail_observes && conditional) &&
               !(op.f == "cas" && op.error == "mismatch") &&
               !(op.f == "acquire" && op.error == "held") &&
               !(op.f == "release" && op.error == "not-held");
    });
    std::vector<bool> used(ops.size(), false);
    BruteState initial;
    initial.value = initial_value;
    return brute_search(model, ops, used, initial);
}

// A random interleaving of at most `max_ops` ops by 2-4 processes, with random outcomes and, for
// the locks, random leases of a few events: most such histories are invalid, enough are valid
// for both answers to be exercised.
//
// Waiters (the lock models only): up to 6 processes, mostly acquires, each completing only now
// and then once invoked - so several acquires wait at once across grants, releases and leases
// that run out, as clients with --wait-ms do.
enum class Shape { Mixed, Waiters };
std::vector<Event> random_history(Model model, std::mt19937_64& rng, int max_ops,
                                  Shape shape = Shape::Mixed) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
    const bool waiters = shape == Shape::Waiters;
    const int processes = waiters ? 3 + pick(4) : 2 + pick(3);
    std::vector<std::optional<Event>> in_flight(static_cast<std::size_t>(processes));
    std::vector<Event> history;
    int invoked = 0;
    while (true) {
        const auto p = static_cast<std::size_t>(pick(processes));
        auto& slot = in_flight[p];
        if (!slot) {
            if (invoked == max_ops) {
                bool any = false;
                for (const auto& s : in_flight) {
                    any |= s.has_value();
                }
                // Leave a few in flight at the end, as a run cut short does.
                if (!any || pick(4) == 0) {
                    break;
                }
                continue;
            }
            Event e = invoke(static_cast<std::int64_t>(p), "");
            if (model == Model::Register) {
                const int which = pick(3);
                e.f = which == 0 ? "read" : which == 1 ? "write" : "cas";
                if (e.f == "write") {
                    e.number = 1 + pick(2);
                } else if (e.f == "cas") {
                    e.cas = std::pair<std::int64_t, std::int64_t>{1 + pick(2), 1 + pick(2)};
                }
            } else {
                e.f = pick(waiters ? 4 : 2) == 0 ? "release" : "acquire";
                if (model == Model::RwLock && e.f == "acquire" && pick(2) == 0) {
                    e.mode = LockMode::Shared;
                }
                if (e.f == "acquire" && pick(2) == 0) {
                    e.lease_ms = 1 + pick(4);
                }
            }
            history.push_back(e);
            slot = e;
            ++invoked;
            continue;
        }
        if (waiters && pick(3) != 0) {
            continue;  // still waiting
        }
        Event e = *slot;
        slot.reset();
        e.lease_ms.reset();
        const int outcome = pick(10);
        e.type = outcome < 6 ? EventType::Ok : outcome < 8 ? EventType::Fail : EventType::Info;
        if (e.type == EventType::Fail) {
            const int why = pick(3);
            e.error = why == 0           ? "no-quorum"
                      : e.f == "release" ? "not-held"
                      : e.f == "cas"     ? "mismatch"
                                         : "held";
        }
        if (e.type == EventType::Ok && e.f == "read") {
            const int v = pick(3);
            e.number = v == 0 ? std::nullopt : std::optional<std::int64_t>{v};
        }
        history.push_back(e);
    }
    return history;
}

std::string as_edn(const std::vector<Event>& history);

void cross_check(Model model, std::uint64_t seed, int histories,
                 LinearizabilityOptions options = {}, Shape shape = Shape::Mixed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    int valid = 0;
    for (int i = 0; i < histories; ++i) {
        std::vector<Event> history =
            random_history(model, rng, 2 + static_cast<int>(rng() % 6), shape);
        SCOPED_TRACE("history " + std::to_string(i));
        const json r = run(model, history, options);
        const bool expected = brute_force_linearizable(model, history);
        ASSERT_EQ(r["valid"], expected) << as_edn(history);
        valid += expected ? 1 : 0;
    }
    // Both answers must be exercised, or the comparison proves little.
    EXPECT_GT(valid, histories / 20);
    EXPECT_LT(valid, histories - histories / 20);
}

// The same random history as Jepsen would write it (EDN), read back through jepsen_to_jsonl and
// judged by `lockbench check`'s path: it must agree with the brute-force oracle too.
std::string as_edn(const std::vector<Event>& history) {
    std::string out = "[";
    for (std::size_t i = 0; i < history.size(); ++i) {
        const Event& e = history[i];
        static const char* const types[] = {"invoke", "ok", "fail", "info"};
        std::string value = "nil";
        if (e.cas)
            value = "[" + std::to_string(e.cas->first) + " " + std::to_string(e.cas->second) + "]";
        else if (e.number)
            value = std::to_string(*e.number);
        else if (e.f == "acquire" && e.type == EventType::Invoke)
            value = std::string("{:mode :") +
                    (e.mode == LockMode::Shared ? "shared" : "exclusive") +
                    (e.lease_ms ? ", :lease_ms " + std::to_string(*e.lease_ms) : "") + "}";
        out += "{:type :" + std::string(types[static_cast<int>(e.type)]) + ", :process " +
               std::to_string(e.process) + ", :f :" + e.f + ", :value " + value + ", :time " +
               std::to_string(static_cast<std::int64_t>(i) * kEventSpacingNs) +
               (e.error.empty() ? "" : ", :error :" + e.error) + "}\n";
    }
    return out + "]";
}

void cross_check_edn(Model model, std::uint64_t seed, int histories) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    CheckOptions options;
    options.model = model;
    options.only = std::vector<std::string>{"linearizability"};
    for (int i = 0; i < histories; ++i) {
        std::vector<Event> history = random_history(model, rng, 2 + static_cast<int>(rng() % 6));
        SCOPED_TRACE("history " + std::to_string(i));
        const std::string edn_text = as_edn(history);
        const ConvertedHistory converted = jepsen_to_jsonl(edn_text);
        std::istringstream in(converted.jsonl);
        const Report report = check_history(in, options);
        const bool expected = brute_force_linearizable(model, history);
        ASSERT_EQ(report.verdict, expected ? Verdict::Valid : Verdict::Invalid) << edn_text;
    }
}

// A fresh seed each run, printed on failure; LOCKBENCH_TEST_SEED replays one.
std::uint64_t test_seed() {
    if (const char* seed = std::getenv("LOCKBENCH_TEST_SEED")) {
        return std::strtoull(seed, nullptr, 10);
    }
    return std::random_device{}();
}

TEST(CrossCheck, RegisterMatchesBruteForce) {
    cross_check(Model::Register, test_seed(), 3000);
}
TEST(CrossCheck, MutexMatchesBruteForce) {
    cross_check(Model::Mutex, test_seed(), 3000);
}
TEST(CrossCheck, RwLockMatchesBruteForce) {
    cross_check(Model::RwLock, test_seed(), 3000);
}
TEST(CrossCheck, MutexWithManyWaitersMatchesBruteForce) {
    cross_check(Model::Mutex, test_seed(), 3000, {}, Shape::Waiters);
}
TEST(CrossCheck, RwLockWithManyWaitersMatchesBruteForce) {
    cross_check(Model::RwLock, test_seed(), 3000, {}, Shape::Waiters);
}
TEST(CrossCheck, UnownedMutexMatchesBruteForce) {
    cross_check(Model::UnownedMutex, test_seed(), 3000);
}
// Without our prunings the search is plain WGL with memoisation: the same answers, which is what
// makes wgl_bench's comparison of the two meaningful.
TEST(CrossCheck, PlainWglMatchesBruteForce) {
    LinearizabilityOptions plain;
    plain.prune = false;
    for (Model model : {Model::Register, Model::Mutex, Model::RwLock, Model::UnownedMutex})
        cross_check(model, 4, 500, plain);
}
TEST(CrossCheck, EdnHistoriesMatchBruteForce) {
    for (Model model : {Model::Register, Model::Mutex, Model::RwLock, Model::UnownedMutex})
        cross_check_edn(model, 5, 500);
}

// Register histories whose writes and cas each write a value no other op writes, and whose reads
// return a value written somewhere or not, or null: the stale-read refutation's ground.
std::vector<Event> unique_register_history(std::mt19937_64& rng, int max_ops) {
    std::vector<Event> history = random_history(Model::Register, rng, max_ops);
    auto pick = [&](std::int64_t n) {
        return static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(n));
    };
    std::int64_t written = 0;
    std::map<std::int64_t, Event> invoked;
    for (Event& e : history) {
        if (e.type == EventType::Invoke) {
            if (e.f == "write") {
                e.number = ++written;
            } else if (e.f == "cas") {
                e.cas = std::pair{1 + pick(written + 1), written + 2};
                ++written;
            }
            invoked[e.process] = e;
            continue;
        }
        const Event& call = invoked.at(e.process);
        e.cas = call.cas;
        if (e.f == "write") {
            e.number = call.number;
        } else if (e.f == "read" && e.type == EventType::Ok) {
            const std::int64_t v = pick(written + 2);
            e.number = v == 0 ? std::nullopt : std::optional<std::int64_t>{v};
        }
    }
    return history;
}

// Whenever the refutation answers, the brute-force oracle and the search alone say invalid too;
// whenever the unique-values pass builds a linearization, both say valid; and the whole check
// agrees with the oracle on every history.
void cross_check_refutation(std::uint64_t seed, int histories, bool unique,
                            bool every_fail_observes, std::optional<std::int64_t> initial_value) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    LinearizabilityOptions options;
    options.every_fail_observes = every_fail_observes;
    options.initial_value = initial_value;
    LinearizabilityOptions searching = options;
    searching.refute = false;
    int refuted = 0;
    int linearized = 0;
    for (int i = 0; i < histories; ++i) {
        const int ops = 2 + static_cast<int>(rng() % 6);
        std::vector<Event> history =
            unique ? unique_register_history(rng, ops) : random_history(Model::Register, rng, ops);
        SCOPED_TRACE("history " + std::to_string(i));
        const json r = run(Model::Register, history, options);
        const bool expected =
            brute_force_linearizable(Model::Register, history, every_fail_observes, initial_value);
        ASSERT_EQ(r["valid"], expected) << as_edn(history);
        if (r["valid"] == false && witness_of(r).contains("refuted_by")) {
            ++refuted;
            ASSERT_EQ(run(Model::Register, history, searching)["valid"], false) << as_edn(history);
        }
        if (r["valid"] == true && r["keys_without_search"] == 1) {
            ++linearized;
            ASSERT_EQ(run(Model::Register, history, searching)["valid"], true) << as_edn(history);
        }
    }
    // Each pass must have answered often, or the comparison proves little.
    EXPECT_GT(refuted, histories / 10);
    if (unique) {
        EXPECT_GT(linearized, histories / 20);
    }
}

TEST(CrossCheck, RefutationAgreesWithBruteForceAndTheSearch) {
    const std::uint64_t seed = test_seed();
    for (bool every_fail_observes : {false, true}) {
        cross_check_refutation(seed, 1500, false, every_fail_observes, std::nullopt);
        cross_check_refutation(seed + 1, 1500, true, every_fail_observes, std::nullopt);
        cross_check_refutation(seed + 2, 1500, false, every_fail_observes, 1);
    }
}

// The generator's histories, small enough for the oracle: valid as generated, invalid once
// corrupted, and the refutation names the corrupted read.
TEST(CrossCheck, SimulatedRegisterHistoriesMatchBruteForce) {
    using Corruption = testing::SimulatedRegisterOptions::Corruption;
    const std::uint64_t seed = test_seed();
    SCOPED_TRACE("seed " + std::to_string(seed));
    int corrupted = 0;
    int linearized = 0;
    int valid_unique = 0;
    for (std::uint64_t i = 0; i < 300; ++i) {
        const auto corruption = static_cast<Corruption>(i % 3);
        testing::SimulatedRegisterGenerator generator({.seed = seed + i,
                                                       .processes = 3,
                                                       .ops = 7,
                                                       .in_doubt_ratio = 0.2,
                                                       .unique_values = i % 2 == 0,
                                                       .corruption = corruption});
        const std::vector<Event> history = events_of(generator.generate());
        SCOPED_TRACE("history " + std::to_string(i));
        LinearizabilityOptions options;
        options.every_fail_observes = true;
        const json r = run(Model::Register, history, options);
        const bool expected = brute_force_linearizable(Model::Register, history, true);
        ASSERT_EQ(r["valid"], expected) << as_edn(history);
        const bool stale_possible = i % 2 == 0 || corruption != Corruption::StaleRead;
        if (corruption == Corruption::None || !generator.corrupted_index()) {
            ASSERT_TRUE(expected) << as_edn(history);
            valid_unique += i % 2 == 0 ? 1 : 0;
            linearized += i % 2 == 0 && r["keys_without_search"] == 1 ? 1 : 0;
        } else if (stale_possible) {
            ++corrupted;
            ASSERT_FALSE(expected) << as_edn(history);
            ASSERT_TRUE(witness_of(r).contains("refuted_by")) << as_edn(history);
            EXPECT_EQ(witness_of(r)["unplaceable"]["complete_index"], *generator.corrupted_index());
        }
    }
    EXPECT_GT(corrupted, 50);
    // Of the valid ones with unique values, the pass builds a linearization for nearly all.
    EXPECT_GE(linearized * 10, valid_unique * 9) << linearized << " of " << valid_unique;
}

TEST(CrossCheck, FixedSeedsMatchBruteForce) {
    for (std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
        cross_check(Model::Register, seed, 500);
        cross_check(Model::Mutex, seed, 500);
        cross_check(Model::RwLock, seed, 500);
        cross_check(Model::Mutex, seed, 500, {}, Shape::Waiters);
        cross_check(Model::RwLock, seed, 500, {}, Shape::Waiters);
    }
}

// ---------------------------------------------------------------- lock tokens, no search

// Clients of a simulated lease lock (`model` Mutex) or lease rwlock (`model` RwLock) whose grants
// carry unique tokens, as lockbench records them:
// each acquire or release takes effect at a random moment inside its interval (event i happens at
// i ms, leases last 1-4 ms or forever), a reply is lost now and then (`info`, before or after the
// effect; the process id retires), and with `corrupt` one completion is changed afterwards (a
// grant refused, a refusal granted, an ok release answered `not-held`, or the reverse) - which
// may or may not leave a linearizable history: the oracle says which. Against the rwlock each
// acquire asks for a shared or an exclusive hold at random; a shared one is granted while no
// writer holds, an exclusive one while nobody holds (holds whose lease ran out are gone); the
// mutex is the rwlock whose clients all ask for exclusive holds.
// `processes`: 0 picks 2-5.
std::vector<Event> token_history(Model model, std::mt19937_64& rng, int max_ops, bool corrupt,
                                 int processes = 0) {
    auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<std::uint64_t>(n)); };
    struct Slot {
        std::int64_t process = 0;
        enum class Phase { Idle, Invoked, Applied } phase = Phase::Idle;
        bool acquire = true;
        bool shared = false;
        std::string token;       // the grant it holds (as far as it knows)
        std::int64_t lease = 0;  // 0: none
        EventType outcome = EventType::Ok;
        std::string granted;  // acquire applied: the new token
        bool lost_reply = false;
    };
    if (processes == 0) {
        processes = 2 + pick(4);
    }
    std::vector<Slot> slots(static_cast<std::size_t>(processes));
    for (int p = 0; p < processes; ++p) {
        slots[static_cast<std::size_t>(p)].process = p;
    }
    std::int64_t next_process = processes;
    std::optional<std::string> writer;  // the token holding the lock exclusively
    std::int64_t writer_expires = kForever;
    std::map<std::string, std::int64_t> readers;  // token -> lease end
    int tokens = 0;
    int invoked = 0;
    int busy = 0;
    std::vector<Event> history;
    while (invoked < max_ops || busy > 0) {
        Slot& s = slots[static_cast<std::size_t>(pick(processes))];
        const auto now = static_cast<std::int64_t>(history.size());  // ms
        switch (s.phase) {
            case Slot::Phase::Idle: {
                if (invoked == max_ops) {
                    break;
                }
                s.acquire = s.token.empty();
                Event e = invoke(s.process, s.acquire ? "acquire" : "release");
                if (s.acquire) {
                    if (model == Model::RwLock) {
                        s.shared = pick(2) == 0;
                        if (s.shared) {
                            e.mode = LockMode::Shared;
                        }
                    }
                    s.lease = pick(4) == 0 ? 0 : 1 + pick(4);
                    if (s.lease > 0) {
                        e.lease_ms = s.lease;
                    }
                } else {
                    e.token = s.token;
                }
                history.push_back(e);
                s.phase = Slot::Phase::Invoked;
                ++invoked;
                ++busy;
                break;
            }
            case Slot::Phase::Invoked: {
                s.lost_reply = pick(6) == 0;
                s.phase = Slot::Phase::Applied;
                if (s.lost_reply && pick(2) == 0) {
                    break;  // never took effect
                }
                if (writer && writer_expires <= now) {
                    writer.reset();  // the lease ran out
                }
                std::erase_if(readers, [&](const auto& r) { return r.second <= now; });
                if (s.acquire) {
                    const bool free_enough = !writer && (s.shared || readers.empty());
                    if (free_enough) {
                        s.granted = "t" + std::to_string(++tokens);
                        const std::int64_t ends = s.lease > 0 ? now + s.lease : kForever;
                        if (s.shared) {
                            readers[s.granted] = ends;
                        } else {
                            writer = s.granted;
                            writer_expires = ends;
                        }
                        s.outcome = EventType::Ok;
                    } else {
                        s.outcome = EventType::Fail;
                    }
                } else if (writer == s.token) {
                    writer.reset();
                    s.outcome = EventType::Ok;
                } else if (readers.erase(s.token) == 1) {
                    s.outcome = EventType::Ok;
                } else {
                    s.outcome = EventType::Fail;
                }
                break;
            }
            case Slot::Phase::Applied: {
                --busy;
                s.phase = Slot::Phase::Idle;
                const char* f = s.acquire ? "acquire" : "release";
                if (s.lost_reply) {
                    history.push_back(info(s.process, f));
                    s.process = next_process++;
                    s.token.clear();
                    s.granted.clear();
                    break;
                }
                if (s.outcome == EventType::Ok) {
                    Ev e = ok(s.process, f);
                    if (s.acquire) {
                        e.token(s.granted);
                    }
                    history.push_back(e);
                } else {
                    history.push_back(fail(s.process, f, s.acquire ? "held" : "not-held"));
                }
                s.token = s.acquire && s.outcome == EventType::Ok ? s.granted : "";
                s.granted.clear();
                break;
            }
        }
    }
    if (corrupt) {
        std::vector<std::size_t> completions;
        for (std::size_t i = 0; i < history.size(); ++i) {
            const Event& e = history[i];
            const bool acquire_outcome =
                e.f == "acquire" && e.type != EventType::Invoke && e.type != EventType::Info;
            if (acquire_outcome || (e.f == "release" && e.type == EventType::Ok)) {
                completions.push_back(i);
            }
        }
        if (!completions.empty()) {
            Event& e = history[completions[static_cast<std::size_t>(
                pick(static_cast<int>(completions.size())))]];
            if (e.f == "release") {
                e.type = EventType::Fail;
                e.error = "not-held";
            } else if (e.type == EventType::Ok) {
                // Refused after all: its process never names the token (it releases a grant it
                // does not know of: the release names no token and the path stands aside).
                e.type = EventType::Fail;
                e.error = "held";
                e.token.clear();
            } else {
                e.type = EventType::Ok;
                e.error.clear();
                e.token = "t-extra";
            }
        }
    }
    return history;
}

// Whenever the token path builds a linearization, the brute-force oracle and the search alone
// say valid too; dropping the in-doubt acquires nobody needs changes no answer of the search; and
// the whole check agrees with the oracle on every history.
void cross_check_lock_tokens(std::uint64_t seed, int histories) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    LinearizabilityOptions search_alone;
    search_alone.refute = false;
    search_alone.drop_unneeded_acquires = false;
    LinearizabilityOptions dropping = search_alone;
    dropping.drop_unneeded_acquires = true;
    int valid = 0;
    int linearized = 0;
    int refuted = 0;  // invalid, proved by lock_refutation.cpp without the search
    int dropped = 0;
    for (int i = 0; i < histories; ++i) {
        const bool corrupt = i % 2 == 1;
        const std::vector<Event> history =
            token_history(Model::Mutex, rng, 2 + static_cast<int>(rng() % 7), corrupt);
        SCOPED_TRACE("history " + std::to_string(i));
        const bool expected = brute_force_linearizable(Model::Mutex, history);
        const json r = run(Model::Mutex, history);
        ASSERT_EQ(r["valid"], expected) << as_edn(history);
        ASSERT_EQ(run(Model::Mutex, history, search_alone)["valid"], expected) << as_edn(history);
        const json d = run(Model::Mutex, history, dropping);
        ASSERT_EQ(d["valid"], expected) << as_edn(history);
        dropped += d["acquires_dropped"].get<int>() > 0 ? 1 : 0;
        valid += expected ? 1 : 0;
        linearized += r["keys_without_search"] == 1 && expected ? 1 : 0;
        refuted += r["keys_without_search"] == 1 && !expected ? 1 : 0;
        if (!corrupt) {
            ASSERT_TRUE(expected) << as_edn(history);
        }
    }
    // Both answers exercised, and the passes answered often, or the comparison proves little.
    EXPECT_GT(valid, histories / 2);
    EXPECT_LT(valid, histories - histories / 20);
    // The path is not complete (lock_tokens.cpp): on these small random histories, corrupted ones
    // among them, it builds a linearization for ~88 % of the valid ones.
    EXPECT_GE(linearized * 5, valid * 4) << linearized << " of " << valid;
    EXPECT_GT(dropped, histories / 50) << dropped;
    // The refutations are not complete either: they prove most of the invalid ones (each
    // asserted invalid by the oracle and by the search alone above).
    std::cerr << "mutex refutations: " << refuted << " of " << histories - valid << " invalid\n";
    EXPECT_GE(refuted * 2, histories - valid) << refuted << " of " << histories - valid;
}

TEST(CrossCheck, LockTokensAgreeWithBruteForceAndTheSearch) {
    cross_check_lock_tokens(test_seed(), 4000);
}

// 50 clients, 20,000 ops: an ok grant with a 1-2 ms lease that took effect early and got its
// reply dozens of events later, placed at its return, found a grant without a lease holding, and
// 11 of seeds 1-20 fell back to the search. Leased grants in flight now go before the grant being
// placed when the model takes both in that order; 3 seeds still fall back (the search decides).
TEST(LockTokens, FiftyClientsAreMostlyDecidedWithoutSearch) {
    LinearizabilityOptions quick;
    quick.time_limit = std::chrono::duration<double>(2.0);
    int without_search = 0;
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        std::mt19937_64 rng(seed);
        const json r =
            run(Model::Mutex, token_history(Model::Mutex, rng, 20'000, false, 50), quick);
        EXPECT_NE(r["valid"], false) << "seed " << seed;
        without_search += r["keys_without_search"] == 1 ? 1 : 0;
    }
    EXPECT_GE(without_search, 17);
}

// ---------------------------------------------------------------- lock refutation, no search

TEST(LockRefutation, AGrantWhileAnotherLeaseCertainlyRunsIsRefutedWithoutASearch) {
    // Process 0 holds t0 (100 ms lease) and does nothing more; process 1 is granted at 3 ms. Two
    // acquires in doubt around them change nothing.
    const json r = run(Model::Mutex, {invoke(0, "acquire").lease(100), ok(0, "acquire").token("t0"),
                                      invoke(7, "acquire").lease(100), info(7, "acquire"),
                                      invoke(1, "acquire").lease(100), invoke(8, "acquire"),
                                      ok(1, "acquire").token("t1")});
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
    EXPECT_EQ(witness_of(r)["refuted_by"], "granted-while-held");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 4));
    EXPECT_EQ(proof_invokes(r), (std::vector<std::uint64_t>{0}));
    // The refutation names the two grants; the acquires in doubt were in flight beside them.
    EXPECT_EQ(r["refuting_processes"], (json{0, 1}));
    EXPECT_EQ(r["processes"], (json{0, 1, 7, 8}));
}

// T8 (a late unlock that deletes without checking the token): process 0's lease (2 ms) lapses, 5
// is granted, and 0's late release, concurrent with 5's grant, deletes 5's key. 5's own ops then
// contradict each other - a grant and a not-held answer while its 100 ms lease certainly runs -
// and that is the whole refutation. Process 3's hold before it all took no part, nor did 4's
// refusal in the window: it changed nothing.
std::vector<Event> late_unlock_history() {
    return {invoke(3, "acquire").lease(2),    ok(3, "acquire").token("t3"),
            invoke(3, "release").token("t3"), ok(3, "release"),
            invoke(0, "acquire").lease(2),    ok(0, "acquire").token("t0"),
            invoke(5, "acquire").lease(100),  invoke(0, "release").token("t0"),
            ok(5, "acquire").token("t5"),     ok(0, "release"),
            invoke(4, "acquire").lease(100),  fail(4, "acquire", "held"),
            invoke(5, "release").token("t5"), fail(5, "release", "not-held")};
}

TEST(ViolationProcesses, ALateUnlockThatDeletedAnothersLockIsNamedBesideItsVictim) {
    const json r = run(Model::Mutex, late_unlock_history());
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(witness_of(r)["refuted_by"], "not-held-while-held");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(5, 12));
    EXPECT_EQ(r["refuting_processes"], json{5});
    // 0's release was in flight between 5's grant and 5's refused release.
    EXPECT_EQ(r["processes"], (json{0, 5}));
}

TEST(ViolationProcesses, TheSearchsWindowReachesBackToTheOpThatLeftTheStateItMet) {
    // The search names 5's release and nothing concurrent with it; the hold it met is 5's grant.
    const json r = run(Model::Mutex, late_unlock_history(), search_alone());
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 0);
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(5, 12));
    EXPECT_EQ(r["refuting_processes"], json{5});
    EXPECT_EQ(r["processes"], (json{0, 5}));
}

TEST(ViolationProcesses, AGrantAfterTheLateUnlockNamesTheUnlockerToo) {
    // After 0's late release deleted 5's key, process 6 is granted while 5's lease certainly runs.
    std::vector<Event> h = late_unlock_history();
    h.resize(h.size() - 2);
    h.push_back(invoke(6, "acquire").lease(100));
    h.push_back(ok(6, "acquire").token("t6"));
    const json r = run(Model::Mutex, h);
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(witness_of(r)["refuted_by"], "granted-while-held");
    EXPECT_EQ(r["refuting_processes"], (json{5, 6}));
    EXPECT_EQ(r["processes"], (json{0, 5, 6}));
}

TEST(LockRefutation, AGrantAfterTheHoldersReleaseInDoubtIsLeftToTheSearch) {
    // The release in doubt may have freed the lock first: valid.
    const json r =
        run(Model::Mutex, {invoke(0, "acquire").lease(100), ok(0, "acquire").token("t0"),
                           invoke(0, "release").token("t0"), info(0, "release"),
                           invoke(1, "acquire").lease(100), ok(1, "acquire").token("t1")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
}

TEST(LockRefutation, AGrantAfterTheLeaseMayHaveRunOutIsNotRefuted) {
    const json r = run(Model::Mutex, {invoke(0, "acquire").lease(2), ok(0, "acquire").token("t0"),
                                      invoke(1, "acquire").lease(100), invoke(9, "read"),
                                      ok(1, "acquire").token("t1")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
}

TEST(LockRefutation, ANotHeldAnswerWhileTheLeaseCertainlyRunsIsRefuted) {
    const json r =
        run(Model::Mutex, {invoke(0, "acquire").lease(100), ok(0, "acquire").token("t0"),
                           invoke(0, "release").token("t0"), fail(0, "release", "not-held")});
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(witness_of(r)["refuted_by"], "not-held-while-held");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(0, 2));
    EXPECT_EQ(proof_invokes(r), (std::vector<std::uint64_t>{0}));
}

TEST(LockRefutation, AnOkReleaseOfATokenNoGrantCarriedIsRefuted) {
    // Process 0's acquire got no reply; its cleanup (process 5) releases a token no grant carried
    // and is told ok: nothing it could name was ever granted to it.
    const json r = run(Model::Mutex, {invoke(0, "acquire"), info(0, "acquire"),
                                      invoke(5, "release").token("t9"), ok(5, "release")});
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(witness_of(r)["refuted_by"], "release-without-grant");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(5, 2));
}

TEST(LockRefutation, ARefusalBeforeAnyAcquireIsRefuted) {
    const json r = run(Model::Mutex, {invoke(0, "acquire"), fail(0, "acquire", "held"),
                                      invoke(1, "acquire"), ok(1, "acquire").token("t1")});
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(witness_of(r)["refuted_by"], "refused-while-free");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(0, 0));
}

TEST(LockRefutation, AWriterGrantedWhileAReaderCertainlyHoldsIsRefuted) {
    const auto history = [](bool writer) {
        Ev second = invoke(1, "acquire").lease(100);
        if (!writer) {
            second.shared();
        }
        return std::vector<Event>{invoke(0, "acquire").shared().lease(100),
                                  ok(0, "acquire").token("t0"), second,
                                  ok(1, "acquire").token("t1")};
    };
    const json r = run(Model::RwLock, history(true));
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(witness_of(r)["refuted_by"], "granted-while-held");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
    EXPECT_EQ(run(Model::RwLock, history(false))["valid"], true);
}

// A writer that took a 1 ms shared hold of its own, then the write lock again: its `not-held`
// release gives back the shared hold, whose lease ran out - valid, as the brute force says. The
// refutation once read it as a release of the fresh write hold (CrossCheck, seed 543759073,
// history 1007: a false invalid under TSan's random seed).
TEST(LockRefutation, AWritersNotHeldReleaseMayGiveBackItsOwnLapsedSharedHold) {
    const std::vector<Event> history{invoke(1, "acquire").shared(),
                                     invoke(0, "acquire"),
                                     ok(0, "acquire"),
                                     invoke(0, "acquire").shared().lease(1),
                                     ok(0, "acquire"),
                                     info(1, "acquire"),
                                     invoke(1, "release"),
                                     info(1, "release"),
                                     invoke(0, "acquire"),
                                     ok(0, "acquire"),
                                     invoke(0, "release"),
                                     fail(0, "release", "not-held")};
    EXPECT_TRUE(brute_force_linearizable(Model::RwLock, history));
    EXPECT_EQ(run(Model::RwLock, history)["valid"], true);
    EXPECT_EQ(run(Model::RwLock, history, search_alone())["valid"], true);
    // Without the shared hold, the release contradicts the write hold it certainly has.
    const std::vector<Event> writer_only{invoke(0, "acquire"), ok(0, "acquire"),
                                         invoke(0, "release"), fail(0, "release", "not-held")};
    const json r = run(Model::RwLock, writer_only);
    ASSERT_EQ(r["valid"], false) << r.dump(2);
    EXPECT_EQ(witness_of(r)["refuted_by"], "not-held-while-held");
}

// ---------------------------------------------------------------- rwlock tokens, no search

TEST(RwLockTokens, TwoReadersAreLinearizedWithoutSearch) {
    const json r =
        run(Model::RwLock,
            {invoke(0, "acquire").shared(), invoke(1, "acquire").shared(),
             ok(0, "acquire").token("t0"), ok(1, "acquire").token("t1"),
             invoke(0, "release").token("t0"), invoke(1, "release").token("t1"), ok(1, "release"),
             ok(0, "release"), invoke(2, "acquire"), ok(2, "acquire").token("t2")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(RwLockTokens, AWriterOverlappingAReaderIsRefutedWithoutTheSearch) {
    const json r = run(Model::RwLock, {invoke(0, "acquire").shared(), ok(0, "acquire").token("t0"),
                                       invoke(1, "acquire"), ok(1, "acquire").token("t1"),
                                       invoke(0, "release").token("t0"), ok(0, "release"),
                                       invoke(1, "release").token("t1"), ok(1, "release")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(r["keys_without_search"], 1);
    EXPECT_EQ(witness_of(r)["refuted_by"], "granted-while-held");
    EXPECT_EQ(unplaceable(r), ProcessAndIndex(1, 2));
}

TEST(RwLockTokens, AReaderOverlappingAWriterIsRefutedWithoutTheSearch) {
    const json r =
        run(Model::RwLock, {invoke(0, "acquire"), ok(0, "acquire").token("t0"),
                            invoke(1, "acquire").shared(), ok(1, "acquire").token("t1")});
    ASSERT_EQ(r["valid"], false);
    EXPECT_EQ(r["keys_without_search"], 1);
    EXPECT_EQ(witness_of(r)["refuted_by"], "granted-while-held");
    EXPECT_EQ(r["violations"][0]["witness"]["unplaceable"]["value"], "shared");
}

TEST(RwLockTokens, AWriterInDoubtExplainsAReaderRefusedAsHeld) {
    const json r = run(Model::RwLock, {invoke(0, "acquire"), invoke(1, "acquire").shared(),
                                       fail(1, "acquire", "held"), info(0, "acquire")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
    // Invoked only after the refusal returned, it explains nothing: nobody held the lock then.
    const json late = run(Model::RwLock, {invoke(1, "acquire").shared(), fail(1, "acquire", "held"),
                                          invoke(0, "acquire"), info(0, "acquire")});
    EXPECT_EQ(late["valid"], false);
    EXPECT_EQ(late["keys_without_search"], 1);
    EXPECT_EQ(witness_of(late)["refuted_by"], "refused-while-free");
}

TEST(RwLockTokens, AWriterInDoubtNeedNotHaveTakenEffect) {
    const json r = run(Model::RwLock, {invoke(0, "acquire"), info(0, "acquire"),
                                       invoke(1, "acquire").shared(), ok(1, "acquire").token("t1"),
                                       invoke(1, "release").token("t1"), ok(1, "release")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(RwLockTokens, AReleaseInDoubtMayHaveEndedTheWritersHold) {
    const json r =
        run(Model::RwLock,
            {invoke(0, "acquire"), ok(0, "acquire").token("t0"), invoke(0, "release").token("t0"),
             info(0, "release"), invoke(1, "acquire").shared(), ok(1, "acquire").token("t1")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(RwLockTokens, AReleaseInDoubtNeedNotHaveTakenEffect) {
    const json r = run(Model::RwLock, {invoke(0, "acquire"), ok(0, "acquire").token("t0"),
                                       invoke(0, "release").token("t0"), info(0, "release"),
                                       invoke(1, "acquire"), fail(1, "acquire", "held")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(RwLockTokens, AWriterWhoseLeaseMayHaveRunOutIsTakenOver) {
    const json r = run(Model::RwLock, {invoke(0, "acquire").lease(1), ok(0, "acquire").token("t0"),
                                       invoke(1, "acquire").shared(), invoke(2, "read"),
                                       ok(1, "acquire").token("t1")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
    const json running =
        run(Model::RwLock, {invoke(0, "acquire").lease(50), ok(0, "acquire").token("t0"),
                            invoke(1, "acquire").shared(), ok(1, "acquire").token("t1")});
    EXPECT_EQ(running["valid"], false);
    EXPECT_EQ(running["keys_without_search"], 1);
    EXPECT_EQ(witness_of(running)["refuted_by"], "granted-while-held");
}

// As ManyWaiters' mutex case: a reader refused with nobody holding borrows the writer in doubt
// whose lease runs out before the next grant returns, not the ok writer returning first.
TEST(RwLockTokens, ARefusalIsExplainedByTheWriterInDoubtThatIsGoneBeforeTheNextGrant) {
    const json r =
        run(Model::RwLock,
            {invoke(1, "acquire").lease(1), invoke(2, "acquire").lease(2),
             invoke(3, "acquire").shared(), fail(3, "acquire", "held"), invoke(4, "acquire"),
             ok(4, "acquire").token("t4"), invoke(4, "release").token("t4"), ok(4, "release"),
             ok(1, "acquire").token("t1"), invoke(1, "release").token("t1"), ok(1, "release"),
             info(2, "acquire")});
    EXPECT_EQ(r["valid"], true) << r.dump(2);
    EXPECT_EQ(r["keys_without_search"], 1);
}

TEST(RwLockTokens, GrantsWithoutTokensAreLeftToTheSearch) {
    const json r = run(Model::RwLock, {invoke(0, "acquire").shared(), invoke(1, "acquire").shared(),
                                       ok(0, "acquire"), ok(1, "acquire")});
    EXPECT_EQ(r["valid"], true);
    EXPECT_EQ(r["keys_without_search"], 0);
}

// Whenever the rwlock token path builds a linearization, the brute-force oracle says valid too,
// and whenever lock_refutation.cpp refutes one, invalid; and the whole check and the search alone
// agree with the oracle on every history.
void cross_check_rwlock_tokens(std::uint64_t seed, int histories) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    LinearizabilityOptions search_alone;
    search_alone.refute = false;
    int valid = 0;
    int linearized = 0;
    int refuted = 0;
    for (int i = 0; i < histories; ++i) {
        const bool corrupt = i % 2 == 1;
        const std::vector<Event> history =
            token_history(Model::RwLock, rng, 2 + static_cast<int>(rng() % 7), corrupt);
        SCOPED_TRACE("history " + std::to_string(i));
        const bool expected = brute_force_linearizable(Model::RwLock, history);
        const json r = run(Model::RwLock, history);
        if (r["keys_without_search"] == 1) {
            // Decided without the search: a linearization built, or a contradiction refuted.
            ASSERT_EQ(r["valid"], expected) << as_edn(history);
            (expected ? linearized : refuted) += 1;
        }
        ASSERT_EQ(r["valid"], expected) << as_edn(history);
        const json alone = run(Model::RwLock, history, search_alone);
        ASSERT_EQ(alone["valid"], expected) << as_edn(history);
        ASSERT_EQ(alone["keys_without_search"], 0);
        valid += expected ? 1 : 0;
        if (!corrupt) {
            ASSERT_TRUE(expected) << as_edn(history);
        }
    }
    EXPECT_GT(valid, histories / 2);
    EXPECT_LT(valid, histories - histories / 20);
    // The path is not complete (rwlock_tokens.cpp): on these small random histories, corrupted
    // ones among them, it builds a linearization for most of the valid ones.
    std::cerr << "rwlock token path: " << linearized << " of " << valid << " valid, " << refuted
              << " of " << histories - valid << " invalid refuted\n";
    EXPECT_GE(linearized * 5, valid * 4) << linearized << " of " << valid;
    EXPECT_GE(refuted * 2, histories - valid) << refuted << " of " << histories - valid;
}

TEST(CrossCheck, RwLockTokensAgreeWithBruteForceAndTheSearch) {
    cross_check_rwlock_tokens(test_seed(), 4000);
}

// Readers and writers at scale: 50 clients, 20,000 ops, a sixth of the replies lost. The path
// decides what the search alone cannot in its time limit.
TEST(RwLockTokens, FiftyReadersAndWritersAreDecidedWithoutSearch) {
    std::mt19937_64 rng(32);
    const std::vector<Event> history = token_history(Model::RwLock, rng, 20'000, false, 50);
    const json r = run(Model::RwLock, history);
    EXPECT_EQ(r["valid"], true) << r.dump().substr(0, 2000);
    EXPECT_EQ(r["keys_without_search"], 1);
    EXPECT_LT(r["elapsed_s"].get<double>(), 1.0);
}

// Seed 3 stuck the path: a writer with a 2 ms lease took effect early, and its reply came ~170
// events later, after dozens of readers' grants; placed at its return, it found readers without a
// lease still holding. A grant in flight with a lease, no ok release and a conflict now goes
// before the grant being placed when the model takes both in that order.
TEST(RwLockTokens, FiftyReadersAndWritersAreDecidedWithoutSearchOnTwentySeeds) {
    LinearizabilityOptions quick;
    quick.time_limit = std::chrono::duration<double>(2.0);
    for (std::uint64_t seed = 1; seed <= 20; ++seed) {
        std::mt19937_64 rng(seed);
        const json r =
            run(Model::RwLock, token_history(Model::RwLock, rng, 20'000, false, 50), quick);
        EXPECT_EQ(r["valid"], true) << "seed " << seed;
        EXPECT_EQ(r["keys_without_search"], 1) << "seed " << seed;
    }
}

TEST(CrossCheck, RwLockTokensFixedSeeds) {
    for (std::uint64_t seed : {1ULL, 2ULL, 3ULL}) {
        cross_check_rwlock_tokens(seed, 1000);
    }
}

// A library's late grant (HISTORY.md, "A library's signals"): process 1's acquire timed out (in
// doubt), the library granted it anyway, process 2 was refused `held`, the adapter released the
// late grant, and process 2 was granted. Without the late-grant events the in-doubt acquire has
// to explain the refusal and its lease then still runs at process 2's grant: a false `invalid`.
// The events of a hand-written history, numbered: HISTORY.md wants `index` on every event.
std::vector<Event> indexed_events(const std::string& jsonl) {
    return events_of(testing::numbered(jsonl));
}

std::string late_grant_history(const std::string& granted, const std::string& released,
                               bool with_token = true) {
    const std::string token = with_token ? R"(,"token":"late-1")" : "";
    std::string out =
        R"({"type":"invoke","process":1,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":5000},"time":0}
{"type":"info","process":1,"f":"acquire","key":"k","error":"timeout","time":0}
)";
    if (!granted.empty())
        out +=
            R"({"type":"info","process":"library","f":"late-grant","key":"k","value":{"process":)" +
            granted + R"(,"phase":"granted")" + token + R"(},"time":0}
)";
    out +=
        R"({"type":"invoke","process":2,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":5000},"time":0}
{"type":"fail","process":2,"f":"acquire","key":"k","error":"held","time":0}
)";
    if (!released.empty())
        out +=
            R"({"type":"info","process":"library","f":"late-grant","key":"k","value":{"process":1,"phase":"released")" +
            released + R"(},"time":0}
)";
    out +=
        R"({"type":"invoke","process":2,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":5000},"time":0}
{"type":"ok","process":2,"f":"acquire","key":"k","value":{"token":"b-1"},"time":0}
{"type":"invoke","process":2,"f":"release","key":"k","value":{"token":"b-1"},"time":0}
{"type":"ok","process":2,"f":"release","key":"k","time":0}
)";
    return out;
}

TEST(LateGrant, WithoutItsEventsTheInDoubtAcquireMakesAFalseViolation) {
    for (const bool refute : {true, false}) {
        LinearizabilityOptions options;
        options.refute = refute;
        const json result = run(Model::Mutex, indexed_events(late_grant_history("", "")), options);
        EXPECT_EQ(result["valid"], false) << result.dump(2);
        EXPECT_FALSE(result.contains("late_grants_placed"));
    }
}

TEST(LateGrant, ItsGrantAndTheAdaptersReleaseArePlaced) {
    for (const bool refute : {true, false}) {
        for (const bool with_token : {true, false}) {
            LinearizabilityOptions options;
            options.refute = refute;
            const json result =
                run(Model::Mutex,
                    indexed_events(late_grant_history("1", R"(,"ok":true)", with_token)), options);
            EXPECT_EQ(result["valid"], true) << result.dump(2);
            EXPECT_EQ(result["late_grants_placed"], 1);
            EXPECT_EQ(result["ops"], 4 + 1) << "the adapter's release is an op of process 1";
        }
    }
}

// The same in a read-write lock: the late grant is a writer's, the refusal a reader's.
TEST(LateGrant, ARwLocksLateGrantIsPlacedToo) {
    std::string history = late_grant_history("1", R"(,"ok":true)");
    const std::string refusal =
        R"("process":2,"f":"acquire","key":"k","value":{"mode":"exclusive")";
    history.replace(history.find(refusal), refusal.size(),
                    R"("process":2,"f":"acquire","key":"k","value":{"mode":"shared")");
    const json placed = run(Model::RwLock, indexed_events(history));
    EXPECT_EQ(placed["valid"], true) << placed.dump(2);
    EXPECT_EQ(placed["late_grants_placed"], 1);
    std::string without = history;
    for (std::size_t at;
         (at = without.find(R"({"type":"info","process":"library")")) != std::string::npos;) {
        without.erase(at, without.find('\n', at) - at + 1);
    }
    EXPECT_EQ(run(Model::RwLock, indexed_events(without))["valid"], false);
}

// A release that failed, or never reported, may or may not have run: in doubt, which still
// explains process 2's later grant.
TEST(LateGrant, AReleaseThatFailedOrNeverEndedStaysInDoubt) {
    for (const std::string& released : {std::string(R"(,"ok":false,"text":"no")"), std::string()}) {
        const json result =
            run(Model::Mutex, indexed_events(late_grant_history("1", released)), search_alone());
        EXPECT_EQ(result["valid"], true) << released << "\n" << result.dump(2);
        EXPECT_EQ(result["late_grants_placed"], 1);
    }
}

// A late grant the history cannot place (it names a process without an in-doubt acquire of the
// key) leaves the key unknown, with the reason - never a violation the missing hold may explain.
TEST(LateGrant, OneThatCannotBePlacedMakesTheKeyUnknownNotInvalid) {
    const json result = run(Model::Mutex, indexed_events(late_grant_history("2", "")));
    EXPECT_EQ(result["valid"], "unknown") << result.dump(2);
    EXPECT_EQ(result["reason"],
              "key k: the adapter's late grant of process 2 (event 2) matches no in-doubt "
              "acquire of the key, and the key is not linearizable without it");
    EXPECT_EQ(result["violations"].size(), 0u);
}

// The late grant is a real hold: granted while another process certainly holds the lock (granted,
// never released, no lease), it is the library's violation of mutual exclusion.
TEST(LateGrant, ALateGrantOverAnothersHoldIsAViolation) {
    const std::string history =
        R"({"type":"invoke","process":1,"f":"acquire","key":"k","value":null,"time":0}
{"type":"info","process":1,"f":"acquire","key":"k","error":"timeout","time":0}
{"type":"invoke","process":2,"f":"acquire","key":"k","value":null,"time":0}
{"type":"ok","process":2,"f":"acquire","key":"k","value":{"token":"b-1"},"time":0}
{"type":"info","process":"library","f":"late-grant","key":"k","value":{"process":1,"phase":"granted","token":"late-1"},"time":0}
{"type":"info","process":"library","f":"late-grant","key":"k","value":{"process":1,"phase":"released","ok":true},"time":0}
)";
    for (const bool refute : {true, false}) {
        LinearizabilityOptions options;
        options.refute = refute;
        const std::string before_late_grant =
            history.substr(0, history.find(R"x({"type":"info","process":"library")x"));
        const json without_late_grant =
            run(Model::Mutex, indexed_events(before_late_grant), options);
        EXPECT_EQ(without_late_grant["valid"], true) << without_late_grant.dump(2);
        const json result = run(Model::Mutex, indexed_events(history), options);
        EXPECT_EQ(result["valid"], false) << result.dump(2);
    }
}

// An acquire the library abandoned (HISTORY.md, "A library's signals"): process 1's acquire
// timed out (in doubt) while process 0 held the lock until 2.1 s; process 2 was refused `held` at
// 3.7 s - only process 1's lock can explain that - and process 3 was granted at 5.0 s. Granted no
// earlier than 2.1 s with a 3 s lease, process 1's hold would still run at 5.0 s: without the
// `abandoned` event the history is a false violation. Curator did this in zk-leader-killed: its
// call failed after its node had reached the front of the queue, and it deleted the node.
std::string abandoned_acquire_history(const std::string& abandoned_at) {
    std::string out =
        R"({"type":"invoke","process":0,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":3000},"time":0}
{"type":"ok","process":0,"f":"acquire","key":"k","value":{"token":"a-0"},"time":100000000}
{"type":"invoke","process":1,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":3000},"time":200000000}
{"type":"invoke","process":0,"f":"release","key":"k","value":{"token":"a-0"},"time":2100000000}
{"type":"ok","process":0,"f":"release","key":"k","time":2200000000}
{"type":"info","process":1,"f":"acquire","key":"k","error":"timeout","time":2500000000}
{"type":"invoke","process":2,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":3000},"time":2600000000}
{"type":"fail","process":2,"f":"acquire","key":"k","error":"held","time":3700000000}
{"type":"invoke","process":3,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":3000},"time":4000000000}
{"type":"ok","process":3,"f":"acquire","key":"k","value":{"token":"c-3"},"time":5000000000}
)";
    if (abandoned_at.empty())
        return out;
    // Placed where its time puts it in the stream, as the engine records it.
    const std::string event =
        R"({"type":"info","process":"library","f":"late-grant","key":"k","value":{"process":1,"phase":"abandoned"},"time":)" +
        abandoned_at + "}\n";
    std::size_t at = 0;
    for (std::size_t line = 0; line < out.size(); line = out.find('\n', line) + 1) {
        const std::size_t time = out.find("\"time\":", line) + 7;
        if (std::stoll(out.substr(time, out.find('}', time) - time)) > std::stoll(abandoned_at))
            break;
        at = out.find('\n', line) + 1;
    }
    return out.insert(at, event);
}

TEST(AbandonedAcquire, WithoutItsEventTheInDoubtAcquireMakesAFalseViolation) {
    for (const bool refute : {true, false}) {
        LinearizabilityOptions options;
        options.refute = refute;
        const json result =
            run(Model::Mutex, indexed_events(abandoned_acquire_history("")), options);
        EXPECT_EQ(result["valid"], false) << result.dump(2);
    }
}

TEST(AbandonedAcquire, ItsHoldEndsByTheEventWhenItTookEffect) {
    for (const bool refute : {true, false}) {
        for (const Model model : {Model::Mutex, Model::RwLock}) {
            LinearizabilityOptions options;
            options.refute = refute;
            const json result =
                run(model, indexed_events(abandoned_acquire_history("5100000000")), options);
            EXPECT_EQ(result["valid"], true) << result.dump(2);
            EXPECT_EQ(result["abandoned_acquires_placed"], 1);
            EXPECT_EQ(result["ops"], 5 + 1)
                << "the end of the abandoned hold is an op of process 1";
        }
    }
}

// The hold ended by the event: abandoned at 2.55 s, before process 2 asked, process 1's lock
// cannot be what refused process 2 between 2.6 and 3.7 s - unless granted after that, when its
// lease would run past process 3's grant. Still a violation.
TEST(AbandonedAcquire, ItEndsTheHoldByItsTime) {
    for (const bool refute : {true, false}) {
        LinearizabilityOptions options;
        options.refute = refute;
        const json result =
            run(Model::Mutex, indexed_events(abandoned_acquire_history("2550000000")), options);
        EXPECT_EQ(result["valid"], false) << result.dump(2);
    }
}

// An abandoned acquire that never took effect changes nothing: the lock stays with its holder.
TEST(AbandonedAcquire, ItNeverFreesAnotherProcesssLock) {
    const std::string history =
        R"({"type":"invoke","process":0,"f":"acquire","key":"k","value":null,"time":0}
{"type":"ok","process":0,"f":"acquire","key":"k","value":{"token":"a-0"},"time":0}
{"type":"invoke","process":1,"f":"acquire","key":"k","value":null,"time":0}
{"type":"info","process":1,"f":"acquire","key":"k","error":"timeout","time":0}
{"type":"info","process":"library","f":"late-grant","key":"k","value":{"process":1,"phase":"abandoned"},"time":0}
{"type":"invoke","process":2,"f":"acquire","key":"k","value":null,"time":0}
{"type":"ok","process":2,"f":"acquire","key":"k","value":{"token":"b-2"},"time":0}
)";
    for (const bool refute : {true, false}) {
        LinearizabilityOptions options;
        options.refute = refute;
        EXPECT_EQ(run(Model::Mutex, indexed_events(history), options)["valid"], false);
    }
}

// One that matches no in-doubt acquire claims nothing: passed over, never `unknown`.
TEST(AbandonedAcquire, OneThatMatchesNoInDoubtAcquireIsPassedOver) {
    std::string history = abandoned_acquire_history("5100000000");
    history.replace(history.find(R"({"process":1,"phase":"abandoned"})"),
                    std::string(R"({"process":1,"phase":"abandoned"})").size(),
                    R"({"process":2,"phase":"abandoned"})");
    const json result = run(Model::Mutex, indexed_events(history));
    EXPECT_EQ(result["valid"], false) << result.dump(2);
    EXPECT_FALSE(result.contains("abandoned_acquires_placed"));
}

// A library's event as the engine records it (HISTORY.md, "A library's signals").
Event late_grant_event(const std::string& key, const json& value) {
    Event e;
    e.type = EventType::Info;
    e.process = kNemesisProcess;
    e.library = true;
    e.f = "late-grant";
    e.key = key;
    e.value_json = value.dump();
    return e;
}

// The passes before the search (token linearization, refutation, dropped acquires) must answer as
// the search alone does on keys with late grants: the adapter's release of one ends the hold by
// its `released`, or changes nothing when the lease had already freed the lock.
TEST(LateGrant, ThePassesAgreeWithTheSearchAlone) {
    const std::uint64_t seed = test_seed();
    SCOPED_TRACE("LOCKBENCH_TEST_SEED=" + std::to_string(seed));
    std::mt19937_64 rng(seed);
    LinearizabilityOptions search_only;
    search_only.refute = false;
    search_only.drop_unneeded_acquires = false;
    LinearizabilityOptions dropping = search_only;
    dropping.drop_unneeded_acquires = true;
    int placed = 0;
    int valid = 0;
    const int histories = 3000;
    for (int i = 0; i < histories; ++i) {
        std::vector<Event> history =
            token_history(Model::Mutex, rng, 2 + static_cast<int>(rng() % 9), i % 3 == 2);
        // Some in-doubt acquires are granted late, at a later position, and released later still
        // (ok, failed, or never reported).
        for (std::size_t at = 0; at < history.size(); ++at) {
            const Event in_doubt = history[at];
            if (in_doubt.type != EventType::Info || in_doubt.f != "acquire" || rng() % 3 == 0) {
                continue;
            }
            const std::size_t granted_at = at + 1 + rng() % (history.size() - at);
            if (rng() % 4 == 0) {
                // Abandoned instead: whatever it held ended by a later position.
                history.insert(history.begin() + static_cast<std::ptrdiff_t>(granted_at),
                               late_grant_event(in_doubt.key, {{"process", in_doubt.process},
                                                               {"phase", "abandoned"}}));
                ++at;
                continue;
            }
            json granted{{"process", in_doubt.process}, {"phase", "granted"}};
            if (rng() % 2 == 0) {
                granted["token"] = "late-" + std::to_string(at);
            }
            history.insert(history.begin() + static_cast<std::ptrdiff_t>(granted_at),
                           late_grant_event(in_doubt.key, granted));
            const auto how = rng() % 3;
            if (how != 2) {
                const std::size_t released_at =
                    granted_at + 1 + rng() % (history.size() - granted_at);
                history.insert(history.begin() + static_cast<std::ptrdiff_t>(released_at),
                               late_grant_event(in_doubt.key, {{"process", in_doubt.process},
                                                               {"phase", "released"},
                                                               {"ok", how == 0}}));
            }
            ++at;
        }
        SCOPED_TRACE("history " + std::to_string(i));
        const json alone = run(Model::Mutex, history, search_only);
        const json all = run(Model::Mutex, history);
        const json dropped = run(Model::Mutex, history, dropping);
        ASSERT_EQ(all["valid"], alone["valid"]) << as_edn(history);
        ASSERT_EQ(dropped["valid"], alone["valid"]) << as_edn(history);
        placed += alone.value("late_grants_placed", 0);
        valid += alone["valid"] == true ? 1 : 0;
    }
    EXPECT_GT(placed, histories / 4);
    EXPECT_GT(valid, histories / 4);
    EXPECT_LT(valid, histories - histories / 10);
}

}  // namespace
}  // namespace lockbench::checker
