// The demonstrations tell their story, and every sentence of it is true: each shipped scenario
// below runs for real (embedded redis-servers, real faults), and every claim of its story is
// checked against the history it cites - the event kinds, processes, tokens, values, times and
// lease arithmetic - and against the checker's report and the scenario's expectations. Then the
// run's timeline.html is opened in a real headless browser (Debian's chromium): it must load
// from the file alone and show the first incident on screen.

#include "checker/story/story.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checker/check.hpp"
#include "checker/history.hpp"
#include "checker/history_testing.hpp"
#include "checker/history_words.hpp"
#include "checker/story/timeline_html.hpp"
#include "checker/streaming.hpp"
#include "checker/testing/temp_dir.hpp"
#include "engine/run/run.hpp"
#include "engine/run/story_files.hpp"
#include "engine/run/workload.hpp"
#include "engine/testing/headless_browser.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using checker::Claim;
using checker::ClaimKind;
using checker::Event;
using checker::EventType;
using nlohmann::json;

struct DemoCase {
    std::string scenario;
    std::string strategy;
    std::vector<ClaimKind> must_tell;  // the story is not told without these
    // ZooKeeper expires a silent session at one of its ticks, inside a window the story names:
    // a grant inside that window is told as "may have run out" (LeaseMayHaveRunOut), which then
    // tells LeaseRanOut's part (seen under load: the grant at 0.805 s, the window 0.773-0.806 s).
    bool expiry_is_a_window = false;
};

void PrintTo(const DemoCase& c, std::ostream* os) {
    *os << c.scenario << " x " << c.strategy;
}

std::vector<Event> read_all(const fs::path& history) {
    checker::HistoryReader reader(history);
    std::vector<Event> events;
    for (Event e; reader.next(e);)
        events.push_back(e);
    return events;
}

// The runs of `allowed` characters right after each `mark` in `text` (empty runs skipped):
// "#12" gives "12", "`fenced`" gives "fenced". (No std::regex: GCC 12's sanitizer builds warn
// inside it.)
std::vector<std::string> after_each(const std::string& text, char mark, std::string_view allowed) {
    std::vector<std::string> out;
    bool inside = false;  // for a quote mark: a closing mark is not an opening one
    for (std::size_t at = text.find(mark); at != std::string::npos; at = text.find(mark, at + 1)) {
        if (mark == '`') {
            inside = !inside;
            if (!inside)
                continue;
        }
        std::size_t end = at + 1;
        while (end < text.size() && allowed.find(text[end]) != std::string_view::npos)
            ++end;
        if (end > at + 1)
            out.push_back(text.substr(at + 1, end - at - 1));
    }
    return out;
}

// Checks one claim against the history and the report; returns what is false ("" when true).
class ClaimChecker {
  public:
    ClaimChecker(std::vector<Event> events, checker::Report report, Workload workload,
                 std::string key)
        : events_(std::move(events)),
          report_(std::move(report)),
          workload_(std::move(workload)),
          key_(std::move(key)) {}

    void check(const Claim& c) {
        SCOPED_TRACE(c.text);
        // The sentence cites exactly the events the claim rests on.
        std::set<std::uint64_t> cited;
        for (const std::string& digits : after_each(c.text, '#', "0123456789"))
            cited.insert(std::stoull(digits));
        for (std::uint64_t i : cited) {
            EXPECT_TRUE(std::find(c.events.begin(), c.events.end(), i) != c.events.end())
                << "cites #" << i << " which the claim does not rest on";
        }
        for (std::uint64_t i : c.events)
            ASSERT_LT(i, events_.size());
        switch (c.kind) {
            case ClaimKind::Acquired:
                return check_acquired(c);
            case ClaimKind::FaultHit:
                return check_fault_hit(c);
            case ClaimKind::LeaseRanOut:
            case ClaimKind::LeaseStillRan:
            case ClaimKind::LeaseMayHaveRunOut:
                return check_lease_arithmetic(c);
            case ClaimKind::NoLease:
                return check_no_lease(c);
            case ClaimKind::ForeignRelease:
                return check_foreign_release(c);
            case ClaimKind::FailedAcquireBefore:
                return check_failed_acquire_before(c);
            case ClaimKind::GrantedWhileHeld:
                return check_granted_while_held(c);
            case ClaimKind::MoreGrants:
                return check_more_grants(c);
            case ClaimKind::Wrote:
                return check_wrote(c);
            case ClaimKind::LostUpdate:
                return check_lost_update(c);
            case ClaimKind::StaleWriteRejected:
                return check_stale_write_rejected(c);
            case ClaimKind::Released:
                return check_released(c);
            case ClaimKind::Crashed:
                return check_crashed(c);
            case ClaimKind::WaitedInVain:
                return check_waited_in_vain(c);
            case ClaimKind::NeverRegranted:
                return check_never_regranted(c);
            case ClaimKind::Prevention:
                return check_prevention(c);
            case ClaimKind::PreventionCaveat:
                return check_prevention_caveat(c);
            case ClaimKind::LibrarySaidLost:
                return check_library_said_lost(c);
            case ClaimKind::LibraryGrantedLate:
                return check_library_granted_late(c);
            case ClaimKind::LibraryAbandoned:
                return check_library_abandoned(c);
            case ClaimKind::CheckerFound:
            case ClaimKind::NoViolation:
                ADD_FAILURE() << "a demonstration's story must be told from its events";
                return;
        }
    }

