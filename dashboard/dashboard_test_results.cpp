#include "dashboard_test_results.hpp"

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

void run_lockbench(const fs::path& dir, const std::string& args) {
    std::string cmd = std::string("'") + LOCKBENCH_BINARY + "' run " + args + " --out '" +
                      (dir / "results").string() + "' >> '" + (dir / "lockbench.log").string() +
                      "' 2>&1";
    int status = std::system(cmd.c_str());
    int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    // 1 and 3 are verdicts (violation, unknown); 2 and 4 are broken input or environment.
    if (code != 0 && code != 1 && code != 3)
        throw std::runtime_error("lockbench run " + args + " exited " + std::to_string(code) +
                                 "; see " + (dir / "lockbench.log").string());
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
    const std::string calm = "'" + (dir / "workloads/calm.json").string() + "'";
    run_lockbench(dir, calm + " --strategy set_nx_px");
    run_lockbench(dir, calm + " --strategy set_nx_px_del");
    run_lockbench(dir, "'" + (dir / "workloads/short-lease.json").string() + "'");
    write(dir / "complete", "");
}

fs::path test_results() {
    fs::path dir = DASHBOARD_TEST_RESULTS;
    if (!fs::exists(dir / "complete"))
        make_test_results(dir);
    return dir / "results";
}

}  // namespace lockbench::dashboard::testing
