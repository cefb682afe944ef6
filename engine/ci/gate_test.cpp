#include "engine/ci/gate.hpp"

#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// Four full seconds around `rate` (relative MAD 0.5%), then a partial second that the gate must
// ignore: were it counted, its tiny count would read as a drop.
std::vector<double> steady(double rate) {
    return {rate, rate * 0.99, rate * 1.01, rate, rate * 0.1};
}

json run(const std::string& scenario, const std::string& strategy, std::vector<double> per_second,
         bool faults = false, const std::string& expected = "safe") {
    double total = 0;
    for (double s : per_second)
        total += s;
    double duration = static_cast<double>(per_second.size()) - 0.5;
    return {{"scenario", scenario},
            {"strategy", strategy},
            {"dir", scenario + "." + strategy},
            {"cycles_per_s", total / duration},
            {"cycles_per_second", per_second},
            {"duration_s", duration},
            {"faults", faults},
            {"acquire_p50_ms", 0.2},
            {"acquire_p99_ms", 1.5},
            {"valid", expected == "safe"},
            {"violations", expected == "safe" ? 0 : 3},
            {"violation_kinds", expected == "safe" ? json::array() : json{"mutual-exclusion"}},
            {"expected", expected},
            {"as_expected", true}};
}

json suite_of(json runs) {
    return {{"quick", true}, {"interrupted", false}, {"all_as_expected", true}, {"runs", runs}};
}

// The shape of the shipped suite: a fault-free scenario with the reference strategy, one without
// it, and a fault scenario whose throughput the gate must not compare. `scale` multiplies a
// strategy's rate ("*" all of them).
json typical_suite(std::map<std::string, double> scale = {}) {
    auto rate = [&](const std::string& strategy, double r) {
        double all = scale.count("*") ? scale["*"] : 1.0;
        return steady(r * all * (scale.count(strategy) ? scale[strategy] : 1.0));
    };
    return suite_of(
        {run("baseline", "fenced", rate("fenced", 800)),
         run("baseline", "redlock", rate("redlock", 300)),
         run("baseline", "set_nx_px", rate("set_nx_px", 1000)),
         run("t12-writer-starvation", "rwlock", rate("rwlock", 600)),
         run("t12-writer-starvation", "rwlock_seed", rate("rwlock_seed", 400)),
         run("t1-holder-paused", "set_nx_px", rate("t1", 50), true, "violates:mutual_exclusion")});
}

const json& row(const GateResult& g, const std::string& scenario, const std::string& strategy) {
    for (const auto& r : g.json["rows"]) {
        if (r["scenario"] == scenario && r["strategy"] == strategy)
            return r;
    }
    static const json none;
    ADD_FAILURE() << "no row " << scenario << " x " << strategy;
    return none;
}

std::string line_of(const std::string& report, const std::string& start) {
    std::size_t at = report.find(start);
    if (at == std::string::npos)
        return "";
    return report.substr(at, report.find('\n', at) - at);
}

std::string first_line(const std::string& report) {
    return report.substr(0, report.find('\n'));
}

GateOptions verbose() {
    GateOptions o;
    o.verbose = true;
    return o;
}

// `suite` as a run that did not run `strategy` anywhere.
json without_strategy(json suite, const std::string& strategy) {
    json kept = json::array();
    for (const auto& r : suite["runs"]) {
        if (r["strategy"] != strategy)
            kept.push_back(r);
    }
    suite["runs"] = kept;
    return suite;
}

json& run_in(json& suite, const std::string& scenario, const std::string& strategy) {
    for (auto& r : suite["runs"]) {
        if (r["scenario"] == scenario && r["strategy"] == strategy)
            return r;
    }
    throw std::logic_error("no run " + scenario + " x " + strategy);
}

std::string error_of(const json& baseline, const json& current);

TEST(GateTest, IdenticalSuitePasses) {
    json suite = typical_suite();
    GateResult g = run_gate(make_baseline(suite), suite);
    EXPECT_TRUE(g.pass) << g.report;
    EXPECT_EQ(g.json["problems"], 0);
    EXPECT_EQ(g.json["rows"].size(), 6u);
    for (const auto& r : g.json["rows"])
        EXPECT_EQ(r["verdict"], "ok") << r.dump();
    // Nothing changed, nothing failed: the verdict, what was compared, and no legend.
    EXPECT_EQ(g.report,
              "gate PASS: 6 cells, 0 problems\n"
              "compared suite.json (quick suite, unfiltered) with baseline.json (quick suite, "
              "created " +
                  g.json["baseline"]["created"].get<std::string>() +
                  ")\n"
                  "note: the baseline has no machine yardstick: throughput is compared to other "
                  "strategies only, so a slowdown of every strategy cannot be seen (refresh the "
                  "baseline)\n");
    EXPECT_EQ(row(g, "baseline", "fenced")["change_pct"], 0.0);
    EXPECT_EQ(row(g, "t1-holder-paused", "set_nx_px")["compared"], false);
}

TEST(GateTest, UnexpectedOutcomeFails) {
    json suite = typical_suite();
    json current = suite;
    json& t1 = run_in(current, "t1-holder-paused", "set_nx_px");
    t1["valid"] = true;
    t1["violation_kinds"] = json::array();
    t1["as_expected"] = false;
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass);
    const json& r = row(g, "t1-holder-paused", "set_nx_px");
    EXPECT_EQ(r["verdict"], "UNEXPECTED OUTCOME");
    EXPECT_EQ(r["reasons"][0], "expected violates:mutual_exclusion, got valid");
    EXPECT_EQ(first_line(g.report), "gate FAIL: 6 cells, 1 problem (1 UNEXPECTED OUTCOME)");
    EXPECT_EQ(line_of(g.report, "t1-holder-paused"),
              "t1-holder-paused / set_nx_px: UNEXPECTED OUTCOME: expected "
              "violates:mutual_exclusion, got valid");
    GateResult v = run_gate(make_baseline(suite), current, verbose());
    EXPECT_EQ(line_of(v.report, "t1-holder-paused"),
              "t1-holder-paused                     set_nx_px               -         -        -"
              "          -        faults         50  UNEXPECTED OUTCOME: expected "
              "violates:mutual_exclusion, got valid; faults injected: outcome compared, "
              "throughput not");
}