  private:
    const Event& at(std::uint64_t index) const { return events_.at(index); }

    void check_acquired(const Claim& c) {
        ASSERT_EQ(c.events.size(), 2u);
        const Event& invoke = at(c.events[0]);
        const Event& ok = at(c.events[1]);
        expect_op(invoke, c.process, "acquire", EventType::Invoke);
        expect_op(ok, c.process, "acquire", EventType::Ok);
        EXPECT_EQ(ok.time, c.time_ns);
        EXPECT_EQ(ok.token, c.token);
        EXPECT_EQ(invoke.lease_ms, c.lease_ms);
        expect_says(c, "process " + std::to_string(c.process) + " acquired " + key_);
        expect_says(c, "token " + ok.token);
        if (ok.fence)
            expect_says(c, "fence " + std::to_string(*ok.fence));
        if (c.lease_ms) {
            // A ZooKeeper lock's lease is its session timeout, and is called that.
            const bool zk = workload_.strategy.starts_with("zk_");
            expect_says(c,
                        (zk ? "session timeout " : "lease ") + std::to_string(*c.lease_ms) + " ms");
        }
        holder_ok_ = ok.index;
        holder_ = c.process;
        holder_lease_ = invoke.lease_ms;
    }

    void check_fault_hit(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 1u);
        const Event& e = at(c.events[0]);
        EXPECT_TRUE(e.is_nemesis());
        EXPECT_EQ(e.f, c.fault);
        EXPECT_EQ(e.time, c.time_ns);
        if (c.process >= 0) {
            EXPECT_EQ(e.target, c.process);
            expect_says(c, "process " + std::to_string(c.process));
        }
    }

    // Where the lease ended (from the acquire's invoke or its grant) against the next grant.
    void check_lease_arithmetic(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 3u);
        const Event& invoke = at(c.events[0]);
        const Event& ok = at(c.events[1]);
        const Event& grant = at(c.events[2]);
        ASSERT_TRUE(invoke.lease_ms);
        EXPECT_EQ(invoke.lease_ms, c.lease_ms);
        const std::int64_t lease = *invoke.lease_ms * 1'000'000;
        if (c.kind == ClaimKind::LeaseRanOut) {
            EXPECT_EQ(c.time_ns, ok.time + lease);
            EXPECT_GE(grant.time, ok.time + lease);
        } else if (c.kind == ClaimKind::LeaseStillRan) {
            EXPECT_EQ(c.time_ns, invoke.time + lease);
            EXPECT_LT(grant.time, invoke.time + lease);
        } else {
            EXPECT_GE(grant.time, invoke.time + lease);
            EXPECT_LT(grant.time, ok.time + lease);
        }
    }

    void check_no_lease(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 1u);
        const Event& invoke = at(c.events[0]);
        expect_op(invoke, c.process, "acquire", EventType::Invoke);
        EXPECT_FALSE(invoke.lease_ms);
    }

    void check_foreign_release(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 2u);
        const Event& invoke = at(c.events[0]);
        const Event& ok = at(c.events[1]);
        expect_op(invoke, c.process, "release", EventType::Invoke);
        expect_op(ok, c.process, "release", EventType::Ok);
        EXPECT_EQ(ok.time, c.time_ns);
        ASSERT_TRUE(c.other);
        EXPECT_NE(c.process, *c.other);
        EXPECT_EQ(invoke.token, c.token);
        // It completed while the holder held the lock: after its grant, before its release.
        EXPECT_GT(ok.index, holder_ok_);
        EXPECT_FALSE(released_between(*c.other, holder_ok_, ok.index));
    }

    void check_failed_acquire_before(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 1u);
        const Event& e = at(c.events[0]);
        EXPECT_EQ(e.process, c.process);
        EXPECT_EQ(e.f, "acquire");
        EXPECT_NE(e.type, EventType::Ok);
        EXPECT_NE(e.type, EventType::Invoke);
    }

    void check_granted_while_held(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 1u);
        const Event& grant = at(c.events[0]);
        expect_op(grant, c.process, "acquire", EventType::Ok);
        EXPECT_EQ(grant.token, c.token);
        if (grant.fence)
            expect_says(c, "fence " + std::to_string(*grant.fence));
        EXPECT_EQ(grant.time, c.time_ns);
        ASSERT_TRUE(c.other);
        EXPECT_EQ(*c.other, holder_);
        EXPECT_NE(c.process, holder_);
        // "while it still held it": granted after the holder's grant, before it asked
        // to release and before it crashed.
        EXPECT_GT(grant.index, holder_ok_);
        EXPECT_FALSE(released_between(holder_, holder_ok_, grant.index));
    }

    void check_more_grants(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 1u);
        const Event& last = at(c.events[0]);
        expect_op(last, c.process, "acquire", EventType::Ok);
        EXPECT_FALSE(released_between(holder_, holder_ok_, last.index));
        const auto* me = report_.check("mutual_exclusion");
        ASSERT_NE(me, nullptr);
        EXPECT_EQ(c.value, me->fields["incident_list"][0]["grants"].get<std::int64_t>() - 1);
    }

    void check_wrote(const Claim& c) const {
        ASSERT_GE(c.events.size(), 1u);
        const Event& w = at(c.events[0]);
        expect_op(w, c.process, "write", EventType::Ok);
        EXPECT_EQ(w.number, c.value);
        EXPECT_EQ(w.time, c.time_ns);
        if (w.fence)
            expect_says(c, "with fence " + std::to_string(*w.fence));
        if (c.other) {
            // Accepted though a higher fence had been granted: that grant came first,
            // and no write with a higher fence had been accepted before this one.
            ASSERT_GE(c.events.size(), 2u);
            ASSERT_TRUE(w.fence);
            const Event& grant = at(c.events[1]);
            expect_op(grant, *c.other, "acquire", EventType::Ok);
            ASSERT_TRUE(grant.fence);
            EXPECT_GT(*grant.fence, *w.fence);
            EXPECT_LT(grant.index, w.index);
            const Event* concurrent =
                c.events.size() > 2 && at(c.events[2]).f == "write" ? &at(c.events[2]) : nullptr;
            if (concurrent) {
                // Answered first, but sent before this write was answered: in flight
                // together.
                EXPECT_EQ(concurrent->type, EventType::Ok);
                ASSERT_TRUE(concurrent->fence);
                EXPECT_GT(*concurrent->fence, *w.fence);
                EXPECT_LT(concurrent->index, w.index);
                expect_says(c, "in flight at the same time");
            } else {
                for (std::uint64_t j = 0; j < w.index; ++j) {
                    const Event& e = events_[j];
                    EXPECT_FALSE(e.f == "write" && e.type == EventType::Ok && e.key == key_ &&
                                 e.fence && *e.fence > *w.fence)
                        << "#" << j << " had landed with a higher fence";
                }
            }
            check_extras(c, concurrent ? 3 : 2);
        } else {
            check_extras(c, 1);
        }
    }

    void check_lost_update(const Claim& c) const {
        ASSERT_GE(c.events.size(), 2u);
        check_extras(c, 2);
        const Event& w = at(c.events[0]);
        const Event& overwritten = at(c.events[1]);
        expect_op(w, c.process, "write", EventType::Ok);
        EXPECT_EQ(w.number, c.value);
        EXPECT_EQ(overwritten.f, "write");
        EXPECT_EQ(overwritten.type, EventType::Ok);
        EXPECT_EQ(overwritten.process, c.other);
        ASSERT_TRUE(w.number && overwritten.number);
        EXPECT_LE(*w.number, *overwritten.number);
        if (w.fence && overwritten.fence && *overwritten.fence <= *w.fence)
            expect_says(
                c, "with fence " + std::to_string(*overwritten.fence) + ": an update was lost");
        bool listed = false;
        for (const auto& witness : report_.witnesses) {
            if (witness.kind == "resource" && witness.evidence["write"]["index"] == w.index &&
                witness.evidence["overwritten"]["index"] == overwritten.index)
                listed = true;
        }
        EXPECT_TRUE(listed) << "the resource check does not list this lost update";
    }

    void check_stale_write_rejected(const Claim& c) const {
        ASSERT_GE(c.events.size(), 1u);
        const Event& w = at(c.events[0]);
        expect_op(w, c.process, "write", EventType::Fail);
        EXPECT_EQ(w.error, history::kStaleFence);
        EXPECT_EQ(w.fence, c.value);
        if (c.other) {
            // The write the resource had accepted: another's, earlier, a higher fence.
            ASSERT_GE(c.events.size(), 2u);
            const Event& accepted = at(c.events[1]);
            expect_op(accepted, *c.other, "write", EventType::Ok);
            ASSERT_TRUE(accepted.fence && w.fence);
            EXPECT_GT(*accepted.fence, *w.fence);
            EXPECT_LT(accepted.index, w.index);
            expect_says(c, "already accepted fence " + std::to_string(*accepted.fence));
        }
        check_extras(c, c.other ? 2 : 1);
    }

    void check_released(const Claim& c) const {
        ASSERT_GE(c.events.size(), 1u);
        const Event& invoke = at(c.events[0]);
        expect_op(invoke, c.process, "release", EventType::Invoke);
        EXPECT_EQ(invoke.time, c.time_ns);
        if (c.events.size() == 2) {
            const Event& answer = at(c.events[1]);
            EXPECT_EQ(answer.process, c.process);
            EXPECT_EQ(answer.f, "release");
            if (answer.type == EventType::Ok)
                expect_says(c, "the server said ok");
            else
                expect_says(c, answer.error);
        }
    }

    void check_crashed(const Claim& c) {
        ASSERT_EQ(c.events.size(), 1u);
        const Event& e = at(c.events[0]);
        EXPECT_TRUE(e.is_nemesis());
        EXPECT_EQ(e.f, "crash");
        EXPECT_EQ(e.target, c.process);
        EXPECT_EQ(c.process, holder_);
        EXPECT_FALSE(released_between(holder_, holder_ok_, e.index));
        crash_index_ = e.index;
    }

    void check_waited_in_vain(const Claim& c) const {
        ASSERT_TRUE(c.value);
        EXPECT_EQ(static_cast<std::int64_t>(c.events.size()), *c.value);
        for (std::uint64_t i : c.events) {
            expect_op(at(i), c.process, "acquire", EventType::Invoke);
            // None of them succeeded.
            for (std::size_t j = i + 1; j < events_.size(); ++j) {
                if (events_[j].process == c.process && events_[j].f == "acquire") {
                    EXPECT_NE(events_[j].type, EventType::Ok) << "#" << j;
                    break;
                }
            }
        }
    }

    void check_never_regranted(const Claim& c) const {
        ASSERT_TRUE(crash_index_);
        for (std::size_t j = *crash_index_; j < events_.size(); ++j) {
            const Event& e = events_[j];
            if (e.time > c.time_ns)
                break;
            EXPECT_FALSE(e.f == "acquire" && e.type == EventType::Ok && e.key == key_)
                << "#" << j << " granted it";
        }
    }

    void check_prevention(const Claim& c) const {
        // Every strategy it names is expected safe, or saved by the fence, in this very
        // scenario; the strategy that ran is not among them.
        int named = 0;
        for (const std::string& s :
             after_each(c.text, '`', "abcdefghijklmnopqrstuvwxyz_-0123456789")) {
            ++named;
            ASSERT_TRUE(workload_.expect.count(s)) << s;
            const std::string& outcome = workload_.expect.at(s);
            EXPECT_TRUE(outcome == "safe" || outcome.rfind("safe:", 0) == 0 ||
                        outcome.find("saves:fencing") != std::string::npos)
                << s << ": " << outcome;
            EXPECT_NE(s, workload_.strategy);
        }
        EXPECT_GT(named, 0);
    }

    void check_prevention_caveat(const Claim& c) const {
        // Every scenario it names expects a strategy it names to fail (violates or
        // deadlocks), by the shipped files themselves.
        const auto failures = expected_failures(LOCKBENCH_WORKLOADS_DIR);
        const std::vector<std::string> named =
            after_each(c.text, '`', "abcdefghijklmnopqrstuvwxyz_-0123456789");
        EXPECT_FALSE(named.empty());
        for (const auto& entry : fs::directory_iterator(LOCKBENCH_WORKLOADS_DIR)) {
            const std::string scenario = entry.path().stem().string();
            // Named as a whole word: "t13-slow-resource" is not "t13-slow-resource-fenced".
            for (std::size_t at = c.text.find(scenario); at != std::string::npos;
                 at = c.text.find(scenario, at + 1)) {
                const std::size_t end = at + scenario.size();
                const bool whole = (at == 0 || c.text[at - 1] == ' ') &&
                                   (end == c.text.size() || c.text[end] == ',' ||
                                    c.text[end] == ' ' || c.text[end] == ';');
                if (!whole)
                    continue;
                EXPECT_NE(scenario, workload_.name);
                EXPECT_TRUE(std::any_of(failures.begin(), failures.end(),
                                        [&](auto& f) {
                                            return f.scenario == scenario &&
                                                   std::find(named.begin(), named.end(),
                                                             f.strategy) != named.end();
                                        }))
                    << scenario << " expects none of the named strategies to fail";
            }
        }
    }

    void check_library_said_lost(const Claim& c) const {
        ASSERT_EQ(c.events.size(), 1u);
        const Event& e = at(c.events[0]);
        EXPECT_TRUE(e.is_library());
        EXPECT_EQ(e.time, c.time_ns);
        expect_says(c, "it lost " + e.key);
    }

    // The acquire's `info` (where found), the library's late grant of that process's acquire at
    // the claim's time, and the adapter's report of its release (where found), in that order.
    void check_library_granted_late(const Claim& c) const {
        check_late_grant_events(c, [&](const Event& e, const nlohmann::json& v) {
            if (v["phase"] == "granted")
                EXPECT_EQ(e.time, c.time_ns);
            else
                EXPECT_TRUE(c.text.find("released it at " + checker::format_seconds(e.time)) !=
                                std::string::npos ||
                            c.text.find("failed to release it at " +
                                        checker::format_seconds(e.time)) != std::string::npos);
        });
    }

    void check_library_abandoned(const Claim& c) const {
        check_late_grant_events(c, [&](const Event& e, const nlohmann::json& v) {
            EXPECT_EQ(v["phase"], "abandoned");
            EXPECT_EQ(e.time, c.time_ns);
        });
    }

    // A late-grant claim's events: the in-doubt answer of the process's acquire, which the claim
    // dates, and the library's late-grant reports about that process, each judged by `report`.
    template <typename CheckReport>
    void check_late_grant_events(const Claim& c, CheckReport report) const {
        ASSERT_GE(c.events.size(), 1u);
        for (std::uint64_t index : c.events) {
            const Event& e = at(index);
            if (!e.is_library()) {
                expect_op(e, c.process, "acquire", EventType::Info);
                expect_says(c, "answered in doubt at " + checker::format_seconds(e.time));
                continue;
            }
            EXPECT_EQ(e.f, "late-grant");
            const nlohmann::json v = nlohmann::json::parse(e.value_json);
            EXPECT_EQ(v["process"], c.process);
            report(e, v);
        }
    }

    // What a write's sentence cites after its own events: the read it computed from (the value
    // the sentence gives) or the nemesis resuming the writer, each before the write.
    void check_extras(const Claim& c, std::size_t own) const {
        for (std::size_t k = own; k < c.events.size(); ++k) {
            const Event& e = at(c.events[k]);
            EXPECT_LT(e.index, c.events[0]);
            if (e.is_nemesis()) {
                EXPECT_EQ(e.f, "resume");
                EXPECT_EQ(e.target, c.process);
                expect_says(c, "resumed at " + checker::format_seconds(e.time));
                continue;
            }
            expect_op(e, c.process, "read", EventType::Ok);
            expect_says(c, "read " + (e.number ? std::to_string(*e.number) : "nothing") + " at " +
                               checker::format_seconds(e.time));
            // The last read before the write: what it wrote was computed from it.
            for (std::uint64_t j = e.index + 1; j < c.events[0]; ++j)
                EXPECT_FALSE(events_[j].process == c.process && events_[j].f == "read");
        }
    }

    void expect_op(const Event& e, std::int64_t process, const char* f, EventType type) const {
        EXPECT_EQ(e.process, process) << "#" << e.index;
        EXPECT_EQ(e.f, f) << "#" << e.index;
        EXPECT_EQ(e.type, type) << "#" << e.index;
        EXPECT_EQ(e.key, key_) << "#" << e.index;
    }
    static void expect_says(const Claim& c, const std::string& words) {
        EXPECT_NE(c.text.find(words), std::string::npos) << "does not say: " << words;
    }
    // Did `process` ask to release the key, or crash, in (from, to)?
    bool released_between(std::int64_t process, std::uint64_t from, std::uint64_t to) const {
        for (std::uint64_t j = from + 1; j < to && j < events_.size(); ++j) {
            const Event& e = events_[j];
            if (e.process == process && e.f == "release" && e.key == key_)
                return true;
            if (e.is_nemesis() && e.f == "crash" && e.target == process)
                return true;
        }
        return false;
    }

    std::vector<Event> events_;
    checker::Report report_;
    Workload workload_;
    std::string key_;
    std::uint64_t holder_ok_ = 0;
    std::int64_t holder_ = -1;
    std::optional<std::int64_t> holder_lease_;
    std::optional<std::uint64_t> crash_index_;
};

