#include "checker/story/story.hpp"

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

#include "checker/check.hpp"
#include "checker/history_testing.hpp"
#include "checker/story/timeline_html.hpp"

namespace lockbench::checker {
namespace {

using testing::numbered;

// T1 in miniature: process 1 holds k0 with a 300 ms lease and is paused for a second; process 2
// is granted k0 after the lease ran out and writes; process 1 wakes, writes what it computed
// before (a lost update) and asks to release (not-held).
// `fenced`: T1 on a fenced resource, the fence in time - process 2 (fence 8) writes before the
// paused process 1 (fence 7) wakes, and the register refuses process 1's write.
std::string t1(bool fenced) {
    const std::int64_t holder_fence = fenced ? 7 : 0;
    const std::int64_t next_fence = fenced ? 8 : 0;
    return testing::t1_holder_reads_and_pauses(1000, holder_fence) +
           testing::t1_next_holder_reads(200000000, 500000000, 1000000, next_fence) +
           testing::write_event("invoke", 2, "k0", 5, next_fence, 503000000) +
           testing::write_event("ok", 2, "k0", 5, next_fence, 504000000) +
           testing::released(2, "k0", "c2-1", 505000000, 506000000) +
           testing::resumed(1, 1110000000) +
           testing::write_event("invoke", 1, "k0", 5, holder_fence, 1111000000) +
           testing::write_event(fenced ? "fail" : "ok", 1, "k0", 5, holder_fence, 1112000000,
                                fenced ? "stale-fence" : "") +
           testing::release_failed(1, "k0", "c1-1", 1113000000, 1114000000, "not-held");
}
const std::string kT1 = t1(false);

// One history numbered, checked and told, as `lockbench check` and the story page see it.
struct Told {
    std::string history;
    Report report;
    Story story;
    std::vector<std::string> texts;
};

Told tell(std::string_view history_text, const StoryContext& context) {
    Told told{.history = numbered(history_text)};
    std::istringstream for_check(told.history);
    told.report = check_history(for_check, {});
    std::istringstream for_story(told.history);
    told.story = tell_story(for_story, told.report, context);
    for (const Claim& c : told.story.claims)
        told.texts.push_back(c.text);
    return told;
}

std::vector<std::string> claim_texts(std::string_view history_text, const StoryContext& context) {
    return tell(history_text, context).texts;
}

// The timeline page drawn for what `told` says.
std::string timeline_of(const Told& told, const std::string& title) {
    std::istringstream for_page(told.history);
    return timeline_html(for_page, told.report, told.story, {.title = title});
}

TEST(Story, TellsT1FromTheEventsCitingEach) {
    const Told told =
        tell(kT1, {.scenario = "t1",
                   .strategy = "set_nx_px",
                   .expectations = {{"set_nx_px", "violates:mutual_exclusion"},
                                    {"fenced", "violates:mutual_exclusion,saves:fencing"},
                                    {"reentrant_hash", "safe"}}});
    const Story& story = told.story;
    EXPECT_EQ(story.key, "k0");
    EXPECT_EQ(told.texts,
              (std::vector<std::string>{
                  "At 0.101 s process 1 acquired k0 (token c1-1, lease 300 ms) [#0, #1].",
                  "At 0.110 s the nemesis paused process 1 for 1000 ms [#4].",
                  "Its 300 ms lease ran out on the server by 0.401 s, while process 1 had not "
                  "released the lock [#0, #1].",
                  "At 0.500 s process 2 was granted k0 (token c2-1) [#6] while process 1 still "
                  "held it: it had not asked to release it (it did at 1.113 s).",
                  "At 0.504 s process 2 wrote 5 [#10].",
                  "At 1.112 s process 1, resumed at 1.110 s [#13], wrote 5 (it had read 4 at "
                  "0.103 s [#3]) over 5 written by process 2: an update was lost [#10, #15].",
                  "At 1.113 s process 1 asked to release k0; the answer was `fail not-held` "
                  "[#16, #17].",
                  "What would have prevented it: in t1, `fenced` has the stale write rejected by "
                  "the fence, and `reentrant_hash` stays safe (the scenario's expectations, each "
                  "asserted by lockbench's own tests).",
              }));
    EXPECT_EQ(story.claims[0].kind, ClaimKind::Acquired);
    EXPECT_EQ(story.claims[2].kind, ClaimKind::LeaseRanOut);
    EXPECT_EQ(story.claims[2].time_ns, 401000000);
    EXPECT_EQ(story.claims[5].kind, ClaimKind::LostUpdate);
    EXPECT_EQ(story.claims[5].events, (std::vector<std::uint64_t>{15, 10, 3, 13}));

    const std::string text = format_story(story);
    EXPECT_EQ(text.substr(0, text.find('\n')),
              "k0: process 1's lock was granted to another process while it still held it "
              "(set_nx_px).");
    // The swimlane: the holder paused across the other's hold, its stale write marked lost.
    EXPECT_NE(story.swimlane.find("p1      |"), std::string::npos);
    EXPECT_NE(story.swimlane.find("p2      |"), std::string::npos);
    EXPECT_NE(story.swimlane.find('z'), std::string::npos);
    // 'L' marks the write whose update was lost (process 2's, at 0.504 s), in its writer's row;
    // the overwriting write of process 1 is the one the sentence cites ('W').
    const auto row_of = [&](const std::string& label) {
        const std::size_t at = story.swimlane.find(label);
        return at == std::string::npos
                   ? std::string()
                   : story.swimlane.substr(at, story.swimlane.find('\n', at) - at);
    };
    EXPECT_NE(row_of("p2      |").find('L'), std::string::npos) << story.swimlane;
    EXPECT_EQ(row_of("p1      |").find('L'), std::string::npos) << story.swimlane;
    EXPECT_NE(row_of("p1      |").find('W'), std::string::npos) << story.swimlane;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);)
        EXPECT_LE(line.size(), 100u) << line;

