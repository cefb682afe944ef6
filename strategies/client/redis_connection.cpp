#include "strategies/client/redis_connection.hpp"

#include <arpa/inet.h>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <utility>

#include <hiredis/hiredis.h>

#include "strategies/client/cluster_routing.hpp"

namespace lockbench {

// ---- Endpoint / Reply ---------------------------------------------------------------------------

Endpoint Endpoint::parse(std::string_view text) {
    auto colon = text.rfind(':');
    if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size()) {
        throw std::invalid_argument("'" + std::string(text) + "' is not HOST:PORT");
    }
    Endpoint ep;
    ep.host = std::string(text.substr(0, colon));
    auto port_text = text.substr(colon + 1);
    auto [end, ec] =
        std::from_chars(port_text.data(), port_text.data() + port_text.size(), ep.port);
    if (ec != std::errc() || end != port_text.data() + port_text.size() || ep.port <= 0 ||
        ep.port > 65535) {
        throw std::invalid_argument("'" + std::string(text) + "': port must be 1..65535");
    }
    return ep;
}

long long Reply::as_integer() const {
    if (type != Type::Integer)
        throw RedisError("expected an integer reply, got '" + str + "'");
    return integer;
}

const std::string& Reply::as_string() const {
    if (type != Type::String && type != Type::Status) {
        throw RedisError("expected a string reply");
    }
    return str;
}

void append_resp_command(std::string& out, const std::vector<std::string>& args) {
    // By hand rather than hiredis's redisFormatCommandArgv: that one mallocs the command and
    // sprintf's every length, a measurable share of a 1-client cycle (engine_bench.sh).
    auto append_header = [&out](char kind, std::size_t n) {
        char digits[24];
        auto end = std::to_chars(digits, digits + sizeof digits, n).ptr;
        out.push_back(kind);
        out.append(digits, static_cast<std::size_t>(end - digits));  // not replace()'s range
        out.append("\r\n", 2);
    };
    append_header('*', args.size());
    for (const auto& a : args) {
        append_header('$', a.size());
        out += a;
        out.append("\r\n", 2);
    }
}

namespace {

// A port that is not Redis (ssh, a web server) answers bytes no RESP reader takes: quote them,
// so "protocol error" says what was there instead.
std::string not_redis(const std::string& endpoint, std::string_view got) {
    std::string shown;
    for (const char c : got.substr(0, got.find_first_of("\r\n"))) {
        if (shown.size() == 40) {
            shown += "...";
            break;
        }
        shown += c >= 0x20 && c < 0x7f ? c : '?';
    }
    return endpoint + " did not answer like Redis (got '" + shown +
           "'): protocol error: is this a Redis server?";
}

Reply convert(const redisReply* r) {
    Reply out;
    switch (r->type) {
        case REDIS_REPLY_STRING:
            out.type = Reply::Type::String;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_STATUS:
            out.type = Reply::Type::Status;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_ERROR:
            out.type = Reply::Type::Error;
            out.str.assign(r->str, r->len);
            break;
        case REDIS_REPLY_INTEGER:
            out.type = Reply::Type::Integer;
            out.integer = r->integer;
            break;
        case REDIS_REPLY_ARRAY:
            out.type = Reply::Type::Array;
            out.elements.reserve(r->elements);
            for (std::size_t i = 0; i < r->elements; ++i)
                out.elements.push_back(convert(r->element[i]));
            break;
        default:
            out.type = Reply::Type::Nil;
    }
    return out;
}

bool is_pubsub_message(const Reply& r) {
    return r.type == Reply::Type::Array && r.elements.size() == 3 &&
           r.elements[0].type == Reply::Type::String && r.elements[0].str == "message";
}

template <typename E>
std::exception_ptr make_error(const std::string& what) {
    return std::make_exception_ptr(E(what));
}

}  // namespace

// ---- awaiters -----------------------------------------------------------------------------------

void RedisConnection::CommandAwaiter::await_suspend(std::coroutine_handle<> h) {
    waiter_ = h;
    if (conn_->router_)
        conn_ = &conn_->router_->route(args_);
    conn_->enqueue(*this);
}

Reply RedisConnection::CommandAwaiter::await_resume() {
    if (error_)
        std::rethrow_exception(error_);
    if (reply_.type == Reply::Type::Error)
        throw ReplyError(reply_.str);
    return std::move(reply_);
}