TEST(GateTest, UnknownOutcomeFailsAsUnknown) {
    json suite = typical_suite();
    json current = suite;
    json& fenced = run_in(current, "baseline", "fenced");
    fenced["valid"] = "unknown";
    fenced["as_expected"] = nullptr;
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(row(g, "baseline", "fenced")["verdict"], "UNKNOWN");
    EXPECT_EQ(row(g, "baseline", "fenced")["reasons"][0], "expected safe, outcome unknown");
    EXPECT_EQ(first_line(g.report), "gate FAIL: 6 cells, 1 problem (1 UNKNOWN)");
}

TEST(GateTest, RunWithoutExpectationIsUnknown) {
    json suite = typical_suite();
    json current = suite;
    json extra = run("baseline", "rwlock", steady(700));
    extra["expected"] = nullptr;
    extra["as_expected"] = nullptr;
    current["runs"].push_back(extra);
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(row(g, "baseline", "rwlock")["verdict"], "UNKNOWN");
    EXPECT_EQ(row(g, "baseline", "rwlock")["reasons"][0],
              "no expectation stated for this strategy");
}

TEST(GateTest, MissingRunFails) {
    json suite = typical_suite();
    json current = without_strategy(suite, "redlock");
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(row(g, "baseline", "redlock")["verdict"], "MISSING");
    EXPECT_EQ(row(g, "baseline", "fenced")["verdict"], "ok");
    EXPECT_EQ(first_line(g.report), "gate FAIL: 6 cells, 1 problem (1 MISSING)");
    EXPECT_EQ(line_of(g.report, "baseline / redlock"),
              "baseline / redlock: MISSING: in the baseline, not in this suite run");
    EXPECT_EQ(line_of(run_gate(make_baseline(suite), current, verbose()).report,
                      "baseline                             redlock"),
              "baseline                             redlock                 -         -        -"
              "          -        0.5%/-          -  MISSING: in the baseline, not in this suite "
              "run");
}

// A pair this machine could not run (a scenario that needs root) is skipped, saying why: the
// gate says so on its row and in its verdict, neither passing it as run nor failing it as missing.
TEST(GateTest, APairSkippedOnThisMachineIsReportedNotPassedNorMissing) {
    json suite = typical_suite();
    json current = without_strategy(suite, "redlock");
    current["skipped"] = json::array(
        {{{"scenario", "baseline"}, {"strategy", "redlock"}, {"reason", "needs root"}}});
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_TRUE(g.pass) << g.report;
    EXPECT_EQ(g.json["skipped"], 1);
    EXPECT_EQ(row(g, "baseline", "redlock")["verdict"], "skipped");
    EXPECT_EQ(row(g, "baseline", "redlock")["skipped"], "needs root");
    EXPECT_EQ(line_of(g.report, "baseline / redlock"),
              "baseline / redlock: skipped on this machine: needs root");
    EXPECT_EQ(first_line(g.report), "gate PASS: 6 cells, 0 problems, 1 skipped on this machine");
    // A malformed list is an error naming its path.
    current["skipped"] = json::array({{{"scenario", "baseline"}}});
    EXPECT_THROW(run_gate(make_baseline(suite), current), GateInputError);
}

TEST(GateTest, NewRunPassesWhenAsExpected) {
    json suite = typical_suite();
    json current = suite;
    current["runs"].push_back(run("baseline", "rwlock", steady(700)));
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_TRUE(g.pass) << g.report;
    EXPECT_EQ(row(g, "baseline", "rwlock")["reasons"][0], "new: not in the baseline");
    EXPECT_EQ(first_line(g.report), "gate PASS: 7 cells, 0 problems, 1 new");
    EXPECT_EQ(line_of(g.report, "baseline / "),
              "baseline / rwlock: new, not in the baseline (outcome as expected)");
}

TEST(GateTest, InterruptedSuiteFails) {
    json suite = typical_suite();
    json current = suite;
    current["interrupted"] = true;
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(g.json["problems"], 1);
    EXPECT_EQ(first_line(g.report), "gate FAIL: 6 cells, 1 problem (1 INTERRUPTED)");
    EXPECT_NE(g.report.find("\nINTERRUPTED: the suite run did not finish\n"), std::string::npos)
        << g.report;
}

// A run that errored (a server died, the disk filled) is in the suite's `failed` list, not its
// `runs`: the gate must not read it as a pass, nor as merely missing.
TEST(GateTest, ARunThatFailedFailsTheGateNamingIt) {
    json suite = typical_suite();
    json current = without_strategy(suite, "redlock");
    current["failed"] = json::array({{{"scenario", "baseline"},
                                      {"strategy", "redlock"},
                                      {"error", "redis-server on 127.0.0.1:7001 died"},
                                      {"exit_code", 4},
                                      {"attempts", 1}}});
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass) << g.report;
    EXPECT_EQ(g.json["problems"], 1);
    const json& r = row(g, "baseline", "redlock");
    EXPECT_EQ(r["verdict"], "FAILED");
    EXPECT_EQ(r["failed"], "redis-server on 127.0.0.1:7001 died (exit 4)");
    EXPECT_EQ(line_of(g.report, "baseline / redlock"),
              "baseline / redlock: FAILED: the run could not be done: redis-server on "
              "127.0.0.1:7001 died (exit 4)");
    EXPECT_EQ(first_line(g.report), "gate FAIL: 6 cells, 1 problem (1 FAILED)");
    // A failed run the baseline never had fails too: it is not "new and as expected".
    current["failed"][0]["scenario"] = "t9-new";
    current["runs"] = suite["runs"];
    g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass) << g.report;
    EXPECT_EQ(row(g, "t9-new", "redlock")["verdict"], "FAILED");
}

TEST(GateTest, AMalformedFailedListNamesItsPath) {
    json suite = typical_suite();
    json b = make_baseline(suite);
    const std::string f = "results/suite-x/suite.json: ";
    json current = suite;
    current["failed"] = json::object();
    EXPECT_EQ(error_of(b, current), f + "/failed: must be an array, not an object");
    current["failed"] = json::array({{{"scenario", "baseline"}, {"strategy", "fenced"}}});
    EXPECT_EQ(error_of(b, current), f + "/failed/0/error: missing");
    current["failed"][0]["error"] = "died";
    EXPECT_EQ(error_of(b, current),
              f + "/failed/0: baseline x fenced both failed and finished (at /runs/0)");
    current["failed"][0]["strategy"] = "rwlock";
    current["failed"][0]["exit_code"] = "four";
    EXPECT_EQ(error_of(b, current), f + "/failed/0/exit_code: must be a number, not a string");
}

