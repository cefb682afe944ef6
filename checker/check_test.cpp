#include "checker/check.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

#include "checker/history_generator.hpp"
#include "checker/history_testing.hpp"
#include "checker/testing/temp_dir.hpp"

namespace lockbench::checker {
namespace {

using nlohmann::json;
using testing::granted;
using testing::kOverlap;
using testing::numbered;

Report report_of(const std::string& text, const CheckOptions& options = {}) {
    std::istringstream in(numbered(text));
    return check_history(in, options);
}

// The report as summary.json and `lockbench check --json` carry it.
json check_text(const std::string& text, const CheckOptions& options = {}) {
    return report_of(text, options).to_json();
}

TEST(CheckHistory, AnEmptyHistoryIsUnknownNotValid) {
    std::istringstream in("");
    const json report = check_history(in, {}).to_json();
    EXPECT_EQ(report["valid"], "unknown");
    EXPECT_EQ(report["events"], 0);
    EXPECT_TRUE(report["violations"].empty());
    EXPECT_EQ(report["violation_count"], 0);
    for (const char* name : {"mutual_exclusion", "fencing", "resource", "liveness"})
        EXPECT_EQ(report["checks"][name]["valid"], "not-applicable") << name;
    EXPECT_FALSE(report["checks"].contains("linearizability"));
    EXPECT_EQ(report["unknown_reasons"], (json{"the history is empty: it has no events"}));
}

// Each way of judging nothing says which it is: the hint about --model only where it helps.
TEST(CheckHistory, NothingJudgedSaysWhy) {
    const auto reasons = [](const std::string& text) {
        return check_text(text, {})["unknown_reasons"];
    };
    EXPECT_EQ(
        reasons(R"({"type":"info","process":"nemesis","f":"pause","value":null,"time":1}
)"),
        (json{"the history has no operation a check reads (acquire, release, renew, read, write, "
              "cas)"}));
    EXPECT_EQ(reasons(R"({"type":"invoke","process":0,"f":"read","value":null,"time":1}
)"),
              (json{"no check applies to this history (a register history needs --model "
                    "register)"}));
}

TEST(CheckHistory, ARegisterHistoryIsJudgedByLinearizabilityAlone) {
    // Jepsen's shape: reads, writes and a cas on one register, nothing locked. A write that
    // "lost" to a smaller one is no lost update here - nothing promised the register a lock.
    const std::string history = R"(
{"type":"invoke","process":0,"f":"write","key":"r","value":5,"time":1}
{"type":"ok","process":0,"f":"write","key":"r","value":5,"time":2}
{"type":"invoke","process":1,"f":"write","key":"r","value":3,"time":3}
{"type":"ok","process":1,"f":"write","key":"r","value":3,"time":4}
{"type":"invoke","process":2,"f":"cas","key":"r","value":[3,4],"time":5}
{"type":"ok","process":2,"f":"cas","key":"r","value":[3,4],"time":6}
{"type":"invoke","process":0,"f":"read","key":"r","value":null,"time":7}
{"type":"ok","process":0,"f":"read","key":"r","value":4,"time":8}
)";
    CheckOptions options;
    options.model = Model::Register;
    const json report = check_text(history, options);
    EXPECT_EQ(report["valid"], true) << report.dump(2);
    EXPECT_EQ(report["checks"]["linearizability"]["valid"], true);
    for (const char* name : {"mutual_exclusion", "fencing", "resource", "liveness"})
        EXPECT_EQ(report["checks"][name]["valid"], "not-applicable") << name;

