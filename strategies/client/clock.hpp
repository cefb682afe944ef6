#pragma once

// A simulated client's own clock. Strategies read time only from here, never from
// std::chrono::system_clock, so the engine can skew one client (T9: a fast clock makes
// setnx_getset steal a live lock) or let it drift (Redlock's validity assumes bounded drift),
// and tests can drive time by hand (Seastar's manual_clock). libfaketime cannot do this for us:
// it fakes the whole process and hangs Debian's redis-server (research: tooling §3.2).
//
// A Clock belongs to the thread of the event loop its client runs on; the engine changes it from
// that thread (EventLoop::post), so it needs no locking.

#include <chrono>
#include <coroutine>
#include <cstdint>
#include <vector>

#include "strategies/client/event_loop.hpp"

namespace lockbench {

class Clock {
  public:
    using Duration = std::chrono::nanoseconds;

    // Follows the machine's clocks, with offset 0 and no drift.
    Clock();
    // A clock that only moves when advance() is called, starting at `start_wall_ms`.
    static Clock manual(std::int64_t start_wall_ms);

    // The client's idea of wall-clock time, ms since the Unix epoch.
    std::int64_t wall_ms() const { return wall_ms_at(EventLoop::now()); }
    // The same at `now`, a reading of EventLoop::now() taken by the caller (the history stamps
    // an event and its client's clock with one read).
    std::int64_t wall_ms_at(EventLoop::TimePoint now) const;
    // The client's monotonic reading, for measuring elapsed time (Redlock validity, wait budgets).
    Duration steady() const { return steady_at(EventLoop::now()); }

    // Shifts wall time by `offset` (a step, as a bad NTP sync would make).
    void set_offset(std::chrono::milliseconds offset);
    std::chrono::milliseconds offset() const { return offset_; }
    // The clock runs at (1 + drift) x real speed from now on; e.g. 0.01 = 1 % fast.
    void set_drift(double drift);
    double drift() const { return drift_; }
    bool is_manual() const { return manual_; }
    // Manual clocks only: moves time forward and wakes sleepers that are due.
    void advance(Duration d);

    // How long, in real time, this client's `d` lasts (a fast clock's second is shorter).
    Duration to_real(Duration d) const;

    struct SleepAwaiter {
        Clock& clock;
        EventLoop& loop;
        Duration until;  // on this clock's steady() scale
        bool await_ready() const noexcept { return clock.steady() >= until; }
        void await_suspend(std::coroutine_handle<> h);
        void await_resume() const noexcept {}
    };
    // Sleeps `d` as this client measures it.
    SleepAwaiter sleep_for(EventLoop& loop, Duration d) { return {*this, loop, steady() + d}; }

  private:
    Duration real_elapsed_at(EventLoop::TimePoint now) const;
    Duration steady_at(EventLoop::TimePoint now) const;
    void reanchor();

    bool manual_ = false;
    std::chrono::milliseconds offset_{0};
    double drift_ = 0.0;
    // Drift applies from the anchor on: reading = anchor reading + real elapsed x (1 + drift).
    EventLoop::TimePoint anchor_real_steady_;
    std::int64_t anchor_wall_ns_ = 0;
    Duration anchor_steady_{0};
    Duration manual_elapsed_{0};

    struct ManualSleeper {
        Duration until;
        EventLoop* loop;
        std::coroutine_handle<> h;
    };
    std::vector<ManualSleeper> manual_sleepers_;
};

}  // namespace lockbench
