#include "engine/clients/client.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "checker/history_words.hpp"
#include "engine/clients/arrivals.hpp"
#include "engine/nemesis/fault.hpp"
#include "engine/nemesis/nemesis.hpp"
#include "engine/topology/cluster.hpp"
#include "strategies/external/external_strategy.hpp"
#include "strategies/registry.hpp"

namespace lockbench {

using namespace std::chrono_literals;

namespace {
void append_decimal(std::string& out, std::int64_t v) {
    char digits[24];
    const char* end = std::to_chars(digits, digits + sizeof digits, v).ptr;
    // A count, not an iterator range: append(first, last) goes through replace(), which costs
    // as much as the digits themselves.
    out.append(digits, static_cast<std::size_t>(end - digits));
}
}  // namespace

std::string_view to_string(Op op) {
    switch (op) {
        case Op::Acquire:
            return "acquire";
        case Op::Release:
            return "release";
        case Op::Read:
            return "read";
        case Op::Write:
            return "write";
        case Op::Count:
            break;
    }
    return "?";
}

Failure failure_of(const RedisError& e) {
    // A connection that was never made sent nothing; any other I/O failure may have come after
    // the server ran the command.
    const bool maybe_ran =
        dynamic_cast<const IoError*>(&e) && !dynamic_cast<const ConnectError*>(&e);
    return {maybe_ran ? EventType::Info : EventType::Fail, e.what()};
}

void ClientStats::count(Op op, EventType outcome) {
    auto& c = ops[static_cast<std::size_t>(op)];
    if (outcome == EventType::Ok)
        ++c.ok;
    if (outcome == EventType::Fail)
        ++c.fail;
    if (outcome == EventType::Info)
        ++c.info;
}

void ClientStats::add_cycle(std::size_t second, std::size_t client) {
    ++cycles;
    if (cycles_per_second.size() <= second)
        cycles_per_second.resize(second + 1, 0);
    ++cycles_per_second[second];
    if (cycles_per_client.size() <= client)
        cycles_per_client.resize(client + 1, 0);
    ++cycles_per_client[client];
}

void ClientStats::add_error(std::size_t second) {
    if (errors_per_second.size() <= second)
        errors_per_second.resize(second + 1, 0);
    ++errors_per_second[second];
}

void ClientStats::merge(const ClientStats& other) {
    acquire_latency.merge(other.acquire_latency);
    release_latency.merge(other.release_latency);
    acquire_latency_corrected.merge(other.acquire_latency_corrected);
    arrivals_due += other.arrivals_due;
    arrivals_started += other.arrivals_started;
    clients_due += other.clients_due;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        ops[i].ok += other.ops[i].ok;
        ops[i].fail += other.ops[i].fail;
        ops[i].info += other.ops[i].info;
    }
    cycles += other.cycles;
    clients_answered += other.clients_answered;
    auto add = [](std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& from) {
        if (into.size() < from.size())
            into.resize(from.size(), 0);
        for (std::size_t i = 0; i < from.size(); ++i)
            into[i] += from[i];
    };
    add(cycles_per_second, other.cycles_per_second);
    add(cycles_per_client, other.cycles_per_client);
    add(errors_per_second, other.errors_per_second);
}

SimulatedClient::SimulatedClient(ClientEnvironment& env, int index, ClientStats& stats,
                                 std::uint64_t seed)
    : env_(env),
      index_(index),
      process_(index),
      stats_(stats),
      rng_(seed),
      resource_(env.workload.resource == ResourceKind::Fenced) {
    start_incarnation(Clock());
}

void SimulatedClient::start_incarnation(Clock clock) {
    session_ = env_.make_session(index_, incarnation_, std::move(clock));
    if (redirected_to_)
        session_->redirect(0, *redirected_to_);
    session_->set_checkpoint_hook([this](std::string_view point) { return on_checkpoint(point); });
    // lockbench's own ZooKeeper recipes report their in-doubt acquires' nodes as an adapter does.
    session_->set_late_grant_hook(
        [this](const std::string& key, std::string_view phase, bool ok, const std::string& token) {
            record_library_late_grant(key, std::string(phase), ok, token, {});
        });
    strategy_ = make_strategy(env_.workload.strategy);
}