TEST(GateTest, MakeBaselineRefusesASuiteWithAFailedRun) {
    json suite = typical_suite();
    suite["failed"] = json::array(
        {{{"scenario", "baseline"}, {"strategy", "rwlock"}, {"error", "died"}, {"exit_code", 4}}});
    try {
        make_baseline(suite);
        FAIL() << "no throw";
    } catch (const GateInputError& e) {
        EXPECT_STREQ(e.what(),
                     "suite.json: /failed: baseline x rwlock could not be run (died (exit 4)); a "
                     "baseline must be whole");
    }
}

// A yardstick field of the wrong kind was read with json::value(), whose type_error escaped as an
// internal error (exit 5).
TEST(GateTest, AYardstickFieldOfTheWrongKindIsBadInputNamingItsPath) {
    json suite = typical_suite();
    json b = make_baseline(suite);
    const json yardstick = {
        {"tool", "redis-benchmark"},
        {"points", {{{"connections", 8}, {"cycles_per_s", 5000.0}, {"noise", 0.01}}}}};
    for (const auto& [field, value] :
         std::vector<std::pair<std::string, json>>{{"tool", 5},
                                                   {"connections", "eight"},
                                                   {"connections", 1e300},
                                                   {"samples", "many"},
                                                   {"noise", json::array()}}) {
        json current = suite;
        current["yardstick"] = yardstick;
        if (field == "tool")
            current["yardstick"]["tool"] = value;
        else
            current["yardstick"]["points"][0][field] = value;
        EXPECT_EQ(error_of(b, current)
                      .rfind("results/suite-x/suite.json: /yardstick: must be a "
                             "measured yardstick",
                             0),
                  0u)
            << field << " = " << value.dump() << ": " << error_of(b, current);
    }
}

TEST(GateTest, RealDropWithLowNoiseFails) {
    json suite = typical_suite();
    GateResult g = run_gate(make_baseline(suite), typical_suite({{"fenced", 0.6}}));
    EXPECT_FALSE(g.pass);
    const json& r = row(g, "baseline", "fenced");
    EXPECT_EQ(r["verdict"], "SLOWER");
    EXPECT_NEAR(r["change_pct"].get<double>(), -40.0, 1e-9);
    EXPECT_NEAR(r["baseline"]["normalised"].get<double>(), 0.8, 1e-12);
    EXPECT_NEAR(r["current"]["normalised"].get<double>(), 0.48, 1e-12);
    // Four runs of 0.5% noise each, in quadrature: 1%.
    EXPECT_NEAR(r["combined_noise"].get<double>(), 0.01, 1e-12);
    EXPECT_EQ(line_of(g.report, "baseline / fenced"),
              "baseline / fenced: SLOWER: throughput 40.0% below baseline against set_nx_px "
              "(allowed: 20%)");
    EXPECT_EQ(first_line(g.report), "gate FAIL: 6 cells, 1 problem (1 SLOWER)");
    EXPECT_EQ(
        line_of(run_gate(make_baseline(suite), typical_suite({{"fenced", 0.6}}), verbose()).report,
                "baseline                             fenced"),
        "baseline                             fenced              0.800     0.480   -40.0%"
        "          -     0.5%/0.5%        480  SLOWER: throughput 40.0% below baseline "
        "against set_nx_px (allowed: 20%)");
    // The others kept their ratio to set_nx_px.
    EXPECT_EQ(row(g, "baseline", "redlock")["verdict"], "ok");
    EXPECT_EQ(row(g, "baseline", "set_nx_px")["verdict"], "ok");
}

TEST(GateTest, DropWithinThresholdPassesUnlessTheThresholdIsLowered) {
    json suite = typical_suite();
    json current = typical_suite({{"fenced", 0.85}});
    EXPECT_TRUE(run_gate(make_baseline(suite), current).pass);
    GateOptions strict;
    strict.max_drop_pct = 10;
    GateResult g = run_gate(make_baseline(suite), current, strict);
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(row(g, "baseline", "fenced")["verdict"], "SLOWER");
}

TEST(GateTest, DropWithinThreeTimesTheNoisePasses) {
    json suite = typical_suite();
    json current = typical_suite({{"fenced", 0.6}});
    // Median 480 still, but the seconds scatter: deviations 0, 240, 240, 320, 320 -> MAD 240,
    // 50% of the median. 3 x 50% dwarfs the 40% drop, so it is not evidence of a regression.
    run_in(current, "baseline", "fenced")["cycles_per_second"] = {480, 240, 720, 160, 800, 10};
    run_in(current, "baseline", "fenced")["duration_s"] = 5.5;
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_TRUE(g.pass) << g.report;
    const json& r = row(g, "baseline", "fenced");
    EXPECT_EQ(r["verdict"], "ok");
    EXPECT_NEAR(r["current"]["noise"].get<double>(), 0.5, 1e-12);
    EXPECT_NEAR(r["change_pct"].get<double>(), -40.0, 1e-9);
    double combined = std::sqrt(3 * 0.005 * 0.005 + 0.5 * 0.5);
    EXPECT_NEAR(r["combined_noise"].get<double>(), combined, 1e-12);
    EXPECT_EQ(r["reasons"][0],
              "throughput 40.0% below baseline against set_nx_px (allowed: 150.0%, 3x the "
              "measured noise of 50.0%)");
    // Not a failure, but a change worth a look: shown, and counted apart from the problems.
    EXPECT_EQ(first_line(g.report), "gate PASS: 6 cells, 0 problems, 1 slower within noise");
    EXPECT_EQ(line_of(g.report, "baseline / fenced"),
              "baseline / fenced: throughput 40.0% below baseline against set_nx_px (allowed: "
              "150.0%, 3x the measured noise of 50.0%)");
}

