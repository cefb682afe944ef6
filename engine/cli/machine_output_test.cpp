// `--json` and `--csv`: stdout is a script's - the result document or a CSV table, parsed here as
// a script would - and the human text went to stderr.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::Cli;
using testing::lockbench;

// RFC 4180 rows: quoted fields may hold commas and doubled quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows(1);
    std::string field;
    bool quoted = false, row_started = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        row_started = true;
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
        } else if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            rows.back().push_back(field);
            field.clear();
        } else if (c == '\n') {
            rows.back().push_back(field);
            field.clear();
            rows.emplace_back();
            row_started = false;
        } else {
            field += c;
        }
    }
    if (row_started)
        rows.back().push_back(field);
    else
        rows.pop_back();
    return rows;
}

std::vector<fs::path> folders(const fs::path& dir) {
    return {fs::directory_iterator(dir), fs::directory_iterator()};
}

const std::string kRun = "run --no-yardstick --clients 2 --keys 1 --duration 0.3";

const std::vector<std::string> kSuiteCsvHeader{
    "scenario",       "strategy",   "repeat",          "outcome",      "expected",
    "valid",          "violations", "violation_kinds", "cycles_per_s", "acquire_p50_ms",
    "acquire_p99_ms", "duration_s", "attempts",        "detail",       "dir"};

// The short ad-hoc run printing `format` (--json or --csv): what it printed, and the one result
// folder it wrote.
void run_printing(const testing::TempDir& scratch, const std::string& format, Cli& printed,
                  fs::path& result_dir) {
    const fs::path out = scratch.path() / "results";
    printed = lockbench(scratch, kRun + " " + format + " --out '" + out.string() + "'");
    ASSERT_EQ(printed.code, 0) << printed.err;
    const auto dirs = folders(out);
    ASSERT_EQ(dirs.size(), 1u);
    result_dir = dirs[0];
}

TEST(MachineOutputTest, RunJsonPrintsSummaryJsonAndTheReportGoesToStderr) {
    testing::TempDir scratch;
    Cli r;
    fs::path dir;
    ASSERT_NO_FATAL_FAILURE(run_printing(scratch, "--json", r, dir));
    EXPECT_EQ(json::parse(r.out), json::parse(std::ifstream(dir / "summary.json")));
    EXPECT_EQ(r.err.rfind("lockbench run: adhoc / set_nx_px\n", 0), 0u) << r.err;
    EXPECT_NE(r.err.find("\nresult      " + dir.string() + "\n"), std::string::npos) << r.err;
}

TEST(MachineOutputTest, RunCsvIsAHeaderAndOneRow) {
    testing::TempDir scratch;
    Cli r;
    fs::path dir;
    ASSERT_NO_FATAL_FAILURE(run_printing(scratch, "--csv", r, dir));
    const json summary = json::parse(std::ifstream(dir / "summary.json"));
    const auto rows = parse_csv(r.out);
    ASSERT_EQ(rows.size(), 2u) << r.out;
    EXPECT_EQ(rows[0], (std::vector<std::string>{
                           "scenario", "strategy", "clients", "seed", "duration_s", "cycles",
                           "cycles_per_s", "acquire_p50_ms", "acquire_p99_ms", "acquire_p999_ms",
                           "release_p50_ms", "release_p99_ms", "valid", "violations", "expected",
                           "as_expected", "interrupted", "dir"}));
    ASSERT_EQ(rows[1].size(), rows[0].size()) << r.out;
    const auto column = [&](const std::string& name) {
        for (std::size_t i = 0; i < rows[0].size(); ++i) {
            if (rows[0][i] == name)
                return rows[1][i];
        }
        return std::string("(no column " + name + ")");
    };
    EXPECT_EQ(column("scenario"), "adhoc");
    EXPECT_EQ(column("strategy"), "set_nx_px");
    EXPECT_EQ(column("clients"), "2");
    EXPECT_EQ(std::stoull(column("cycles")), summary["throughput"]["cycles"].get<std::uint64_t>());
    EXPECT_DOUBLE_EQ(std::stod(column("acquire_p99_ms")),
                     summary["latency_ms"]["acquire"]["p99"].get<double>());
    EXPECT_EQ(column("valid"), "true");
    EXPECT_EQ(column("violations"), "0");
    EXPECT_EQ(column("expected"), "");  // an ad-hoc run expects nothing
    EXPECT_EQ(column("interrupted"), "false");
    EXPECT_EQ(column("dir"), dir.string());
    EXPECT_EQ(r.err.rfind("lockbench run: adhoc / set_nx_px\n", 0), 0u) << r.err;
}