void SimulatedClient::arm(std::string point, Fault& fault, FaultEffect effect) {
    armed_.push_back(Armed{std::move(point), &fault, std::move(effect)});
}

std::chrono::milliseconds SimulatedClient::on_checkpoint(std::string_view point) {
    if (crashed_)
        throw ClientCrashed{};
    std::chrono::milliseconds stall{0};
    // Take the due faults out first: an effect may arm another.
    std::vector<Armed> due;
    for (auto it = armed_.begin(); it != armed_.end();) {
        if (it->point == point || it->point == kAnyPoint) {
            due.push_back(std::move(*it));
            it = armed_.erase(it);
        } else {
            ++it;
        }
    }
    for (auto& a : due)
        stall = std::max(stall, a.effect(*this));
    if (stalled_until_) {
        if (stall.count() == 0 && (stalled_until_() || EventLoop::now() >= stalled_deadline_))
            stalled_until_ = nullptr;
        else
            stall = std::max(stall, std::chrono::milliseconds(1));
    }
    if (worker_paused_until_ != EventLoop::TimePoint{}) {  // one clock read less per checkpoint
        if (const auto now = EventLoop::now(); worker_paused_until_ > now) {
            stall = std::max(
                stall, std::chrono::ceil<std::chrono::milliseconds>(worker_paused_until_ - now));
        }
    }
    return stall;
}

void SimulatedClient::disarm_hold_faults(const std::function<std::string()>& why) {
    for (auto it = armed_.begin(); it != armed_.end();) {
        if (it->fault->target().kind == FaultTarget::Kind::Holder) {
            it->fault->missed(why());
            if (env_.nemesis)
                env_.nemesis->rearm(*it->fault);
            it = armed_.erase(it);
        } else {
            ++it;
        }
    }
}

void SimulatedClient::pause(EventLoop::TimePoint until, bool whole_client) {
    worker_paused_until_ = until;
    if (whole_client)
        session_->pause_until(until);
}

void SimulatedClient::crash() {
    crashed_ = true;
    session_->kill("client crashed");
}

std::vector<std::int64_t> SimulatedClient::processes_holding() const {
    std::vector<std::int64_t> out{process_};
    for (const auto& h : held_) {
        if (std::find(out.begin(), out.end(), h.process) == out.end())
            out.push_back(h.process);
    }
    return out;
}

bool SimulatedClient::record_library_lost(const std::string& key, const std::string& token,
                                          const std::string& text) {
    if (!env_.history)
        return false;
    // The grant it names, if the client still holds it: its process id and the key as the
    // history names it. Otherwise (already released), the current process and the key unprefixed.
    std::int64_t process = process_;
    std::string history_key =
        key.starts_with(env_.key_prefix) ? key.substr(env_.key_prefix.size()) : key;
    for (const Held& h : held_) {
        if (h.grant.token == token) {
            process = h.process;
            history_key = h.key;
            break;
        }
    }
    HistoryEvent e;
    e.type = EventType::Info;
    e.process = HistoryEvent::kLibrary;
    e.f = "lost";
    e.key = std::move(history_key);
    e.value = nlohmann::json{{"process", process}, {"token", token}, {"text", text}}.dump(
        -1, ' ', false, nlohmann::json::error_handler_t::replace);
    env_.history->record(std::move(e));
    return true;
}