TEST(GateTest, WholeMachineTwiceAsSlowPasses) {
    json suite = typical_suite();
    GateResult g = run_gate(make_baseline(suite), typical_suite({{"*", 0.5}}));
    EXPECT_TRUE(g.pass) << g.report;
    for (const auto& r : g.json["rows"]) {
        if (r["compared"] == true) {
            EXPECT_NEAR(r["change_pct"].get<double>(), 0.0, 1e-9) << r.dump();
        }
    }
    EXPECT_EQ(row(g, "baseline", "fenced")["current"]["median_cycles_per_s"], 400.0);
}

// A suite as measured on a machine whose yardstick (redis-benchmark's cycle bound at 8
// connections) is `cycles_per_s`, with 0.5% noise.
json with_yardstick(json suite, double cycles_per_s) {
    suite["yardstick"] = {
        {"tool", "redis-benchmark"},
        {"points",
         {{{"connections", 1}, {"cycles_per_s", cycles_per_s / 3}, {"noise", 0.005}},
          {{"connections", 8}, {"cycles_per_s", cycles_per_s}, {"noise", 0.005}}}}};
    return suite;
}

// The gate's blind spot closed: every strategy twice as slow on the same machine keeps every
// ratio to set_nx_px, but halves every ratio to the machine.
TEST(GateTest, EveryStrategyTwiceAsSlowOnTheSameMachineFailsAgainstTheYardstick) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    GateResult g = run_gate(baseline, with_yardstick(typical_suite({{"*", 0.5}}), 20000));
    EXPECT_FALSE(g.pass) << g.report;
    const json& fenced = row(g, "baseline", "fenced");
    EXPECT_EQ(fenced["verdict"], "SLOWER");
    EXPECT_NEAR(fenced["change_pct"].get<double>(), 0.0, 1e-9);  // set_nx_px saw nothing
    EXPECT_NEAR(fenced["yardstick_change_pct"].get<double>(), -50.0, 1e-9);
    EXPECT_EQ(fenced["reasons"].back(),
              "throughput 50.0% below baseline against this machine (allowed: 20%)");
    // set_nx_px itself, and the scenario without it, are caught too.
    EXPECT_EQ(row(g, "baseline", "set_nx_px")["verdict"], "SLOWER");
    EXPECT_EQ(row(g, "t12-writer-starvation", "rwlock")["verdict"], "SLOWER");
    EXPECT_EQ(g.json["yardstick"]["connections"], 8);
    EXPECT_NE(g.report.find("\n    \"against this machine\": to the cycles per second "
                            "redis-benchmark measured on it (8 connections: baseline 20000, "
                            "current 20000)\n"),
              std::string::npos)
        << g.report;
}

TEST(GateTest, LockbenchsOwnConnectionRateIsReportedForDiagnosisNotJudged) {
    json base_suite = with_yardstick(typical_suite(), 20000);
    base_suite["yardstick"]["lockbench_cycles_per_s"] = 10000;
    json cur_suite = with_yardstick(typical_suite(), 20000);
    cur_suite["yardstick"]["lockbench_cycles_per_s"] = 5000;  // our connection code got slower
    const json baseline = make_baseline(base_suite);
    EXPECT_EQ(baseline["yardstick"]["lockbench_cycles_per_s"], 10000.0);
    GateResult g = run_gate(baseline, cur_suite);
    EXPECT_TRUE(g.pass) << g.report;  // the strategies did not slow: nothing to fail
    // Not judged, so not in the short report, where it read as a failure.
    EXPECT_EQ(g.report.find("lockbench's own connection"), std::string::npos) << g.report;
    const GateResult v = run_gate(baseline, cur_suite, verbose());
    EXPECT_NE(v.report.find("note: lockbench's own connection doing the yardstick's two commands "
                            "on one connection: baseline 10000, current 5000 cycles/s (-50.0%); "
                            "shown to tell a slower connection layer from a slower machine, not "
                            "judged\n"),
              std::string::npos)
        << v.report;
}

TEST(GateTest, AMachineTwiceAsSlowPassesAgainstTheYardstick) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    GateResult g = run_gate(baseline, with_yardstick(typical_suite({{"*", 0.5}}), 10000));
    EXPECT_TRUE(g.pass) << g.report;
    EXPECT_NEAR(row(g, "baseline", "fenced")["yardstick_change_pct"].get<double>(), 0.0, 1e-9);
}

// seed001 in CI: rwlock got 46% faster, rwlock_seed did not change, and the ratio of each to
// the other moved. With the machine measured on both sides the gate can tell which one moved.
TEST(GateTest, AReferenceThatGotFasterIsNotASlowdownOfTheRunsBesideIt) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    GateResult g = run_gate(baseline, with_yardstick(typical_suite({{"rwlock", 1.5}}), 20000));
    EXPECT_TRUE(g.pass) << g.report;
    const json& seed = row(g, "t12-writer-starvation", "rwlock_seed");
    EXPECT_EQ(seed["verdict"], "ok");
    EXPECT_EQ(seed["reasons"].back(),
              "throughput 33.3% below baseline against the other strategies' median, which "
              "itself rose 50.0% against this machine while this run held (+0.0%): the "
              "reference got faster, this run did not slow");
    EXPECT_EQ(first_line(g.report),
              "gate PASS: 6 cells, 0 problems, 1 slower only against a reference that got faster");
    // Without the machine on both sides the gate cannot tell, and fails as it always did.
    EXPECT_FALSE(run_gate(make_baseline(typical_suite()), typical_suite({{"rwlock", 1.5}})).pass);
    // A run that dropped against the machine as well is a slowdown, whatever its peers did.
    GateResult both = run_gate(
        baseline, with_yardstick(typical_suite({{"rwlock", 1.5}, {"rwlock_seed", 0.7}}), 20000));
    EXPECT_FALSE(both.pass) << both.report;
    EXPECT_EQ(row(both, "t12-writer-starvation", "rwlock_seed")["verdict"], "SLOWER");
}