class StoryTest : public ::testing::TestWithParam<DemoCase> {};

TEST_P(StoryTest, EveryClaimOfTheStoryIsTrueOfTheHistory) {
    const DemoCase& c = GetParam();
    Workload w = Workload::load(fs::path(LOCKBENCH_WORKLOADS_DIR) / (c.scenario + ".json"));
    w.strategy = c.strategy;
    w.validate();
    testing::TempDir out;
    const RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    if (r.summary.to_json()["as_expected"] != true)
        out.keep();  // the history tells a flaky demonstration from a finding
    ASSERT_EQ(r.summary.to_json()["as_expected"], true)
        << "the demonstration did not demonstrate: expected "
        << r.summary.to_json()["expected"].dump() << ", checks "
        << r.summary.to_json()["verdict"]["checks"].dump().substr(0, 1500) << "\nfaults "
        << r.summary.to_json()["nemesis"].dump() << "\nresult kept in " << r.dir;

    const checker::Story story = story_of_run(r.dir, r.summary, w);
    const std::string told = checker::format_story(story);
    SCOPED_TRACE(told);
    // story.txt is this story.
    std::ifstream file(r.dir / "story.txt");
    std::stringstream written;
    written << file.rdbuf();
    EXPECT_EQ(written.str(), told);
    for (const std::string& line : [&] {
             std::vector<std::string> lines;
             std::istringstream in(told);
             for (std::string l; std::getline(in, l);)
                 lines.push_back(l);
             return lines;
         }()) {
        // Counted in characters, not bytes (the swimlane's "…").
        std::size_t columns = 0;
        for (unsigned char ch : line)
            columns += (ch & 0xC0) != 0x80;
        EXPECT_LE(columns, 100u) << line;
    }

    for (ClaimKind kind : c.must_tell) {
        EXPECT_TRUE(std::any_of(story.claims.begin(), story.claims.end(),
                                [&](const Claim& claim) {
                                    return claim.kind == kind ||
                                           (c.expiry_is_a_window &&
                                            kind == ClaimKind::LeaseRanOut &&
                                            claim.kind == ClaimKind::LeaseMayHaveRunOut);
                                }))
            << "the story leaves out claim kind " << static_cast<int>(kind);
    }
    ClaimChecker checker(read_all(r.dir / "history.jsonl"), r.summary.verdict, w, story.key);
    for (const Claim& claim : story.claims)
        checker.check(claim);
    EXPECT_FALSE(story.swimlane.empty());
}

