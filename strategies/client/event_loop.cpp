#include "strategies/client/event_loop.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <system_error>
#include <unistd.h>
#include <utility>

namespace lockbench {

namespace {
// A system call the loop needs failed: the machine's limits, not a bug (std::system_error is
// what the command line reports as an environment error).
[[noreturn]] void throw_errno(const char* what) {
    throw std::system_error(errno, std::generic_category(), what);
}
}  // namespace

EventLoop::EventLoop() {
    epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0)
        throw_errno("epoll_create1");
    wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (wake_fd_ < 0)
        throw_errno("eventfd");
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.fd = wake_fd_;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev) != 0)
        throw_errno("epoll_ctl");
}

EventLoop::~EventLoop() {
    if (wake_fd_ >= 0)
        ::close(wake_fd_);
    if (epoll_fd_ >= 0)
        ::close(epoll_fd_);
}

void EventLoop::add_fd(int fd, std::uint32_t events, IoHandler* handler) {
    if (static_cast<std::size_t>(fd) >= handlers_.size())
        handlers_.resize(fd + 1, nullptr);
    handlers_[fd] = handler;
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
        throw_errno("epoll_ctl(ADD)");
}

void EventLoop::modify_fd(int fd, std::uint32_t events) {
    epoll_event ev{};
    ev.events = events;
    ev.data.fd = fd;
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &ev) != 0)
        throw_errno("epoll_ctl(MOD)");
}

void EventLoop::remove_fd(int fd) {
    epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
    if (static_cast<std::size_t>(fd) < handlers_.size())
        handlers_[fd] = nullptr;
}

EventLoop::TimerId EventLoop::add_timer(TimePoint when, std::function<void()> callback) {
    TimerId id = next_timer_id_++;
    timers_.emplace(std::make_pair(when, id), std::move(callback));
    timer_when_.emplace(id, when);
    return id;
}

void EventLoop::cancel_timer(TimerId id) {
    auto it = timer_when_.find(id);
    if (it == timer_when_.end())
        return;
    timers_.erase({it->second, id});
    timer_when_.erase(it);
}

void EventLoop::post(std::function<void()> fn) {
    {
        std::lock_guard lock(posted_mutex_);
        posted_.push_back(std::move(fn));
    }
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void EventLoop::stop() {
    {
        std::lock_guard lock(posted_mutex_);
        stop_requested_ = true;
    }
    std::uint64_t one = 1;
    [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
}

void EventLoop::run() {
    for (;;) {
        {
            std::lock_guard lock(posted_mutex_);
            if (stop_requested_) {
                stop_requested_ = false;
                return;
            }
        }
        run_once(std::chrono::milliseconds(1000));
    }
}

void EventLoop::run_once(std::chrono::milliseconds max_wait) {
    run_ready();
    run_turn_end();
    // To the nanosecond, not epoll_wait's millisecond: a timer (an open-loop arrival, a 1 ms
    // hold) fires when due, not up to a millisecond later.
    std::chrono::nanoseconds wait = max_wait;
    if (!timers_.empty()) {
        auto until_next = timers_.begin()->first.first - now();
        wait = std::max(std::chrono::nanoseconds(0), std::min(wait, until_next));
    }
    {
        std::lock_guard lock(posted_mutex_);
        if (!posted_.empty() || stop_requested_)
            wait = std::chrono::nanoseconds(0);
    }
    epoll_event events[256];
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(wait);
    const timespec timeout{.tv_sec = static_cast<time_t>(seconds.count()),
                           .tv_nsec = static_cast<long>((wait - seconds).count())};
    int n = epoll_pwait2(epoll_fd_, events, 256, &timeout, nullptr);
    if (n < 0 && errno == ENOSYS) {  // a kernel before 5.11
        n = epoll_wait(
            epoll_fd_, events, 256,
            static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(wait).count()));
    }
    if (n < 0 && errno != EINTR)
        throw_errno("epoll_wait");
    for (int i = 0; i < n; ++i) {
        int fd = events[i].data.fd;
        if (fd == wake_fd_) {
            std::uint64_t count;
            [[maybe_unused]] auto r = ::read(wake_fd_, &count, sizeof count);
            continue;
        }
        // Looked up per event: an earlier handler in this batch may have removed this one.
        if (static_cast<std::size_t>(fd) < handlers_.size() && handlers_[fd]) {
            handlers_[fd]->on_io(events[i].events);
        }
        run_ready();
    }
    drain_posted();
    run_due_timers();
    run_ready();
}

void EventLoop::drain_posted() {
    std::vector<std::function<void()>> batch;
    {
        std::lock_guard lock(posted_mutex_);
        batch.swap(posted_);
    }
    for (auto& fn : batch) {
        fn();
        run_ready();
    }
}

void EventLoop::run_due_timers() {
    auto current = now();
    while (!timers_.empty() && timers_.begin()->first.first <= current) {
        auto node = timers_.extract(timers_.begin());
        timer_when_.erase(node.key().second);
        node.mapped()();
        run_ready();
    }
}

void EventLoop::run_turn_end() {
    // A failed flush resumes its clients, which may issue commands again: those are flushed in
    // this turn too, not left until a wake-up that may never come.
    while (!turn_end_.empty()) {
        turn_ending_.clear();
        turn_ending_.swap(turn_end_);
        for (std::size_t i = 0; i < turn_ending_.size(); ++i) {
            if (turn_ending_[i])
                turn_ending_[i]->on_turn_end();
        }
        turn_ending_.clear();
        run_ready();
    }
}

void EventLoop::run_ready() {
    // Resuming may schedule more coroutines; swap so each round sees a stable list. The two
    // vectors trade their storage instead of allocating a list per round (a 1-client cycle
    // resumes a dozen times). A resumed coroutine that drives this loop itself gets a list of
    // its own.
    std::vector<std::coroutine_handle<>> nested;
    const bool outermost = !std::exchange(resuming_, true);
    auto& round = outermost ? running_ : nested;
    while (!ready_.empty()) {
        round.clear();
        round.swap(ready_);
        for (auto h : round)
            h.resume();
    }
    if (outermost)
        resuming_ = false;
}

}  // namespace lockbench