    // The page: self-contained, the story on top, the incident and the overlapping holds drawn.
    const std::string html = timeline_of(told, "t1 / set_nx_px");
    EXPECT_NE(html.find("<title>t1 / set_nx_px - lockbench timeline</title>"), std::string::npos);
    EXPECT_NE(html.find("id=\"incident-0\""), std::string::npos);
    EXPECT_NE(html.find("class=\"hold overlap\""), std::string::npos);
    EXPECT_NE(html.find("class=\"lease\""), std::string::npos);
    EXPECT_NE(html.find("class=\"pause\""), std::string::npos);
    EXPECT_NE(html.find("class=\"mark lost\" data-process=\"2\""), std::string::npos);
    EXPECT_NE(html.find("process 1, resumed at 1.110 s [#13]"), std::string::npos);
    EXPECT_EQ(html.find("src="), std::string::npos);

    // A run too long to draw whole: the holds around the story, and a note saying so.
    std::istringstream for_capped(told.history);
    const std::string capped =
        timeline_html(for_capped, told.report, story, {.title = "t1", .max_holds = 1});
    EXPECT_NE(capped.find("This run has 2 holds; the 1 drawn are those around the story"),
              std::string::npos);
    std::size_t drawn = 0;
    for (auto at = capped.find("<rect class=\"hold"); at != std::string::npos;
         at = capped.find("<rect class=\"hold", at + 1))
        ++drawn;
    EXPECT_EQ(drawn, 1u);
}

// T1 on a fenced resource, the fence in time.
const std::string kFenceInTime = t1(true);

// The same pause, shorter: process 1 (fence 7) wakes after process 2 (fence 8) read and before it
// wrote. What the two then write is each test's own.
const std::string kFencedHolderWakesBeforeTheNextWrites =
    testing::t1_holder_reads_and_pauses(500, 7) +
    testing::t1_next_holder_reads(200000000, 500000000, 1000000, 8) +
    testing::resumed(1, 610000000);