std::string case_name(const ::testing::TestParamInfo<DemoCase>& info) {
    std::string name = info.param.scenario + "_" + info.param.strategy;
    std::replace_if(
        name.begin(), name.end(),
        [](char ch) { return !std::isalnum(static_cast<unsigned char>(ch)); }, '_');
    return name;
}

INSTANTIATE_TEST_SUITE_P(
    Demonstrations, StoryTest,
    ::testing::Values(
        DemoCase{"t1-holder-paused",
                 "set_nx_px",
                 {ClaimKind::Acquired, ClaimKind::FaultHit, ClaimKind::LeaseRanOut,
                  ClaimKind::GrantedWhileHeld, ClaimKind::MoreGrants, ClaimKind::LostUpdate,
                  ClaimKind::Released, ClaimKind::Prevention, ClaimKind::PreventionCaveat}},
        DemoCase{"t5-failover",
                 "set_nx_px",
                 {ClaimKind::Acquired, ClaimKind::FaultHit, ClaimKind::LeaseStillRan,
                  ClaimKind::GrantedWhileHeld}},
        DemoCase{"t8-late-unlock",
                 "set_nx_px_del",
                 {ClaimKind::Acquired, ClaimKind::ForeignRelease, ClaimKind::GrantedWhileHeld}},
        DemoCase{"seed001-unlock-after-failed-acquire",
                 "rwlock_seed",
                 {ClaimKind::Acquired, ClaimKind::NoLease, ClaimKind::ForeignRelease,
                  ClaimKind::FailedAcquireBefore, ClaimKind::GrantedWhileHeld}},
        DemoCase{"holder-crash",
                 "rwlock_seed",
                 {ClaimKind::Acquired, ClaimKind::Crashed, ClaimKind::NoLease,
                  ClaimKind::WaitedInVain, ClaimKind::NeverRegranted}},
        DemoCase{"t10-process-pause",
                 "zk_mutex",
                 {ClaimKind::Acquired, ClaimKind::FaultHit, ClaimKind::LeaseRanOut,
                  ClaimKind::GrantedWhileHeld},
                 true},
        DemoCase{"fencing-saves-t1",
                 "fenced",
                 {ClaimKind::Acquired, ClaimKind::FaultHit, ClaimKind::GrantedWhileHeld,
                  ClaimKind::StaleWriteRejected}}),
    case_name);

