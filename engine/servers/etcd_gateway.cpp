#include "engine/servers/etcd_gateway.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace lockbench {

using nlohmann::json;

namespace {

constexpr std::string_view kAlphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

class Socket {
  public:
    explicit Socket(int fd) : fd_(fd) {}
    ~Socket() {
        if (fd_ >= 0)
            ::close(fd_);
    }
    Socket(const Socket&) = delete;
    Socket& operator=(const Socket&) = delete;
    int fd() const { return fd_; }

  private:
    int fd_;
};

int milliseconds_left(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, left.count()));
}

// Waits for `events` on fd until the deadline; false when it passed first.
bool wait_for(int fd, short events, std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        pollfd p{fd, events, 0};
        const int ready = ::poll(&p, 1, milliseconds_left(deadline));
        if (ready > 0)
            return true;
        if (ready == 0)
            return false;
        if (errno != EINTR)
            return false;
    }
}

int connect_to(const Endpoint& endpoint, std::chrono::steady_clock::time_point deadline,
               std::string& why) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    const std::string port = std::to_string(endpoint.port);
    if (const int rc = ::getaddrinfo(endpoint.host.c_str(), port.c_str(), &hints, &found);
        rc != 0) {
        why = ::gai_strerror(rc);
        return -1;
    }
    why = "no address";
    int fd = -1;
    for (addrinfo* a = found; a && fd < 0; a = a->ai_next) {
        fd = ::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol);
        if (fd < 0) {
            why = std::strerror(errno);
            continue;
        }
        int err = 0;
        if (::connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
            err = errno;
            if (err == EINPROGRESS) {
                socklen_t len = sizeof err;
                if (!wait_for(fd, POLLOUT, deadline))
                    err = ETIMEDOUT;
                else if (::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
                    err = errno;
            }
        }
        if (err != 0) {
            why = std::strerror(err);
            ::close(fd);
            fd = -1;
        }
    }
    ::freeaddrinfo(found);
    return fd;
}

// The body of a chunked reply (grpc-gateway streams some replies that way).
std::string dechunk(std::string_view body, const std::string& where) {
    std::string out;
    std::size_t at = 0;
    for (;;) {
        const auto eol = body.find("\r\n", at);
        if (eol == std::string_view::npos)
            throw EtcdGatewayError(where + ": a chunked reply was cut short");
        const std::size_t size =
            std::strtoull(std::string(body.substr(at, eol - at)).c_str(), nullptr, 16);
        at = eol + 2;
        if (size == 0)
            return out;
        if (at + size > body.size())
            throw EtcdGatewayError(where + ": a chunked reply was cut short");
        out.append(body.substr(at, size));
        at += size + 2;
    }
}

std::uint64_t number_of(const json& value) {
    if (value.is_string())
        return std::stoull(value.get<std::string>());
    if (value.is_number_unsigned())
        return value.get<std::uint64_t>();
    return 0;
}

}  // namespace

std::string base64_encode(std::string_view bytes) {
    std::string out;
    out.reserve((bytes.size() + 2) / 3 * 4);
    std::size_t i = 0;
    for (; i + 2 < bytes.size(); i += 3) {
        const std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16 |
                                static_cast<std::uint8_t>(bytes[i + 1]) << 8 |
                                static_cast<std::uint8_t>(bytes[i + 2]);
        for (int shift : {18, 12, 6, 0})
            out += kAlphabet[(n >> shift) & 63];
    }
    if (const std::size_t rest = bytes.size() - i; rest > 0) {
        std::uint32_t n = static_cast<std::uint8_t>(bytes[i]) << 16;
        if (rest == 2)
            n |= static_cast<std::uint8_t>(bytes[i + 1]) << 8;
        out += kAlphabet[(n >> 18) & 63];
        out += kAlphabet[(n >> 12) & 63];
        out += rest == 2 ? kAlphabet[(n >> 6) & 63] : '=';
        out += '=';
    }
    return out;
}

std::string base64_decode(std::string_view text) {
    std::string out;
    std::uint32_t n = 0;
    int bits = 0;
    for (char c : text) {
        if (c == '=')
            break;
        const auto v = kAlphabet.find(c);
        if (v == std::string_view::npos)
            throw EtcdGatewayError("not base64: '" + std::string(text) + "'");
        n = n << 6 | static_cast<std::uint32_t>(v);
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out += static_cast<char>((n >> bits) & 0xff);
        }
    }
    return out;
}

std::string etcd_prefix_range_end(std::string_view prefix) {
    std::string end(prefix);
    while (!end.empty()) {
        if (static_cast<unsigned char>(end.back()) < 0xff) {
            end.back() = static_cast<char>(end.back() + 1);
            return end;
        }
        end.pop_back();
    }
    return std::string(1, '\0');  // every key: etcd's "no end" marker
}