// The short report as a CI log shows it: the verdict and its counts first, then only the cells
// that changed or failed, in words, and what the numbers mean once.
TEST(GateTest, TheShortReportIsASummaryLineTheCellsThatChangedOrFailedAndALegend) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    json current = with_yardstick(typical_suite({{"fenced", 0.6}}), 20000);
    json& t1 = run_in(current, "t1-holder-paused", "set_nx_px");
    t1["valid"] = true;
    t1["violation_kinds"] = json::array();
    t1["as_expected"] = false;
    current["runs"].push_back(run("baseline", "rwlock", steady(700)));
    const GateResult g = run_gate(baseline, current);
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(g.report,
              "gate FAIL: 7 cells, 2 problems (1 UNEXPECTED OUTCOME, 1 SLOWER), 1 new\n"
              "compared suite.json (quick suite, unfiltered) with baseline.json (quick suite, "
              "created " +
                  baseline["created"].get<std::string>() +
                  ")\n"
                  "baseline / fenced: SLOWER: throughput 40.0% below baseline against set_nx_px "
                  "(allowed: 20%)\n"
                  "t1-holder-paused / set_nx_px: UNEXPECTED OUTCOME: expected "
                  "violates:mutual_exclusion, got valid\n"
                  "baseline / rwlock: new, not in the baseline (outcome as expected)\n"
                  "how to read this:\n"
                  "  throughput: fault-free runs' median cycles per second, compared as ratios, "
                  "never as raw numbers:\n"
                  "    \"against set_nx_px\": to set_nx_px's in the same scenario (the other "
                  "strategies' median where it did not run)\n"
                  "    \"against this machine\": to the cycles per second redis-benchmark "
                  "measured on it (8 connections: baseline 20000, current 20000)\n"
                  "    \"below baseline\": how far that ratio fell since the baseline\n"
                  "  SLOWER: fell more than 20% and more than 3x the measured noise, the "
                  "variation of the per-second\n"
                  "    throughput (baseline and this suite combined); \"allowed\" is the larger "
                  "of the two\n"
                  "  LATENCY: a fault-free run's acquire p99 (1 ms or more) rose more than 200% "
                  "against a reference\n"
                  "  runs with faults injected are judged by their outcome only; --verbose lists "
                  "every cell\n");
}

// A scenario bound by its timers does not speed up with the machine: on a machine 20% faster,
// fenced at 95% of its baseline cycles/s reads 20.8% below against the machine while set_nx_px,
// its scenario's reference, held there. That is the machine, not the run (seed001 x rwlock in CI
// on 2026-11-27): noted, judged against set_nx_px instead. Its own drop still fails there.
TEST(GateTest, ADropAgainstAFasterMachineIsNotJudgedThereWhenTheScenariosReferenceHeld) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    const GateResult held = run_gate(
        baseline, with_yardstick(typical_suite({{"*", 1.15}, {"fenced", 0.95 / 1.15}}), 24000));
    EXPECT_TRUE(held.pass) << held.report;
    const json& fenced = row(held, "baseline", "fenced");
    EXPECT_EQ(fenced["verdict"], "ok");
    EXPECT_NEAR(fenced["yardstick_change_pct"].get<double>(), 0.95 / 1.2 * 100 - 100, 1e-9);
    EXPECT_EQ(fenced["reasons"], json{"throughput 20.8% below baseline against this machine, not "
                                      "judged there: its scenario's reference held against it "
                                      "(-4.2%), and this run is judged against that reference"});

    const GateResult own = run_gate(
        baseline, with_yardstick(typical_suite({{"*", 1.15}, {"fenced", 0.75 / 1.15}}), 24000));
    EXPECT_FALSE(own.pass) << own.report;
    EXPECT_EQ(row(own, "baseline", "fenced")["verdict"], "SLOWER");
    EXPECT_EQ(row(own, "baseline", "fenced")["reasons"].back(),
              "throughput 34.8% below baseline against set_nx_px (allowed: 20%)");
}

// A run can gain against set_nx_px while it loses against the machine (every strategy slowed,
// this one less): the table showed "+40.0%" beside "drop 30.0%". Each number now says what it
// is measured against, in its own column and in the words.
TEST(GateTest, VerboseListsEveryCellWithOneColumnPerBasisAndNoContradictorySigns) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    const GateResult g = run_gate(
        baseline, with_yardstick(typical_suite({{"*", 0.5}, {"fenced", 1.4}}), 20000), verbose());
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(line_of(g.report, "scenario  "),
              "scenario                             strategy        base norm  cur norm   vs ref "
              "vs machine     noise b/c   cycles/s  verdict");
    EXPECT_EQ(line_of(g.report, "baseline                             fenced"),
              "baseline                             fenced              0.800     1.120   +40.0%"
              "     -30.0%     0.5%/0.5%        560  SLOWER: throughput 30.0% below baseline "
              "against this machine (allowed: 20%)");
    // Every cell is listed, the routine ones too.
    EXPECT_EQ(line_of(g.report, "t1-holder-paused "),
              "t1-holder-paused                     set_nx_px               -         -        -"
              "          -        faults         25  ok: faults injected: outcome compared, "
              "throughput not");
    EXPECT_NE(g.report.find("how to read this:\n"), std::string::npos);
}

// `suite --scenario baseline --strategy fenced --strategy redlock` records its filter; the gate
// compares it with that part of the baseline: what the filter left out is not missing, what it
// selected and the suite lacks still is.
TEST(GateTest, AFilteredSuiteIsComparedWithTheMatchingPartOfTheBaseline) {
    const json suite = typical_suite();
    json current = suite;
    json kept = json::array();
    for (const auto& r : suite["runs"]) {
        if (r["scenario"] == "baseline" && r["strategy"] == "fenced")
            kept.push_back(r);
    }
    current["runs"] = kept;
    current["filter"] = {{"scenarios", {"baseline"}}, {"strategies", {"fenced", "redlock"}}};
    GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_FALSE(g.pass) << g.report;
    EXPECT_EQ(g.json["rows"].size(), 2u) << g.report;
    EXPECT_EQ(row(g, "baseline", "fenced")["verdict"], "ok");
    EXPECT_EQ(row(g, "baseline", "redlock")["verdict"], "MISSING");
    EXPECT_EQ(first_line(g.report), "gate FAIL: 2 cells, 1 problem (1 MISSING)");
    EXPECT_EQ(line_of(g.report, "compared "),
              "compared suite.json (quick suite of --scenario baseline --strategy fenced "
              "--strategy redlock; the baseline's 4 other cells are left out) with baseline.json "
              "(quick suite, created " +
                  g.json["baseline"]["created"].get<std::string>() + ")");
    EXPECT_EQ(g.json["left_out_by_filter"], 4);
    // The suite with the cell it selected: a pass.
    json whole = suite;
    current["runs"].push_back(run_in(whole, "baseline", "redlock"));
    g = run_gate(make_baseline(suite), current);
    EXPECT_TRUE(g.pass) << g.report;
    EXPECT_EQ(first_line(g.report), "gate PASS: 2 cells, 0 problems");
    // A filter of the wrong shape is bad input, naming its path.
    current["filter"] = {{"scenarios", {"baseline", 7}}};
    EXPECT_EQ(error_of(make_baseline(suite), current),
              "results/suite-x/suite.json: /filter/scenarios/1: must be a name, not a number");
}

