#include "strategies/watchdog.hpp"

#include <algorithm>
#include <exception>

namespace lockbench {

using namespace std::chrono_literals;

std::string hash_tagged(std::string_view key) {
    if (key.find('{') != std::string_view::npos)
        return std::string(key);
    return "{" + std::string(key) + "}";
}

std::string unlock_latch_key(std::string_view key, std::string_view request_id) {
    return "lockbench_unlock_latch:" + hash_tagged(key) + ":" + std::string(request_id);
}

// ---- Watchdog -----------------------------------------------------------------------------------

struct Watchdog::KeyLoop {
    explicit KeyLoop(EventLoop& loop) : wake(loop) {}
    std::set<std::string> tokens;  // grants of this key not released yet
    std::chrono::milliseconds lease{0};
    bool stopped = false;   // set once; the loop ends at its next wake-up
    bool finished = false;  // the loop has ended (also when a renewal found the lock gone)
    WakeEvent wake;         // set() with `stopped`: cuts the loop's sleep short

    void stop() {
        stopped = true;
        wake.set();
    }
};

struct Watchdog::State {
    Renew renew;
    std::map<std::string, std::shared_ptr<KeyLoop>> loops;
    std::size_t running = 0;
    std::unique_ptr<WakeEvent> idle;  // set when `running` drops to 0 (shutdown waits on it)
};

Watchdog::Watchdog(Renew renew) : state_(std::make_shared<State>()) {
    state_->renew = std::move(renew);
}

Watchdog::~Watchdog() {
    for (auto& [key, loop] : state_->loops)
        loop->stop();
    state_->loops.clear();
}

std::size_t Watchdog::running() const {
    return state_->running;
}

void Watchdog::held(Session& session, const std::string& key, const std::string& token,
                    std::chrono::milliseconds lease) {
    auto& slot = state_->loops[key];
    if (slot && !slot->finished) {
        slot->tokens.insert(token);
        slot->lease = lease;
        return;
    }
    // First grant on the key, or its loop ended when a renewal found the lock gone and the
    // client has acquired it again since: a fresh loop, keeping the grants not released yet.
    auto loop = std::make_shared<KeyLoop>(session.loop());
    if (slot)
        loop->tokens = std::move(slot->tokens);
    loop->tokens.insert(token);
    loop->lease = lease;
    slot = loop;
    ++state_->running;
    renew_loop(state_, std::move(loop), session, key);
}

void Watchdog::released(const std::string& key, const std::string& token) {
    auto it = state_->loops.find(key);
    if (it == state_->loops.end())
        return;
    it->second->tokens.erase(token);
    if (!it->second->tokens.empty())
        return;
    it->second->stop();
    state_->loops.erase(it);
}

Task<void> Watchdog::shutdown(Session& session) {
    for (auto& [key, loop] : state_->loops)
        loop->stop();
    state_->loops.clear();
    if (state_->running == 0)
        co_return;
    if (!state_->idle)
        state_->idle = std::make_unique<WakeEvent>(session.loop());
    while (state_->running > 0) {
        state_->idle->reset();
        co_await state_->idle->wait_until(EventLoop::now() + 1h);
    }
}

DetachedTask Watchdog::renew_loop(std::shared_ptr<State> state, std::shared_ptr<KeyLoop> loop,
                                  Session& session, std::string key) {
    // After every suspension `stopped` is checked before the session is touched: a stopped loop
    // may outlive its strategy and session by one wake-up.
    while (!loop->stopped) {
        // lease/3 as the client's own clock measures it (a fast clock renews early).
        const auto interval = std::max<Clock::Duration>(loop->lease / 3, 1ms);
        const auto due = session.clock().steady() + interval;
        while (!loop->stopped && session.clock().steady() < due) {
            auto left = session.clock().to_real(due - session.clock().steady());
            co_await loop->wake.wait_until(
                EventLoop::now() +
                std::chrono::duration_cast<EventLoop::SteadyClock::duration>(left));
        }
        // A whole-client pause stops the watchdog too (T10); the worker's checkpoints do not.
        while (!loop->stopped && session.paused())
            co_await loop->wake.wait_until(session.paused_until());
        if (loop->stopped)
            break;
        bool held = true;
        try {
            held = co_await state->renew(session, key, loop->lease);
        } catch (const RedisError&) {
            // Unknown outcome or refused: try again at the next tick rather than give up.
        }
        if (!held)
            break;  // expired or taken over: nothing of ours is left to renew
    }
    loop->finished = true;
    if (--state->running == 0 && state->idle)
        state->idle->set();
}

// ---- waiting for an unlock message --------------------------------------------------------------

namespace {

// One acquire's subscription to its lock's channel on the session's subscriber connection.
class UnlockListener {
  public:
    UnlockListener(Session& session, std::string channel, bool& in_use)
        : session_(session), channel_(std::move(channel)), in_use_(in_use) {}

    // True if subscribed; false means the caller polls (connection failed, or in use).
    Task<bool> subscribe() {
        if (in_use_)
            co_return false;
        in_use_ = true;
        owner_ = true;
        auto& sub = session_.subscriber();
        // Messages left from an earlier wait would wake this one for nothing.
        while (sub.connected()) {
            auto stale = co_await sub.next_message(EventLoop::now());
            if (!stale)
                break;
        }
        try {
            co_await sub.command("SUBSCRIBE", channel_);
            generation_ = sub.generation();
            subscribed_ = true;
        } catch (const RedisError&) {
            subscribed_ = false;
        }
        co_return subscribed_;
    }

