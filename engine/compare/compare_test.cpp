// The arithmetic and the words of a comparison, from runs made up here: the Wilson interval at
// known values, the sweep's fields found (or refused by name), k-of-n counts per check, the
// reading, and the heat map's boundary.

#include "engine/compare/compare.hpp"

#include <map>
#include <optional>

#include <gtest/gtest.h>

#include "engine/compare/sweep.hpp"
#include "engine/compare/wilson.hpp"

namespace lockbench {
namespace {

using nlohmann::json;

// Known values (Wilson 1927; e.g. Newcombe 1998, Table I's method 3), z = 1.959964.
TEST(Wilson, MatchesKnownIntervals) {
    struct Case {
        int k, n;
        double low, high;
    };
    for (const Case c : {Case{0, 5, 0.0, 0.434482}, Case{5, 5, 0.565518, 1.0},
                         Case{5, 10, 0.236593, 0.763407}, Case{1, 3, 0.061492, 0.792340},
                         Case{7, 20, 0.181192, 0.567146}, Case{0, 1, 0.0, 0.793451}}) {
        const RateInterval ci = wilson_interval(c.k, c.n);
        EXPECT_NEAR(ci.low, c.low, 1e-6) << c.k << " of " << c.n;
        EXPECT_NEAR(ci.high, c.high, 1e-6) << c.k << " of " << c.n;
    }
}

TEST(Wilson, NothingKnownWithoutRunsAndExactBoundsAtTheEnds) {
    const RateInterval none = wilson_interval(0, 0);
    EXPECT_EQ(none.low, 0.0);
    EXPECT_EQ(none.high, 1.0);
    EXPECT_EQ(wilson_interval(0, 50).low, 0.0);
    EXPECT_EQ(wilson_interval(50, 50).high, 1.0);
}

json t1_like() {
    Workload w;
    w.lease_ms = 300;
    w.faults = json::array({json{{"fault", "pause-client"},
                                 {"target", "holder"},
                                 {"key", "k0"},
                                 {"at_s", 0.5},
                                 {"duration_ms", 1000},
                                 {"scope", "worker"}}});
    return w.to_json();
}

TEST(Sweep, FindsTopLevelNestedAndFaultFields) {
    const json w = t1_like();
    const SweepAxis lease = parse_sweep("lease_ms=300,1000,3000", w);
    EXPECT_EQ(lease.path, "lease_ms");
    EXPECT_TRUE(lease.integer);
    EXPECT_EQ(lease.values, (std::vector<double>{300, 1000, 3000}));
    const SweepAxis pause = parse_sweep("faults[0].duration_ms=200,1500", w);
    EXPECT_EQ(pause.path, "faults[0].duration_ms");
    // A bare name the one fault has is that fault's.
    const SweepAxis bare = parse_sweep("duration_ms=200,1500", w);
    EXPECT_EQ(bare.path, "faults[0].duration_ms");
    const SweepAxis hold = parse_sweep("hold_ms=0.5,2", w);
    EXPECT_TRUE(hold.distribution);
    EXPECT_FALSE(hold.integer);
    EXPECT_EQ(parse_sweep("topology.masters=3,5", w).path, "topology.masters");

    Workload base = Workload::from_json(w);
    const Workload at = at_setting(base, {lease, pause}, {1000, 200});
    EXPECT_EQ(at.lease_ms, 1000);
    EXPECT_EQ(at.faults[0]["duration_ms"], 200);
    EXPECT_EQ(at_setting(base, {hold}, {0.5}).hold_ms.a, 0.5);
}

TEST(Sweep, RefusesWhatIsNotANumericFieldNamingIt) {
    const json w = t1_like();
    const auto refused = [&](const std::string& text, const std::string& says) {
        try {
            parse_sweep(text, w);
            ADD_FAILURE() << text << " was accepted";
        } catch (const WorkloadError& e) {
            EXPECT_NE(std::string(e.what()).find(says), std::string::npos)
                << text << ": " << e.what();
        }
    };
    refused("lease=300,1000", "--sweep lease: no such field");
    refused("faults[3].duration_ms=1,2", "no such field");
    refused("resource=1,2", "resource: not a numeric field");
    refused("release_on_failed_acquire=0,1", "not a numeric field");
    refused("lease_ms=300,abc", "'abc' is not a number");
    refused("lease_ms=300.5,1000", "takes whole numbers");
    refused("lease_ms=300", "two values or more");
    refused("lease_ms=300,300", "300 twice");
    refused("lease_ms", "write FIELD=v1,v2");
    refused("faults[x].duration_ms=1,2", "not a field path");
    refused("lease_ms=300,", "an empty value");
    // The workload's own bounds, at the setting that breaks them.
    Workload base = Workload::from_json(w);
    const SweepAxis lease = parse_sweep("lease_ms=0,1000", w);
    EXPECT_THROW(at_setting(base, {lease}, {0}), WorkloadError);
}

TEST(Sweep, TheFirstAxisVariesFastest) {
    const json w = t1_like();
    const auto cells =
        sweep_cells({parse_sweep("lease_ms=1,2", w), parse_sweep("faults[0].duration_ms=5,6", w)});
    EXPECT_EQ(cells, (std::vector<std::vector<double>>{{1, 5}, {2, 5}, {1, 6}, {2, 6}}));
    EXPECT_EQ(sweep_cells({}), (std::vector<std::vector<double>>{{}}));
}

using checker::Verdict;

CompareRun run(std::size_t setting, const std::string& strategy, Verdict verdict,
               const std::map<std::string, Verdict>& checks, double throughput, double p99) {
    return {.round = 1,
            .setting = setting,
            .strategy = strategy,
            .run = strategy + "-run",
            .verdict = verdict,
            .checks = checks,
            .cycles_per_s = throughput,
            .acquire_p99_ms = p99};
}

CompareFile plan(const std::vector<std::string>& strategies, const std::vector<SweepAxis>& sweep,
                 std::size_t settings) {
    CompareFile c;
    c.scenario = "t1";
    c.strategies = strategies;
    c.repeat = 5;
    c.duration_s = 1.0;
    for (const SweepAxis& axis : sweep)
        c.sweep.push_back({.field = axis.field, .path = axis.path, .values = axis.values});
    c.settings.resize(settings);
    c.runs_planned = 5 * strategies.size() * settings;
    c.complete = true;
    return c;
}

const CompareStrategyStats& stats_of(const CompareFile& c, const std::string& strategy,
                                     std::size_t setting = 0) {
    return c.settings.at(setting).strategies.at(strategy);
}

constexpr Verdict kValid = Verdict::Valid, kViolated = Verdict::Invalid,
                  kUnknown = Verdict::Unknown;

TEST(Summary, CountsEachCheckAsKOfNWithItsIntervalAndReadsIt) {
    CompareFile c = plan({"set_nx_px", "fenced", "reentrant_hash"}, {}, 1);
    const std::map<std::string, Verdict> broke{
        {"mutual_exclusion", kViolated}, {"resource", kViolated}, {"liveness", kValid}};
    const std::map<std::string, Verdict> fenced_broke{{"mutual_exclusion", kViolated},
                                                      {"fencing", kValid},
                                                      {"resource", kValid},
                                                      {"liveness", kValid}};
    const std::map<std::string, Verdict> safe{
        {"mutual_exclusion", kValid}, {"resource", kValid}, {"liveness", kValid}};
    const double throughputs[] = {100, 300, 200, 500, 400};
    for (int i = 0; i < 5; ++i) {
        c.runs.push_back(run(0, "set_nx_px", kViolated, broke, throughputs[i], 1.0 + i));
        c.runs.push_back(run(0, "fenced", kViolated, fenced_broke, 50, 2));
        // One run of reentrant_hash could not be judged.
        c.runs.push_back(run(
            0, "reentrant_hash", i == 4 ? kUnknown : kValid,
            i == 4 ? std::map<std::string, Verdict>{{"mutual_exclusion", kUnknown}} : safe, 80, 3));
    }
    const CompareFile s = summarise_compare(c);
    const CompareStrategyStats& set_nx_px = stats_of(s, "set_nx_px");
    EXPECT_EQ(set_nx_px.runs, 5);
    EXPECT_EQ(set_nx_px.checks.at("mutual_exclusion").violated, 5);
    EXPECT_EQ(set_nx_px.checks.at("liveness").valid, 5);
    EXPECT_NEAR(set_nx_px.checks.at("resource").wilson_95.first, 0.565518, 1e-6);
    EXPECT_EQ(set_nx_px.cycles_per_s.median, 300.0);
    EXPECT_EQ(set_nx_px.cycles_per_s.min, 100.0);
    EXPECT_EQ(set_nx_px.cycles_per_s.max, 500.0);
    EXPECT_EQ(set_nx_px.acquire_p99_ms.median, 3.0);
    const CompareStrategyStats& reentrant = stats_of(s, "reentrant_hash");
    EXPECT_EQ(reentrant.verdict.unknown, 1);
    EXPECT_EQ(reentrant.verdict.valid, 4);
    // The check a run did not report took no part in it.
    EXPECT_EQ(reentrant.checks.at("resource").not_applicable, 1);
    EXPECT_EQ(s.reading,
              "set_nx_px lost an update in 5 of 5 runs and broke mutual exclusion in 5 of 5; "
              "fenced kept the data in 5 of 5 runs but broke mutual exclusion in 5 of 5; "
              "reentrant_hash showed no violation, but 1 of 5 runs could not be judged "
              "(unknown)");
    const std::string text = format_compare(s);
    EXPECT_NE(text.find("set_nx_px: 5 run(s), violated in 5 of 5 (95% interval 57%-100%)"),
              std::string::npos)
        << text;
    EXPECT_NE(text.find("  mutual_exclusion   violated in 5 of 5    57%-100%"), std::string::npos)
        << text;
    EXPECT_NE(text.find("  cycles/s           300.0 median (100.0 - 500.0)"), std::string::npos)
        << text;
    // fencing applies only to fenced: not listed for the others.
    EXPECT_EQ(text.find("fencing"), text.rfind("fencing")) << text;
}

TEST(Summary, CarriesTheServersCostPerCycleWhereMeasured) {
    CompareFile c = plan({"set_nx_px", "zk_mutex"}, {}, 1);
    const double costs[] = {30.0, 10.0, 20.0};
    for (double cost : costs) {
        CompareRun r = run(0, "set_nx_px", kValid, {{"mutual_exclusion", kValid}}, 100, 1);
        r.server_us_per_cycle = cost;
        c.runs.push_back(r);
        // The user's ZooKeeper: not measured.
        c.runs.push_back(run(0, "zk_mutex", kValid, {{"mutual_exclusion", kValid}}, 100, 1));
    }
    const CompareFile s = summarise_compare(c);
    const std::optional<CompareSpread>& measured = stats_of(s, "set_nx_px").server_us_per_cycle;
    ASSERT_TRUE(measured.has_value());
    EXPECT_EQ(measured->median, 20.0);
    EXPECT_EQ(measured->min, 10.0);
    EXPECT_EQ(measured->max, 30.0);
    EXPECT_FALSE(stats_of(s, "zk_mutex").server_us_per_cycle.has_value());
    EXPECT_EQ(s.to_json()["settings"][0]["strategies"]["zk_mutex"]["server_us_per_cycle"], nullptr);
    const std::string text = format_compare(s);
    EXPECT_NE(text.find("  server cpu/cycle   20.0 us median (10.0 - 30.0)"), std::string::npos)
        << text;
    // Once: the strategy whose servers were not measured has no such line.
    EXPECT_EQ(text.find("server cpu/cycle"), text.rfind("server cpu/cycle")) << text;
    const std::string html = compare_html(s);
    EXPECT_NE(html.find("<td class=\"server-cost\">20.0 (10.0-30.0)</td>"), std::string::npos);
    EXPECT_NE(html.find("<td class=\"server-cost\">not measured</td>"), std::string::npos);
}

// Runs repeated together judge a rate: "violates:mutual_exclusion in >= 3 of 5" over 5 runs that
// each also state the plain term.
TEST(Summary, JudgesARateExpectationOverTheRuns) {
    const auto with_terms = [](bool linearizable_violated, json me_violated) {
        CompareRun r = run(0, "set_nx_px", kViolated, {{"mutual_exclusion", kViolated}}, 100, 1);
        r.expected = "violates:linearizability,violates:mutual_exclusion in >= 3 of 5";
        r.as_expected = linearizable_violated;
        r.expected_terms = json::array(
            {{{"term", "violates:linearizability"}, {"met", linearizable_violated}},
             {{"term", "violates:mutual_exclusion in >= 3 of 5"}, {"met", me_violated}}});
        return r;
    };
    CompareFile met = plan({"set_nx_px"}, {}, 1);
    for (json me : {json(true), json(true), json(false), json(true), json(nullptr)})
        met.runs.push_back(with_terms(true, me));
    const CompareFile s = summarise_compare(met);
    const CompareStrategyStats& stats = stats_of(s, "set_nx_px");
    EXPECT_EQ(stats.as_expected, 5);
    EXPECT_EQ(stats.expectation_met, true);
    ASSERT_EQ(stats.rate_terms.size(), 1u);
    EXPECT_EQ(stats.rate_terms[0].to_json(),
              (json{{"term", "violates:mutual_exclusion in >= 3 of 5"},
                    {"held", 3},
                    {"undecided", 1},
                    {"runs", 5},
                    {"met", true}}));
    const std::string text = format_compare(s);
    EXPECT_NE(text.find("as expected in 5 of 5 run(s); over the runs: met\n"
                        "    violates:mutual_exclusion in >= 3 of 5: held in 3 of 5 (1 undecided) "
                        "-> met\n"),
              std::string::npos)
        << text;

    CompareFile missed = plan({"set_nx_px"}, {}, 1);
    for (json me : {json(true), json(false), json(false), json(true), json(false)})
        missed.runs.push_back(with_terms(true, me));
    const CompareStrategyStats m = stats_of(summarise_compare(missed), "set_nx_px");
    EXPECT_EQ(m.as_expected, 5);          // every run's plain term held...
    EXPECT_EQ(m.expectation_met, false);  // ...but the rate did not: 2 of 5 < 3 of 5
    ASSERT_EQ(m.rate_terms.size(), 1u);
    EXPECT_EQ(m.rate_terms[0].met, false);
}

// With rates only no single run decides the expectation (each run's as_expected is null): the
// line says whether the rate was met over the runs, not "as expected in 0 of 3 run(s)".
TEST(Summary, ARatesOnlyExpectationSaysWhetherTheRunsMetTheRate) {
    const auto runs_seeing = [](std::vector<json> seen) {
        CompareFile c = plan({"set_nx_px"}, {}, 1);
        for (const json& me : seen) {
            CompareRun r =
                run(0, "set_nx_px", kViolated, {{"mutual_exclusion", kViolated}}, 100, 1);
            r.expected = "violates:mutual_exclusion in >= 2 of 3";
            r.expected_terms =
                json::array({{{"term", "violates:mutual_exclusion in >= 2 of 3"}, {"met", me}}});
            c.runs.push_back(r);
        }
        return format_compare(summarise_compare(c));
    };
    std::string text = runs_seeing({true, true, true});
    EXPECT_NE(text.find("\n  expected           violates:mutual_exclusion in >= 2 of 3 runs; "
                        "seen in 3 of 3: as expected\n  reading"),
              std::string::npos)
        << text;
    EXPECT_EQ(text.find("as expected in"), std::string::npos) << text;

    text = runs_seeing({true, false, false});
    EXPECT_NE(text.find("\n  expected           violates:mutual_exclusion in >= 2 of 3 runs; "
                        "seen in 1 of 3: NOT as expected\n"),
              std::string::npos)
        << text;

    text = runs_seeing({true, nullptr, nullptr});
    EXPECT_NE(text.find("\n  expected           violates:mutual_exclusion in >= 2 of 3 runs; "
                        "seen in 1 of 3 (2 undecided): unknown\n"),
              std::string::npos)
        << text;
}

TEST(Summary, NoRunFinishedIsSaidSo) {
    CompareFile c = plan({"set_nx_px"}, {}, 1);
    c.interrupted = true;
    c.complete = false;
    const CompareFile s = summarise_compare(c);
    EXPECT_EQ(stats_of(s, "set_nx_px").verdict.violation_rate, std::nullopt);
    EXPECT_EQ(s.reading, "set_nx_px: no run finished");
    EXPECT_NE(format_compare(s).find("INCOMPLETE: interrupted after 0 of 5 runs"),
              std::string::npos);
}

// A 2x2 grid: only the long pause under the short lease is unsafe. The boundary is drawn right
// of it ('|') and under it ('='), nowhere else.
TEST(HeatMap, MarksTheBoundaryBetweenSafeAndUnsafeSettings) {
    const json w = t1_like();
    const std::vector<SweepAxis> axes{parse_sweep("lease_ms=200,2000", w),
                                      parse_sweep("duration_ms=1200,50", w)};
    const auto cells = sweep_cells(axes);
    CompareFile c = plan({"set_nx_px"}, axes, cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
        c.settings[i].at = setting_at(axes, cells[i]);
        const Verdict v = cells[i][0] == 200 && cells[i][1] == 1200 ? kViolated : kValid;
        for (int r = 0; r < 3; ++r)
            c.runs.push_back(
                run(i, "set_nx_px", v, {{"mutual_exclusion", v}, {"resource", v}}, 100, 1));
    }
    const CompareFile s = summarise_compare(c);
    EXPECT_EQ(format_heat_map(s, "set_nx_px"),
              "set_nx_px: runs that violated a check, k of n (rows faults[0].duration_ms, "
              "columns lease_ms)\n"
              "                  lease_ms=200   lease_ms=2000\n"
              "duration_ms=1200  3/3 ###      | 0/3 .\n"
              "                  =============\n"
              "duration_ms=50    0/3 .          0/3 .\n");
    EXPECT_EQ(s.reading,
              "set_nx_px violated something at 1 of 4 settings (lease_ms=200 duration_ms=1200)");
    const std::string html = compare_html(s);
    EXPECT_NE(html.find("<svg class=\"heatmap\" data-strategy=\"set_nx_px\""), std::string::npos);
    std::size_t boundaries = 0;
    for (std::size_t at = html.find("class=\"boundary\""); at != std::string::npos;
         at = html.find("class=\"boundary\"", at + 1))
        ++boundaries;
    EXPECT_EQ(boundaries, 2u);
    // Nothing to fetch.
    for (const char* outside : {"src=", "<link", "@import", "url(http", "https://"})
        EXPECT_EQ(html.find(outside), std::string::npos) << outside;
}

// One axis: one row, the boundary between the columns where the lease becomes long enough.
TEST(HeatMap, OneAxisIsOneRow) {
    const json w = t1_like();
    const std::vector<SweepAxis> axes{parse_sweep("lease_ms=300,1000,3000", w)};
    const auto cells = sweep_cells(axes);
    CompareFile c = plan({"fenced"}, axes, cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
        c.settings[i].at = setting_at(axes, cells[i]);
        for (int r = 0; r < 3; ++r) {
            const bool violated = cells[i][0] == 300 || (cells[i][0] == 1000 && r == 0);
            const Verdict v = violated ? kViolated : kValid;
            c.runs.push_back(run(i, "fenced", v, {{"mutual_exclusion", v}}, 100, 1));
        }
    }
    EXPECT_EQ(format_heat_map(summarise_compare(c), "fenced"),
              "fenced: runs that violated a check, k of n\n"
              "  lease_ms=300   lease_ms=1000  lease_ms=3000\n"
              "  3/3 ###        1/3 #        | 0/3 .\n");
}

TEST(Html, EscapesWhatItQuotes) {
    CompareFile c = plan({"set_nx_px"}, {}, 1);
    c.scenario = "<script>alert(1)</script>";
    const std::string html = compare_html(summarise_compare(c));
    EXPECT_EQ(html.find("<script>alert"), std::string::npos);
    EXPECT_NE(html.find("&lt;script&gt;alert(1)"), std::string::npos);
}

}  // namespace
}  // namespace lockbench