// What the two do once process 1 woke: each writes 5 with its fence, process 1's write asked at
// `stale_asked` and answered at `stale_answered`, process 2's at `newer_asked` and
// `newer_answered` (the events in time order); then process 2 releases k0 at `release_at`,
// answered 1 ms later, and process 1 asks to release it 2 ms after that and no longer holds it.
std::string both_write_then_release(std::int64_t stale_asked, std::int64_t stale_answered,
                                    std::int64_t newer_asked, std::int64_t newer_answered,
                                    std::int64_t release_at) {
    std::vector<std::pair<std::int64_t, std::string>> writes = {
        {stale_asked, testing::write_event("invoke", 1, "k0", 5, 7, stale_asked)},
        {stale_answered, testing::write_event("ok", 1, "k0", 5, 7, stale_answered)},
        {newer_asked, testing::write_event("invoke", 2, "k0", 5, 8, newer_asked)},
        {newer_answered, testing::write_event("ok", 2, "k0", 5, 8, newer_answered)}};
    std::stable_sort(writes.begin(), writes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::string events;
    for (const auto& [time, event] : writes)
        events += event;
    return events + testing::released(2, "k0", "c2-1", release_at, release_at + 1000000) +
           testing::release_failed(1, "k0", "c1-1", release_at + 2000000, release_at + 3000000,
                                   "not-held");
}

// Each write is the highest fence yet, so the register accepts both: a lost update with every
// fence respected.
const std::string kFenceTooLate =
    kFencedHolderWakesBeforeTheNextWrites +
    both_write_then_release(611000000, 612000000, 700000000, 701000000, 702000000);

// HISTORY.md, Leases: the lease the service applied to a grant (its ok's lease_ms) is the one
// the story tells, as the checks judge by it: T1 with 300 ms asked and 350 ms applied.
TEST(Story, TellsTheLeaseTheGrantWasGivenNotTheOneAsked) {
    std::string history = kT1;
    const std::string asked = R"({"token":"c1-1","mode":"exclusive"})";
    history.replace(history.find(asked), asked.size(),
                    R"({"token":"c1-1","mode":"exclusive","lease_ms":350})");
    const Told told = tell(history, {.strategy = "set_nx_px"});
    const Story& story = told.story;
    ASSERT_GE(story.claims.size(), 3u);
    EXPECT_EQ(story.claims[0].text,
              "At 0.101 s process 1 acquired k0 (token c1-1, lease 350 ms) [#0, #1].");
    EXPECT_EQ(story.claims[0].lease_ms, 350);
    EXPECT_EQ(story.claims[2].text,
              "Its 350 ms lease ran out on the server by 0.451 s, while process 1 had not "
              "released the lock [#0, #1].");
    // The timeline marks the same end of the lease on process 1's hold.
    const std::string html = timeline_of(told, "t1");
    EXPECT_NE(html.find("process 1's lease ran out by 0.451 s"), std::string::npos);
    EXPECT_EQ(html.find("process 1's lease ran out by 0.401 s"), std::string::npos);
}

TEST(Story, NamesTheFencesAndTheHigherOneThatRefusedTheStaleWrite) {
    EXPECT_EQ(claim_texts(kFenceInTime, {.strategy = "fenced"}),
              (std::vector<std::string>{
                  "At 0.101 s process 1 acquired k0 (token c1-1, fence 7, lease 300 ms) [#0, #1].",
                  "At 0.110 s the nemesis paused process 1 for 1000 ms [#4].",
                  "Its 300 ms lease ran out on the server by 0.401 s, while process 1 had not "
                  "released the lock [#0, #1].",
                  "At 0.500 s process 2 was granted k0 (token c2-1, fence 8) [#6] while process 1 "
                  "still held it: it had not asked to release it (it did at 1.113 s).",
                  "At 0.504 s process 2 wrote 5 with fence 8 [#10].",
                  "At 1.112 s process 1, resumed at 1.110 s [#13], wrote 5 with fence 7; the "
                  "resource had already accepted fence 8 (process 2's write at 0.504 s) and "
                  "rejected it as stale [#10, #15].",
                  "At 1.113 s process 1 asked to release k0; the answer was `fail not-held` "
                  "[#16, #17].",
              }));
}

TEST(Story, AStaleWriteThatLandsFirstIsAcceptedAndTheStorySaysWhy) {
    EXPECT_EQ(claim_texts(kFenceTooLate, {.strategy = "fenced"}),
              (std::vector<std::string>{
                  "At 0.101 s process 1 acquired k0 (token c1-1, fence 7, lease 300 ms) [#0, #1].",
                  "At 0.110 s the nemesis paused process 1 for 500 ms [#4].",
                  "Its 300 ms lease ran out on the server by 0.401 s, while process 1 had not "
                  "released the lock [#0, #1].",
                  "At 0.500 s process 2 was granted k0 (token c2-1, fence 8) [#6] while process 1 "
                  "still held it: it had not asked to release it (it did at 0.704 s).",
                  "At 0.612 s process 1, resumed at 0.610 s [#9], wrote 5 with fence 7 [#11], "
                  "though fence 8 had been granted to process 2 at 0.500 s [#6]: no write with a "
                  "higher fence had reached the resource yet, so it accepted this one.",
                  "At 0.701 s process 2 wrote 5 with fence 8 (it had read 4 at 0.502 s [#8]) over "
                  "5 written by process 1 with fence 7: an update was lost [#11, #13]. The fences "
                  "came in order, so the resource accepted both: a fence refuses only a write "
                  "older than one it has accepted; it does not make the read and the write one "
                  "step.",
                  "At 0.704 s process 1 asked to release k0; the answer was `fail not-held` "
                  "[#16, #17].",
              }));
}

// The two writes in flight together, the newer holder's answered first: the register ran the
// stale one first (it would have refused it after), and the story does not claim otherwise.
TEST(Story, AStaleWriteInFlightBesideANewerOneIsToldAsSuch) {
    const std::string history =
        kFencedHolderWakesBeforeTheNextWrites +
        both_write_then_release(611000000, 614000000, 612000000, 613000000, 615000000);
    const std::vector<std::string> texts = claim_texts(history, {.strategy = "fenced"});
    ASSERT_EQ(texts.size(), 7u) << ::testing::PrintToString(texts);
    EXPECT_EQ(texts[4], "At 0.613 s process 2 wrote 5 with fence 8 [#12].");
    EXPECT_EQ(texts[5],
              "At 0.614 s process 1, resumed at 0.610 s [#9], wrote 5 with fence 7 [#13], though "
              "fence 8 had been granted to process 2 at 0.500 s [#6]; process 2's write with "
              "fence 8 [#12] was in flight at the same time, and the resource ran this one first, "
              "so it accepted it.");
}

// The prevention names where other scenarios expect the strategies it recommends to fail, from
// those scenarios' expectations; the scenario told and the strategy that ran are not in it.
TEST(Story, APreventionSaysWhereTheSuiteShowsTheRecommendedLocksFailing) {
    StoryContext context{
        .scenario = "t1",
        .strategy = "set_nx_px",
        .expectations = {{"set_nx_px", "violates:mutual_exclusion"},
                         {"reentrant_hash", "safe"},
                         {"rwlock_seed", "safe"},
                         {"zk_mutex", "safe"}},
        .failures_elsewhere = {{"set_nx_px", "t5", "violates:mutual_exclusion"},
                               {"reentrant_hash", "t1", "violates:resource"},
                               {"reentrant_hash", "t10", "violates:mutual_exclusion"},
                               {"rwlock_seed", "holder-crash", "deadlocks"},
                               {"rwlock_seed", "t6", "deadlocks"},
                               {"rwlock_seed", "seed001", "violates:mutual_exclusion"},
                               {"rwlock_seed", "t12", "violates:starvation"},
                               {"rwlock_seed", "t7", "violates:linearizability"},
                               {"rwlock_seed", "t8", "violates:mutual_exclusion"}}};
    const std::vector<std::string> texts = claim_texts(kT1, context);
    ASSERT_GE(texts.size(), 2u);
    EXPECT_EQ(texts[texts.size() - 2],
              "What would have prevented it: in t1, `reentrant_hash`, `rwlock_seed` and "
              "`zk_mutex` stay safe (the scenario's expectations, each asserted by lockbench's "
              "own tests).");
    EXPECT_EQ(texts.back(),
              "Elsewhere the shipped scenarios expect `reentrant_hash` to fail in t10; "
              "`rwlock_seed` to deadlock in holder-crash and t6, and to fail in seed001, t12, t7 "
              "and 1 more (lockbench scenarios).");

    // Nothing failing elsewhere: no caveat.
    context.failures_elsewhere = {{"set_nx_px", "t5", "violates:mutual_exclusion"}};
    EXPECT_EQ(claim_texts(kT1, context).back().rfind("What would have prevented it", 0), 0u);
}

// A ZooKeeper lock lasts as long as its session: the same history, told of zk_mutex, names the
// session timeout and the ensemble where a Redis lock's story names the lease and the server.
TEST(Story, AZooKeeperLockRunsOutWithItsSessionNotALease) {
    const Told told = tell(kT1, {.scenario = "t1", .strategy = "zk_mutex"});
    const Story& story = told.story;
    ASSERT_GE(story.claims.size(), 3u);
    EXPECT_EQ(story.claims[0].text,
              "At 0.101 s process 1 acquired k0 (token c1-1, session timeout 300 ms) [#0, #1].");
    EXPECT_EQ(story.claims[2].text,
              "Its 300 ms session timeout ran out on the ensemble by 0.401 s, while process 1 "
              "had not released the lock [#0, #1].");
    EXPECT_EQ(format_story(story).find(" lease"), std::string::npos) << format_story(story);
    // The page's mark and legend say the same.
    const std::string html = timeline_of(told, "t1 / zk_mutex");
    EXPECT_NE(html.find("process 1's session timeout ran out by 0.401 s"), std::string::npos);
    EXPECT_NE(html.find("</i>session timeout ran out</span>"), std::string::npos);
    EXPECT_EQ(html.find("lease ran out"), std::string::npos);
}

TEST(Story, AValidHistoryHasNothingToTell) {
    const Story story = tell(testing::kOneHold, {}).story;
    ASSERT_EQ(story.claims.size(), 1u);
    EXPECT_EQ(story.claims[0].kind, ClaimKind::NoViolation);
    EXPECT_EQ(story.headline, "No violation: every check that applies passed.");
    EXPECT_TRUE(story.swimlane.empty());
}

TEST(Story, NamesWhatTheLibrarySaidItLostAndTheTimelineMarksIt) {
    // Without a violation: each signal is a sentence, and so is how many more there were.
    std::string valid = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":1000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":2000000}
{"type":"info","process":"library","f":"lost","key":"k0","value":{"process":1,"token":"a","text":"refresh failed: lock was taken"},"time":14302000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"a"},"time":14400000000}
{"type":"fail","process":1,"f":"release","key":"k0","value":null,"time":14500000000,"error":"not-held"}
)";
    for (int i = 0; i < 4; ++i)
        valid +=
            R"({"type":"info","process":"library","f":"lost","key":"k1","value":{"process":2,"token":"b","text":"x"},"time":15000000000})"
            "\n";
    const Told told = tell(valid, {.strategy = "redis-semaphore"});
    ASSERT_EQ(told.report.verdict, Verdict::Valid);
    const Story& story = told.story;
    EXPECT_EQ(told.texts,
              (std::vector<std::string>{
                  "The checker judged 9 events and listed no violation.",
                  "At 14.302 s redis-semaphore told process 1 it lost k0: refresh failed: "
                  "lock was taken [#2].",
                  "At 15.000 s redis-semaphore told process 2 it lost k1: x [#5].",
                  "At 15.000 s redis-semaphore told process 2 it lost k1: x [#6].",
                  "It said so 2 more times, the last [#8].",
              }));
    EXPECT_EQ(story.claims[1].kind, ClaimKind::LibrarySaidLost);
    EXPECT_EQ(story.claims[1].process, 1);
    EXPECT_EQ(story.claims[1].token, "a");
    EXPECT_EQ(story.claims[1].library_text, "refresh failed: lock was taken");
    EXPECT_EQ(story.claims[1].events, (std::vector<std::uint64_t>{2}));

    const std::string html = timeline_of(told, "lost");
    EXPECT_NE(html.find("class=\"mark library-lost\""), std::string::npos);
    EXPECT_NE(html.find("#2 14.302 s the library told process 1 it lost k0: refresh failed: lock "
                        "was taken</title>"),
              std::string::npos);
    // Not a fault: the nemesis lane has none.
    EXPECT_EQ(html.find("class=\"fault\""), std::string::npos);
}