json etcd_gateway_call(const Endpoint& endpoint, std::string_view path,
                       const std::optional<json>& body, std::chrono::milliseconds timeout) {
    const std::string where = "etcd at " + endpoint.to_string() + " " + std::string(path);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string why;
    Socket socket(connect_to(endpoint, deadline, why));
    if (socket.fd() < 0)
        throw EtcdGatewayError(where + ": cannot connect: " + why);
    const std::string payload = body ? body->dump() : "";
    std::string request = std::string(body ? "POST " : "GET ") + std::string(path) +
                          " HTTP/1.1\r\nHost: " + endpoint.to_string() +
                          "\r\nConnection: close\r\n";
    if (body) {
        request +=
            "Content-Type: application/json\r\nContent-Length: " + std::to_string(payload.size()) +
            "\r\n";
    }
    request += "\r\n" + payload;
    for (std::size_t sent = 0; sent < request.size();) {
        if (!wait_for(socket.fd(), POLLOUT, deadline))
            throw EtcdGatewayError(where + ": no answer within " + std::to_string(timeout.count()) +
                                   " ms");
        const ssize_t n =
            ::send(socket.fd(), request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n <= 0)
            throw EtcdGatewayError(where + ": " + std::strerror(errno));
        sent += static_cast<std::size_t>(n);
    }
    std::string reply;
    char buf[8192];
    for (;;) {
        if (!wait_for(socket.fd(), POLLIN, deadline))
            throw EtcdGatewayError(where + ": no answer within " + std::to_string(timeout.count()) +
                                   " ms");
        const ssize_t n = ::read(socket.fd(), buf, sizeof buf);
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            throw EtcdGatewayError(where + ": " + std::strerror(errno));
        if (n == 0)
            break;
        reply.append(buf, static_cast<std::size_t>(n));
    }
    const auto head_end = reply.find("\r\n\r\n");
    if (reply.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos)
        throw EtcdGatewayError(where + ": not an HTTP reply (is this etcd's client port?)");
    const std::string head = reply.substr(0, head_end);
    const std::string status_line = head.substr(0, head.find("\r\n"));
    std::string content = reply.substr(head_end + 4);
    std::string lower_head = head;
    for (char& c : lower_head)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower_head.find("transfer-encoding: chunked") != std::string::npos)
        content = dechunk(content, where);
    if (status_line.find(" 200 ") == std::string::npos) {
        throw EtcdGatewayError(where + ": " + status_line.substr(status_line.find(' ') + 1) +
                               (content.empty() ? "" : ": " + content.substr(0, 200)));
    }
    json parsed = json::parse(content, nullptr, false);
    if (parsed.is_discarded())
        throw EtcdGatewayError(where + ": the reply is not JSON: " + content.substr(0, 200));
    return parsed;
}

bool etcd_healthy(const Endpoint& endpoint, std::chrono::milliseconds timeout) {
    try {
        const json reply = etcd_gateway_call(endpoint, "/health", std::nullopt, timeout);
        return reply.value("health", "") == "true";
    } catch (const EtcdGatewayError&) {
        return false;
    }
}

EtcdStatus etcd_status(const Endpoint& endpoint, std::chrono::milliseconds timeout) {
    const json reply =
        etcd_gateway_call(endpoint, "/v3/maintenance/status", json::object(), timeout);
    EtcdStatus status;
    try {
        status.member_id = number_of(reply.at("header").at("member_id"));
        status.leader_id = reply.contains("leader") ? number_of(reply["leader"]) : 0;
        status.raft_term = reply.contains("raftTerm") ? number_of(reply["raftTerm"]) : 0;
        status.version = reply.value("version", "");
    } catch (const std::exception&) {
        throw EtcdGatewayError("etcd at " + endpoint.to_string() +
                               ": a status without a member id: " + reply.dump());
    }
    return status;
}

void etcd_put(const Endpoint& endpoint, std::string_view key, std::string_view value,
              std::chrono::milliseconds timeout) {
    etcd_gateway_call(endpoint, "/v3/kv/put",
                      json{{"key", base64_encode(key)}, {"value", base64_encode(value)}}, timeout);
}

std::optional<std::string> etcd_get(const Endpoint& endpoint, std::string_view key,
                                    std::chrono::milliseconds timeout) {
    const json reply =
        etcd_gateway_call(endpoint, "/v3/kv/range", json{{"key", base64_encode(key)}}, timeout);
    if (!reply.contains("kvs") || reply["kvs"].empty())
        return std::nullopt;
    return base64_decode(reply["kvs"][0].value("value", ""));
}

long long etcd_delete_prefix(const Endpoint& endpoint, std::string_view prefix,
                             std::chrono::milliseconds timeout) {
    if (prefix.empty())
        throw std::invalid_argument("etcd_delete_prefix: an empty prefix names every key");
    const json reply =
        etcd_gateway_call(endpoint, "/v3/kv/deleterange",
                          json{{"key", base64_encode(prefix)},
                               {"range_end", base64_encode(etcd_prefix_range_end(prefix))}},
                          timeout);
    return reply.contains("deleted") ? static_cast<long long>(number_of(reply["deleted"])) : 0;
}

}  // namespace lockbench
