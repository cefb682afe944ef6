#include "engine/servers/embedded_server.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <system_error>

namespace lockbench {

ServerDir::ServerDir(const std::string& kind) {
    std::string pattern = "/tmp/lockbench-" + kind + "-XXXXXX";
    if (!::mkdtemp(pattern.data()))
        throw EnvironmentError(std::string("mkdtemp: ") + std::strerror(errno));
    path_ = pattern;
}

ServerDir::~ServerDir() {
    std::error_code ignored;
    if (!path_.empty())
        std::filesystem::remove_all(path_, ignored);
}

ServerDir& ServerDir::operator=(ServerDir&& other) noexcept {
    if (this != &other) {
        std::error_code ignored;
        if (!path_.empty())
            std::filesystem::remove_all(path_, ignored);
        path_ = std::exchange(other.path_, {});
    }
    return *this;
}

}  // namespace lockbench