bool RedisConnection::MessageAwaiter::await_ready() const noexcept {
    return !conn_.messages_.empty() || deadline_ <= EventLoop::now();
}

void RedisConnection::MessageAwaiter::await_suspend(std::coroutine_handle<> h) {
    waiter_ = h;
    conn_.message_waiter_ = this;
    timer_ = conn_.loop_.add_timer(deadline_, [this] {
        timer_ = 0;
        if (conn_.message_waiter_ == this)
            conn_.message_waiter_ = nullptr;
        conn_.loop_.schedule(waiter_);
    });
}

std::optional<PubSubMessage> RedisConnection::MessageAwaiter::await_resume() {
    if (error_)
        std::rethrow_exception(error_);
    if (message_)
        return std::move(message_);
    if (!conn_.messages_.empty()) {
        auto m = std::move(conn_.messages_.front());
        conn_.messages_.pop_front();
        return m;
    }
    return std::nullopt;
}

// ---- connection ---------------------------------------------------------------------------------

RedisConnection::RedisConnection(EventLoop& loop, Endpoint endpoint, ConnectionOptions options)
    : loop_(loop), endpoint_(std::move(endpoint)), options_(options) {}

RedisConnection::~RedisConnection() {
    if (flush_at_turn_end_)
        loop_.cancel_turn_end(this);
    router_ = nullptr;
    fail_all(make_error<ClosedError>("connection to " + endpoint_.to_string() + " destroyed"));
    if (deadline_timer_)
        loop_.cancel_timer(deadline_timer_);
}

void RedisConnection::set_endpoint(Endpoint endpoint) {
    drop("redirected to " + endpoint.to_string());
    endpoint_ = std::move(endpoint);
}

void RedisConnection::disable(const std::string& reason) {
    disabled_ = reason;
    drop(reason);
}

void RedisConnection::drop(const std::string& reason) {
    fail_all(make_error<ClosedError>(reason));
}

void RedisConnection::enqueue(CommandAwaiter& awaiter) {
    if (disabled_) {
        awaiter.error_ = make_error<ClosedError>(*disabled_);
        loop_.schedule(awaiter.waiter_);
        return;
    }
    if (state_ == State::Closed)
        start_connect();  // may queue AUTH first
    append_resp_command(out_, awaiter.args_);

    // The command's own timeout from now, also when it waits for a (re)connect: a connect that
    // succeeds at once must not stretch a 250 ms read to the connect timeout plus 250 ms (a
    // holder's read outliving its lease), and one that does not is cut by its own timer.
    const auto command_timeout = awaiter.timeout_.value_or(options_.command_timeout);
    bool subscribes = !awaiter.args_.empty() &&
                      (awaiter.args_[0] == "SUBSCRIBE" || awaiter.args_[0] == "subscribe");
    pending_.push_back(
        Pending{&awaiter, EventLoop::now() + command_timeout, subscribes, command_timeout});
    if (state_ == State::Connected) {
        if (!auto_pipelining_)
            flush_output();
        else if (!std::exchange(flush_at_turn_end_, true))
            loop_.at_turn_end(this);
    }
    // A timer already due no later than this command's deadline covers it (it re-arms for what
    // is left when it fires): no scan of a shared connection's many commands in flight.
    if (!deadline_timer_ || pending_.back().deadline < deadline_armed_for_)
        arm_deadline_timer();
}

void RedisConnection::on_turn_end() {
    flush_at_turn_end_ = false;
    // A connection that failed or reconnects since has nothing of this turn's left to send: a
    // reconnect sends its queue when the connect finishes.
    if (state_ == State::Connected)
        flush_output();
}