bool SimulatedClient::record_library_late_grant(const std::string& key, const std::string& phase,
                                                bool ok, const std::string& token,
                                                const std::string& text,
                                                std::optional<std::int64_t> request) {
    if (!env_.history || (phase != "granted" && phase != "released" && phase != "abandoned"))
        return false;
    const std::string history_key =
        key.starts_with(env_.key_prefix) ? key.substr(env_.key_prefix.size()) : key;
    // The acquire the adapter names by its request's id; without one, the oldest first: a
    // library grants waiting acquires in the order they asked.
    const auto take = [&](std::vector<InDoubtAcquire>& from) -> std::optional<InDoubtAcquire> {
        auto it = std::find_if(from.begin(), from.end(), [&](const InDoubtAcquire& a) {
            return a.key == history_key && (!request || !a.request || a.request == request) &&
                   (token.empty() || a.token.empty() || a.token == token);
        });
        if (it == from.end())
            return std::nullopt;
        InDoubtAcquire found = *it;
        from.erase(it);
        return found;
    };
    std::optional<InDoubtAcquire> acquire;
    if (phase == "abandoned") {
        // It claims nothing of an acquire that was not in doubt: passed over unrecorded.
        acquire = take(in_doubt_acquires_);
        if (!acquire && acquire_in_flight_ && acquire_in_flight_->key == history_key &&
            (!request || adapter_acquire_request(*session_) == request))
            acquire = acquire_in_flight_;
        if (!acquire)
            return false;
    } else if (phase == "granted") {
        acquire = take(in_doubt_acquires_);
        // The grant can overtake the `timeout` answer's recording: the acquire is still in flight.
        if (!acquire && acquire_in_flight_ && acquire_in_flight_->key == history_key &&
            (!request || adapter_acquire_request(*session_) == request)) {
            acquire = acquire_in_flight_;
            acquire->request = request;
        }
        if (acquire) {
            acquire->token = token;
            late_grants_.push_back(*acquire);
        }
    } else {
        acquire = take(late_grants_);
    }
    nlohmann::json value{{"process", acquire ? acquire->process : process_}, {"phase", phase}};
    if (!token.empty())
        value["token"] = token;
    if (phase == "released")
        value["ok"] = ok;
    if (!text.empty())
        value["text"] = text;
    HistoryEvent e;
    e.type = EventType::Info;
    e.process = HistoryEvent::kLibrary;
    e.f = "late-grant";
    e.key = history_key;
    e.value = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    env_.history->record(std::move(e));
    return true;
}

void SimulatedClient::redirect(const Endpoint& endpoint) {
    redirected_to_ = endpoint;
    session_->redirect(0, endpoint);
}

Task<void> SimulatedClient::reincarnate() {
    // The dead process's background work (a watchdog) dies with it.
    co_await strategy_->shutdown(*session_);
    disarm_hold_faults([] { return "the holder crashed before reaching the fault's point"; });
    held_.clear();
    stalled_until_ = nullptr;
    // The dead process's library grants nothing more.
    in_doubt_acquires_.clear();
    late_grants_.clear();
    acquire_in_flight_.reset();
    ++incarnation_;
    crashed_ = false;
    worker_paused_until_ = {};
    info_in_cycle_ = false;
    process_ = env_.next_process.fetch_add(1);
    // The machine's clock outlives the process: a skew stays (T9).
    start_incarnation(session_->clock());
}

std::size_t SimulatedClient::second(EventLoop::TimePoint at) const {
    return at <= env_.start
               ? 0
               : static_cast<std::size_t>(
                     std::chrono::duration_cast<std::chrono::seconds>(at - env_.start).count());
}

EventLoop::TimePoint SimulatedClient::record_failure(Op op, std::string_view f,
                                                     const std::string& key, std::string_view value,
                                                     const Failure& failure,
                                                     std::optional<std::int64_t> fence) {
    const auto at = record(failure.type, f, key, value, failure.error, fence);
    stats_.count(op, failure.type);
    if (failure.type == EventType::Fail)
        note_error();  // an info notes its own (record)
    return at;
}

void SimulatedClient::finish_arrival(EventLoop::TimePoint at) {
    if (const auto due = std::exchange(arrival_due_, std::nullopt))
        stats_.acquire_latency_corrected.record(at - *due);
}

void SimulatedClient::note_answer() {
    if (!std::exchange(answered_, true))
        ++stats_.clients_answered;
}

