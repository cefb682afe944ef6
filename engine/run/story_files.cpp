#include "engine/run/story_files.hpp"

#include "checker/story/timeline_html.hpp"
#include "engine/run/result_folder.hpp"

namespace lockbench {

checker::Story story_of_run(const std::filesystem::path& dir, const nlohmann::json& summary,
                            const Workload& workload) {
    checker::StoryContext context{.scenario = workload.name, .strategy = workload.strategy};
    if (const auto adapter = summary.find("adapter");
        adapter != summary.end() && adapter->is_object())
        context.library = adapter->value("library", std::string());
    for (const auto& [strategy, outcome] : workload.expect)
        context.expectations.emplace_back(strategy, outcome);
    const auto report = checker::Report::from_json(summary.value("verdict", nlohmann::json()));
    return checker::tell_story(dir / "history.jsonl", report, context);
}

void write_story_files(const std::filesystem::path& dir, const nlohmann::json& summary,
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
    const auto report = checker::Report::from_json(summary.value("verdict", nlohmann::json()));
    const std::string title =
        (workload.name.empty() ? std::string("run") : workload.name) + " / " + workload.strategy;
    write_atomically(dir / "timeline.html", checker::timeline_html(dir / "history.jsonl", report,
                                                                   story, {.title = title}));
}

}  // namespace lockbench
