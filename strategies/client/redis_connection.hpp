#pragma once

// A thin RAII wrapper over hiredis 0.14: hiredis parses RESP replies; this class formats commands
// and owns a non-blocking socket on an EventLoop. hiredis 0.14's own blocking API cannot multiplex
// many clients on one thread, and its async API has no command timeouts (a SIGSTOPped server would
// hang a waiter forever), so the socket, the deadlines and the pipeline queue live here.
//
// Contract:
// - Replies come back in order; a command's outcome is a Reply, or one of the errors below.
// - Any I/O failure (timeout, reset, EOF) fails *every* command in flight on the connection and
//   closes the socket: a connection that failed is never reused (hiredis #306: a late reply would
//   be paired with the next command). The next command opens a fresh socket.
// - TimeoutError means "no reply in time": the command may still be applied later (a SIGSTOPped
//   server runs it after SIGCONT), so the history must record it as `info`, never `fail`.

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <deque>
#include <exception>
#include <initializer_list>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/client/event_loop.hpp"

struct redisReader;

namespace lockbench {

struct Endpoint {
    std::string host = "127.0.0.1";  // or a unix socket's path (starts with '/'; port unused)
    int port = 6379;
    std::string password;  // empty: no AUTH
    std::string user;      // a Redis 6 ACL user: AUTH user password; empty: the default user

    bool is_unix_socket() const { return !host.empty() && host.front() == '/'; }
    std::string to_string() const {
        return is_unix_socket() ? "unix:" + host : host + ":" + std::to_string(port);
    }
    // The same server (host and port; the password is how to talk to it, not where it is).
    bool same_address(const Endpoint& other) const {
        return port == other.port && host == other.host;
    }
    // Parses "HOST:PORT"; throws std::invalid_argument naming what is wrong.
    static Endpoint parse(std::string_view text);
};

struct ConnectionOptions {
    std::chrono::milliseconds connect_timeout{1000};
    std::chrono::milliseconds command_timeout{1000};
};

// ---- errors -------------------------------------------------------------------------------------

class RedisError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};
// The connection failed; the outcome of commands in flight is unknown.
class IoError : public RedisError {
  public:
    using RedisError::RedisError;
};
// No reply within the command timeout (server paused, overloaded, or reply lost).
class TimeoutError : public IoError {
  public:
    using IoError::IoError;
};
// The peer closed or reset the connection, or lockbench dropped it (a crash fault).
class ClosedError : public IoError {
  public:
    using IoError::IoError;
};
// The connection could not be established: no command was sent, so none took effect.
class ConnectError : public IoError {
  public:
    using IoError::IoError;
};
// The server answered with an error reply ("-ERR ...", "-NOSCRIPT ...").
class ReplyError : public RedisError {
  public:
    using RedisError::RedisError;
    bool is_noscript() const { return std::string_view(what()).starts_with("NOSCRIPT"); }
};

// Builds an argument vector from strings, string_views, literals - without a braced list (see
// RedisConnection::command).
template <typename... Args>
std::vector<std::string> strings(Args&&... args) {
    std::vector<std::string> out;
    out.reserve(sizeof...(args));
    (out.emplace_back(std::forward<Args>(args)), ...);
    return out;
}

// Appends the RESP encoding of the command `args` (an array of bulk strings) to `out`.
void append_resp_command(std::string& out, const std::vector<std::string>& args);

// ---- replies ------------------------------------------------------------------------------------

struct Reply {
    enum class Type { String, Array, Integer, Nil, Status, Error };
    Type type = Type::Nil;
    std::string str;  // String, Status, Error
    long long integer = 0;
    std::vector<Reply> elements;

    bool is_nil() const { return type == Type::Nil; }
    bool is_ok() const { return type == Type::Status && str == "OK"; }
    bool is_integer() const { return type == Type::Integer; }
    bool is_string() const { return type == Type::String; }
    bool is_array() const { return type == Type::Array; }
    // Throws RedisError when the reply has another type: a strategy that gets a reply shape it
    // does not expect must say so, not guess.
    long long as_integer() const;
    const std::string& as_string() const;
};

struct PubSubMessage {
    std::string channel;
    std::string payload;
};