void SimulatedClient::note_error() {
    stats_.add_error(second(last_recorded_at_));  // every error is recorded first
    env_.live_errors.fetch_add(1, std::memory_order_relaxed);
}

EventLoop::TimePoint SimulatedClient::record(EventType type, std::string_view f,
                                             const std::string& key, std::string_view value,
                                             std::string_view error,
                                             std::optional<std::int64_t> fence) {
    if (crashed_)  // a crashed process says nothing more: its op stays in flight
        return last_recorded_at_ = EventLoop::now();
    const auto at = last_recorded_at_ =
        env_.start + std::chrono::nanoseconds(env_.history->record(HistoryEventView{
                         .type = type,
                         .process = process_,
                         .f = f,
                         .key = key,
                         .value = value,
                         .clock = &session_->clock(),
                         .error = error,
                         .fence = fence,
                     }));
    if (f == "acquire") {
        // An adapter may report, later, that the library granted an acquire answered in doubt.
        if (type == EventType::Invoke)
            acquire_in_flight_ = InDoubtAcquire{key, process_, {}};
        else
            acquire_in_flight_.reset();
        if (type == EventType::Info) {
            // Most are never granted (the server was down): keep the recent ones only.
            if (in_doubt_acquires_.size() == kInDoubtAcquiresKept)
                in_doubt_acquires_.erase(in_doubt_acquires_.begin());
            in_doubt_acquires_.push_back({key, process_, {}, adapter_acquire_request(*session_)});
        }
    }
    if (type == EventType::Ok || type == EventType::Fail)
        note_answer();
    if (type == EventType::Info) {
        // The outcome of an `info` op is unknown forever: this process id never issues anything
        // again, and whatever the cycle still has to do runs under a new one (HISTORY.md).
        process_ = env_.next_process.fetch_add(1);
        info_in_cycle_ = true;
        note_error();
    }
    return at;
}

Task<void> SimulatedClient::connect() {
    std::minstd_rand jitter(static_cast<std::uint32_t>(index_) + 1);
    // Every lock node, then the resource's own server when it has one (T13), then the lock
    // service's own connection where the lease it applies is learned by connecting (ZooKeeper).
    const std::size_t connections = session_->node_count() + (session_->has_own_resource() ? 1 : 0);
    for (std::size_t step = 0; step <= connections; ++step) {
        while (!env_.stop.load(std::memory_order_relaxed)) {
            std::string error;
            try {
                if (step < connections) {
                    RedisConnection& c = step < session_->node_count() ? session_->redis(step)
                                                                       : session_->resource();
                    co_await c.command("PING");
                } else {
                    const std::chrono::milliseconds requested(env_.workload.lease_ms);
                    applied_lease_ = co_await strategy_->applied_lease(*session_, requested);
                }
                break;
            } catch (const RedisError& e) {
                error = e.what();
            }
            {
                std::lock_guard lock(env_.connect_error_mutex);
                env_.connect_error = error;
            }
            // Spread the retries: thousands of clients knocking at once is what overflowed the
            // server's accept backlog in the first place.
            co_await session_->loop().sleep_for(std::chrono::milliseconds(20 + jitter() % 200));
        }
    }
    env_.connected.fetch_add(1);
}