// timeline.html of a real run, in a real browser: self-contained (nothing fetched), it opens at
// the first incident, drawn on screen with a size, and the browser can take its screenshot.
TEST(Timeline, ARealRunsTimelineShowsItsIncidentInHeadlessChromium) {
    ASSERT_TRUE(testing::chromium_installed())
        << "chromium is not installed: bash scripts/bootstrap.sh installs it";
    Workload w = Workload::load(fs::path(LOCKBENCH_WORKLOADS_DIR) / "t1-holder-paused.json");
    w.strategy = "set_nx_px";
    w.validate();
    testing::TempDir out;
    const RunOutcome r = run_workload({.workload = w, .out_dir = out.path()});
    const fs::path page = r.dir / "timeline.html";
    ASSERT_TRUE(fs::exists(page));
    std::ifstream in(page);
    std::stringstream html;
    html << in.rdbuf();
    // Nothing to fetch: no external script, style sheet, image or font.
    for (const char* outside : {"src=", "<link", "@import", "url(http", "https://"})
        EXPECT_EQ(html.str().find(outside), std::string::npos) << outside;
    EXPECT_NE(html.str().find("id=\"incident-0\""), std::string::npos);

    const testing::HeadlessBrowser browser(out.path() / "profile");
    const std::string dom = browser.dom(page);
    ASSERT_NE(dom.find("<body"), std::string::npos) << "chromium did not load the page";
    EXPECT_NE(dom.find("data-incident-visible=\"true\""), std::string::npos)
        << "the first incident is not drawn on screen: " << dom.substr(dom.find("<body"), 200);
    const fs::path shot = out.path() / "timeline.png";
    browser.screenshot(page, shot);
    ASSERT_TRUE(fs::exists(shot));
    EXPECT_GT(fs::file_size(shot), 20'000u);  // a page with a chart, not a blank one
}

// Process 1 holds k0 from 0.101 s and is paused for ten seconds; process 2 is granted k0 at
// 10.000 s, reads 4 and writes 5; process 1 wakes, writes the 5 it computed before over it (a lost
// update: process 2's) and asks to release at 10.001 s. One millisecond of overlap in an incident
// of ten seconds.
const std::string kMillisecondOverlap =
    checker::testing::t1_holder_reads_and_pauses(9800) + checker::testing::resumed(1, 9910000000) +
    checker::testing::t1_next_holder_reads(9990000000, 10000000000, 100000) +
    checker::testing::write_ok(2, "k0", 5, 10000300000, 10000400000) +
    checker::testing::write_ok(1, "k0", 5, 10000500000, 10000600000) +
    checker::testing::release_failed(1, "k0", "c1-1", 10001000000, 10001100000, "not-held") +
    checker::testing::released(2, "k0", "c2-1", 10002000000, 10002100000);

// The numbers of a data-*-box attribute the page sets on its body: left, top, width, height.
std::vector<double> box_in(const std::string& dom, const std::string& name) {
    const std::string attribute = "data-" + name + "-box=\"";
    const std::size_t at = dom.find(attribute);
    std::vector<double> box;
    if (at == std::string::npos)
        return box;
    std::istringstream numbers(dom.substr(
        at + attribute.size(), dom.find('"', at + attribute.size()) - at - attribute.size()));
    for (std::string n; std::getline(numbers, n, ',');)
        box.push_back(std::stod(n));
    return box;
}

// The y attribute of the first element whose markup contains `marker` ("" when none).
std::string attribute_after(const std::string& dom, const std::string& marker,
                            const std::string& attribute) {
    std::size_t at = dom.find(marker);
    if (at == std::string::npos)
        return "";
    const std::size_t open = dom.rfind('<', at);
    const std::size_t close = dom.find('>', at);
    const std::string element = dom.substr(open, close - open);
    const std::size_t a = element.find(" " + attribute + "=\"");
    if (a == std::string::npos)
        return "";
    const std::size_t from = a + attribute.size() + 3;
    return element.substr(from, element.find('"', from) - from);
}

// timeline.html opens on the first overlap, however short, not on the whole incident (where a
// millisecond is a tenth of a pixel); the whole incident is one click or key away; and the lost
// update is marked in the row of the process whose update was lost.
TEST(Timeline, OpensFramedOnTheFirstOverlapAndMarksTheLoserOfTheLostUpdate) {
    ASSERT_TRUE(testing::chromium_installed())
        << "chromium is not installed: bash scripts/bootstrap.sh installs it";
    const std::string history = checker::testing::numbered(kMillisecondOverlap);
    std::istringstream for_check(history);
    const checker::Report report = checker::check_history(for_check, {});
    std::istringstream for_story(history);
    const checker::Story story = checker::tell_story(for_story, report, {});
    std::istringstream for_page(history);
    testing::TempDir out;
    const fs::path page = out.path() / "timeline.html";
    std::ofstream(page) << checker::timeline_html(for_page, report, story, {.title = "1 ms"});

    const testing::HeadlessBrowser browser(out.path() / "profile");
    const std::string dom = browser.dom(page);
    ASSERT_NE(dom.find("<body"), std::string::npos) << "chromium did not load the page";
    const std::vector<double> plot = box_in(dom, "plot");
    const std::vector<double> overlap = box_in(dom, "overlap");
    const std::vector<double> incident = box_in(dom, "incident");
    ASSERT_EQ(plot.size(), 4u) << dom.substr(dom.find("<body"), 300);
    ASSERT_EQ(overlap.size(), 4u) << dom.substr(dom.find("<body"), 300);
    ASSERT_EQ(incident.size(), 4u);
    // The overlap is the middle third of the plot: wide enough to see, inside the frame.
    EXPECT_NEAR(overlap[2], plot[2] / 3, 2);
    EXPECT_GE(overlap[0], plot[0]);
    EXPECT_LE(overlap[0] + overlap[2], plot[0] + plot[2] + 1);
    // The incident (ten seconds) reaches far beyond the frame: it is not what the page opens on.
    EXPECT_GT(incident[2], 100 * plot[2]);
    EXPECT_NE(dom.find("data-overlap-visible=\"true\""), std::string::npos);
    EXPECT_NE(dom.find("<button id=\"first\">Whole incident (i)</button>"), std::string::npos);
    EXPECT_NE(dom.find("e.key === 'i'"), std::string::npos);

    // The lost update's mark sits in process 2's row (its write of 5 was overwritten), not in
    // process 1's (which overwrote it).
    const std::string mark_y = attribute_after(dom, "class=\"mark lost\"", "y1");
    const std::string loser_label_y = attribute_after(dom, ">process 2</text>", "y");
    const std::string winner_label_y = attribute_after(dom, ">process 1</text>", "y");
    ASSERT_FALSE(mark_y.empty()) << "no lost-update mark";
    ASSERT_FALSE(loser_label_y.empty());
    // A row's label sits 13 px below its top; a mark starts 3 px above it.
    EXPECT_EQ(std::stoi(mark_y) + 3 + 13, std::stoi(loser_label_y));
    EXPECT_NE(std::stoi(mark_y) + 3 + 13, std::stoi(winner_label_y));
}

}  // namespace
}  // namespace lockbench
