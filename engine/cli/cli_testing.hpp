#pragma once

// The real `lockbench` binary run from a test, its output captured: what a user would see.
// Tests that include this are compiled with LOCKBENCH_BINARY naming the binary.

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "checker/testing/temp_dir.hpp"

namespace lockbench::testing {

struct Cli {
    int code = -1;
    std::string out, err;
};

inline std::string read_file(const std::filesystem::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// How many lines `text` has: a bad input is one line on stderr.
inline std::size_t lines(const std::string& text) {
    std::size_t n = 0;
    for (char c : text)
        n += c == '\n';
    return n;
}

// `lockbench ARGS` (ARGS as a shell would split them), with stdout and stderr captured in
// `scratch` and nothing on stdin.
inline Cli lockbench(const TempDir& scratch, const std::string& args) {
    const std::filesystem::path out = scratch.path() / "stdout.txt";
    const std::filesystem::path err = scratch.path() / "stderr.txt";
    const std::string command = "'" + std::string(LOCKBENCH_BINARY) + "' " + args + " >'" +
                                out.string() + "' 2>'" + err.string() + "' </dev/null";
    const int status = std::system(command.c_str());
    Cli r;
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = read_file(out);
    r.err = read_file(err);
    return r;
}

}  // namespace lockbench::testing