// CI's `suite --quick --no-topology` keeps the scenarios that start no deployment of many servers
// and records them as its filter: the gate leaves the baseline's others out, and names the flag
// rather than the list.
TEST(GateTest, ASuiteWithoutTheTopologyScenariosLeavesTheirBaselineCellsOut) {
    const json suite = typical_suite();
    json current = suite;
    json kept = json::array();
    for (const auto& r : suite["runs"]) {
        if (r["scenario"] != "t12-writer-starvation")
            kept.push_back(r);
    }
    current["runs"] = kept;
    current["filter"] = {{"scenarios", {"baseline", "t1-holder-paused"}},
                         {"strategies", json::array()},
                         {"no_topology", true}};
    const GateResult g = run_gate(make_baseline(suite), current);
    EXPECT_TRUE(g.pass) << g.report;
    EXPECT_EQ(first_line(g.report), "gate PASS: 4 cells, 0 problems");
    EXPECT_EQ(line_of(g.report, "compared "),
              "compared suite.json (quick suite of --no-topology; the baseline's 2 other cells are "
              "left out) with baseline.json (quick suite, created " +
                  g.json["baseline"]["created"].get<std::string>() + ")");
    EXPECT_EQ(g.json["left_out_by_filter"], 2);
    EXPECT_EQ(g.json["current"]["filter"]["no_topology"], true);
}

// Acquire p99 against the same two references: `p99` sets a run's p99 (ms) in a suite.
json with_p99(json suite, const std::string& strategy, double p99) {
    for (auto& r : suite["runs"]) {
        if (strategy == "*" || r["strategy"] == strategy)
            r["acquire_p99_ms"] = p99;
    }
    return suite;
}

TEST(GateTest, OneStrategysAcquireTailTripledFailsAgainstTheReferencesTail) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    EXPECT_EQ(baseline["runs"][0]["acquire_p99_ms"], 1.5);
    GateResult g =
        run_gate(baseline, with_yardstick(with_p99(typical_suite(), "fenced", 1.5 * 3.5), 20000));
    EXPECT_FALSE(g.pass) << g.report;
    const json& fenced = row(g, "baseline", "fenced");
    EXPECT_EQ(fenced["problems"], json::parse(R"(["LATENCY", "LATENCY"])"));
    EXPECT_EQ(fenced["reasons"][0],
              "acquire p99 250.0% above baseline against this machine (allowed: 200%)");
    EXPECT_EQ(fenced["reasons"][1],
              "acquire p99 250.0% above baseline against set_nx_px's p99 (allowed: 200%)");
    // The problem named once for both findings.
    EXPECT_EQ(line_of(g.report, "baseline / fenced"),
              "baseline / fenced: LATENCY: acquire p99 250.0% above baseline against this machine "
              "(allowed: 200%); acquire p99 250.0% above baseline against set_nx_px's p99 "
              "(allowed: 200%)");
    EXPECT_EQ(fenced["current"]["acquire_p99_ms"], 5.25);
    EXPECT_EQ(row(g, "baseline", "set_nx_px")["verdict"], "ok");
    // Twice the tail is within the limit: tails are noisy.
    EXPECT_TRUE(
        run_gate(baseline, with_yardstick(with_p99(typical_suite(), "fenced", 3.0), 20000)).pass);
}

TEST(GateTest, EveryTailTripledFailsAgainstTheMachineButNotOnAMachineThatSlow) {
    const json baseline = make_baseline(with_yardstick(typical_suite(), 20000));
    // The same machine: only the yardstick sees it (the ratios to set_nx_px stay).
    GateResult same = run_gate(baseline, with_yardstick(with_p99(typical_suite(), "*", 6), 20000));
    EXPECT_FALSE(same.pass) << same.report;
    EXPECT_EQ(row(same, "baseline", "fenced")["reasons"],
              json{"acquire p99 300.0% above baseline against this machine (allowed: 200%)"});
    // A machine four times slower: every tail four times longer is what it should be.
    GateResult slower =
        run_gate(baseline, with_yardstick(with_p99(typical_suite({{"*", 0.25}}), "*", 6), 5000));
    EXPECT_TRUE(slower.pass) << slower.report;
}

TEST(GateTest, TailsUnderAMillisecondAndBaselinesWithoutThemAreNotJudged) {
    json baseline = make_baseline(with_yardstick(with_p99(typical_suite(), "*", 0.05), 20000));
    EXPECT_TRUE(run_gate(baseline,
                         with_yardstick(
                             with_p99(with_p99(typical_suite(), "*", 0.05), "fenced", 0.9), 20000))
                    .pass);
    for (auto& r : baseline["runs"])
        r.erase("acquire_p99_ms");
    EXPECT_TRUE(
        run_gate(baseline, with_yardstick(with_p99(typical_suite(), "fenced", 50), 20000)).pass);
}

TEST(GateTest, ABaselineWithoutAYardstickIsReadAndSaysWhatItCannotSee) {
    // An older baseline: ratios to set_nx_px only, said so; the uniform slowdown passes unseen.
    GateResult g = run_gate(make_baseline(typical_suite()),
                            with_yardstick(typical_suite({{"*", 0.5}}), 20000));
    EXPECT_TRUE(g.pass) << g.report;
    EXPECT_NE(g.report.find("note: the baseline has no machine yardstick"), std::string::npos)
        << g.report;
    EXPECT_EQ(row(g, "baseline", "fenced")["yardstick_change_pct"], nullptr);
    // A yardstick of the wrong shape is bad input, named.
    json bad = make_baseline(with_yardstick(typical_suite(), 20000));
    bad["yardstick"]["points"][1]["cycles_per_s"] = "fast";
    EXPECT_THROW(run_gate(bad, typical_suite()), GateInputError);
}