Task<void> SimulatedClient::run(StartGate& gate) {
    const auto& w = env_.workload;
    co_await connect();
    co_await gate.wait();
    std::optional<ArrivalSchedule> arrivals;
    std::uint64_t my_arrivals = 0;
    if (w.rate) {
        arrivals.emplace(
            *w.rate, w.clients, index_, env_.start,
            w.seed * 0x9E3779B97F4A7C15ULL + 0x72617465ULL + static_cast<std::uint64_t>(index_));
    }
    while (!env_.stop.load(std::memory_order_relaxed)) {
        std::optional<EventLoop::TimePoint> due;
        if (arrivals) {
            // Open loop: wait for the next arrival, or start at once when behind schedule.
            due = arrivals->next();
            if (*due >= env_.deadline)
                break;
            co_await session_->loop().sleep_until(*due);
            if (env_.stop.load(std::memory_order_relaxed))
                break;
            arrivals->advance();
            ++stats_.arrivals_due;
            ++stats_.arrivals_started;
            ++my_arrivals;
        }
        try {
            co_await cycle(due);
        } catch (const ClientCrashed&) {
            // Ends the cycle where it stood: no write, no release.
        }
        // A crash before the first acquire answered ends the arrival: it counts until then (a
        // lower bound), rather than vanishing from the corrected latency.
        if (arrival_due_)
            finish_arrival(EventLoop::now());
        if (crashed_) {
            co_await reincarnate();
            continue;
        }
        if (std::exchange(info_in_cycle_, false)) {
            // Back off while the server is down instead of flooding the history with refusals.
            consecutive_errors_ = std::min(consecutive_errors_ + 1, 8);
            co_await session_->loop().sleep_for(
                std::chrono::milliseconds(5 << consecutive_errors_));
        } else {
            consecutive_errors_ = 0;
        }
        const auto think = w.think_ms.sample(rng_) + env_.test_cycle_delay;
        if (think.count() > 0)
            co_await session_->loop().sleep_for(think);
    }
    if (arrivals) {
        // Arrivals that fell due before the end (or the interruption) but never started: the
        // clients could not keep the rate.
        const auto end = std::min(env_.deadline, EventLoop::now());
        for (; arrivals->next() < end; arrivals->advance()) {
            ++stats_.arrivals_due;
            ++my_arrivals;
        }
        // A rate under one arrival per client in the run leaves some clients nothing to do.
        if (my_arrivals > 0)
            ++stats_.clients_due;
    }
    for (auto& a : armed_) {
        a.fault->missed("client " + std::to_string(index_) + " never reached " + a.point +
                        " before the run ended");
    }
    armed_.clear();
    co_await strategy_->shutdown(*session_);
}

const std::string& SimulatedClient::acquire_invoke_value(LockMode mode) {
    // The same for every acquire of a mode: built once, not per cycle.
    std::string& value = acquire_invoke_values_[mode == LockMode::Shared ? 1 : 0];
    if (value.empty()) {
        value = "{\"mode\":\"" + std::string(to_string(mode)) + "\"";
        // The lease the lock lives by: the server's where it decides (ZooKeeper's negotiated
        // session timeout), the workload's otherwise. Learned before the run started (connect);
        // a successor after a crash asks the same server for the same, and gets it.
        if (env_.record_lease)
            value += ",\"lease_ms\":" +
                     std::to_string(
                         applied_lease_.value_or(std::chrono::milliseconds(env_.workload.lease_ms))
                             .count());
        value += "}";
    }
    return value;
}

Task<void> SimulatedClient::cycle(std::optional<EventLoop::TimePoint> due) {
    const auto& w = env_.workload;
    const std::string key = "k" + std::to_string(env_.keys.pick(rng_));
    const AcquireRequest request = acquire_request(key);
    const std::string& invoke_value = acquire_invoke_value(request.mode);
    // Every arrival counts in the corrected latency until its first acquire ends, whatever the
    // outcome: counting grants only would drop the refused and the timed-out, the slowest of all.
    arrival_due_ = due;

    held_.clear();
    for (int depth = 0; depth < w.reentry_depth; ++depth) {
        const auto started = record(EventType::Invoke, "acquire", key, invoke_value);
        const std::int64_t acquiring = process_;
        std::optional<AcquireResult> result;
        std::optional<Failure> failure;
        try {
            result = co_await strategy_->acquire(*session_, request);
        } catch (const RedisError& e) {
            failure = failure_of(e);
        }
        if (failure) {
            finish_arrival(record_failure(Op::Acquire, "acquire", key, "null", *failure));
            break;
        }
        if (auto* denied = std::get_if<Denied>(&*result)) {
            record_denial(key, *denied);
            break;
        }
        record_grant(key, std::get<Grant>(*result), started, acquiring);
    }

    if (held_.empty()) {
        if (w.release_on_failed_acquire && !info_in_cycle_) {
            // Seed 001's risk: `finally { unlock(); }` runs even though the acquire failed.
            // A named hold, not a temporary: GCC 12 destroys a temporary argument of a
            // co_await-ed coroutine call twice (the frame's copy and the expression's).
            const Held never_granted{Grant{.key = request.key, .mode = request.mode}, key,
                                     process_};
            co_await release(never_granted);
        }
        co_return;
    }

    co_await critical_section(held_.back());
    // Innermost first, as nested `finally` blocks would.
    while (!held_.empty()) {
        const Held h = std::move(held_.back());
        held_.pop_back();
        co_await release(h);
    }
    finish_cycle(key);
}

