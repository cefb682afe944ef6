#pragma once

// One epoll event loop per thread: file-descriptor readiness, timers, a ready queue of coroutines
// and a thread-safe post() so the nemesis (another thread) can act on the loop's clients.

#include <algorithm>
#include <chrono>
#include <coroutine>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "strategies/client/task.hpp"

namespace lockbench {

class EventLoop {
  public:
    using SteadyClock = std::chrono::steady_clock;
    using TimePoint = SteadyClock::time_point;
    using TimerId = std::uint64_t;

    // Receives epoll readiness for one file descriptor. Handlers must tolerate spurious wake-ups:
    // a descriptor closed and reused inside one epoll batch can deliver a stale event.
    class IoHandler {
      public:
        virtual void on_io(std::uint32_t epoll_events) = 0;

      protected:
        ~IoHandler() = default;
    };

    // Runs once the coroutines made ready in a turn have all run, before the loop waits for I/O
    // again: a shared connection writes every command its clients issued in that turn with one
    // send (auto-pipelining), instead of one send per command.
    class TurnEndHandler {
      public:
        virtual void on_turn_end() = 0;

      protected:
        ~TurnEndHandler() = default;
    };

    EventLoop();
    ~EventLoop();
    EventLoop(const EventLoop&) = delete;
    EventLoop& operator=(const EventLoop&) = delete;

    void add_fd(int fd, std::uint32_t events, IoHandler* handler);
    void modify_fd(int fd, std::uint32_t events);
    void remove_fd(int fd);

    TimerId add_timer(TimePoint when, std::function<void()> callback);
    void cancel_timer(TimerId id);

    // Resumes `h` from the loop, after the current handler returns. Connections complete commands
    // this way so a resumed strategy may freely drop or reuse the connection that woke it.
    void schedule(std::coroutine_handle<> h) { ready_.push_back(h); }

    // `handler` runs once at the end of this turn; a handler that goes away first cancels.
    void at_turn_end(TurnEndHandler* handler) { turn_end_.push_back(handler); }
    void cancel_turn_end(TurnEndHandler* handler) {
        std::erase(turn_end_, handler);
        std::replace(turn_ending_.begin(), turn_ending_.end(), handler,
                     static_cast<TurnEndHandler*>(nullptr));
    }

    // Thread-safe: runs `fn` on the loop thread soon.
    void post(std::function<void()> fn);
    // Thread-safe: makes run() return after the current iteration.
    void stop();

    // Runs until stop(). Returns at once if stop() was already called since the last run().
    void run();
    // One iteration: waits at most `max_wait` for I/O or a timer, then dispatches what is due.
    void run_once(std::chrono::milliseconds max_wait);

    static TimePoint now() { return SteadyClock::now(); }

    struct SleepAwaiter {
        EventLoop& loop;
        TimePoint until;
        bool await_ready() const noexcept { return until <= now(); }
        void await_suspend(std::coroutine_handle<> h) {
            loop.add_timer(until, [this_loop = &loop, h] { this_loop->schedule(h); });
        }
        void await_resume() const noexcept {}
    };
    SleepAwaiter sleep_until(TimePoint until) { return {*this, until}; }
    template <typename Rep, typename Period>
    SleepAwaiter sleep_for(std::chrono::duration<Rep, Period> d) {
        return {*this, now() + std::chrono::duration_cast<SteadyClock::duration>(d)};
    }

  private:
    void drain_posted();
    void run_due_timers();
    void run_ready();
    void run_turn_end();

    int epoll_fd_ = -1;
    int wake_fd_ = -1;  // eventfd: post() and stop() wake a loop blocked in epoll_wait
    std::vector<IoHandler*> handlers_;  // indexed by fd
    std::map<std::pair<TimePoint, TimerId>, std::function<void()>> timers_;
    std::unordered_map<TimerId, TimePoint> timer_when_;
    TimerId next_timer_id_ = 1;
    std::vector<std::coroutine_handle<>> ready_;
    std::vector<std::coroutine_handle<>> running_;  // the round run_ready() is resuming
    bool resuming_ = false;
    std::vector<TurnEndHandler*> turn_end_;
    std::vector<TurnEndHandler*> turn_ending_;

