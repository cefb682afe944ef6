#pragma once

// The processes a test's subject started, read from /proc: for tests that prove a child was
// started, shared, or left nothing behind.

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <sys/types.h>
#include <vector>

namespace lockbench::testing {

struct ChildProcess {
    pid_t pid = -1;
    std::string name;     // its command name, as `ps -o comm` shows it
    char state = 0;       // /proc's letter: 'Z' for a zombie not reaped yet
    std::string cmdline;  // its arguments, each ended by a NUL
};

// The processes whose parent is `parent`.
inline std::vector<ChildProcess> child_processes(pid_t parent) {
    std::vector<ChildProcess> out;
    for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
        const std::string name = entry.path().filename();
        if (name.find_first_not_of("0123456789") != std::string::npos)
            continue;
        std::ifstream stat(entry.path() / "stat");
        std::string text;
        std::getline(stat, text);
        // pid (comm) state ppid ...: comm may hold spaces, so read after the last ')'.
        const auto close = text.rfind(") ");
        if (close == std::string::npos)
            continue;
        std::istringstream rest(text.substr(close + 2));
        const auto open = text.find('(');
        ChildProcess child;
        child.name = text.substr(open + 1, close - open - 1);
        pid_t ppid = 0;
        rest >> child.state >> ppid;
        if (ppid != parent)
            continue;
        child.pid = std::stoi(name);
        std::ifstream cmd(entry.path() / "cmdline");
        child.cmdline.assign(std::istreambuf_iterator<char>(cmd), {});
        out.push_back(std::move(child));
    }
    return out;
}

}  // namespace lockbench::testing