void RedisConnection::start_connect() {
    ++generation_;
    subscribed_ = false;
    messages_.clear();
    out_.clear();
    out_sent_ = 0;

    if (endpoint_.is_unix_socket()) {
        connect_unix_socket();
        return;
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    auto port = std::to_string(endpoint_.port);
    int gai = getaddrinfo(endpoint_.host.c_str(), port.c_str(), &hints, &res);
    if (gai != 0 || !res) {
        // Leave state Closed; the command enqueued next fails at once through the timer below.
        connect_timer_ =
            loop_.add_timer(EventLoop::now(), [this, msg = std::string(gai_strerror(gai))] {
                connect_timer_ = 0;
                fail_all(make_error<ConnectError>("cannot resolve " + endpoint_.host + ": " + msg));
            });
        state_ = State::Connecting;
        return;
    }
    fd_ = ::socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = fd_ < 0 ? -1 : ::connect(fd_, res->ai_addr, res->ai_addrlen);
    int connect_errno = errno;
    freeaddrinfo(res);
    state_ = State::Connecting;
    if (fd_ < 0 || (rc != 0 && connect_errno != EINPROGRESS)) {
        std::string msg =
            "cannot connect to " + endpoint_.to_string() + ": " + std::strerror(connect_errno);
        connect_timer_ = loop_.add_timer(EventLoop::now(), [this, msg] {
            connect_timer_ = 0;
            fail_all(make_error<ConnectError>(msg));
        });
        return;
    }
    int one = 1;
    setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    watch_connect();
}

void RedisConnection::connect_unix_socket() {
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    state_ = State::Connecting;
    const auto fail_soon = [this](std::string msg) {
        connect_timer_ = loop_.add_timer(EventLoop::now(), [this, msg = std::move(msg)] {
            connect_timer_ = 0;
            fail_all(make_error<ConnectError>(msg));
        });
    };
    if (endpoint_.host.size() >= sizeof addr.sun_path) {
        fail_soon("cannot connect to " + endpoint_.to_string() + ": the path is longer than " +
                  std::to_string(sizeof addr.sun_path - 1) + " bytes");
        return;
    }
    std::memcpy(addr.sun_path, endpoint_.host.c_str(), endpoint_.host.size() + 1);
    fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int rc = fd_ < 0 ? -1 : ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (fd_ < 0 || (rc != 0 && errno != EINPROGRESS)) {
        fail_soon("cannot connect to " + endpoint_.to_string() + ": " + std::strerror(errno));
        return;
    }
    watch_connect();
}

void RedisConnection::watch_connect() {
    reader_ = redisReaderCreate();
    loop_.add_fd(fd_, EPOLLOUT, this);
    registered_events_ = EPOLLOUT;
    connect_timer_ = loop_.add_timer(EventLoop::now() + options_.connect_timeout, [this] {
        connect_timer_ = 0;
        if (catch_up())
            return;
        fail_all(
            make_error<ConnectError>("connect to " + endpoint_.to_string() + " timed out after " +
                                     std::to_string(options_.connect_timeout.count()) + " ms"));
    });
    if (!endpoint_.password.empty()) {
        append_resp_command(out_, endpoint_.user.empty()
                                      ? strings("AUTH", endpoint_.password)
                                      : strings("AUTH", endpoint_.user, endpoint_.password));
        pending_.push_back(
            Pending{nullptr, EventLoop::now() + options_.connect_timeout + options_.command_timeout,
                    false, options_.command_timeout});
    }
}

void RedisConnection::finish_connect() {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(fd_, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0) {
        fail_all(make_error<ConnectError>("cannot connect to " + endpoint_.to_string() + ": " +
                                          std::strerror(err)));
        return;
    }
    if (connect_timer_) {
        loop_.cancel_timer(connect_timer_);
        connect_timer_ = 0;
    }
    state_ = State::Connected;
    flush_output();
}

void RedisConnection::on_io(std::uint32_t events) {
    if (fd_ < 0)
        return;
    if (state_ == State::Connecting) {
        if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
            finish_connect();
        return;
    }
    if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
        read_input();
    if (fd_ >= 0 && (events & EPOLLOUT))
        flush_output();
}

void RedisConnection::flush_output() {
    while (out_sent_ < out_.size()) {
        ssize_t n = ::send(fd_, out_.data() + out_sent_, out_.size() - out_sent_, MSG_NOSIGNAL);
        ++writes_;
        if (n > 0) {
            out_sent_ += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        if (n < 0 && errno == EINTR)
            continue;
        fail_all(make_error<ClosedError>("write to " + endpoint_.to_string() +
                                         " failed: " + std::strerror(errno)));
        return;
    }
    if (out_sent_ == out_.size()) {
        out_.clear();
        out_sent_ = 0;
    }
    update_interest();
}

void RedisConnection::update_interest() {
    if (fd_ < 0)
        return;
    std::uint32_t wanted = EPOLLIN | (out_sent_ < out_.size() ? EPOLLOUT : 0u);
    if (wanted == registered_events_)
        return;  // saves an epoll_ctl per command on the hot path
    loop_.modify_fd(fd_, wanted);
    registered_events_ = wanted;
}

void RedisConnection::read_input() {
    char buf[16384];
    for (;;) {
        ssize_t n = ::recv(fd_, buf, sizeof buf, 0);
        if (n > 0) {
            if (redisReaderFeed(reader_, buf, static_cast<std::size_t>(n)) != REDIS_OK) {
                fail_all(make_error<ClosedError>(not_redis(
                    endpoint_.to_string(), std::string_view(buf, static_cast<std::size_t>(n)))));
                return;
            }
            for (;;) {
                void* raw = nullptr;
                if (redisReaderGetReply(reader_, &raw) != REDIS_OK) {
                    fail_all(make_error<ClosedError>(
                        not_redis(endpoint_.to_string(),
                                  std::string_view(buf, static_cast<std::size_t>(n)))));
                    return;
                }
                if (!raw)
                    break;
                Reply reply = convert(static_cast<redisReply*>(raw));
                freeReplyObject(raw);
                dispatch_reply(std::move(reply));
                if (fd_ < 0)
                    return;  // an AUTH failure closed the connection
            }
            if (static_cast<std::size_t>(n) < sizeof buf)
                return;
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n < 0 && errno == EINTR)
            continue;
        std::string why = n == 0 ? "closed by the server" : std::strerror(errno);
        fail_all(make_error<ClosedError>("connection to " + endpoint_.to_string() + " " + why));
        return;
    }
}

bool RedisConnection::follow_redirect(CommandAwaiter& awaiter, const Reply& reply) {
    // A cluster in the middle of a failover can point back and forth; a command that was sent
    // on this often is answered with the last redirect, as an error.
    constexpr int kMaxRedirects = 5;
    const auto redirect = parse_redirect(reply.str);
    if (!redirect || awaiter.redirects_ >= kMaxRedirects)
        return false;
    ++awaiter.redirects_;
    RedisConnection& to = redirect->ask ? router_->connection_to(redirect->node)
                                        : router_->moved(redirect->slot, redirect->node);
    awaiter.conn_ = &to;
    if (redirect->ask)
        to.enqueue_asking();
    to.enqueue(awaiter);
    return true;
}

void RedisConnection::enqueue_asking() {
    if (disabled_)
        return;
    if (state_ == State::Closed)
        start_connect();
    out_ += "*1\r\n$6\r\nASKING\r\n";
    pending_.push_back(
        Pending{nullptr, EventLoop::now() + options_.connect_timeout + options_.command_timeout,
                false, options_.command_timeout, true});
    if (state_ == State::Connected)
        flush_output();
    arm_deadline_timer();
}

void RedisConnection::dispatch_reply(Reply reply) {
    if (subscribed_ && is_pubsub_message(reply)) {
        PubSubMessage m{std::move(reply.elements[1].str), std::move(reply.elements[2].str)};
        if (message_waiter_) {
            auto* w = std::exchange(message_waiter_, nullptr);
            if (w->timer_)
                loop_.cancel_timer(std::exchange(w->timer_, 0));
            w->message_ = std::move(m);
            loop_.schedule(w->waiter_);
        } else {
            messages_.push_back(std::move(m));
        }
        return;
    }
    if (pending_.empty()) {
        fail_all(make_error<ClosedError>("unexpected reply from " + endpoint_.to_string()));
        return;
    }
    Pending p = pending_.front();
    pending_.pop_front();
    if (!p.awaiter) {  // AUTH, or ASKING (whose command's own reply tells)
        if (reply.type == Reply::Type::Error && !p.asking) {
            fail_all(make_error<ReplyError>(
                "AUTH " + (endpoint_.user.empty() ? "" : "as " + endpoint_.user + " ") + "to " +
                endpoint_.to_string() + " failed: " + reply.str));
        }
        return;
    }
    if (p.subscribes && reply.type != Reply::Type::Error)
        subscribed_ = true;
    if (router_ && reply.type == Reply::Type::Error && follow_redirect(*p.awaiter, reply))
        return;
    p.awaiter->reply_ = std::move(reply);
    loop_.schedule(p.awaiter->waiter_);
}

EventLoop::TimePoint RedisConnection::earliest_deadline() const {
    // Commands may carry their own timeouts (Redlock's 50 ms beside a connect-phase PING's
    // seconds), so the queue's deadlines are not in order; it holds a few commands at most.
    auto earliest = EventLoop::TimePoint::max();
    for (const auto& p : pending_)
        earliest = std::min(earliest, p.deadline);
    return earliest;
}

void RedisConnection::arm_deadline_timer() {
    if (pending_.empty())
        return;
    const auto due = earliest_deadline();
    // Lazy: one timer per connection, for the earliest deadline in flight; a timer armed for a
    // later one (a command that has completed since) is moved up, never left to decide.
    if (deadline_timer_ && deadline_armed_for_ <= due)
        return;
    if (deadline_timer_)
        loop_.cancel_timer(deadline_timer_);
    deadline_armed_for_ = due;
    deadline_timer_ = loop_.add_timer(due, [this] {
        deadline_timer_ = 0;
        on_deadline_timer();
    });
}

bool RedisConnection::catch_up() {
    if (fd_ < 0)
        return false;
    pollfd p{fd_, static_cast<short>(state_ == State::Connecting ? POLLOUT : POLLIN), 0};
    if (::poll(&p, 1, 0) <= 0 || p.revents == 0)
        return false;
    if (state_ == State::Connecting) {
        finish_connect();
        return true;
    }
    read_input();
    return true;
}

void RedisConnection::on_deadline_timer() {
    if (pending_.empty())
        return;
    if (earliest_deadline() <= EventLoop::now()) {
        // With thousands of clients on one loop, a reply can be waiting in the socket while the
        // loop is still busy with others: what already arrived is no timeout.
        catch_up();
        if (pending_.empty())
            return;
        const auto late = std::find_if(pending_.begin(), pending_.end(), [](const Pending& p) {
            return p.deadline <= EventLoop::now();
        });
        if (late != pending_.end()) {
            fail_all(make_error<TimeoutError>("no reply from " + endpoint_.to_string() +
                                              " within " + std::to_string(late->timeout.count()) +
                                              " ms"));
            return;
        }
    }
    arm_deadline_timer();
}

void RedisConnection::fail_all(std::exception_ptr error) {
    close_socket();
    auto failed = std::move(pending_);
    pending_.clear();
    if (router_ && !failed.empty())
        router_->failed(*this);
    for (auto& p : failed) {
        if (!p.awaiter)
            continue;
        p.awaiter->error_ = error;
        loop_.schedule(p.awaiter->waiter_);
    }
    if (message_waiter_) {
        auto* w = std::exchange(message_waiter_, nullptr);
        if (w->timer_)
            loop_.cancel_timer(std::exchange(w->timer_, 0));
        w->error_ = error;
        loop_.schedule(w->waiter_);
    }
}

void RedisConnection::close_socket() {
    if (connect_timer_) {
        loop_.cancel_timer(connect_timer_);
        connect_timer_ = 0;
    }
    if (fd_ >= 0) {
        loop_.remove_fd(fd_);
        ::close(fd_);
        fd_ = -1;
    }
    if (reader_) {
        redisReaderFree(reader_);
        reader_ = nullptr;
    }
    out_.clear();
    out_sent_ = 0;
    state_ = State::Closed;
    subscribed_ = false;
    registered_events_ = 0;
}

int RedisConnection::local_port() const {
    if (fd_ < 0 || state_ != State::Connected)
        return 0;
    sockaddr_storage addr{};
    socklen_t len = sizeof addr;
    if (::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0)
        return 0;
    if (addr.ss_family == AF_INET)
        return ntohs(reinterpret_cast<const sockaddr_in*>(&addr)->sin_port);
    if (addr.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6*>(&addr)->sin6_port);
    return 0;
}

Reply command_once(const Endpoint& endpoint, std::vector<std::string> args,
                   std::chrono::milliseconds timeout) {
    EventLoop loop;
    RedisConnection connection(loop, endpoint,
                               {.connect_timeout = timeout, .command_timeout = timeout});
    return run_sync(loop, [](RedisConnection& c, std::vector<std::string> a) -> Task<Reply> {
        co_return co_await c.command_argv(std::move(a));
    }(connection, std::move(args)));
}

}  // namespace lockbench