// ---- the connection -----------------------------------------------------------------------------

class RedisConnection;

// Redis Cluster (cluster_routing.hpp): places each command on the connection to the node that
// owns its key's slot, and follows the cluster's redirects.
class ClusterRouter {
  public:
    virtual ~ClusterRouter() = default;
    // The connection that should carry `args`, as far as the router knows.
    virtual RedisConnection& route(const std::vector<std::string>& args) = 0;
    // A MOVED reply: `slot` lives at `owner` now. Returns the connection to it.
    virtual RedisConnection& moved(int slot, const Endpoint& owner) = 0;
    // An ASK reply: the connection to `node`, for this one command.
    virtual RedisConnection& connection_to(const Endpoint& node) = 0;
    // Commands on `conn` failed with an I/O error: what it served may have moved (a failover).
    virtual void failed(RedisConnection& conn) = 0;
};

class RedisConnection final : private EventLoop::IoHandler, private EventLoop::TurnEndHandler {
  public:
    RedisConnection(EventLoop& loop, Endpoint endpoint, ConnectionOptions options = {});
    // Commands still in flight fail with ClosedError (they resume later, from the loop).
    ~RedisConnection();
    RedisConnection(const RedisConnection&) = delete;
    RedisConnection& operator=(const RedisConnection&) = delete;

    class [[nodiscard]] CommandAwaiter {
      public:
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h);
        Reply await_resume();
        // The arguments back, once the command has been answered: to send them again changed
        // (EVALSHA, then EVAL on NOSCRIPT) without copying them for the first try.
        std::vector<std::string> take_args() && { return std::move(args_); }

