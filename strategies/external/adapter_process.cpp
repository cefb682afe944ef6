#include "strategies/external/adapter_process.hpp"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <signal.h>
#include <stdexcept>
#include <sys/epoll.h>
#include <system_error>
#include <unistd.h>

namespace lockbench {

namespace {

// A line longer than this is not an answer of the protocol but a runaway writer: without a
// bound, an adapter printing without newlines would grow lockbench's memory forever.
constexpr std::size_t kMaxLine = 1 << 20;

std::string quoted_excerpt(std::string_view line) {
    std::string out(line.substr(0, 80));
    for (char& c : out) {
        if (static_cast<unsigned char>(c) < 0x20)
            c = '?';
    }
    return "'" + out + (line.size() > 80 ? "...'" : "'");
}

std::uint32_t next_serial() {
    static std::atomic<std::uint32_t> last{0};
    return ++last;
}

}  // namespace

std::vector<std::string> split_command_line(const std::string& command) {
    std::vector<std::string> out;
    std::string word;
    bool in_word = false;
    char quote = 0;
    for (char c : command) {
        if (quote) {
            if (c == quote)
                quote = 0;
            else
                word += c;
        } else if (c == '\'' || c == '"') {
            quote = c;
            in_word = true;
        } else if (c == ' ' || c == '\t') {
            if (in_word)
                out.push_back(std::exchange(word, {}));
            in_word = false;
        } else {
            word += c;
            in_word = true;
        }
    }
    if (quote)
        throw std::invalid_argument("an unterminated " + std::string(1, quote) + " quote in '" +
                                    command + "'");
    if (in_word)
        out.push_back(word);
    if (out.empty())
        throw std::invalid_argument("an empty command");
    return out;
}

AdapterProcess::AdapterProcess(EventLoop& loop, const AdapterLaunch& launch, std::string who)
    : loop_(loop), who_(std::move(who)), serial_(next_serial()) {
    if (launch.argv.empty())
        throw std::invalid_argument("an adapter needs a command");
    // A write to an adapter that just died must fail with EPIPE, not end lockbench.
    struct sigaction current {};
    if (::sigaction(SIGPIPE, nullptr, &current) == 0 && current.sa_handler == SIG_DFL)
        ::signal(SIGPIPE, SIG_IGN);

    ChildLaunch child{.argv = launch.argv,
                      .extra_env = launch.extra_env,
                      .stdin_from = ChildStream::Pipe,
                      .stdout_to = ChildStream::Pipe,
                      .stderr_to = launch.log ? ChildStream::Log : ChildStream::Inherit,
                      .role = "adapter"};
    if (launch.log) {
        std::error_code ignored;
        std::filesystem::create_directories(launch.log->parent_path(), ignored);
        child.log = *launch.log;
    }
    child_ = ChildProcess(child);
    stdin_fd_ = child_.take_stdin();
    stdout_fd_ = child_.take_stdout();
    ::fcntl(stdout_fd_, F_SETFL, ::fcntl(stdout_fd_, F_GETFL) | O_NONBLOCK);
    loop_.add_fd(stdout_fd_, EPOLLIN, this);
}

AdapterProcess::~AdapterProcess() {
    for (auto& [id, pending] : pending_) {
        if (pending->timer)
            loop_.cancel_timer(pending->timer);
    }
    detach_stdout();
    if (stdin_fd_ >= 0)
        ::close(stdin_fd_);
    kill_and_reap();
}

const std::string& AdapterProcess::broken_reason() const {
    static const std::string none;
    return broken_ ? *broken_ : none;
}

void AdapterProcess::detach_stdout() {
    if (stdout_fd_ >= 0) {
        loop_.remove_fd(stdout_fd_);
        ::close(stdout_fd_);
        stdout_fd_ = -1;
    }
}

std::string AdapterProcess::exit_description() {
    child_.alive();  // reaps it if it has exited
    return child_.exit_description().value_or("closed its standard output");
}

bool AdapterProcess::stop(EventLoop::TimePoint until) {
    stopped_until_ = until;
    return child_.signal(SIGSTOP);
}

bool AdapterProcess::resume() {
    return child_.signal(SIGCONT);
}

bool AdapterProcess::kill_and_reap() {
    return child_.kill_and_reap();
}

bool AdapterProcess::crash() {
    crashed_ = true;
    const bool reaped = kill_and_reap();
    break_with("was killed by a crash fault", /*report=*/false);
    return reaped;
}

void AdapterProcess::break_with(const std::string& reason, bool report) {
    if (broken_)
        return;
    broken_ = reason;
    if (report) {
        std::fprintf(stderr, "lockbench: %s: adapter (pid %d) %s; the process is killed\n",
                     who_.c_str(), static_cast<int>(child_.pid()), reason.c_str());
    }
    detach_stdout();
    if (stdin_fd_ >= 0)
        ::close(std::exchange(stdin_fd_, -1));
    kill_and_reap();
    for (auto& [id, pending] : pending_) {
        if (pending->timer)
            loop_.cancel_timer(std::exchange(pending->timer, 0));
        if (pending->waiter)
            loop_.schedule(std::exchange(pending->waiter, {}));
    }
    pending_.clear();
    if (on_broken_ && report)
        on_broken_(reason);
}

void AdapterProcess::on_io(std::uint32_t /*epoll_events*/) {
    if (stdout_fd_ < 0)
        return;
    char chunk[4096];
    for (;;) {
        const ssize_t n = ::read(stdout_fd_, chunk, sizeof chunk);
        if (n > 0) {
            buffer_.append(chunk, static_cast<std::size_t>(n));
            std::size_t start = 0;
            for (std::size_t nl; (nl = buffer_.find('\n', start)) != std::string::npos;
                 start = nl + 1) {
                handle_line(std::string_view(buffer_).substr(start, nl - start));
                if (broken_)
                    return;
            }
            buffer_.erase(0, start);
            if (buffer_.size() > kMaxLine) {
                break_with("wrote more than " + std::to_string(kMaxLine) +
                           " bytes without a newline");
                return;
            }
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        // End of file (or a read error): the adapter closed its output or exited.
        if (closing_) {
            detach_stdout();
            return;
        }
        // Give an exiting process a moment to become reapable, so the line says how it ended.
        for (int i = 0; i < 20 && child_.alive(); ++i)
            ::usleep(1000);
        break_with(exit_description() + (pending_.empty() ? "" : " with a request in flight"));
        return;
    }
}

void AdapterProcess::handle_line(std::string_view line) {
    if (!line.empty() && line.back() == '\r')
        line.remove_suffix(1);
    nlohmann::json message = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (message.is_discarded() || !message.is_object()) {
        break_with("answered a line that is not a JSON object: " + quoted_excerpt(line));
        return;
    }
    const auto reply_to = message.find("in_reply_to");
    if (reply_to == message.end()) {
        if (message.value("type", "") == "lost" || message.contains("type")) {
            if (on_message_)
                on_message_(message);
            return;
        }
        break_with("wrote a message with neither in_reply_to nor type: " + quoted_excerpt(line));
        return;
    }
    const auto found = reply_to->is_number_integer() ? pending_.find(reply_to->get<std::int64_t>())
                                                     : pending_.end();
    if (found == pending_.end()) {
        break_with("answered in_reply_to " + reply_to->dump() + ", which no request in flight has");
        return;
    }
    Pending* pending = found->second;
    pending_.erase(found);
    if (pending->timer)
        loop_.cancel_timer(std::exchange(pending->timer, 0));
    pending->reply = std::move(message);
    if (pending->waiter)
        loop_.schedule(std::exchange(pending->waiter, {}));
}

void AdapterProcess::arm_deadline(Pending& pending, const std::string& type,
                                  std::chrono::milliseconds timeout) {
    pending.timer = loop_.add_timer(EventLoop::now() + timeout, [this, &pending, type, timeout] {
        pending.timer = 0;
        // A process lockbench itself stopped (a pause fault) is not late: its clock starts again
        // when it is resumed.
        if (EventLoop::now() < stopped_until_) {
            pending.timer = loop_.add_timer(stopped_until_, [this, &pending, type, timeout] {
                pending.timer = 0;
                arm_deadline(pending, type, timeout);
            });
            return;
        }
        break_with("gave no answer to " + type + " within " + std::to_string(timeout.count()) +
                   " ms (late or silent)");
    });
}

struct AdapterProcess::ReplyAwaiter {
    AdapterProcess& process;
    Pending& pending;
    bool await_ready() const noexcept { return pending.reply.has_value() || process.broken(); }
    void await_suspend(std::coroutine_handle<> h) { pending.waiter = h; }
    void await_resume() const noexcept {}
};

Task<nlohmann::json> AdapterProcess::call(nlohmann::json request,
                                          std::chrono::milliseconds timeout) {
    if (broken_)
        throw AdapterBroken("the adapter " + *broken_);
    const std::string type = request.value("type", "request");
    Pending pending{next_id_++, std::nullopt, {}, 0};
    request["id"] = pending.id;
    std::string line = request.dump() + "\n";
    pending_[pending.id] = &pending;
    arm_deadline(pending, type, timeout);
    std::size_t written = 0;
    while (written < line.size() && !broken_) {
        const ssize_t n = ::write(stdin_fd_, line.data() + written, line.size() - written);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            break_with(std::string("does not read its standard input (") + std::strerror(errno) +
                       ")");
            break;
        }
        written += static_cast<std::size_t>(n);
    }
    co_await ReplyAwaiter{*this, pending};
    if (pending.timer)
        loop_.cancel_timer(std::exchange(pending.timer, 0));
    pending_.erase(pending.id);
    if (!pending.reply)
        throw AdapterBroken("the adapter " + broken_reason());
    co_return std::move(*pending.reply);
}

Task<void> AdapterProcess::close(std::chrono::milliseconds grace) {
    closing_ = true;
    if (stdin_fd_ >= 0)
        ::close(std::exchange(stdin_fd_, -1));
    const auto until = EventLoop::now() + grace;
    while (child_.alive() && EventLoop::now() < until)
        co_await loop_.sleep_for(std::chrono::milliseconds(5));
    detach_stdout();
    kill_and_reap();
}

}  // namespace lockbench
