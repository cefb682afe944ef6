#include "engine/servers/zookeeper_server.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <netinet/in.h>
#include <poll.h>
#include <stdexcept>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

#include "engine/servers/redis_server.hpp"  // EnvironmentError, find_executable, pick_free_port

namespace lockbench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// Connects to 127.0.0.1:port within `timeout`; -1 if nothing listens there.
int connect_loopback(int port, std::chrono::milliseconds timeout) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        if (errno != EINPROGRESS) {
            ::close(fd);
            return -1;
        }
        pollfd p{fd, POLLOUT, 0};
        int err = 0;
        socklen_t len = sizeof err;
        if (::poll(&p, 1, static_cast<int>(timeout.count())) != 1 ||
            ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            ::close(fd);
            return -1;
        }
    }
    return fd;
}

}  // namespace

ZooKeeperServer::ZooKeeperServer(ZooKeeperServerOptions options)
    : EmbeddedServer(5s), options_(std::move(options)) {
    try {
        java_path_ = find_executable(options_.java);
    } catch (const EnvironmentError&) {
        throw EnvironmentError(
            "java not found in PATH: the embedded ZooKeeper needs a Java runtime "
            "(scripts/bootstrap.sh installs zookeeper and default-jre-headless)");
    }
    if (::access(options_.jar.c_str(), R_OK) != 0) {
        throw EnvironmentError(options_.jar +
                               " not found: the embedded ZooKeeper needs Debian's zookeeper "
                               "package (scripts/bootstrap.sh installs it)");
    }
    dir_ = ServerDir("zookeeper");
    if (!options_.ensemble.empty()) {
        // A member: its ports were chosen by the ensemble, which retries on a busy one; it
        // cannot serve before a quorum exists, so the ensemble waits once all are started.
        if (options_.myid < 1 || options_.myid > static_cast<int>(options_.ensemble.size()))
            throw std::invalid_argument("ZooKeeperServer: myid out of the ensemble");
        port_ = options_.ensemble[static_cast<std::size_t>(options_.myid - 1)].client_port;
        spawn();
        return;
    }
    start_on_port(
        port_, options_.port, "ZooKeeper: ",
        [&] {
            if (int fd = connect_loopback(port_, 200ms); fd >= 0) {
                ::close(fd);
                throw EnvironmentError("port " + std::to_string(port_) + " is busy");
            }
            spawn();
            wait_ready();
        },
        [&](const EnvironmentError& e) {
            return std::string_view(e.what()).ends_with("is busy") ||
                   log_tail(50).find("Address already in use") != std::string::npos;
        });
}

void ZooKeeperServer::spawn() {
    const fs::path data = dir_.path() / "data";
    fs::create_directories(data);
    {
        std::ofstream cfg(dir_.path() / "zoo.cfg", std::ios::trunc);
        cfg << "tickTime=50\n"
            << "minSessionTimeout=100\n"
            << "maxSessionTimeout=600000\n"
            << "dataDir=" << data.string() << "\n"
            << "clientPort=" << port_ << "\n"
            << "clientPortAddress=127.0.0.1\n"
            << "maxClientCnxns=0\n"
            << "admin.enableServer=false\n"
            << "4lw.commands.whitelist=ruok,srvr\n"
            // Every transaction is fsynced by default: on a shared machine's disk that is tens of
            // milliseconds per lock operation, and the server's data dies with the run anyway.
            << "forceSync=no\n";
        if (!options_.ensemble.empty()) {
            // Followers wait 5 s for a new leader's snapshot and give a silent leader 1 s.
            cfg << "initLimit=100\n"
                << "syncLimit=20\n";
            for (std::size_t i = 0; i < options_.ensemble.size(); ++i) {
                const ZooKeeperPeer& peer = options_.ensemble[i];
                cfg << "server." << i + 1 << "=127.0.0.1:" << peer.quorum_port << ":"
                    << peer.election_port << "\n";
            }
            std::ofstream myid(data / "myid", std::ios::trunc);
            myid << options_.myid << "\n";
            if (!myid)
                throw EnvironmentError("cannot write " + (data / "myid").string());
        }
        if (!cfg)
            throw EnvironmentError("cannot write " + (dir_.path() / "zoo.cfg").string());
    }
    std::string classpath = options_.jar;
    // Without an SLF4J binding the server logs nothing at all; with slf4j-simple, its warnings
    // and errors go to zookeeper.log (an "Address already in use" among them).
    if (::access("/usr/share/java/slf4j-simple.jar", R_OK) == 0)
        classpath += ":/usr/share/java/slf4j-simple.jar";
    std::vector<std::string> args{
        java_path_,
        "-Xms32m",
        "-Xmx256m",
        "-XX:+UseSerialGC",
        "-XX:TieredStopAtLevel=1",  // starts in about half the time; the server idles anyway
        "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn",
        "-Dzookeeper.admin.enableServer=false",
        "-cp",
        classpath,
        options_.ensemble.empty() ? "org.apache.zookeeper.server.ZooKeeperServerMain"
                                  : "org.apache.zookeeper.server.quorum.QuorumPeerMain",
        (dir_.path() / "zoo.cfg").string(),
    };
    process_ = start_server_process(ChildLaunch{.argv = std::move(args),
                                                .stdin_from = ChildStream::Null,
                                                .stdout_to = ChildStream::Log,
                                                .stderr_to = ChildStream::Log,
                                                .log = dir_.path() / "zookeeper.log",
                                                .role = "ZooKeeper"});
}

