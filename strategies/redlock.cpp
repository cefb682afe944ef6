#include "strategies/redlock.hpp"

#include <algorithm>
#include <random>

namespace lockbench {

namespace {

// Counts nodes that answered 1 / OK. A node that failed (down, paused, timed out) counts as "no";
// only when *every* node failed is it an error, so a dead deployment is reported, not denied.
template <typename Pred>
std::size_t count_yes(const std::vector<Settled<Reply>>& results, Pred yes) {
    std::size_t n = 0;
    for (const auto& r : results) {
        if (r.ok() && yes(*r.value))
            ++n;
    }
    return n;
}

// A connection never made sent nothing, and an error reply (CLUSTERDOWN, OOM) is the server
// refusing the command; a timeout or a dropped connection may have come after it ran.
bool did_not_run(const std::exception_ptr& error) {
    try {
        std::rethrow_exception(error);
    } catch (const ConnectError&) {
        return true;
    } catch (const ReplyError&) {
        return true;
    } catch (...) {
        return false;
    }
}

// The error of an op whose failed nodes decide its outcome. It did not happen only when no node
// acted on it and no failed node may have run it; otherwise the op may have taken effect in
// part, and its error says so (an IoError: in doubt, not failed).
[[noreturn]] void rethrow_failure(const std::vector<Settled<Reply>>& results,
                                  bool some_node_acted) {
    std::exception_ptr first;
    bool nothing_ran = !some_node_acted;
    for (const auto& r : results) {
        if (r.ok())
            continue;
        if (!first)
            first = r.error;
        nothing_ran = nothing_ran && did_not_run(r.error);
    }
    if (nothing_ran)
        std::rethrow_exception(first);
    try {
        std::rethrow_exception(first);
    } catch (const std::exception& e) {
        throw IoError(e.what());
    }
}

void rethrow_if_all_failed(const std::vector<Settled<Reply>>& results) {
    for (const auto& r : results) {
        if (r.ok())
            return;
    }
    if (!results.empty())
        rethrow_failure(results, false);
}

}  // namespace

Task<Redlock::Unlocked> Redlock::unlock_all(Session& session, const std::string& key,
                                            const std::string& token) {
    std::vector<Task<Reply>> calls;
    for (std::size_t i = 0; i < session.node_count(); ++i) {
        calls.push_back(run_script(session.redis(i), compare_and_delete_,
                                   strings(session.node_key(i, key)), strings(token),
                                   options_.node_timeout));
    }
    auto results = co_await when_all_settled(std::move(calls));
    Unlocked out;
    out.released =
        count_yes(results, [](const Reply& r) { return r.is_integer() && r.integer == 1; });
    out.silent = static_cast<std::size_t>(
        std::count_if(results.begin(), results.end(), [](const auto& r) { return !r.ok(); }));
    out.results = std::move(results);
    co_return out;
}

Task<AcquireResult> Redlock::acquire(Session& session, const AcquireRequest& request) {
    const std::string lease = std::to_string(request.lease.count());
    const auto drift = std::chrono::milliseconds(
        static_cast<std::int64_t>(static_cast<double>(request.lease.count()) *
                                  options_.drift_factor) +
        2);
    std::minstd_rand jitter(std::hash<std::string>{}(session.client_id()));
    WaitBudget budget(session, request.wait_budget);
    for (;;) {
        const std::string token = session.next_token();
        const auto start = session.clock().steady();
        std::vector<Task<Reply>> calls;
        for (std::size_t i = 0; i < session.node_count(); ++i) {
            calls.push_back([](RedisConnection& c, std::string key, std::string tok, std::string px,
                               std::chrono::milliseconds timeout) -> Task<Reply> {
                co_return co_await c.command_argv(strings("SET", key, tok, "NX", "PX", px),
                                                  timeout);
            }(session.redis(i), session.node_key(i, request.key), token, lease,
                                                                  options_.node_timeout));
        }
        auto results = co_await when_all_settled(std::move(calls));
        rethrow_if_all_failed(results);
        std::size_t locked = count_yes(results, [](const Reply& r) { return r.is_ok(); });
        auto elapsed =
            std::chrono::duration_cast<std::chrono::milliseconds>(session.clock().steady() - start);
        auto validity = request.lease - elapsed - drift;
        if (locked >= quorum(session.node_count()) && validity.count() > 0) {
            co_return Grant{
                .key = request.key, .token = token, .lease = request.lease, .validity = validity};
        }
        co_await unlock_all(session, request.key, token);
        // Never "held" (HISTORY.md: someone held the lock): even every node refusing proves no
        // quorum holder - a competing attempt that failed itself leaves its keys for a moment,
        // and a key whose release missed a partitioned node lingers there until it expires.
        if (budget.expired())
            co_return Denied{Denied::Why::NoQuorum};
        // A random delay desynchronises contenders that split the votes (redis.io).
        auto delay = std::chrono::milliseconds(
            options_.retry_delay.count() +
            static_cast<std::int64_t>(jitter() %
                                      static_cast<unsigned>(options_.retry_delay.count() + 1)));
        co_await budget.backoff(delay);
    }
}

Task<ReleaseOutcome> Redlock::release(Session& session, const Grant& grant) {
    co_await session.checkpoint(kBeforeReleaseDelete);
    const Unlocked unlocked = co_await unlock_all(session, grant.key, grant.token);
    const std::size_t needed = quorum(session.node_count());
    if (unlocked.released >= needed)
        co_return ReleaseOutcome::Released;
    if (unlocked.released + unlocked.silent >= needed)
        rethrow_failure(unlocked.results, unlocked.released > 0);  // the silent may have held it
    co_return ReleaseOutcome::NotHeld;
}

Task<bool> Redlock::renew(Session& session, const Grant& grant) {
    const auto start = session.clock().steady();
    std::vector<Task<Reply>> calls;
    for (std::size_t i = 0; i < session.node_count(); ++i) {
        calls.push_back(run_script(
            session.redis(i), compare_and_pexpire_, strings(session.node_key(i, grant.key)),
            strings(grant.token, std::to_string(grant.lease.count())), options_.node_timeout));
    }
    auto results = co_await when_all_settled(std::move(calls));
    rethrow_if_all_failed(results);
    std::size_t extended =
        count_yes(results, [](const Reply& r) { return r.is_integer() && r.integer == 1; });
    auto elapsed = session.clock().steady() - start;
    co_return extended >= quorum(session.node_count()) && elapsed < grant.lease;
}

}  // namespace lockbench
