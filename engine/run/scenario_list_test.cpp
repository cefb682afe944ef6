#include "engine/run/scenario_list.hpp"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& file, const std::string& text) {
    std::ofstream(file) << text;
}

// Two scenarios: one with a summary, one whose description's first sentence stands in.
fs::path small_scenario_dir(const testing::TempDir& t) {
    write(t.path() / "b-pause.json", R"({
        "name": "b-pause",
        "summary": "The holder pauses past its lease just before its write.",
        "description": "Long. Longer still.",
        "expect": {
            "set_nx_px": "violates:mutual_exclusion,violates:resource,safe:linearizability",
            "set_nx_px_del": "violates:mutual_exclusion,violates:resource",
            "fenced": "violates:mutual_exclusion,violates:resource,safe:linearizability",
            "reentrant_hash": "safe",
            "rwlock_seed": "deadlocks,safe:linearizability",
            "rwlock": "safe:mutual_exclusion,safe:linearizability"
        }})");
    write(t.path() / "a-fence.json", R"({
        "name": "a-fence",
        "description": "At 0.5 s the holder stops. Then more.",
        "resource": "fenced",
        "expect": {"fenced": "violates:mutual_exclusion,saves:fencing,safe:fencing"}})");
    write(t.path() / "notes.txt", "not a scenario");
    return t.path();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    return lines;
}

std::size_t columns(const std::string& line) {
    std::size_t n = 0;
    for (unsigned char c : line)
        n += (c & 0xC0) != 0x80;
    return n;
}

// small_scenario_dir's scenarios as `lockbench scenarios` lists them, `width` columns wide.
std::string small_dir_listed(std::size_t width, bool verbose) {
    testing::TempDir t;
    return format_scenarios(load_scenarios(small_scenario_dir(t)), width, verbose);
}

TEST(ScenarioListTest, NamesWhatEachScenarioShowsAndGroupsItsExpectations) {
    EXPECT_EQ(small_dir_listed(80, false),
              "a-fence\n"
              "  At 0.5 s the holder stops.\n"
              "  violates mutual_exclusion, fence saves the data: fenced\n"
              "\n"
              "b-pause\n"
              "  The holder pauses past its lease just before its write.\n"
              "  violates mutual_exclusion+resource: fenced, set_nx_px, set_nx_px_del ·\n"
              "    deadlocks: rwlock_seed · keeps mutual_exclusion+linearizability: rwlock ·\n"
              "    safe: reentrant_hash\n");
}

TEST(ScenarioListTest, VerboseGivesEveryExpectationAsWrittenWrappedBetweenTerms) {
    EXPECT_EQ(small_dir_listed(60, true),
              "a-fence\n"
              "  At 0.5 s the holder stops.\n"
              "  fenced: violates:mutual_exclusion, saves:fencing,\n"
              "      safe:fencing\n"
              "\n"
              "b-pause\n"
              "  The holder pauses past its lease just before its write.\n"
              "  fenced: violates:mutual_exclusion, violates:resource,\n"
              "      safe:linearizability\n"
              "  reentrant_hash: safe\n"
              "  rwlock: safe:mutual_exclusion, safe:linearizability\n"
              "  rwlock_seed: deadlocks, safe:linearizability\n"
              "  set_nx_px: violates:mutual_exclusion, violates:resource,\n"
              "      safe:linearizability\n"
              "  set_nx_px_del: violates:mutual_exclusion,\n"
              "      violates:resource\n");
}

TEST(ScenarioListTest, NoLineIsWiderThanTheWidthEvenForAWordLongerThanALine) {
    testing::TempDir t;
    small_scenario_dir(t);
    write(t.path() / "c-long.json", R"({
        "name": "c-a-scenario-name-far-longer-than-any-narrow-terminal-is-wide",
        "summary": "Averyveryverylongwordwithoutanyspacethatnolinecanhold and short words after it.",
        "expect": {"set_nx_px": "violates:mutual_exclusion|linearizability"}})");
    const auto scenarios = load_scenarios(t.path());
    for (std::size_t width = 20; width <= 120; ++width) {
        for (bool verbose : {false, true}) {
            const std::string text = format_scenarios(scenarios, width, verbose);
            for (const std::string& line : lines_of(text))
                EXPECT_LE(columns(line), width) << "width " << width << ": " << line;
            // Nothing lost: the long word is all there, cut across lines.
            std::string joined;
            for (const std::string& line : lines_of(text))
                joined += line.substr(line.find_first_not_of(' ') == std::string::npos
                                          ? line.size()
                                          : line.find_first_not_of(' '));
            EXPECT_NE(joined.find("Averyveryverylongwordwithoutanyspacethatnolinecanhold"),
                      std::string::npos)
                << text;
        }
    }
    // Below 20 columns a line holds too little: 20 it is.
    for (const std::string& line : lines_of(format_scenarios(scenarios, 5, false)))
        EXPECT_LE(columns(line), 20u) << line;
}

TEST(ScenarioListTest, WrapsAtSpacesAndCountsCharactersNotBytes) {
    EXPECT_EQ(wrap_columns("a · b · c", 5, "", ""), "a · b\n· c\n");
    EXPECT_EQ(wrap_columns("one two three", 9, "  ", "    "), "  one two\n    three\n");
    EXPECT_EQ(wrap_columns("abcdefghij", 6, "  ", "  "), "  abcd\n  efgh\n  ij\n");
    EXPECT_EQ(wrap_columns("", 10, "  ", "  "), "");
}

// A rate is part of the claim: the summary keeps it beside the check it qualifies.
TEST(ScenarioListTest, ARateTermKeepsItsRateInTheSummary) {
    EXPECT_EQ(
        expectation_summary({{"fenced", "violates:fencing,violates:mutual_exclusion in >= 1 of 5"},
                             {"set_nx_px", "violates:linearizability"}}),
        "violates fencing+mutual_exclusion in >= 1 of 5: fenced · "
        "violates linearizability: set_nx_px");
}

TEST(ScenarioListTest, AnUnknownStrategyInAScenarioIsRefusedNamingTheFile) {
    testing::TempDir t;
    write(t.path() / "bad.json", R"({"name": "bad", "expect": {"no_such_lock": "safe"}})");
    try {
        load_scenarios(t.path());
        ADD_FAILURE() << "loaded";
    } catch (const WorkloadError& e) {
        EXPECT_EQ(std::string(e.what()),
                  (t.path() / "bad.json").string() + ": /expect/no_such_lock: unknown strategy");
    }
}

}  // namespace
}  // namespace lockbench