// A library that gave up an acquire answered in doubt (HISTORY.md, `abandoned`): the story of a
// valid run says so beside the acquire's answer, and the timeline marks it in that process's lane.
TEST(Story, AValidStoryTellsAnAbandonedAcquire) {
    const std::string history =
        testing::in_doubt(4, "acquire", "k1", R"({"mode":"exclusive","lease_ms":3000})", 3000000000,
                          3900000000) +
        testing::late_abandoned(4, "k1", 4065000000) +
        testing::event("invoke", 5, "acquire", "k1", R"({"mode":"exclusive","lease_ms":3000})",
                       4100000000) +
        testing::event("ok", 5, "acquire", "k1", R"({"token":"t5"})", 4200000000);
    const Told told = tell(history, {.strategy = "curator-mutex"});
    ASSERT_EQ(told.report.verdict, Verdict::Valid);
    EXPECT_EQ(told.texts,
              (std::vector<std::string>{
                  "The checker judged 5 events and listed no violation.",
                  "At 4.065 s curator-mutex gave up process 4's acquire of k1, answered in doubt "
                  "at 3.900 s; whatever it held was gone by then [#1, #2].",
              }));
    const Claim& abandoned = told.story.claims[1];
    EXPECT_EQ(abandoned.kind, ClaimKind::LibraryAbandoned);
    EXPECT_EQ(abandoned.process, 4);
    EXPECT_EQ(abandoned.time_ns, 4065000000);
    EXPECT_EQ(abandoned.events, (std::vector<std::uint64_t>{1, 2}));

    const std::string html = timeline_of(told, "abandoned");
    EXPECT_NE(html.find("class=\"mark library-abandoned\""), std::string::npos) << html;
    EXPECT_NE(html.find("#2 4.065 s the library gave up process 4's acquire of k1, answered in "
                        "doubt; whatever it held was gone</title>"),
              std::string::npos)
        << html;
    EXPECT_EQ(html.find("class=\"mark library-lost\""), std::string::npos);
}

