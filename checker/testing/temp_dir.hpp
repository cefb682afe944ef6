#pragma once

// The one scratch folder of every test that writes files (checker, engine, dashboard): a fresh
// folder under /tmp, removed with everything in it when the test ends. Tests may reach across
// folders; this lives at the bottom so every test can.

#include <cstdlib>
#include <filesystem>
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

}  // namespace lockbench::testing
