#pragma once

// Task<T>: a lazily started C++20 coroutine. Strategies are written as straight-line coroutines
// (`co_await session.redis().command(...)`) so that one event-loop thread can drive hundreds of
// simulated clients, as memtier_benchmark's threads x event loops do, while a strategy still
// reads like the blocking code in the seed articles.

#include <coroutine>
#include <exception>
#include <functional>
#include <optional>
#include <utility>

namespace lockbench {

template <typename T>
class Task;

namespace detail {

struct TaskPromiseBase {
    std::coroutine_handle<> continuation = std::noop_coroutine();
    std::exception_ptr error;

    std::suspend_always initial_suspend() noexcept { return {}; }

    struct FinalAwaiter {
        bool await_ready() noexcept { return false; }
        template <typename Promise>
        std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> h) noexcept {
            return h.promise().continuation;
        }
        void await_resume() noexcept {}
    };
    FinalAwaiter final_suspend() noexcept { return {}; }
    void unhandled_exception() noexcept { error = std::current_exception(); }
};

template <typename T>
struct TaskPromise : TaskPromiseBase {
    std::optional<T> value;
    Task<T> get_return_object() noexcept;
    template <typename U>
    void return_value(U&& v) {
        value.emplace(std::forward<U>(v));
    }
    T take() {
        if (error)
            std::rethrow_exception(error);
        return std::move(*value);
    }
};

template <>
struct TaskPromise<void> : TaskPromiseBase {
    Task<void> get_return_object() noexcept;
    void return_void() noexcept {}
    void take() {
        if (error)
            std::rethrow_exception(error);
    }
};

}  // namespace detail

template <typename T = void>
class [[nodiscard]] Task {
  public:
    using promise_type = detail::TaskPromise<T>;

    Task() = default;
    explicit Task(std::coroutine_handle<promise_type> h) noexcept : handle_(h) {}
    Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
    Task& operator=(Task&& other) noexcept {
        if (this != &other) {
            destroy();
            handle_ = std::exchange(other.handle_, {});
        }
        return *this;
    }
    Task(const Task&) = delete;
    Task& operator=(const Task&) = delete;
    ~Task() { destroy(); }

    bool valid() const noexcept { return static_cast<bool>(handle_); }
    bool done() const noexcept { return handle_ && handle_.done(); }

    auto operator co_await() && noexcept {
        struct Awaiter {
            std::coroutine_handle<promise_type> h;
            bool await_ready() noexcept { return false; }
            std::coroutine_handle<> await_suspend(std::coroutine_handle<> awaiting) noexcept {
                h.promise().continuation = awaiting;
                return h;  // symmetric transfer: no stack growth on long await chains
            }
            T await_resume() { return h.promise().take(); }
        };
        return Awaiter{handle_};
    }

    // For drivers (run_sync, spawn): start or resume from outside a coroutine.
    std::coroutine_handle<promise_type> handle() const noexcept { return handle_; }
    T result() { return handle_.promise().take(); }

  private:
    void destroy() noexcept {
        if (handle_)
            handle_.destroy();
        handle_ = {};
    }
    std::coroutine_handle<promise_type> handle_;
};

namespace detail {
template <typename T>
Task<T> TaskPromise<T>::get_return_object() noexcept {
    return Task<T>{std::coroutine_handle<TaskPromise<T>>::from_promise(*this)};
}
inline Task<void> TaskPromise<void>::get_return_object() noexcept {
    return Task<void>{std::coroutine_handle<TaskPromise<void>>::from_promise(*this)};
}
}  // namespace detail

// A fire-and-forget coroutine that owns itself: it frees its frame when it finishes. Exceptions
// that escape the body go to `on_error` so a detached client or watchdog never dies silently.
struct DetachedTask {
    struct promise_type {
        DetachedTask get_return_object() noexcept { return {}; }
        std::suspend_never initial_suspend() noexcept { return {}; }
        std::suspend_never final_suspend() noexcept { return {}; }
        void return_void() noexcept {}
        void unhandled_exception() noexcept { std::terminate(); }
    };
};

// Starts `task` now (it runs until its first suspension) and lets it finish on its own.
// `on_done` runs when it ends, with the exception it ended with (or null).
inline DetachedTask spawn_detached(Task<void> task,
                                   std::function<void(std::exception_ptr)> on_done = {}) {
    std::exception_ptr error;
    try {
        co_await std::move(task);
    } catch (...) {
        error = std::current_exception();
    }
    if (on_done)
        on_done(error);
}

}  // namespace lockbench