TEST(Story, AViolationsStoryNamesTheHoldersLostSignal) {
    // T1, with the library telling the paused holder at 0.4 s that its lock was gone.
    const std::string with_signal = testing::with_inserted(
        kT1, {{6, testing::library_lost(1, "k0", "c1-1", "refresh failed", 400000000)}});
    const std::vector<std::string> texts =
        claim_texts(with_signal, {.strategy = "redis-semaphore"});
    EXPECT_NE(std::find(texts.begin(), texts.end(),
                        "At 0.400 s redis-semaphore told process 1 it lost k0: refresh failed "
                        "[#6]."),
              texts.end())
        << ::testing::PrintToString(texts);
    // The nemesis's pause is still the only fault told.
    EXPECT_EQ(std::count_if(texts.begin(), texts.end(),
                            [](const std::string& t) { return t.find("the nemesis") != t.npos; }),
              1);
}

// Process 1 holds k0 with a 300 ms lease and is paused for a second; the grants under its hold
// come between these two.
const char* kPausedHolder = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":300},"time":100000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"c1-1","mode":"exclusive"},"time":101000000}
{"type":"info","process":"nemesis","f":"pause","value":{"target":1,"ms":1000},"time":110000000}
)";
const char* kPausedHolderWakesAndReleases = R"(
{"type":"info","process":"nemesis","f":"resume","value":{"target":1},"time":1110000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"c1-1"},"time":1113000000}
{"type":"fail","process":1,"f":"release","key":"k0","value":null,"time":1114000000,"error":"not-held"}
)";