      private:
        friend class RedisConnection;
        CommandAwaiter(RedisConnection& c, std::vector<std::string> args,
                       std::optional<std::chrono::milliseconds> timeout = std::nullopt)
            : conn_(&c), args_(std::move(args)), timeout_(timeout) {}
        RedisConnection* conn_;  // another node's, once a cluster router placed or redirected it
        int redirects_ = 0;
        std::vector<std::string> args_;
        std::optional<std::chrono::milliseconds> timeout_;  // else the connection's
        std::coroutine_handle<> waiter_;
        Reply reply_;
        std::exception_ptr error_;
    };

    // `co_await conn.command("SET", key, token, "NX", "PX", "30000")`.
    // Error replies throw ReplyError; I/O failures throw the IoError subclasses above.
    // (Variadic rather than a braced list: GCC 12 miscompiles initializer_list temporaries in
    // coroutines, "array used as initializer".)
    template <typename... Args>
    CommandAwaiter command(Args&&... args) {
        return CommandAwaiter(*this, strings(std::forward<Args>(args)...));
    }
    // `timeout` replaces the connection's command timeout for this command only (Redlock's
    // per-node timeout must not cut the protected resource's commands on the same node).
    CommandAwaiter command_argv(std::vector<std::string> args,
                                std::optional<std::chrono::milliseconds> timeout = std::nullopt) {
        return CommandAwaiter(*this, std::move(args), timeout);
    }

    // Drops the socket now, as a crashed client's process would: every command in flight fails
    // with ClosedError(reason). The next command reconnects.
    void drop(const std::string& reason);
    // Drops the socket and refuses every later command with ClosedError(reason): the client
    // process this connection belongs to is dead, and a dead process sends nothing.
    void disable(const std::string& reason);

    // Pub/sub: after a SUBSCRIBE command on this connection, published messages queue here.
    // Returns nullopt at the deadline. Throws IoError if the connection fails while waiting.
    class [[nodiscard]] MessageAwaiter {
      public:
        bool await_ready() const noexcept;
        void await_suspend(std::coroutine_handle<> h);
        std::optional<PubSubMessage> await_resume();

      private:
        friend class RedisConnection;
        MessageAwaiter(RedisConnection& c, EventLoop::TimePoint deadline)
            : conn_(c), deadline_(deadline) {}
        RedisConnection& conn_;
        EventLoop::TimePoint deadline_;
        std::coroutine_handle<> waiter_;
        EventLoop::TimerId timer_ = 0;
        std::optional<PubSubMessage> message_;
        std::exception_ptr error_;
    };
    MessageAwaiter next_message(EventLoop::TimePoint deadline) { return {*this, deadline}; }

    bool connected() const { return state_ == State::Connected; }
    // Increments on every new socket: a subscription made on an older generation is gone.
    std::uint64_t generation() const { return generation_; }
    const Endpoint& endpoint() const { return endpoint_; }
    // Points the connection at another server (a failover): drops the socket, commands in flight
    // fail with ClosedError, the next command connects to `endpoint`.
    void set_endpoint(Endpoint endpoint);
    // The connection's own port (its source port), 0 when not connected: what a network fault
    // in front of the server tells this connection's packets by.
    int local_port() const;
    EventLoop& loop() { return loop_; }
    const ConnectionOptions& options() const { return options_; }
    // Redis Cluster: every command awaited on this connection goes where `router` places it,
    // and MOVED/ASK replies are followed (the command ran nowhere, so it is sent again) instead
    // of thrown; null: neither. The router outlives the connection.
    void set_router(ClusterRouter* router) { router_ = router; }
    // Auto-pipelining, for a connection many clients share (shared_connections.hpp): a command
    // is not sent when it is issued but at the end of the loop's turn, together with every other
    // command issued in that turn (as ioredis's enableAutoPipelining does); replies are matched
    // to their commands in order either way.
    void set_auto_pipelining(bool on) { auto_pipelining_ = on; }
    // The send() calls that carried commands so far: what auto-pipelining saves.
    std::uint64_t writes() const { return writes_; }

  private:
    enum class State { Closed, Connecting, Connected };
    struct Pending {
        CommandAwaiter* awaiter;  // null for internal commands (AUTH)
        EventLoop::TimePoint deadline;
        bool subscribes;
        std::chrono::milliseconds timeout;  // what the deadline allowed, for the error
        bool asking = false;                // internal ASKING before a redirected command
    };

    void on_io(std::uint32_t events) override;
    void on_turn_end() override;
    void enqueue(CommandAwaiter& awaiter);
    void enqueue_asking();
    // A MOVED/ASK reply to `awaiter`'s command, sent on to the node it names: false if it is
    // none (or the awaiter was redirected too often), and the reply stands.
    bool follow_redirect(CommandAwaiter& awaiter, const Reply& reply);
    void start_connect();
    void connect_unix_socket();
    // Waits for the connect to finish (or time out), AUTH queued first when there is a password.
    void watch_connect();
    void finish_connect();
    void flush_output();
    void read_input();
    void dispatch_reply(Reply reply);
    void update_interest();
    void arm_deadline_timer();
    EventLoop::TimePoint earliest_deadline() const;
    void on_deadline_timer();
    // Processes what the socket already has (a finished connect, replies) without waiting for
    // the loop to get to it; true if there was anything.
    bool catch_up();
    void fail_all(std::exception_ptr error);
    void close_socket();

    EventLoop& loop_;
    Endpoint endpoint_;
    ConnectionOptions options_;
    State state_ = State::Closed;
    int fd_ = -1;
    std::uint64_t generation_ = 0;
    redisReader* reader_ = nullptr;
    std::string out_;
    std::size_t out_sent_ = 0;
    std::deque<Pending> pending_;
    EventLoop::TimerId deadline_timer_ = 0;
    EventLoop::TimePoint deadline_armed_for_{};
    EventLoop::TimerId connect_timer_ = 0;
    std::uint32_t registered_events_ = 0;
    bool subscribed_ = false;
    std::deque<PubSubMessage> messages_;
    MessageAwaiter* message_waiter_ = nullptr;
    std::optional<std::string> disabled_;  // the reason, once disabled
    ClusterRouter* router_ = nullptr;
    bool auto_pipelining_ = false;
    bool flush_at_turn_end_ = false;  // registered with the loop for this turn
    std::uint64_t writes_ = 0;
};

// Connects, sends one command (after AUTH when the endpoint has a password), waits for its reply
// and closes: for set-up, checks and faults outside a run's event loops. Error replies throw
// ReplyError, I/O failures and `timeout` (for the connect and for the reply each) IoError.
Reply command_once(const Endpoint& endpoint, std::vector<std::string> args,
                   std::chrono::milliseconds timeout);

}  // namespace lockbench