    std::mutex posted_mutex_;
    std::vector<std::function<void()>> posted_;
    bool stop_requested_ = false;  // guarded by posted_mutex_
};

// Drives `loop` on the calling thread until `task` finishes, then returns its result (or rethrows
// its exception). For tests and for one-shot commands; the engine runs loops on worker threads.
template <typename T>
T run_sync(EventLoop& loop, Task<T> task) {
    if constexpr (std::is_void_v<T>) {
        bool finished = false;
        std::exception_ptr error;
        spawn_detached(std::move(task), [&](std::exception_ptr e) {
            error = e;
            finished = true;
        });
        while (!finished)
            loop.run_once(std::chrono::milliseconds(100));
        if (error)
            std::rethrow_exception(error);
    } else {
        // The result is kept by a void task around `task`, which runs as above.
        std::optional<T> out;
        auto body = [](Task<T> t, std::optional<T>& slot) -> Task<void> {
            slot.emplace(co_await std::move(t));
        };
        run_sync(loop, body(std::move(task), out));
        return std::move(*out);
    }
}

}  // namespace lockbench

namespace lockbench {

// A flag one coroutine can wait on with a deadline; set() wakes it at once. Used to stop
// background loops (watchdogs) without waiting out their sleep, and for wake-ups.
class WakeEvent {
  public:
    explicit WakeEvent(EventLoop& loop) : loop_(loop) {}
    ~WakeEvent() { cancel_timer(); }
    WakeEvent(const WakeEvent&) = delete;
    WakeEvent& operator=(const WakeEvent&) = delete;

    void set() {
        set_ = true;
        if (waiter_) {
            cancel_timer();
            loop_.schedule(std::exchange(waiter_, {}));
        }
    }
    void reset() { set_ = false; }
    bool is_set() const { return set_; }

    struct Awaiter {
        WakeEvent& ev;
        EventLoop::TimePoint deadline;
        bool await_ready() const noexcept { return ev.set_ || deadline <= EventLoop::now(); }
        void await_suspend(std::coroutine_handle<> h) {
            ev.waiter_ = h;
            ev.timer_ = ev.loop_.add_timer(deadline, [e = &ev] {
                e->timer_ = 0;
                if (e->waiter_)
                    e->loop_.schedule(std::exchange(e->waiter_, {}));
            });
        }
        // True if set() was called, false if the deadline passed first.
        bool await_resume() const noexcept { return ev.set_; }
    };
    Awaiter wait_until(EventLoop::TimePoint deadline) { return {*this, deadline}; }

  private:
    void cancel_timer() {
        if (timer_)
            loop_.cancel_timer(std::exchange(timer_, 0));
    }
    EventLoop& loop_;
    bool set_ = false;
    std::coroutine_handle<> waiter_;
    EventLoop::TimerId timer_ = 0;
};

// Runs every task concurrently on the current loop and waits for all of them; each slot holds a
// value or the exception its task ended with. Redlock uses it to ask N masters at once.
template <typename T>
struct Settled {
    std::optional<T> value;
    std::exception_ptr error;
    bool ok() const { return value.has_value(); }
};

template <typename T>
Task<std::vector<Settled<T>>> when_all_settled(std::vector<Task<T>> tasks) {
    struct Shared {
        std::vector<Settled<T>> results;
        std::size_t remaining = 0;
        std::coroutine_handle<> continuation;
    };
    Shared shared;
    shared.results.resize(tasks.size());
    shared.remaining = tasks.size();
    if (tasks.empty())
        co_return std::move(shared.results);

    struct Join {
        Shared& s;
        std::vector<Task<T>>& tasks;
        bool await_ready() const noexcept { return false; }
        void await_suspend(std::coroutine_handle<> h) {
            s.continuation = h;
            // The last task may finish (and resume the caller, ending this frame) inside run_one:
            // touch nothing of the frame after the final call.
            const std::size_t n = tasks.size();
            auto* first = tasks.data();
            for (std::size_t i = 0; i < n; ++i)
                run_one(std::move(first[i]), s, i);
        }
        void await_resume() const noexcept {}
        static DetachedTask run_one(Task<T> t, Shared& s, std::size_t i) {
            try {
                s.results[i].value.emplace(co_await std::move(t));
            } catch (...) {
                s.results[i].error = std::current_exception();
            }
            // The last one to finish resumes the caller. Symmetric transfer is not available from
            // a detached frame, so resume directly: the caller's frame outlives this point.
            if (--s.remaining == 0)
                s.continuation.resume();
        }
    };
    co_await Join{shared, tasks};
    co_return std::move(shared.results);
}

}  // namespace lockbench
