#include "engine/topology/fault_proxy.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <memory>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <optional>
#include <poll.h>
#include <string>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>
#include <vector>

#include "engine/servers/redis_server.hpp"

namespace lockbench {

namespace {

using SteadyClock = std::chrono::steady_clock;

void set_nonblocking(int fd) {
    ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL, 0) | O_NONBLOCK);
}

void set_nodelay(int fd) {
    int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Closes with RST rather than FIN, as a crashed middlebox or a reset toxic would.
void reset_close(int fd) {
    linger l{1, 0};
    ::setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof l);
    ::close(fd);
}

int connect_upstream(const Endpoint& ep) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(ep.port));
    if (::inet_pton(AF_INET, ep.host == "localhost" ? "127.0.0.1" : ep.host.c_str(),
                    &addr.sin_addr) != 1 ||
        ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd);
        return -1;
    }
    set_nonblocking(fd);
    set_nodelay(fd);
    return fd;
}

struct Chunk {
    SteadyClock::time_point due;
    std::string bytes;
};

// One client connection and its upstream twin.
struct Link {
    int client = -1;
    int upstream = -1;
    int client_port = 0;  // the client's source port
    std::string to_upstream;
    SteadyClock::time_point upstream_hold_until{};  // a delayed request: nothing goes on before
    // The client closed its side: what it sent before still goes on (held or not), then the link
    // closes - a segment in flight is not recalled by the FIN behind it.
    bool client_closed = false;
    std::deque<Chunk> to_client;
    std::size_t to_client_offset = 0;  // bytes of to_client.front() already sent
    // Bytes were discarded on this link. A TCP stream never loses bytes and goes on: the stream
    // is broken from here, so nothing more crosses it and it is reset when the fault ends. Going
    // on would hand a client that keeps its connection after a timeout (ioredis) the reply of an
    // earlier command for each later one.
    bool severed = false;
    bool dead = false;

    ~Link() {
        if (client >= 0)
            ::close(client);
        if (upstream >= 0)
            ::close(upstream);
    }
};

