#include "dashboard/dashboard_test_results.hpp"

#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <string>
#include <sys/wait.h>

namespace lockbench::dashboard::testing {
namespace fs = std::filesystem;

namespace {

void write(const fs::path& p, const std::string& text) {
    std::ofstream(p) << text;
}

void run_suite(const fs::path& dir) {
    std::string cmd = std::string("'") + LOCKBENCH_BINARY + "' suite --no-yardstick --dir '" +
                      (dir / "workloads").string() + "' --out '" + (dir / "results").string() +
                      "' >> '" + (dir / "lockbench.log").string() + "' 2>&1";
    int status = std::system(cmd.c_str());
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    // 1 is a verdict (an outcome other than expected); 2 and 4 are broken input or environment.
    if (code != 0 && code != 1)
        throw std::runtime_error("lockbench suite exited " + std::to_string(code) + "; see " +
                                 (dir / "lockbench.log").string());
}

}  // namespace

void make_test_results(const fs::path& dir) {
    fs::remove_all(dir);
    fs::create_directories(dir / "workloads");
    write(dir / "workloads/calm.json", R"({"name": "calm", "clients": 8, "keys": 2, "hold_ms": 1,
        "lease_ms": 5000, "duration_s": 1,
        "expect": {"set_nx_px": "safe", "set_nx_px_del": "safe"}})");
    write(dir / "workloads/short-lease.json", R"({"name": "short-lease", "strategy": "set_nx_px",
        "clients": 8, "keys": 1, "hold_ms": 5, "lease_ms": 2, "duration_s": 1,
        "expect": {"set_nx_px": "violates:mutual_exclusion"}})");
    run_suite(dir);
    write(dir / "complete", "");
}

// The suite's folder: results/suite-<time>/, one run folder per (scenario, strategy).
fs::path test_results() {
    fs::path dir = DASHBOARD_TEST_RESULTS;
    if (!fs::exists(dir / "complete"))
        make_test_results(dir);
    for (const auto& e : fs::directory_iterator(dir / "results")) {
        if (e.path().filename().string().starts_with("suite-"))
            return e.path();
    }
    throw std::runtime_error("no suite folder in " + (dir / "results").string());
}

}  // namespace lockbench::dashboard::testing