    // A read of a value never written is caught by the one check that applies.
    std::string stale = history;
    const std::string read_four = "\"value\":4,\"time\":8";
    stale.replace(stale.rfind(read_four), read_four.size(), "\"value\":5,\"time\":8");
    EXPECT_EQ(check_text(stale, options)["valid"], false);
}

TEST(CheckHistory, AGeneratedRegisterHistoryIsJudgedByLinearizabilityAlone) {
    for (std::uint64_t seed : {7ULL, 8ULL, 9ULL}) {
        SCOPED_TRACE("seed " + std::to_string(seed));
        std::istringstream history(testing::RegisterHistoryGenerator(seed).generate(3000));
        CheckOptions options;
        options.model = Model::Register;
        const json report = check_history(history, options).to_json();
        EXPECT_EQ(report["valid"], true) << report.dump(2).substr(0, 2000);
        EXPECT_EQ(report["checks"]["linearizability"]["valid"], true);
        EXPECT_GT(report["checks"]["linearizability"]["ops"].get<int>(), 1000);
        for (const char* name : {"mutual_exclusion", "fencing", "resource", "liveness"})
            EXPECT_EQ(report["checks"][name]["valid"], "not-applicable") << name;
        EXPECT_EQ(report["violation_count"], 0);
    }
}

TEST(CheckHistory, ChecksCanBeChosen) {
    CheckOptions options;
    options.only = std::vector<std::string>{"mutual_exclusion"};
    const json report = check_text(kOverlap, options);
    EXPECT_EQ(report["valid"], false);
    ASSERT_EQ(report["checks"].size(), 1u);
    EXPECT_TRUE(report["checks"].contains("mutual_exclusion"));
    options.only = std::vector<std::string>{"fencing"};
    EXPECT_EQ(check_text(kOverlap, options)["valid"], "unknown");  // fencing does not apply
}

TEST(CheckHistory, AGeneratedTenThousandEventHistoryIsValid) {
    testing::HistoryGenerator generator({.seed = 42});
    std::istringstream in(generator.generate(10'000));
    CheckOptions options;
    options.starvation_bound_ms = 60'000;
    const json report = check_history(in, options).to_json();
    EXPECT_EQ(report["valid"], true) << report.dump(2);
    EXPECT_EQ(report["events"], 10'000);
    EXPECT_GT(report["checks"]["mutual_exclusion"]["holds"].get<int>(), 200);
    EXPECT_EQ(report["checks"]["fencing"]["grants_with_fence"],
              report["checks"]["mutual_exclusion"]["holds"]);
    EXPECT_GT(report["checks"]["resource"]["writes"].get<int>(), 200);
    EXPECT_GT(report["checks"]["liveness"]["handoff_ms"]["count"].get<int>(), 0);
}

TEST(CheckHistory, AViolationMakesTheReportInvalidAndIsListed) {
    const json report = check_text(kOverlap);
    EXPECT_EQ(report["valid"], false);
    EXPECT_EQ(report["events"], 5);
    EXPECT_EQ(report["checks"]["mutual_exclusion"]["valid"], false);
    EXPECT_EQ(report["checks"]["mutual_exclusion"]["violations"], 1);
    EXPECT_EQ(report["checks"]["fencing"]["valid"], "not-applicable");
    EXPECT_EQ(report["violation_count"], 1);
    ASSERT_EQ(report["violations"].size(), 1u);
    const json& v = report["violations"][0];
    EXPECT_EQ(v["kind"], "mutual_exclusion");
    EXPECT_EQ(v["key"], "k0");
    EXPECT_TRUE(v.contains("message"));
    EXPECT_TRUE(v.contains("witness"));
}

// A library's "lost" signals (HISTORY.md: "process": "library") are what the library claimed,
// not operations: every check judges the history as it judges it without them - a violation and
// a valid history alike - even one that names a process in flight or reads like a crash.
TEST(CheckHistory, ALibrarysSignalsChangeNoCheck) {
    const std::string signals = R"(
{"type":"info","process":"library","f":"lost","key":"k0","value":{"process":1,"token":"c1-4","text":"refresh failed"},"time":1600000000}
{"type":"info","process":"library","f":"crash","key":"k0","value":{"process":3,"target":3,"token":"c3-7","text":"?"},"time":1700000000}
)";
    const json without = check_text(kOverlap);
    const json with = check_text(std::string(kOverlap) + signals);
    EXPECT_EQ(without["valid"], false);
    EXPECT_EQ(with["events"], without["events"].get<int>() + 2);
    EXPECT_EQ(with["checks"], without["checks"]);
    EXPECT_EQ(with["violations"], without["violations"]);
    EXPECT_EQ(with["valid"], without["valid"]);

    // Interleaved with a valid history: before its first event, inside an operation in flight,
    // and naming a process that never ran.
    const std::string valid = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":100}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"c1-1","fence":1,"mode":"exclusive"},"time":200}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"c1-1"},"time":300}
{"type":"ok","process":1,"f":"release","key":"k0","value":null,"time":400}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":{"mode":"exclusive","lease_ms":500},"time":500}
{"type":"ok","process":2,"f":"acquire","key":"k0","value":{"token":"c2-1","fence":2,"mode":"exclusive"},"time":600}
{"type":"invoke","process":2,"f":"release","key":"k0","value":{"token":"c2-1"},"time":700}
{"type":"ok","process":2,"f":"release","key":"k0","value":null,"time":800}
)";
    const std::string interleaved =
        testing::with_inserted(valid, {{0, testing::library_lost(1, "k0", "c1-1", "gone", 50)},
                                       {2, testing::library_lost(1, "k0", "c1-1", "gone", 250)},
                                       {6, testing::library_lost(9, "k0", "c1-1", "gone", 650)}});
    const json plain = check_text(valid);
    const json signalled = check_text(interleaved);
    EXPECT_EQ(plain["valid"], true) << plain.dump(2);
    EXPECT_EQ(signalled["events"], plain["events"].get<int>() + 3);
    EXPECT_EQ(signalled["checks"], plain["checks"]);
    EXPECT_EQ(signalled["valid"], plain["valid"]);
}

// T1 twice: on k0 the paused holder's stale write lands (a lost update), on k1 the fence rejects
// it (a save). Each incident counts what followed it; the lost update and the save stay where
// the resource and fencing checks count them.
TEST(CheckHistory, AnIncidentCountsTheLostUpdatesAndFencingSavesThatFollowed) {
    using namespace testing;
    const json report = check_text(
        granted(1, "k0", "a", 100, 110) + read_ok(1, "k0", 0, 120, 130) +
        granted(2, "k0", "b", 200, 210) + write_ok(2, "k0", 1, 220, 230) +
        write_ok(1, "k0", 1, 300, 310) + granted_fenced(3, "k1", "c", 7, 400, 410) +
        granted_fenced(4, "k1", "d", 8, 500, 510) + write_event("invoke", 4, "k1", 1, 8, 520) +
        write_event("ok", 4, "k1", 1, 8, 530) + write_event("invoke", 3, "k1", 1, 7, 600) +
        write_event("fail", 3, "k1", 1, 7, 610, "stale-fence"));
    const json& me = report["checks"]["mutual_exclusion"];
    EXPECT_EQ(me["incidents"], 2);
    ASSERT_EQ(me["incident_list"].size(), 2u);
    EXPECT_EQ(me["incident_list"][0]["key"], "k0");
    EXPECT_EQ(me["incident_list"][0]["lost_updates"], 1);
    EXPECT_EQ(me["incident_list"][0]["fencing_saves"], 0);
    EXPECT_EQ(me["incident_list"][0]["message"],
              "k0: process 1 (token a) held it from 0.000 s to the end; 1 grant to process 2 "
              "overlapped it at 0.000 s; then 1 lost update");
    EXPECT_EQ(me["incident_list"][1]["key"], "k1");
    EXPECT_EQ(me["incident_list"][1]["lost_updates"], 0);
    EXPECT_EQ(me["incident_list"][1]["fencing_saves"], 1);
    EXPECT_EQ(me["incident_list"][1]["message"],
              "k1: process 3 (token c) held it from 0.000 s to the end; 1 grant to process 4 "
              "overlapped it at 0.000 s; then the fence rejected 1 stale write");
    EXPECT_EQ(report["checks"]["resource"]["violations"], 1);
    EXPECT_EQ(report["checks"]["fencing"]["saves"], 1);
}

TEST(CheckHistory, OptionsReachTheChecks) {
    const std::string crash = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":0}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":null,"time":1000000}
{"type":"info","process":"nemesis","f":"crash","value":{"target":1,"client":0},"time":2000000}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":3000000}
{"type":"fail","process":2,"f":"acquire","key":"k0","value":null,"time":300000000,"error":"held"}
{"type":"invoke","process":2,"f":"acquire","key":"k0","value":null,"time":5000000000}
)";
    CheckOptions options;
    EXPECT_EQ(check_text(crash, options)["valid"], true);  // 10 s default bound
    options.liveness_bound_ms = 1000;
    const json report = check_text(crash, options);
    EXPECT_EQ(report["valid"], false);
    EXPECT_EQ(report["checks"]["liveness"]["deadlocks"], 1);
    EXPECT_EQ(report["violations"][0]["kind"], "deadlock");
    options.starvation_bound_ms = 100;
    EXPECT_EQ(check_text(crash, options)["checks"]["liveness"]["starved"], 1);
}

