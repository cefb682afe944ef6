#pragma once

// A scratch folder under /tmp for one test, removed with everything in it when the test ends.

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
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

}  // namespace lockbench::testing