    bool subscribed() {
        auto& sub = session_.subscriber();
        if (subscribed_ && (!sub.connected() || sub.generation() != generation_))
            subscribed_ = false;  // the connection failed since: the subscription went with it
        return subscribed_;
    }

    // Until a message on the channel or `deadline`; true if a message came. A subscriber that
    // fails while waiting ends the wait early (the caller then polls).
    Task<bool> wait(EventLoop::TimePoint deadline) {
        auto& sub = session_.subscriber();
        for (;;) {
            std::optional<PubSubMessage> message;
            bool failed = false;
            try {
                message = co_await sub.next_message(deadline);
            } catch (const IoError&) {
                failed = true;
            }
            if (failed) {
                subscribed_ = false;
                co_return false;
            }
            if (!message)
                co_return false;
            if (message->channel == channel_)
                co_return true;
            // A message for a channel subscribed earlier: not ours.
        }
    }

    // UNSUBSCRIBE (the connection stays, for the next wait). Errors only drop the connection.
    Task<void> close() {
        if (subscribed()) {
            try {
                co_await session_.subscriber().command("UNSUBSCRIBE", channel_);
            } catch (const RedisError&) {
            }
        }
        subscribed_ = false;
        release();
    }

    // For error paths, where no co_await is possible: dropping the connection ends the
    // subscription at once.
    void abandon() {
        if (subscribed_)
            session_.subscriber().drop("subscription abandoned");
        subscribed_ = false;
        release();
    }

  private:
    void release() {
        if (owner_)
            in_use_ = false;
        owner_ = false;
    }

    Session& session_;
    std::string channel_;
    bool& in_use_;
    bool owner_ = false;
    bool subscribed_ = false;
    std::uint64_t generation_ = 0;
};

Task<AcquireResult> wait_loop(Session& session, WaitBudget& budget, UnlockListener& listener,
                              std::function<Task<AcquireAttempt>()>& attempt,
                              std::chrono::milliseconds retry_delay) {
    co_await listener.subscribe();
    // Again, now that an unlock cannot be missed: it may have happened before the SUBSCRIBE.
    AcquireAttempt tried = co_await attempt();
    for (;;) {
        if (tried.grant)
            co_return std::move(*tried.grant);
        if (budget.expired())
            co_return Denied{Denied::Why::Held};
        auto wait = std::chrono::duration_cast<EventLoop::SteadyClock::duration>(
            session.clock().to_real(budget.remaining()));
        const bool subscribed = listener.subscribed();
        if (subscribed && tried.holder_ttl.count() > 0) {
            wait = std::min<EventLoop::SteadyClock::duration>(wait, tried.holder_ttl);
        } else {
            // No subscription (or a holder without a TTL): poll.
            wait = std::min<EventLoop::SteadyClock::duration>(wait, retry_delay);
        }
        const auto deadline = EventLoop::now() + wait;
        if (subscribed) {
            co_await listener.wait(deadline);
        } else {
            co_await session.loop().sleep_until(deadline);
        }
        tried = co_await attempt();
    }
}

}  // namespace

Task<AcquireResult> acquire_with_wake_up(Session& session, const AcquireRequest& request,
                                         std::string channel,
                                         std::function<Task<AcquireAttempt>()> attempt,
                                         std::chrono::milliseconds retry_delay,
                                         bool& subscriber_in_use) {
    WaitBudget budget(session, request.wait_budget);
    AcquireAttempt first = co_await attempt();
    if (first.grant)
        co_return std::move(*first.grant);
    if (budget.expired())
        co_return Denied{Denied::Why::Held};

    UnlockListener listener(session, std::move(channel), subscriber_in_use);
    std::optional<AcquireResult> result;
    std::exception_ptr error;
    try {
        result = co_await wait_loop(session, budget, listener, attempt, retry_delay);
    } catch (...) {
        error = std::current_exception();
    }
    if (error) {
        listener.abandon();
        std::rethrow_exception(error);
    }
    co_await listener.close();
    co_return std::move(*result);
}

ScriptVerdict parse_acquire_reply(const Reply& reply) {
    if (!reply.is_array() || reply.elements.size() < 2)
        throw RedisError("unexpected reply from an acquire script");
    ScriptVerdict v;
    v.granted = reply.elements[0].as_integer() == 1;
    v.value = reply.elements[1].as_integer();
    v.reentry_flag = reply.elements.size() > 2 && reply.elements[2].as_integer() == 1;
    return v;
}

std::chrono::milliseconds unlock_latch_ttl(Session& session, const StrategyOptions& options) {
    const auto& conn = session.redis().options();
    const auto per_attempt = conn.connect_timeout + conn.command_timeout + options.retry_delay;
    return per_attempt * std::max(1, options.unlock_attempts);
}

Task<Reply> release_with_retry(Session& session, const Script& script,
                               std::vector<std::string> keys, std::vector<std::string> args,
                               const StrategyOptions& options) {
    const int attempts = std::max(1, options.unlock_attempts);
    for (int attempt = 1;; ++attempt) {
        try {
            co_return co_await run_script(session.redis(), script, keys, args);
        } catch (const IoError&) {
            if (attempt >= attempts)
                throw;
        }
        co_await session.sleep_for(options.retry_delay);
    }
}

}  // namespace lockbench