AcquireRequest SimulatedClient::acquire_request(const std::string& key) {
    const auto& w = env_.workload;
    return AcquireRequest{
        // A Redis Cluster's keys are hash-tagged, so that a strategy's keys share a slot.
        .key =
            env_.key_prefix + (w.topology.kind == TopologyKind::Cluster ? cluster_key(key) : key),
        .mode = w.shared_ratio > 0 && std::bernoulli_distribution(w.shared_ratio)(rng_)
                    ? LockMode::Shared
                    : LockMode::Exclusive,
        .lease = std::chrono::milliseconds(w.lease_ms),
        .wait_budget = std::chrono::milliseconds(w.wait_ms),
    };
}

void SimulatedClient::record_denial(const std::string& key, const Denied& denied) {
    finish_arrival(record(
        EventType::Fail, "acquire", key, "null",
        std::string(denied.why == Denied::Why::Held ? history::kHeld : to_string(denied.why))));
    stats_.count(Op::Acquire, EventType::Fail);
}

void SimulatedClient::record_grant(const std::string& key, Grant& grant,
                                   EventLoop::TimePoint started, std::int64_t acquiring) {
    // The latency is the history's own: from the invoke's time to the ok's.
    const auto granted = record(EventType::Ok, "acquire", key, grant_value(grant));
    stats_.acquire_latency.record(granted - started);
    finish_arrival(granted);  // the first acquire only: a reentry finds none in progress
    stats_.count(Op::Acquire, EventType::Ok);
    held_.push_back(Held{std::move(grant), key, acquiring});
    if (env_.nemesis)
        env_.nemesis->on_grant(*this, key);
}

const std::string& SimulatedClient::grant_value(const Grant& grant) {
    // Into the client's scratch buffer: recorded before the next co_await, so no other
    // step of this client can be using it.
    std::string& value = value_scratch_;
    value.clear();
    value += "{\"token\":";
    append_json_string(value, grant.token);
    if (grant.fence) {
        value += ",\"fence\":";
        append_decimal(value, *grant.fence);
    }
    value += ",\"mode\":\"";
    value += to_string(grant.mode);
    value += '"';
    // The lease this grant really got, where the service told (HISTORY.md): the checks
    // expire it by this one rather than the invoke's.
    if (env_.record_lease && grant.applied_lease) {
        value += ",\"lease_ms\":";
        append_decimal(value, grant.applied_lease->count());
    }
    value += '}';
    return value;
}

void SimulatedClient::finish_cycle(const std::string& key) {
    // A fault aimed at this hold whose point never came (a read that timed out ends the critical
    // section early) is the next holder's.
    disarm_hold_faults([&key] {
        return "the holder of " + key + " released it without reaching the fault's point";
    });
    // The second its last event was recorded in: a clock read less per cycle.
    stats_.add_cycle(second(last_recorded_at_), static_cast<std::size_t>(index_));
    env_.live_cycles.fetch_add(1, std::memory_order_relaxed);
}