TEST(MachineOutputTest, RampCsvIsOneRowPerPoint) {
    testing::TempDir scratch;
    const Cli r = lockbench(scratch,
                            "run --no-yardstick --keys 1 --duration 0.2 --clients-ramp "
                            "1,2 --csv --out '" +
                                (scratch.path() / "results").string() + "'");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto rows = parse_csv(r.out);
    ASSERT_EQ(rows.size(), 3u) << r.out;
    EXPECT_EQ(rows[0][0], "strategy");
    EXPECT_EQ(rows[1][0], "set_nx_px");
    EXPECT_EQ(rows[1][1], "1");
    EXPECT_EQ(rows[2][1], "2");
    EXPECT_NE(r.err.find("\nramp: adhoc"), std::string::npos) << r.err;
}

TEST(MachineOutputTest, SuiteJsonAndCsv) {
    testing::TempDir scratch;
    const std::string suite =
        "suite --quick --no-yardstick --scenario baseline --strategy "
        "set_nx_px --dir '" +
        std::string(LOCKBENCH_WORKLOADS_DIR) + "' --out '";
    const fs::path json_out = scratch.path() / "json";
    Cli r = lockbench(scratch, suite + json_out.string() + "' --json");
    ASSERT_EQ(r.code, 0) << r.err;
    auto dirs = folders(json_out);
    ASSERT_EQ(dirs.size(), 1u);
    EXPECT_EQ(json::parse(r.out), json::parse(std::ifstream(dirs[0] / "suite.json")));
    EXPECT_NE(r.err.find("\nresults     " + dirs[0].string() + "\n"), std::string::npos) << r.err;

    const fs::path csv_out = scratch.path() / "csv";
    r = lockbench(scratch, suite + csv_out.string() + "' --csv");
    ASSERT_EQ(r.code, 0) << r.err;
    dirs = folders(csv_out);
    ASSERT_EQ(dirs.size(), 1u);
    const json table = json::parse(std::ifstream(dirs[0] / "suite.json"));
    const auto rows = parse_csv(r.out);
    ASSERT_EQ(rows.size(), 2u) << r.out;
    EXPECT_EQ(rows[0], kSuiteCsvHeader);
    ASSERT_EQ(rows[1].size(), rows[0].size());
    EXPECT_EQ(rows[1][0], "baseline");
    EXPECT_EQ(rows[1][1], "set_nx_px");
    EXPECT_EQ(rows[1][2], "1");
    EXPECT_EQ(rows[1][3], "as expected");
    EXPECT_EQ(rows[1][4], table["runs"][0]["expected"].get<std::string>());
    EXPECT_EQ(rows[1][14], (dirs[0] / table["runs"][0]["dir"].get<std::string>()).string());
}

// A repeated suite's table has one row per pair; its CSV has one per run, numbered by round.
TEST(MachineOutputTest, RepeatedSuiteCsvHasARowPerRun) {
    testing::TempDir scratch;
    const fs::path out = scratch.path() / "csv";
    const Cli r = lockbench(scratch,
                            "suite --quick --no-yardstick --scenario baseline --strategy "
                            "set_nx_px --repeat 2 --dir '" +
                                std::string(LOCKBENCH_WORKLOADS_DIR) + "' --out '" + out.string() +
                                "' --csv");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto dirs = folders(out);
    ASSERT_EQ(dirs.size(), 1u);
    const json table = json::parse(std::ifstream(dirs[0] / "suite.json"));
    ASSERT_EQ(table["runs"].size(), 1u);
    const json& run_dirs = table["runs"][0]["dirs"];
    ASSERT_EQ(run_dirs.size(), 2u);
    const auto rows = parse_csv(r.out);
    ASSERT_EQ(rows.size(), 3u) << r.out;
    EXPECT_EQ(rows[0], kSuiteCsvHeader);
    for (std::size_t k = 1; k <= 2; ++k) {
        ASSERT_EQ(rows[k].size(), rows[0].size()) << r.out;
        EXPECT_EQ(rows[k][0], "baseline");
        EXPECT_EQ(rows[k][1], "set_nx_px");
        EXPECT_EQ(rows[k][2], std::to_string(k));
        EXPECT_EQ(rows[k][3], "as expected");
        EXPECT_EQ(rows[k][12], "1");  // attempts
        EXPECT_EQ(rows[k][14], (dirs[0] / run_dirs[k - 1].get<std::string>()).string());
    }
}

TEST(MachineOutputTest, JsonAndCsvAreOneChoiceAndNotForRepeat) {
    testing::TempDir scratch;
    Cli r = lockbench(scratch, "run --json --csv");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "lockbench: --json excludes --csv (see lockbench run --help)\n");

    r = lockbench(scratch, "run --no-yardstick --repeat 2 --csv");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err,
              "lockbench: --csv prints one run, a ramp or a suite; --repeat's result is the "
              "compare.json in its folder\n");
}

}  // namespace
}  // namespace lockbench
