#include "strategies/client/clock.hpp"

#include <algorithm>

namespace lockbench {

namespace {
std::int64_t system_wall_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}
}  // namespace

Clock::Clock() : anchor_real_steady_(EventLoop::now()), anchor_wall_ns_(system_wall_ns()) {}

Clock Clock::manual(std::int64_t start_wall_ms) {
    Clock c;
    c.manual_ = true;
    c.anchor_wall_ns_ = start_wall_ms * 1'000'000;
    return c;
}

Clock::Duration Clock::real_elapsed_at(EventLoop::TimePoint now) const {
    if (manual_)
        return manual_elapsed_;
    return now - anchor_real_steady_;
}

Clock::Duration Clock::steady_at(EventLoop::TimePoint now) const {
    auto scaled = static_cast<double>(real_elapsed_at(now).count()) * (1.0 + drift_);
    return anchor_steady_ + Duration(static_cast<Duration::rep>(scaled));
}

std::int64_t Clock::wall_ms_at(EventLoop::TimePoint now) const {
    std::int64_t ns = anchor_wall_ns_ + (steady_at(now) - anchor_steady_).count();
    return ns / 1'000'000 + offset_.count();
}

void Clock::reanchor() {
    // Keeps readings continuous when the drift changes: the new rate applies from here on.
    auto reading = steady();
    anchor_wall_ns_ += (reading - anchor_steady_).count();
    anchor_steady_ = reading;
    if (manual_) {
        manual_elapsed_ = Duration(0);
    } else {
        anchor_real_steady_ = EventLoop::now();
    }
}

void Clock::set_offset(std::chrono::milliseconds offset) {
    offset_ = offset;
}

void Clock::set_drift(double drift) {
    reanchor();
    drift_ = drift;
}

void Clock::advance(Duration d) {
    if (!manual_)
        return;
    manual_elapsed_ += d;
    auto now = steady();
    auto due = std::stable_partition(manual_sleepers_.begin(), manual_sleepers_.end(),
                                     [&](const ManualSleeper& s) { return s.until > now; });
    for (auto it = due; it != manual_sleepers_.end(); ++it)
        it->loop->schedule(it->h);
    manual_sleepers_.erase(due, manual_sleepers_.end());
}

Clock::Duration Clock::to_real(Duration d) const {
    return Duration(static_cast<Duration::rep>(static_cast<double>(d.count()) / (1.0 + drift_)));
}

void Clock::SleepAwaiter::await_suspend(std::coroutine_handle<> h) {
    if (clock.manual_) {
        clock.manual_sleepers_.push_back({until, &loop, h});
        return;
    }
    auto remaining = clock.to_real(until - clock.steady());
    loop.add_timer(EventLoop::now() + remaining, [l = &loop, h] { l->schedule(h); });
}

}  // namespace lockbench