TEST(CheckHistory, MaxViolationsCapsWitnessesNotCounts) {
    std::string text;
    for (int p = 0; p < 4; ++p)
        text += granted(p, "k", "", 1, 2);
    CheckOptions options;
    options.max_violations = 2;
    const json report = check_text(text, options);
    EXPECT_EQ(report["checks"]["mutual_exclusion"]["violations"], 6);
    EXPECT_EQ(report["violations"].size(), 2u);
}

TEST(CheckHistory, ReadsFilesAndPropagatesHistoryErrors) {
    lockbench::testing::TempDir scratch;
    const auto path = scratch.path() / "history.jsonl";
    {
        std::ofstream out(path);
        out << numbered(kOverlap);
    }
    EXPECT_EQ(check_history(path, {}).verdict, Verdict::Invalid);
    {
        std::ofstream out(path);
        out << numbered(kOverlap) << R"({"index":9,"type":"ok"})"
            << "\n";
    }
    try {
        check_history(path, {});
        ADD_FAILURE() << "no HistoryError";
    } catch (const HistoryError& e) {
        EXPECT_EQ(e.line(), 6u);
    }
    std::filesystem::remove(path);
    EXPECT_THROW(check_history(path, {}), std::runtime_error);
}

TEST(CheckHistory, LinearizabilityIsMergedIntoTheReport) {
    CheckOptions options;
    options.model = Model::Mutex;
    const json report = check_text(testing::kOneHold, options);
    ASSERT_TRUE(report["checks"].contains("linearizability")) << report.dump(2);
    const json& lin = report["checks"]["linearizability"];
    EXPECT_EQ(lin["valid"], true) << lin.dump(2);
    EXPECT_TRUE(lin["violations"].is_number());
    EXPECT_EQ(report["valid"], true);
}

