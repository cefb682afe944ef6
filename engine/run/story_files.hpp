#pragma once

// What a run leaves for people besides its numbers: story.txt (the first violation told in
// sentences that cite the history, with a text swimlane) and timeline.html (the same story over
// an SVG swimlane of every process, one self-contained file to send to a colleague).

#include <filesystem>
#include <vector>

#include "checker/story/story.hpp"
#include "engine/results/run_summary.hpp"
#include "engine/run/workload.hpp"

namespace lockbench {

// The shipped scenarios, where lockbench looks for what other scenarios expect of a strategy.
std::filesystem::path shipped_scenarios_dir();

// Every expectation of a violation or a deadlock in the scenario files of `scenarios_dir`
// (workloads/*.json): strategy, scenario, outcome, in file order. Files that are no scenario are
// passed over.
std::vector<checker::StoryContext::FailureElsewhere> expected_failures(
    const std::filesystem::path& scenarios_dir);

// The story of the run in `dir` (its history.jsonl, judged as `summary`'s verdict), with the
// workload's expectations for what would have prevented it, and what the scenarios in
// `scenarios_dir` expect of the strategies it names.
checker::Story story_of_run(const std::filesystem::path& dir, const RunSummary& summary,
                            const Workload& workload,
                            const std::filesystem::path& scenarios_dir = shipped_scenarios_dir());

// Writes story.txt and timeline.html into `dir` (whole or not at all, as every result file).
void write_story_files(const std::filesystem::path& dir, const RunSummary& summary,
                       const Workload& workload);

}  // namespace lockbench
