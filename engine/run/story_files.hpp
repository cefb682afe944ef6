#pragma once

// What a run leaves for people besides its numbers: story.txt (the first violation told in
// sentences that cite the history, with a text swimlane) and timeline.html (the same story over
// an SVG swimlane of every process, one self-contained file to send to a colleague).

#include <filesystem>

#include <nlohmann/json.hpp>

#include "checker/story/story.hpp"
#include "engine/run/workload.hpp"

namespace lockbench {

// The story of the run in `dir` (its history.jsonl, judged as `summary`'s verdict), with the
// workload's expectations for what would have prevented it.
checker::Story story_of_run(const std::filesystem::path& dir, const nlohmann::json& summary,
                            const Workload& workload);

// Writes story.txt and timeline.html into `dir` (whole or not at all, as every result file).
void write_story_files(const std::filesystem::path& dir, const nlohmann::json& summary,
                       const Workload& workload);

}  // namespace lockbench
