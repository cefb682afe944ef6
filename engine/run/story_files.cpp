#include "engine/run/story_files.hpp"

#include <algorithm>
#include <fstream>

#include "checker/story/timeline_html.hpp"
#include "engine/run/expectation.hpp"
#include "engine/run/result_folder.hpp"

namespace lockbench {

std::filesystem::path shipped_scenarios_dir() {
    return LOCKBENCH_WORKLOADS_DIR;
}

std::vector<checker::StoryContext::FailureElsewhere> expected_failures(
    const std::filesystem::path& scenarios_dir) {
    namespace fs = std::filesystem;
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(scenarios_dir, ec)) {
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    std::vector<checker::StoryContext::FailureElsewhere> out;
    for (const fs::path& file : files) {
        // A file that is no scenario says nothing about any strategy; the story goes on without.
        std::ifstream in(file);
        const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
        if (!j.is_object() || !j.contains("expect") || !j["expect"].is_object())
            continue;
        const std::string scenario = j.value("name", file.stem().string());
        for (const auto& [strategy, outcome] : j["expect"].items()) {
            if (!outcome.is_string())
                continue;
            Expectation e;
            try {
                e = Expectation::parse(outcome.get<std::string>());
            } catch (const std::invalid_argument&) {
                continue;
            }
            const bool fails = std::any_of(e.terms.begin(), e.terms.end(), [](const auto& t) {
                return t.kind == Expectation::Kind::Violates ||
                       t.kind == Expectation::Kind::Deadlocks;
            });
            if (fails)
                out.push_back({strategy, scenario, outcome.get<std::string>()});
        }
    }
    return out;
}

checker::Story story_of_run(const std::filesystem::path& dir, const RunSummary& summary,
                            const Workload& workload, const std::filesystem::path& scenarios_dir) {
    checker::StoryContext context{.scenario = workload.name, .strategy = workload.strategy};
    context.failures_elsewhere = expected_failures(scenarios_dir);
    if (summary.adapter && summary.adapter->is_object())
        context.library = summary.adapter->value("library", std::string());
    for (const auto& [strategy, outcome] : workload.expect)
        context.expectations.emplace_back(strategy, outcome);
    return checker::tell_story(dir / "history.jsonl", summary.verdict, context);
}

void write_story_files(const std::filesystem::path& dir, const RunSummary& summary,
                       const Workload& workload) {
    checker::Story story;
    try {
        story = story_of_run(dir, summary, workload);
    } catch (const std::exception& e) {
        // A story that cannot be told must not cost the run its result: say so where the story
        // would be, and draw no timeline.
        write_atomically(dir / "story.txt",
                         std::string("lockbench could not tell this run's story (a bug in "
                                     "lockbench; please report it): ") +
                             e.what() + "\n");
        return;
    }
    write_atomically(dir / "story.txt", checker::format_story(story));
    const std::string title =
        (workload.name.empty() ? std::string("run") : workload.name) + " / " + workload.strategy;
    write_atomically(
        dir / "timeline.html",
        checker::timeline_html(dir / "history.jsonl", summary.verdict, story, {.title = title}));
}

}  // namespace lockbench