// Writes what it can without blocking; false when the peer is gone.
bool write_some(int fd, const char* data, std::size_t size, std::size_t& written) {
    while (written < size) {
        ssize_t n = ::send(fd, data + written, size - written, MSG_NOSIGNAL);
        if (n > 0) {
            written += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return true;
        if (n < 0 && errno == EINTR)
            continue;
        return false;
    }
    return true;
}

void reset_all(std::vector<std::unique_ptr<Link>>& links) {
    for (auto& l : links) {
        reset_close(l->client);
        reset_close(l->upstream);
        l->client = l->upstream = -1;
    }
    links.clear();
}

void drain_wakeups(int wake_fd) {
    std::uint64_t drained;
    [[maybe_unused]] auto ignored = ::read(wake_fd, &drained, sizeof drained);
}

// While frozen nothing is polled but the wake-up fd, so a stop or a new freeze is seen within
// 50 ms; true when the proxy is frozen (and this round slept instead of relaying).
bool sleep_if_frozen(int wake_fd, SteadyClock::time_point frozen_until) {
    const auto now = SteadyClock::now();
    if (now >= frozen_until)
        return false;
    pollfd wake{wake_fd, POLLIN, 0};
    const auto left = std::chrono::ceil<std::chrono::milliseconds>(frozen_until - now).count();
    if (::poll(&wake, 1, static_cast<int>(std::clamp<long>(left, 1, 50))) > 0)
        drain_wakeups(wake_fd);
    return true;
}

// Wake in time for the earliest delayed reply or held request.
int ms_until_next_due(const std::vector<std::unique_ptr<Link>>& links,
                      SteadyClock::time_point now) {
    int timeout_ms = 50;
    for (const auto& l : links) {
        if (!l->to_client.empty()) {
            auto wait = std::chrono::ceil<std::chrono::milliseconds>(l->to_client.front().due - now)
                            .count();
            timeout_ms = std::min<int>(timeout_ms, static_cast<int>(std::max<long>(wait, 0)));
        }
        if (!l->to_upstream.empty() && l->upstream_hold_until > now) {
            auto wait =
                std::chrono::ceil<std::chrono::milliseconds>(l->upstream_hold_until - now).count();
            timeout_ms = std::min<int>(timeout_ms, static_cast<int>(std::max<long>(wait, 0)));
        }
    }
    return timeout_ms;
}

// fds[0] the wake-up fd, fds[1] the listener, then each link's client and upstream in turn.
void fill_poll_set(std::vector<pollfd>& fds, int wake_fd, int listen_fd,
                   const std::vector<std::unique_ptr<Link>>& links, SteadyClock::time_point now) {
    fds.clear();
    fds.push_back({wake_fd, POLLIN, 0});
    fds.push_back({listen_fd, POLLIN, 0});
    for (const auto& l : links) {
        short client_events = l->client_closed ? 0 : POLLIN;
        if (!l->to_client.empty() && l->to_client.front().due <= now)
            client_events |= POLLOUT;
        fds.push_back({l->client, client_events, 0});
        const bool send_upstream = !l->to_upstream.empty() && l->upstream_hold_until <= now;
        fds.push_back({l->upstream, static_cast<short>(POLLIN | (send_upstream ? POLLOUT : 0)), 0});
    }
}

// Accepts every waiting client, each with its own upstream connection; returns how many.
std::uint64_t accept_links(int listen_fd, const Endpoint& upstream,
                           std::vector<std::unique_ptr<Link>>& links) {
    std::uint64_t accepted = 0;
    for (;;) {
        int c = ::accept4(listen_fd, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (c < 0)
            break;
        int u = connect_upstream(upstream);
        if (u < 0) {
            // The server is down (killed by another fault): the client sees a reset,
            // as it would connecting to the dead server itself.
            reset_close(c);
            continue;
        }
        set_nodelay(c);
        auto link = std::make_unique<Link>();
        link->client = c;
        link->upstream = u;
        sockaddr_in peer{};
        socklen_t peer_len = sizeof peer;
        if (::getpeername(c, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0)
            link->client_port = ntohs(peer.sin_port);
        links.push_back(std::move(link));
        ++accepted;
    }
    return accepted;
}

// The faults in force for one round of relaying, read once so a round is consistent.
struct RelayFaults {
    bool blackhole = false;  // requests are dropped too
    bool drop_replies = false;
    std::chrono::milliseconds reply_delay{0};
};

// Reads what the client sent; true when bytes were queued for upstream.
bool receive_request(Link& l, const pollfd& pc, const RelayFaults& faults, char* buf,
                     std::size_t size) {
    if (l.client_closed || !(pc.revents & (POLLIN | POLLHUP | POLLERR)))
        return false;
    ssize_t n = ::recv(l.client, buf, size, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        l.client_closed = true;
        return false;
    }
    if (n <= 0)
        return false;
    if (faults.blackhole || l.severed) {
        l.severed = true;
        return false;
    }
    l.to_upstream.append(buf, static_cast<std::size_t>(n));
    return true;
}

void receive_reply(Link& l, const pollfd& pu, const RelayFaults& faults, char* buf,
                   std::size_t size) {
    if (!(pu.revents & (POLLIN | POLLHUP | POLLERR)))
        return;
    ssize_t n = ::recv(l.upstream, buf, size, 0);
    if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
        l.dead = true;
    } else if (n > 0 && (faults.drop_replies || l.severed)) {
        l.severed = true;
    } else if (n > 0) {
        l.to_client.push_back({SteadyClock::now() + faults.reply_delay,
                               std::string(buf, static_cast<std::size_t>(n))});
    }
}

// A severed link outlives the fault only as a reset: its client sees the connection break, as
// it would once TCP gave up on the path, and reconnects.
void reset_if_severed_after(Link& l, const RelayFaults& faults) {
    if (!l.severed || faults.drop_replies || faults.blackhole)
        return;
    reset_close(l.client);
    reset_close(l.upstream);
    l.client = l.upstream = -1;
    l.dead = true;
}

void send_held_request(Link& l) {
    if (!l.to_upstream.empty() && SteadyClock::now() >= l.upstream_hold_until) {
        std::size_t written = 0;
        if (!write_some(l.upstream, l.to_upstream.data(), l.to_upstream.size(), written))
            l.dead = true;
        l.to_upstream.erase(0, written);
    }
    if (l.client_closed && l.to_upstream.empty())
        l.dead = true;
}

void send_due_replies(Link& l) {
    const auto t = SteadyClock::now();
    while (!l.dead && !l.to_client.empty() && l.to_client.front().due <= t) {
        Chunk& c = l.to_client.front();
        if (!write_some(l.client, c.bytes.data(), c.bytes.size(), l.to_client_offset)) {
            l.dead = true;
        } else if (l.to_client_offset == c.bytes.size()) {
            l.to_client.pop_front();
            l.to_client_offset = 0;
        } else {
            break;  // the client's socket is full: wait for POLLOUT
        }
    }
}

}  // namespace

FaultProxy::FaultProxy(Endpoint upstream) : upstream_(std::move(upstream)) {
    listen_fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (listen_fd_ < 0)
        throw EnvironmentError(std::string("fault proxy: socket: ") + std::strerror(errno));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = 0;  // the kernel picks a free port: no fixed port, no race with other runs
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, 1024) != 0 ||
        ::getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
        std::string why = std::strerror(errno);
        ::close(listen_fd_);
        throw EnvironmentError("fault proxy: cannot listen on loopback: " + why);
    }
    port_ = ntohs(addr.sin_port);
    set_nonblocking(listen_fd_);
    wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0) {
        ::close(listen_fd_);
        throw EnvironmentError(std::string("fault proxy: eventfd: ") + std::strerror(errno));
    }
    thread_ = std::thread([this] { serve(); });
}

