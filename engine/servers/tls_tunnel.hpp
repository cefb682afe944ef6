#pragma once

// TLS to a Redis server (rediss://, as managed Redis services require) through Debian's stunnel
// in client mode: Debian's hiredis 0.14 has no TLS, so lockbench starts stunnel as a child, from a
// free loopback port to the server, and the run connects to that port. The tunnel verifies the
// server's certificate against a CA file (and its name or address), and presents a client
// certificate when one is given. It is stopped with this object, on every exit path, and killed
// by the kernel if lockbench dies (ChildProcess).

#include <filesystem>

#include "engine/servers/redis_server.hpp"
#include "strategies/client/child_process.hpp"
#include "strategies/client/redis_connection.hpp"

namespace lockbench {

struct TlsFiles {
    std::filesystem::path ca;    // the CA the server's certificate must chain to (required)
    std::filesystem::path cert;  // a client certificate, for servers that ask for one
    std::filesystem::path key;   // its key (the certificate's file when empty)
};

class TlsTunnel {
  public:
    // Starts stunnel and waits until a TLS session through it reaches `server`. Throws
    // EnvironmentError when stunnel is missing or the handshake fails (its reason: a certificate
    // that does not verify, a server that does not speak TLS).
    TlsTunnel(const Endpoint& server, const TlsFiles& files);
    ~TlsTunnel();
    TlsTunnel(const TlsTunnel&) = delete;
    TlsTunnel& operator=(const TlsTunnel&) = delete;

    // Where to connect: the tunnel's loopback port, with the server's user and password.
    Endpoint endpoint() const { return local_; }
    pid_t pid() const { return process_.pid(); }

  private:
    // stunnel has logged the end of a session (and so its reason, which it logs first).
    bool session_logged_as_ended() const;
    // The handshake's failure in stunnel's words, from its log.
    std::string why_it_failed() const;

    Endpoint server_;
    Endpoint local_;
    ServerDir dir_;
    ChildProcess process_;
};

}  // namespace lockbench