// `process` asks for k0 at `asked_ms`, is granted it (as `token`) at `granted_ms` and asks to
// release it at `release_ms`, answered 1 ms later.
std::string grant_and_release(int process, const std::string& token, int asked_ms, int granted_ms,
                              int release_ms) {
    const auto event = [&](const std::string& type, const std::string& f, const std::string& value,
                           int ms) {
        return R"({"type":")" + type + R"(","process":)" + std::to_string(process) + R"(,"f":")" +
               f + R"(","key":"k0","value":)" + value + R"(,"time":)" +
               std::to_string(ms * 1000000LL) + "}\n";
    };
    const std::string lease = R"({"mode":"exclusive","lease_ms":300})";
    return event("invoke", "acquire", lease, asked_ms) +
           event("ok", "acquire", R"({"token":")" + token + R"(","mode":"exclusive"})",
                 granted_ms) +
           event("invoke", "release", R"({"token":")" + token + "\"}", release_ms) +
           event("ok", "release", "null", release_ms + 1);
}

// Every grant under the paused hold went to one process: "went to process 2", not "processes 2"
// (issue 31).
TEST(Story, MoreGrantsToOneProcessNameItInTheSingular) {
    const std::vector<std::string> texts =
        claim_texts(kPausedHolder + grant_and_release(2, "c2-1", 200, 500, 505) +
                        grant_and_release(2, "c2-2", 600, 601, 605) + kPausedHolderWakesAndReleases,
                    {.strategy = "set_nx_px"});
    EXPECT_NE(std::find(texts.begin(), texts.end(),
                        "Until 0.601 s, 1 more grant went to process 2 while process 1 held it "
                        "[#8]."),
              texts.end())
        << ::testing::PrintToString(texts);
}

