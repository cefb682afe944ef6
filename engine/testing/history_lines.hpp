#pragma once

// A run's history.jsonl as the JSON objects it holds, for tests that assert on fields as written
// (checker::HistoryReader gives typed events instead).

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::testing {

// One object per line, in the file's order; throws on a line that is not JSON.
inline std::vector<nlohmann::json> read_history(const std::filesystem::path& file) {
    std::vector<nlohmann::json> events;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
        events.push_back(nlohmann::json::parse(line));
    return events;
}

}  // namespace lockbench::testing
