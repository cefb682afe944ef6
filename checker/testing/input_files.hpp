#pragma once

// Input files that tests replay (fuzz seeds and regressions, shipped workloads): listed in a
// stable order and read byte for byte, for every folder's tests.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace lockbench::testing {

// The regular files in `folder` (with `extension`, or any when it is empty), sorted by name.
inline std::vector<std::filesystem::path> files_in(const std::filesystem::path& folder,
                                                   const std::string& extension = "") {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(folder)) {
        if (entry.is_regular_file() && (extension.empty() || entry.path().extension() == extension))
            files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    return files;
}

inline std::string contents(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

}  // namespace lockbench::testing