Task<void> SimulatedClient::critical_section(const Held& held) {
    const auto& w = env_.workload;
    co_await session_->checkpoint(kAfterAcquire);
    auto hold = w.hold_ms.sample(rng_);
    // read -> hold (the work) -> write read+1: a second holder in this window loses an update.
    std::optional<std::int64_t> value;
    if (w.resource != ResourceKind::None) {
        record(EventType::Invoke, "read", held.key, "null");
        std::optional<Failure> failure;
        try {
            value = co_await resource_.read(*session_, held.grant.key);
        } catch (const RedisError& e) {
            failure = failure_of(e);
        }
        if (failure) {
            record_failure(Op::Read, "read", held.key, "null", *failure);
            co_return;
        }
        record(EventType::Ok, "read", held.key, value ? std::to_string(*value) : "null");
        stats_.count(Op::Read, EventType::Ok);
    }
    if (hold.count() > 0)
        co_await session_->loop().sleep_for(hold);
    co_await session_->checkpoint(kBeforeWrite);
    // A read lock protects reads: readers share it, so a reader that wrote would race the other
    // readers by design and every shared hold would "lose" updates.
    if (w.resource == ResourceKind::None || held.grant.mode == LockMode::Shared)
        co_return;

    const std::int64_t next = value.value_or(0) + 1;
    const auto fence = resource_.fenced() ? held.grant.fence : std::nullopt;
    const std::string v = std::to_string(next);
    record(EventType::Invoke, "write", held.key, v, {}, fence);
    bool accepted = false;
    std::optional<Failure> failure;
    try {
        accepted = co_await resource_.write(*session_, held.grant.key, next, fence);
    } catch (const RedisError& e) {
        failure = failure_of(e);
    }
    if (failure) {
        record_failure(Op::Write, "write", held.key, v, *failure, fence);
    } else if (accepted) {
        record(EventType::Ok, "write", held.key, v, {}, fence);
        stats_.count(Op::Write, EventType::Ok);
    } else {
        record(EventType::Fail, "write", held.key, v, std::string(history::kStaleFence), fence);
        stats_.count(Op::Write, EventType::Fail);
    }
}

Task<void> SimulatedClient::release(const Held& held, bool retried) {
    // The scratch buffer, as the acquire's ok: recorded at once, before anything is awaited.
    std::string& value = value_scratch_;
    value = "null";
    if (!held.grant.token.empty()) {
        value = "{\"token\":";
        append_json_string(value, held.grant.token);
        value += "}";
    }
    const auto started = record(EventType::Invoke, "release", held.key, value);
    std::optional<ReleaseOutcome> outcome;
    std::optional<Failure> failure;
    try {
        outcome = co_await strategy_->release(*session_, held.grant);
        co_await session_->checkpoint(kReleaseReply);
        if (std::exchange(lose_release_reply_, false)) {
            // The server ran the release; the client only learns that nothing came back in time.
            co_await session_->loop().sleep_for(
                std::chrono::milliseconds(env_.workload.command_timeout_ms));
            failure = Failure{EventType::Info,
                              "reply lost (nemesis): no reply within the command timeout"};
        }
    } catch (const RedisError& e) {
        failure = failure_of(e);
    }
    // Each outcome's event time ends the latency: no clock read of its own.
    if (failure) {
        stats_.release_latency.record(
            record_failure(Op::Release, "release", held.key, "null", *failure) - started);
        if (failure->type == EventType::Info && env_.workload.retry_ambiguous_release && !retried) {
            // T7: the first release may have run; a retry that is not idempotent runs it twice.
            // It is a new op of a new process id (the first one ended in `info`).
            co_await release(held, true);
        }
    } else if (*outcome == ReleaseOutcome::NotHeld) {
        stats_.release_latency.record(
            record(EventType::Fail, "release", held.key, "null", history::kNotHeld) - started);
        stats_.count(Op::Release, EventType::Fail);
    } else {
        stats_.release_latency.record(record(EventType::Ok, "release", held.key, "null") - started);
        stats_.count(Op::Release, EventType::Ok);
    }
}

}  // namespace lockbench