// "More grants" are the ones after the first, which the sentence before tells: they went to the
// processes granted after it, not to every process that overlapped the hold (the first grantee,
// process 2, was listed among them).
TEST(Story, MoreGrantsNameOnlyTheProcessesGrantedAfterTheFirst) {
    const std::vector<std::string> texts =
        claim_texts(kPausedHolder + grant_and_release(2, "c2-1", 200, 500, 505) +
                        grant_and_release(3, "c3-1", 550, 600, 605) +
                        grant_and_release(4, "c4-1", 650, 700, 705) + kPausedHolderWakesAndReleases,
                    {.strategy = "set_nx_px"});
    EXPECT_NE(std::find(texts.begin(), texts.end(),
                        "Until 0.700 s, 2 more grants went to processes 3, 4 while process 1 held "
                        "it [#12]."),
              texts.end())
        << ::testing::PrintToString(texts);
}

// Process 5's acquire (2 s lease) is answered in doubt at 1.2 s; kazoo grants it at 1.5 s and the
// adapter releases it at 1.51 s. Process 2 is refused k0 at 2 s and 2.5 s, with nobody holding it.
const std::string kLateGrantThenRefused =
    testing::in_doubt(5, "acquire", "k0", R"({"mode":"exclusive","lease_ms":2000})", 100000000,
                      1200000000) +
    testing::late_granted(5, "k0", 1500000000, "t5") +
    testing::late_released(5, "k0", 1510000000, true) +
    testing::refused(2, "k0", 1900000000, 2000000000) +
    testing::refused(2, "k0", 2400000000, 2500000000);

TEST(Story, ADeadlockAfterALateGrantTellsTheGrantAndItsRelease) {
    const Told told = tell(kLateGrantThenRefused, {.strategy = "kazoo"});
    EXPECT_EQ(told.story.headline,
              "k0: process 5's acquire, answered in doubt, was granted late and nobody could take "
              "it (kazoo).");
    EXPECT_EQ(told.texts,
              (std::vector<std::string>{
                  "At 1.500 s kazoo granted process 5's acquire of k0, answered in doubt at "
                  "1.200 s, and its adapter released it at 1.510 s [#1, #2, #3].",
                  "From 1.900 s process 2 tried to acquire k0 2 times; none succeeded [#4 … #6].",
                  "Nobody was granted k0 from 1.200 s until the end of the history at 2.500 s: "
                  "1.300 s, though the adapter had released process 5's late grant at 1.510 s.",
              }));
    const Claim& late = told.story.claims[0];
    EXPECT_EQ(late.kind, ClaimKind::LibraryGrantedLate);
    EXPECT_EQ(late.process, 5);
    EXPECT_EQ(late.time_ns, 1500000000);
    EXPECT_EQ(late.token, "t5");
    EXPECT_EQ(late.events, (std::vector<std::uint64_t>{1, 2, 3}));

    // The page draws the late-granted hold in process 5's lane, from the grant to the release.
    const std::string html = timeline_of(told, "late grant");
    EXPECT_NE(html.find("<rect class=\"hold late-grant\" data-process=\"5\" x=\"1500.0000\""),
              std::string::npos)
        << html;
    EXPECT_NE(html.find("width=\"10.0000\""), std::string::npos);
    EXPECT_NE(html.find("<title>#2 k0: the library granted process 5's acquire, answered in "
                        "doubt, at 1.500 s; its adapter released it at 1.510 s</title>"),
              std::string::npos);
    EXPECT_NE(html.find("</i>the library granted an acquire answered in doubt</span>"),
              std::string::npos);
    // Without the late grant there is no such hold, nor any sentence about one.
    const std::string plain =
        timeline_of(tell(testing::in_doubt(5, "acquire", "k0", "null", 100000000, 1200000000) +
                             testing::refused(2, "k0", 1900000000, 2000000000),
                         {}),
                    "plain");
    EXPECT_EQ(plain.find("class=\"hold late-grant\""), std::string::npos);
}