FaultProxy::~FaultProxy() {
    stopping_ = true;
    std::uint64_t one = 1;
    [[maybe_unused]] auto ignored = ::write(wake_fd_, &one, sizeof one);
    thread_.join();
    ::close(listen_fd_);
    ::close(wake_fd_);
}

Endpoint FaultProxy::endpoint() const {
    Endpoint e = upstream_;
    e.host = "127.0.0.1";
    e.port = port_;
    return e;
}

void FaultProxy::set_reply_delay(std::chrono::milliseconds delay) {
    reply_delay_ms_ = delay.count();
}
void FaultProxy::set_drop_replies(bool on) {
    drop_replies_ = on;
}
void FaultProxy::set_blackhole(bool on) {
    blackhole_ = on;
}
void FaultProxy::blackhole_until(std::chrono::steady_clock::time_point until) {
    blackhole_until_ns_ =
        std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count();
}
void FaultProxy::freeze_until(std::chrono::steady_clock::time_point until) {
    frozen_until_ns_ =
        std::chrono::duration_cast<std::chrono::nanoseconds>(until.time_since_epoch()).count();
    std::uint64_t one = 1;
    [[maybe_unused]] auto ignored = ::write(wake_fd_, &one, sizeof one);
}
void FaultProxy::delay_next_request_from(int client_port, std::chrono::milliseconds delay) {
    std::lock_guard lock(delays_mutex_);
    delays_[client_port] = delay;
    delays_pending_ = static_cast<int>(delays_.size());
}
void FaultProxy::reset_connections() {
    reset_requested_ = true;
    std::uint64_t one = 1;
    [[maybe_unused]] auto ignored = ::write(wake_fd_, &one, sizeof one);
}

std::optional<std::chrono::milliseconds> FaultProxy::take_request_delay(int client_port) {
    if (delays_pending_.load() == 0)
        return std::nullopt;  // the common case: no lock taken per request
    std::lock_guard lock(delays_mutex_);
    const auto it = delays_.find(client_port);
    if (it == delays_.end())
        return std::nullopt;
    const auto delay = it->second;
    delays_.erase(it);
    delays_pending_ = static_cast<int>(delays_.size());
    ++requests_delayed_;
    return delay;
}

bool FaultProxy::frozen_now() const {
    return SteadyClock::now() <
           SteadyClock::time_point(std::chrono::nanoseconds(frozen_until_ns_.load()));
}

bool FaultProxy::blackholed_now() const {
    return blackhole_.load() ||
           SteadyClock::now() <
               SteadyClock::time_point(std::chrono::nanoseconds(blackhole_until_ns_.load()));
}

void FaultProxy::serve() {
    std::vector<std::unique_ptr<Link>> links;
    std::vector<pollfd> fds;
    char buf[64 * 1024];
    while (!stopping_) {
        if (reset_requested_.exchange(false))
            reset_all(links);
        if (sleep_if_frozen(wake_fd_,
                            SteadyClock::time_point(std::chrono::nanoseconds(frozen_until_ns_))))
            continue;
        const auto now = SteadyClock::now();
        const int timeout_ms = ms_until_next_due(links, now);
        fill_poll_set(fds, wake_fd_, listen_fd_, links, now);
        if (::poll(fds.data(), fds.size(), timeout_ms) < 0 && errno != EINTR)
            break;
        if (fds[0].revents & POLLIN)
            drain_wakeups(wake_fd_);
        // A freeze that began while poll() waited holds what poll() found ready: it stays in the
        // kernel's buffers until the freeze ends (without this, a command sent just after
        // freeze_until() returned could still cross).
        if (frozen_now())
            continue;
        if (fds[1].revents & POLLIN)
            accepted_ += accept_links(listen_fd_, upstream_, links);
        const bool blackhole = blackholed_now();
        const RelayFaults faults{blackhole, drop_replies_.load() || blackhole,
                                 std::chrono::milliseconds(reply_delay_ms_.load())};
        // Links accepted in this round have no pollfd yet: only the first `polled` have one.
        const std::size_t polled = (fds.size() - 2) / 2;
        for (std::size_t i = 0; i < polled; ++i) {
            Link& l = *links[i];
            const bool was_idle = l.to_upstream.empty();
            if (receive_request(l, fds[2 + 2 * i], faults, buf, sizeof buf) && was_idle) {
                if (const auto delay = take_request_delay(l.client_port))
                    l.upstream_hold_until = SteadyClock::now() + *delay;
            }
            receive_reply(l, fds[3 + 2 * i], faults, buf, sizeof buf);
            send_held_request(l);
            send_due_replies(l);
        }
        for (auto& l : links)
            reset_if_severed_after(*l, faults);
        std::erase_if(links, [](const std::unique_ptr<Link>& l) { return l->dead; });
    }
}

}  // namespace lockbench