TEST(GateTest, ScenarioWithoutTheReferenceUsesTheMedianOfItsOtherStrategies) {
    json suite = typical_suite();
    // rwlock_seed 400 -> 200 while rwlock stays at 600. Its reference is the median of the
    // *other* strategies (rwlock alone here), so the whole 50% drop shows: 0.667 -> 0.333. A
    // median that included rwlock_seed itself would have shown it as 37.5%.
    GateResult g = run_gate(make_baseline(suite), typical_suite({{"rwlock_seed", 0.5}}));
    EXPECT_FALSE(g.pass);
    const json& r = row(g, "t12-writer-starvation", "rwlock_seed");
    EXPECT_EQ(r["reference"], "median");
    EXPECT_EQ(r["verdict"], "SLOWER");
    EXPECT_NEAR(r["baseline"]["normalised"].get<double>(), 400.0 / 600.0, 1e-12);
    EXPECT_NEAR(r["current"]["normalised"].get<double>(), 200.0 / 600.0, 1e-12);
    EXPECT_NEAR(r["change_pct"].get<double>(), -50.0, 1e-9);
    EXPECT_EQ(row(g, "t12-writer-starvation", "rwlock")["verdict"], "ok");
    EXPECT_EQ(row(g, "baseline", "fenced")["reference"], "set_nx_px");
}

TEST(GateTest, RunThatStoppedCompletingCyclesIsSlowerEvenIfAllStopped) {
    json suite = typical_suite();
    GateResult g = run_gate(make_baseline(suite), typical_suite({{"*", 0}}));
    EXPECT_FALSE(g.pass);
    EXPECT_EQ(row(g, "baseline", "set_nx_px")["verdict"], "SLOWER");
    EXPECT_EQ(row(g, "baseline", "set_nx_px")["reasons"][0],
              "completed no cycles (baseline: 1000 cycles/s)");
    EXPECT_EQ(g.json["problems"], 5);  // the fault scenario is not compared
}

TEST(GateTest, MakeBaselineStoresWhatTheGateNeeds) {
    json suite = typical_suite();
    run_in(suite, "baseline", "redlock")["cycles_per_second"] = {300, 4};
    run_in(suite, "baseline", "redlock")["duration_s"] = 1.5;
    json b = make_baseline(suite);
    EXPECT_EQ(b["version"], 1);
    EXPECT_EQ(b["quick"], true);
    EXPECT_EQ(b["reference_strategy"], "set_nx_px");
    EXPECT_EQ(b["refresh"],
              "build/release/engine/lockbench suite --quick --out results && "
              "build/release/engine/lockbench gate --write-baseline results/baseline.json");
    EXPECT_EQ(b["created"].get<std::string>().size(), std::string("2026-11-22T21:40:00Z").size());
    ASSERT_EQ(b["runs"].size(), 6u);
    const json& fenced = b["runs"][0];
    EXPECT_EQ(fenced["scenario"], "baseline");
    EXPECT_EQ(fenced["strategy"], "fenced");
    EXPECT_EQ(fenced["expected"], "safe");
    EXPECT_EQ(fenced["faults"], false);
    EXPECT_EQ(fenced["reference"], "set_nx_px");
    EXPECT_EQ(fenced["samples"], 4);
    EXPECT_NEAR(fenced["normalised"].get<double>(), 0.8, 1e-12);
    EXPECT_NEAR(fenced["median_cycles_per_s"].get<double>(), 800, 1e-9);
    EXPECT_NEAR(fenced["noise"].get<double>(), 0.005, 1e-12);
    EXPECT_NEAR(fenced["cycles_per_s"].get<double>(), (800 * 4 + 80) / 4.5, 1e-9);
    // One full second and a partial one: the partial is dropped, not averaged in.
    const json& redlock = b["runs"][1];
    EXPECT_EQ(redlock["samples"], 1);
    EXPECT_EQ(redlock["median_cycles_per_s"], 300.0);
    EXPECT_EQ(redlock["noise"], 0.0);
    // Without set_nx_px, the gate's own rule: the median of the *other* strategies (a median
    // that included the run itself would halve its drops).
    const json& rwlock = b["runs"][3];
    EXPECT_EQ(rwlock["reference"], "median");
    EXPECT_NEAR(rwlock["normalised"].get<double>(), 600.0 / 400.0, 1e-12);
    const json& rwlock_seed = b["runs"][4];
    EXPECT_EQ(rwlock_seed["reference"], "median");
    EXPECT_NEAR(rwlock_seed["normalised"].get<double>(), 400.0 / 600.0, 1e-12);
    const json& t1 = b["runs"][5];
    EXPECT_EQ(t1["faults"], true);
    EXPECT_EQ(t1["normalised"], nullptr);
    EXPECT_EQ(t1["reference"], nullptr);
    EXPECT_EQ(t1["expected"], "violates:mutual_exclusion");
}

TEST(GateTest, BaselineRoundTripsThroughItsJsonText) {
    json suite = typical_suite();
    json stored = json::parse(make_baseline(suite).dump(2));
    GateResult g = run_gate(stored, suite);
    EXPECT_TRUE(g.pass) << g.report;
}

TEST(GateTest, MakeBaselineRefusesABrokenSuite) {
    json interrupted = typical_suite();
    interrupted["interrupted"] = true;
    EXPECT_THROW(make_baseline(interrupted), GateInputError);
    json unexpected = typical_suite();
    unexpected["runs"][2]["as_expected"] = false;
    try {
        make_baseline(unexpected);
        FAIL() << "no throw";
    } catch (const GateInputError& e) {
        EXPECT_STREQ(e.what(),
                     "suite.json: /runs/2/as_expected: baseline x set_nx_px is not as expected; a "
                     "baseline must be a known-good suite");
    }
}

std::string error_of(const json& baseline, const json& current) {
    GateOptions o;
    o.baseline_name = "results/baseline.json";
    o.current_name = "results/suite-x/suite.json";
    try {
        run_gate(baseline, current, o);
    } catch (const GateInputError& e) {
        return e.what();
    } catch (const std::exception& e) {
        return std::string("wrong exception type: ") + e.what();
    }
    return "no error";
}

