#pragma once

// The one scratch folder of every test that writes files (checker, engine, dashboard): a fresh
// folder under /tmp, removed with everything in it when the test ends. Tests may reach across
// folders; this lives at the bottom so every test can.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace lockbench::testing {

class TempDir {
  public:
    TempDir() {
        std::string tmpl = "/tmp/lockbench-test-XXXXXX";
        path_ = ::mkdtemp(tmpl.data());
    }
    ~TempDir() {
        if (kept_)
            return;
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    // Leaves the folder behind, for a failure whose message names what is in it.
    void keep() { kept_ = true; }

  private:
    std::filesystem::path path_;
    bool kept_ = false;
};

// Every byte of a file a test wrote ("" when there is none).
inline std::string read_file(const std::filesystem::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    return bytes.str();
}

}  // namespace lockbench::testing
