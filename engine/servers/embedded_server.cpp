#include "engine/servers/embedded_server.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <system_error>
#include <unistd.h>
#include <vector>

namespace lockbench {

std::vector<int> pick_free_ports(std::size_t n) {
    // Every socket stays bound until all are picked: a port just released may be handed out
    // again at once, and two members of one ensemble on one port is an invalid configuration.
    std::vector<int> fds, ports;
    std::string error;
    while (ports.size() < n && error.empty()) {
        int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0) {
            error = std::string("socket: ") + std::strerror(errno);
            break;
        }
        fds.push_back(fd);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        socklen_t len = sizeof addr;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
            error = std::string("cannot find a free port: ") + std::strerror(errno);
            break;
        }
        ports.push_back(ntohs(addr.sin_port));
    }
    for (int fd : fds)
        ::close(fd);
    if (!error.empty())
        throw EnvironmentError(error);
    return ports;
}

int pick_free_port() {
    return pick_free_ports(1).front();
}

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