TEST(GateTest, MalformedCurrentNamesFileAndPath) {
    json suite = typical_suite();
    json b = make_baseline(suite);
    auto with = [&](auto edit) {
        json c = suite;
        edit(c);
        return error_of(b, c);
    };
    const std::string f = "results/suite-x/suite.json: ";
    EXPECT_EQ(error_of(b, json::array()), f + "/: must be an object, not an array");
    EXPECT_EQ(with([](json& c) { c.erase("runs"); }), f + "/runs: missing");
    EXPECT_EQ(with([](json& c) { c["runs"] = json::object(); }),
              f + "/runs: must be an array, not an object");
    EXPECT_EQ(with([](json& c) { c["interrupted"] = "no"; }),
              f + "/interrupted: must be true or false, not a string");
    EXPECT_EQ(with([](json& c) { c["runs"][1] = 7; }),
              f + "/runs/1: must be an object, not a number");
    EXPECT_EQ(with([](json& c) { c["runs"][0].erase("strategy"); }),
              f + "/runs/0/strategy: missing");
    EXPECT_EQ(with([](json& c) { c["runs"][2]["faults"] = "false"; }),
              f + "/runs/2/faults: must be true or false, not a string");
    EXPECT_EQ(with([](json& c) { c["runs"][0]["cycles_per_second"][1] = "9"; }),
              f + "/runs/0/cycles_per_second/1: must be a number, not a string");
    EXPECT_EQ(with([](json& c) { c["runs"][0]["duration_s"] = -1; }),
              f + "/runs/0/duration_s: must not be negative");
    EXPECT_EQ(with([](json& c) { c["runs"][3]["as_expected"] = "yes"; }),
              f + "/runs/3/as_expected: must be true, false or null, not a string");
    EXPECT_EQ(with([](json& c) { c["runs"].push_back(c["runs"][1]); }),
              f + "/runs/6: a second run of baseline x redlock (first at /runs/1)");
}

TEST(GateTest, MalformedBaselineNamesFileAndPath) {
    json suite = typical_suite();
    json good = make_baseline(suite);
    auto with = [&](auto edit) {
        json b = good;
        edit(b);
        return error_of(b, suite);
    };
    const std::string f = "results/baseline.json: ";
    EXPECT_EQ(error_of(nullptr, suite), f + "/: must be an object, not null");
    EXPECT_EQ(with([](json& b) { b.erase("runs"); }), f + "/runs: missing");
    EXPECT_EQ(with([](json& b) { b["runs"] = json::array(); }),
              f + "/runs: is empty: a gate against nothing would pass anything");
    EXPECT_EQ(with([](json& b) { b["created"] = 5; }),
              f + "/created: must be a string, not a number");
    EXPECT_EQ(with([](json& b) { b["runs"][4]["noise"] = "low"; }),
              f + "/runs/4/noise: must be a number, not a string");
    EXPECT_EQ(with([](json& b) { b["runs"][0].erase("median_cycles_per_s"); }),
              f + "/runs/0/median_cycles_per_s: missing");
    EXPECT_EQ(with([](json& b) { b["runs"][0]["reference"] = 1; }),
              f + "/runs/0/reference: must be a string or null, not a number");
    EXPECT_EQ(with([](json& b) { b["runs"][1]["expected"] = true; }),
              f + "/runs/1/expected: must be a string or null, not a boolean");
    EXPECT_EQ(with([](json& b) { b["version"] = 2; }),
              f + "/version: must be 1, not 2 (refresh it: build/release/engine/lockbench suite "
                  "--quick --out results && build/release/engine/lockbench gate "
                  "--write-baseline results/baseline.json)");
}

class LatestSuiteDirTest : public ::testing::Test {
  protected:
    testing::TempDir scratch_;
    const fs::path& dir_ = scratch_.path();
};

TEST_F(LatestSuiteDirTest, PicksTheNewestSuiteFolderAndIgnoresOthers) {
    for (const char* name : {"suite-20261122T100000Z", "suite-20261122T120000Z",
                             "suite-20261121T235959Z", "20261123T000000Z-baseline", "suite-latest",
                             "suite-20261123T000000Z.tmp", "suite-2026112xT000000Z"}) {
        fs::create_directories(dir_ / name);
    }
    std::ofstream(dir_ / "suite-20261124T000000Z") << "a file, not a folder";
    EXPECT_EQ(latest_suite_dir(dir_), dir_ / "suite-20261122T120000Z");
}

TEST_F(LatestSuiteDirTest, ThrowsWhenThereIsNone) {
    fs::create_directories(dir_ / "20261123T000000Z-baseline");
    EXPECT_THROW(latest_suite_dir(dir_), GateInputError);
    EXPECT_THROW(latest_suite_dir(dir_ / "absent"), GateInputError);
}

TEST_F(LatestSuiteDirTest, LoadGateJsonNamesTheFile) {
    std::ofstream(dir_ / "bad.json") << "{\"runs\": [";
    try {
        load_gate_json(dir_ / "bad.json");
        FAIL() << "no throw";
    } catch (const GateInputError& e) {
        EXPECT_EQ(std::string(e.what()).rfind((dir_ / "bad.json").string() + ": not valid JSON", 0),
                  0u)
            << e.what();
    }
    EXPECT_THROW(load_gate_json(dir_ / "absent.json"), GateInputError);
    // A number no double holds is not a parse_error but an out_of_range: bad input all the same,
    // placed where the reader found it.
    std::ofstream(dir_ / "huge.json") << "{\"runs\": [\n  {\"noise\": 1e400}]}";
    try {
        load_gate_json(dir_ / "huge.json");
        FAIL() << "no throw";
    } catch (const GateInputError& e) {
        EXPECT_EQ(std::string(e.what()), (dir_ / "huge.json").string() +
                                             ": not valid JSON: at line 2, column 13: number "
                                             "overflow parsing '1e400'");
    }
    std::ofstream(dir_ / "utf8.json") << "{\"created\": \"caf\xE9\"}";
    EXPECT_THROW(load_gate_json(dir_ / "utf8.json"), GateInputError);
    std::ofstream(dir_ / "good.json") << "{\"a\": 1}";
    EXPECT_EQ(load_gate_json(dir_ / "good.json"), json({{"a", 1}}));
}

}  // namespace
}  // namespace lockbench
