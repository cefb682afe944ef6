#include "checker/fuzz/fuzz_targets.hpp"

#include <chrono>
#include <iterator>
#include <sstream>
#include <string>

#include "checker/check.hpp"
#include "checker/edn.hpp"
#include "checker/history.hpp"
#include "checker/jepsen_history.hpp"
#include "checker/report.hpp"
#include "checker/story/story.hpp"

namespace lockbench::checker::fuzz {

namespace {

constexpr Model kModels[] = {Model::None, Model::Mutex, Model::RwLock, Model::Register,
                             Model::UnownedMutex};

CheckOptions options_for(std::string_view text) {
    CheckOptions options;
    // One model per input, picked by its length: a mutation reaches each model's search in turn,
    // and a replayed input takes the path it took when it was found.
    options.model = kModels[text.size() % std::size(kModels)];
    // Bounded far below libFuzzer's own limits (a hang after 10 s, 2 GB of memory), so that a
    // search that runs out is the checker's "unknown", not a report.
    options.linearizability.time_limit = std::chrono::milliseconds(200);
    options.linearizability.memory_limit_bytes = std::size_t{256} << 20;
    return options;
}

// As check_command does after reading: the report in both forms, then the story, which reads
// the history again.
void judge(const std::string& jsonl, const CheckOptions& options) {
    std::istringstream in(jsonl);
    const Report report = check_history(in, options);
    static_cast<void>(report.to_json().dump(2));
    static_cast<void>(format_report(report));
    std::istringstream again(jsonl);
    static_cast<void>(format_story(tell_story(again, report, {})));
}

}  // namespace

bool check_jsonl_history(std::string_view text) {
    try {
        judge(std::string(text), options_for(text));
        return true;
    } catch (const HistoryError&) {
        return false;
    }
}

bool check_edn_history(std::string_view text) {
    ConvertedHistory converted;
    try {
        converted = jepsen_to_jsonl(text);
        judge(converted.jsonl, options_for(text));
        return true;
    } catch (const edn::EdnError&) {
        return false;
    } catch (const HistoryError& e) {
        static_cast<void>(converted.locate(e));  // the message the command line prints
        return false;
    }
}

}  // namespace lockbench::checker::fuzz