TEST(CheckHistory, ALinearizabilityViolationIsListedWithTheOthers) {
    CheckOptions options;
    options.model = Model::Mutex;
    const json report = check_text(kOverlap, options);
    EXPECT_EQ(report["valid"], false);
    const json& lin = report["checks"]["linearizability"];
    EXPECT_EQ(lin["valid"], false) << lin.dump(2);
    std::size_t linearizability_entries = 0;
    for (const auto& v : report["violations"])
        linearizability_entries += v["kind"] == "linearizability";
    EXPECT_EQ(linearizability_entries, lin["violations"].get<std::size_t>());
    EXPECT_GE(linearizability_entries, 1u);
}

TEST(FormatReport, ValidReportFirstLineAndOneLinePerCheck) {
    testing::HistoryGenerator generator({.seed = 3});
    std::istringstream in(generator.generate(12'345));
    const std::string text = format_report(check_history(in, {}));
    EXPECT_EQ(text.substr(0, text.find('\n')), "history: 12,345 events \u2014 VALID");
    for (const char* name : {"mutual_exclusion", "fencing", "resource", "liveness"})
        EXPECT_NE(text.find(std::string("  ") + name), std::string::npos) << text;
    EXPECT_EQ(text.find("violations"), std::string::npos) << text;
}

TEST(FormatReport, InvalidReportListsTheFirstViolationsAndHowManyMore) {
    std::string history;
    for (int p = 0; p < 6; ++p)
        history += granted(p, "k", "t" + std::to_string(p), 1, 2);
    const std::string text = format_report(report_of(history));
    std::istringstream lines(text);
    std::string line;
    std::getline(lines, line);
    EXPECT_EQ(line, "history: 12 events \u2014 INVALID");
    std::getline(lines, line);
    EXPECT_EQ(line.rfind("  mutual_exclusion  INVALID  6 holds, 15 overlapping pairs", 0), 0u)
        << line;
    EXPECT_NE(text.find("violations (15):\n"), std::string::npos) << text;
    EXPECT_NE(text.find("  [mutual_exclusion] k: process 1 (token t1) acquired at 0.000 s while "
                        "process 0 (token t0) held it since 0.000 s\n"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  ... and 5 more\n"), std::string::npos) << text;
}

TEST(Report, RoundTripsThroughJsonAndDecodesVerdictsInOnePlace) {
    CheckOptions options;
    options.model = Model::Mutex;
    const Report report = report_of(kOverlap, options);
    const Report back = Report::from_json(report.to_json());
    EXPECT_EQ(back.to_json(), report.to_json());
    EXPECT_EQ(back.verdict, Verdict::Invalid);
    EXPECT_EQ(back.violation_count(), report.violation_count());
    ASSERT_NE(back.check("mutual_exclusion"), nullptr);
    EXPECT_EQ(back.check("mutual_exclusion")->processes(), (std::vector<std::int64_t>{1, 3}));
    EXPECT_EQ(back.check("fencing")->verdict(), Verdict::NotApplicable);

    EXPECT_EQ(verdict_of(true), Verdict::Valid);
    EXPECT_EQ(verdict_of(false), Verdict::Invalid);
    EXPECT_EQ(verdict_of("not-applicable"), Verdict::NotApplicable);
    EXPECT_EQ(verdict_of("unknown"), Verdict::Unknown);
    EXPECT_EQ(verdict_of(nullptr), Verdict::Unknown);
    for (Verdict v : {Verdict::Valid, Verdict::Invalid, Verdict::Unknown, Verdict::NotApplicable})
        EXPECT_EQ(verdict_of(to_json(v)), v);
    EXPECT_EQ(exit_code(Verdict::Valid), 0);
    EXPECT_EQ(exit_code(Verdict::Invalid), 1);
    EXPECT_EQ(exit_code(Verdict::Unknown), 3);
}

TEST(Report, AReasonNotToTrustMakesValidUnknownButNotInvalid) {
    Report valid = report_of(R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":1}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":2}
)");
    ASSERT_EQ(valid.verdict, Verdict::Valid);
    valid.add_unknown_reason("a fault never fired");
    EXPECT_EQ(valid.verdict, Verdict::Unknown);
    EXPECT_EQ(valid.to_json()["unknown_reasons"], (json{"a fault never fired"}));
    Report invalid = report_of(kOverlap);
    invalid.add_unknown_reason("a fault never fired");
    EXPECT_EQ(invalid.verdict, Verdict::Invalid);
}

TEST(FormatReport, UnknownVerdict) {
    const json report = {
        {"valid", "unknown"},
        {"events", 1},
        {"checks", {{"linearizability", {{"valid", "unknown"}, {"reason", "time limit"}}}}},
        {"violations", json::array()}};
    const std::string text = format_report(Report::from_json(report));
    EXPECT_EQ(text.substr(0, text.find('\n')), "history: 1 events \u2014 UNKNOWN");
    EXPECT_NE(text.find("linearizability   UNKNOWN"), std::string::npos) << text;
    EXPECT_NE(text.find("(time limit)"), std::string::npos) << text;
}

}  // namespace
}  // namespace lockbench::checker