// T1 with a late grant inside the incident: process 5's acquire, answered in doubt at 0.15 s, is
// granted by the library at 0.45 s - after the paused holder's lease ran out - and released.
TEST(Story, AnIncidentsStoryTellsTheLateGrantOfItsKey) {
    const std::string with_late = testing::with_inserted(
        kT1, {{5, testing::in_doubt(5, "acquire", "k0", "null", 120000000, 150000000)},
              {6, testing::late_granted(5, "k0", 450000000) +
                      testing::late_released(5, "k0", 460000000, false)}});
    const Told told = tell(with_late, {.strategy = "redis-semaphore"});
    ASSERT_EQ(told.report.verdict, Verdict::Invalid);
    EXPECT_NE(std::find(told.texts.begin(), told.texts.end(),
                        "At 0.450 s redis-semaphore granted process 5's acquire of k0, answered in "
                        "doubt at 0.150 s, and its adapter failed to release it at 0.460 s [#6, "
                        "#8, #9]."),
              told.texts.end())
        << ::testing::PrintToString(told.texts);
    // A failed release leaves the lock to its bound: the timeline draws the hold to the end (no
    // lease) and says why.
    const std::string html = timeline_of(told, "t1 late");
    EXPECT_NE(html.find("; its adapter failed to release it at 0.460 s, and it has no lease: "
                        "held to the end at 1.114 s</title>"),
              std::string::npos)
        << html;
}

// A valid run says what the library granted late, each once, in the order granted: released,
// never released, released in vain.
TEST(Story, AValidRunTellsItsLateGrants) {
    const std::string history =
        testing::in_doubt(5, "acquire", "k0", R"({"mode":"exclusive","lease_ms":2000})", 100000000,
                          1200000000) +
        testing::late_granted(5, "k0", 1500000000, "t5") +
        testing::late_released(5, "k0", 1510000000, true) +
        testing::in_doubt(6, "acquire", "k1", "null", 2000000000, 2100000000) +
        testing::late_granted(6, "k1", 2200000000) +
        testing::in_doubt(7, "acquire", "k2", R"({"mode":"exclusive","lease_ms":500})", 2300000000,
                          2400000000) +
        testing::late_granted(7, "k2", 2500000000) +
        testing::late_released(7, "k2", 2600000000, false) +
        testing::read_ok(3, "x", 0, 3000000000, 3100000000);
    const Told told = tell(history, {.library = "kazoo"});
    ASSERT_EQ(told.report.verdict, Verdict::Valid) << told.report.to_json().dump(2);
    EXPECT_EQ(told.texts,
              (std::vector<std::string>{
                  "The checker judged 13 events and listed no violation.",
                  "At 1.500 s kazoo granted process 5's acquire of k0, answered in doubt at "
                  "1.200 s, and its adapter released it at 1.510 s [#1, #2, #3].",
                  "At 2.200 s kazoo granted process 6's acquire of k1, answered in doubt at "
                  "2.100 s, and its adapter never said it released it [#5, #6].",
                  "At 2.500 s kazoo granted process 7's acquire of k2, answered in doubt at "
                  "2.400 s, and its adapter failed to release it at 2.600 s [#8, #9, #10].",
              }));

    const std::string html = timeline_of(told, "valid");
    EXPECT_NE(html.find("; its adapter never said it released it, and it has no lease: held to "
                        "the end at 3.100 s</title>"),
              std::string::npos)
        << html;
    EXPECT_NE(html.find("; its adapter failed to release it at 2.600 s, so it held until its "
                        "lease ran out by 3.000 s</title>"),
              std::string::npos)
        << html;
}

}  // namespace
}  // namespace lockbench::checker