std::string ZooKeeperServer::four_letter_word(const std::string& word) const {
    int fd = connect_loopback(port_, 500ms);
    if (fd < 0)
        return "";
    std::string answer;
    if (::send(fd, word.data(), word.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(word.size())) {
        const auto deadline = std::chrono::steady_clock::now() + 1s;
        char buf[4096];
        while (std::chrono::steady_clock::now() < deadline) {
            pollfd p{fd, POLLIN, 0};
            if (::poll(&p, 1, 100) <= 0)
                continue;
            ssize_t n = ::read(fd, buf, sizeof buf);
            if (n <= 0)
                break;
            answer.append(buf, static_cast<std::size_t>(n));
        }
    }
    ::close(fd);
    return answer;
}

std::string ZooKeeperServer::mode() const {
    if (!running() || paused())
        return "";
    // `srvr` says "Mode: standalone|leader|follower" once the server serves requests; before
    // that, "This ZooKeeper instance is not currently serving requests".
    const std::string answer = four_letter_word("srvr");
    const auto at = answer.find("Mode: ");
    if (at == std::string::npos)
        return "";
    const auto end = answer.find('\n', at);
    return answer.substr(at + 6, end == std::string::npos ? std::string::npos : end - at - 6);
}

void ZooKeeperServer::wait_ready() {
    const Start start = wait_for_start(options_.start_timeout, 50ms, [this] {
        const std::string m = mode();
        return m == "standalone" || m == "leader" || m == "follower";
    });
    if (start == Start::Exited)
        throw EnvironmentError("ZooKeeper exited at start: " + log_tail(2));
    if (start == Start::TimedOut)
        throw EnvironmentError(
            "ZooKeeper on port " + std::to_string(port_) + " did not answer within " +
            std::to_string(options_.start_timeout.count()) + " ms: " + log_tail(2));
}

void ZooKeeperServer::restart() {
    kill();
    spawn();
    wait_ready();
}

std::string ZooKeeperServer::log_tail(std::size_t lines) const {
    return lockbench::log_tail(dir_.path() / "zookeeper.log", lines, "maxCnxns is not configured");
}

ZooKeeperEnsemble::ZooKeeperEnsemble(int servers, ZooKeeperServerOptions base) {
    if (servers == 1) {
        servers_.push_back(std::make_unique<ZooKeeperServer>(std::move(base)));
        return;
    }
    if (servers < 3 || servers % 2 == 0)
        throw std::invalid_argument("a ZooKeeper ensemble has 1, 3, 5 or 7 servers");
    const auto start_members = [&] {
        std::vector<ZooKeeperPeer> peers;
        const auto ports = pick_free_ports(static_cast<std::size_t>(servers) * 3);
        for (std::size_t i = 0; i + 2 < ports.size(); i += 3)
            peers.push_back({ports[i], ports[i + 1], ports[i + 2]});
        for (int i = 0; i < servers; ++i) {
            ZooKeeperServerOptions options = base;
            options.myid = i + 1;
            options.ensemble = peers;
            servers_.push_back(std::make_unique<ZooKeeperServer>(std::move(options)));
        }
    };
    start_server_group(servers_, start_members, true, 50, "Address already in use");
}

std::string ZooKeeperEnsemble::hosts() const {
    std::string out;
    for (const auto& s : servers_)
        out += (out.empty() ? "" : ",") + s->hosts();
    return out;
}

std::optional<std::size_t> ZooKeeperEnsemble::leader() const {
    for (std::size_t i = 0; i < servers_.size(); ++i) {
        const std::string m = servers_[i]->mode();
        if (m == "leader" || m == "standalone")
            return i;
    }
    return std::nullopt;
}

std::optional<std::size_t> ZooKeeperEnsemble::wait_for_leader(
    std::chrono::milliseconds timeout) const {
    return lockbench::wait_for_leader([this] { return leader(); }, timeout);
}

}  // namespace lockbench
