#include "engine/servers/tls_tunnel.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <fstream>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

namespace lockbench {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

bool is_ip_address(const std::string& host) {
    in6_addr addr{};
    return ::inet_pton(AF_INET, host.c_str(), &addr) == 1 ||
           ::inet_pton(AF_INET6, host.c_str(), &addr) == 1;
}

bool accepts_connections(int port) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return false;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    const bool connected = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
    ::close(fd);
    return connected;
}

fs::path readable_file(const fs::path& file, const std::string& flag) {
    std::ifstream in(file);
    if (!in)
        throw EnvironmentError(flag + ": cannot read " + file.string());
    return fs::absolute(file);
}

}  // namespace

TlsTunnel::TlsTunnel(const Endpoint& server, const TlsFiles& files)
    : server_(server), dir_("tls-tunnel") {
    const auto stunnel =
        find_program("stunnel4") ? find_program("stunnel4") : find_program("stunnel");
    if (!stunnel)
        throw EnvironmentError(
            "TLS (rediss://) goes through stunnel, which is not installed (apt-get install "
            "stunnel4; scripts/bootstrap.sh installs it)");
    if (files.ca.empty())
        throw EnvironmentError("rediss:// needs --tls-ca FILE: the CA that signed " +
                               server.to_string() + "'s certificate");
    const int port = pick_free_ports(1).front();
    const fs::path config = dir_.path() / "stunnel.conf";
    {
        std::ofstream out(config);
        out << "foreground = yes\npid =\nsyslog = no\n\n[redis]\nclient = yes\n"
            << "accept = 127.0.0.1:" << port << "\n"
            << "connect = " << server.host << ":" << server.port << "\n"
            << "CAfile = " << readable_file(files.ca, "--tls-ca").string() << "\n"
            << "verifyChain = yes\n"
            // A certificate for another host must not do, as a browser would not take it.
            << (is_ip_address(server.host) ? "checkIP = " : "checkHost = ") << server.host << "\n";
        if (!files.cert.empty()) {
            out << "cert = " << readable_file(files.cert, "--tls-cert").string() << "\n"
                << "key = "
                << readable_file(files.key.empty() ? files.cert : files.key, "--tls-key").string()
                << "\n";
        }
        if (!out)
            throw EnvironmentError("cannot write " + config.string());
    }
    process_ = start_server_process({.argv = {stunnel->string(), config.string()},
                                     .stdout_to = ChildStream::Log,
                                     .stderr_to = ChildStream::Log,
                                     .log = dir_.path() / "stunnel.log",
                                     .role = "stunnel"});
    local_ = server;
    local_.host = "127.0.0.1";
    local_.port = port;
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!accepts_connections(port)) {
        if (!process_.alive())
            throw EnvironmentError("stunnel exited at start: " +
                                   log_tail(dir_.path() / "stunnel.log", 2));
        if (std::chrono::steady_clock::now() > deadline)
            throw EnvironmentError("stunnel did not listen on 127.0.0.1:" + std::to_string(port) +
                                   " within 5 s: " + log_tail(dir_.path() / "stunnel.log", 2));
        std::this_thread::sleep_for(10ms);
    }
    // A refused handshake only shows as a closed connection to the tunnel's client: ask once
    // here, where stunnel's log can say why, rather than let every client fail without a reason.
    Endpoint probe = local_;
    probe.user.clear();
    probe.password.clear();
    try {
        command_once(probe, {"PING"}, 3000ms);
    } catch (const ReplyError&) {
        // NOAUTH: the server answered through TLS; the password is the run's to give.
    } catch (const TimeoutError&) {
        // A plain port takes the ClientHello as the start of a command and waits for the rest.
        throw EnvironmentError("cannot reach Redis at rediss://" + server.to_string() +
                               " through TLS: the server did not answer the TLS handshake within "
                               "3 s (is it a TLS port?)");
    } catch (const IoError&) {
        // stunnel logs the session's end after its reason; our socket may close first.
        const auto logged_by = std::chrono::steady_clock::now() + 2s;
        while (std::chrono::steady_clock::now() < logged_by && !session_logged_as_ended())
            std::this_thread::sleep_for(10ms);
        throw EnvironmentError("cannot reach Redis at rediss://" + server.to_string() +
                               " through TLS: " + why_it_failed());
    }
}

TlsTunnel::~TlsTunnel() {
    if (process_.running())
        process_.terminate(1000ms);
}

bool TlsTunnel::session_logged_as_ended() const {
    std::ifstream log(dir_.path() / "stunnel.log");
    for (std::string line; std::getline(log, line);) {
        if (line.find("Connection closed") != std::string::npos ||
            line.find("Connection reset") != std::string::npos ||
            line.find("No more addresses to connect") != std::string::npos)
            return true;
    }
    return false;
}

std::string TlsTunnel::why_it_failed() const {
    std::ifstream log(dir_.path() / "stunnel.log");
    std::string verification, ssl_error, first_error;
    bool certificate_wanted = false;
    for (std::string line; std::getline(log, line);) {
        const auto level = line.find(" LOG");
        const auto text = line.find("]: ", level == std::string::npos ? 0 : level);
        if (level == std::string::npos || text == std::string::npos || level + 4 >= line.size() ||
            line[level + 4] > '4')
            continue;
        const std::string said = line.substr(text + 3);
        for (const std::string prefix :
             {"CERT: Verification error: ", "CERT: Pre-verification error: "}) {
            if (said.starts_with(prefix) && verification.empty())
                verification = said.substr(prefix.size());
        }
        // TLS 1.3: a server that wants a client certificate ends the session after the
        // handshake; stunnel reads its alert, or finds the socket closed first.
        if (said.find("alert certificate required") != std::string::npos ||
            said.starts_with("TLS socket closed"))
            certificate_wanted = true;
        if (said.starts_with("SSL_connect: "))
            ssl_error = said;
        else if (line[level + 4] <= '3' && first_error.empty())
            first_error = said;
    }
    if (!verification.empty())
        return "the server's certificate does not verify against --tls-ca: " + verification;
    if (!ssl_error.empty()) {
        const std::string reason = ssl_error.substr(ssl_error.rfind(':') + 1);
        // What is left once the chain verified: the certificate names another host.
        return "the TLS handshake failed: " + reason +
               (reason == "certificate verify failed"
                    ? " (is the certificate for " + server_.host + ", as --redis names it?)"
                    : "");
    }
    if (certificate_wanted)
        return "the server ended the TLS session after the handshake (as one that wants a "
               "client certificate does: --tls-cert, --tls-key)";
    if (!first_error.empty())
        return first_error;
    return "the tunnel closed the connection (" + log_tail(dir_.path() / "stunnel.log", 2) + ")";
}

}  // namespace lockbench
