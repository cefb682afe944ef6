#pragma once

// What a run left on disk, read back for tests: its history.jsonl, one JSON object per event
// (checker/HISTORY.md), and the folders of a result that is not whole yet.

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::testing {

inline std::vector<nlohmann::json> read_history(const std::filesystem::path& file) {
    std::vector<nlohmann::json> events;
    std::ifstream in(file);
    for (std::string line; std::getline(in, line);)
        events.push_back(nlohmann::json::parse(line));
    return events;
}

// The names under `dir`, at any depth, of folders a result is filled in before it is whole.
inline std::vector<std::string> tmp_folders(const std::filesystem::path& dir) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(dir)) {
        if (e.path().filename().string().starts_with(".tmp-"))
            out.push_back(e.path().string());
    }
    return out;
}

}  // namespace lockbench::testing
