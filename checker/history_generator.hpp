#pragma once

// Seeded synthetic histories for the checker's tests and benchmarks. HistoryGenerator: many
// processes cycling
// acquire -> read -> write read+1 -> release over a few keys against a correct lock (so the
// history is valid), with contention (fail "held"), timeouts (`info`, after which the process
// continues under a new id, as the engine does) and nemesis events, written exactly as the
// engine's history recorder writes them.

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <optional>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include <queue>

namespace lockbench::checker::testing {

struct GeneratorOptions {
    std::uint64_t seed = 1;
    int processes = 64;
    int keys = 8;
    double info_ratio = 0.002;  // of acquires: a timeout, the process id retires
};

class HistoryGenerator {
  public:
    explicit HistoryGenerator(GeneratorOptions options = {})
        : options_(options),
          rng_(options.seed),
          slots_(static_cast<std::size_t>(options.processes)),
          keys_(static_cast<std::size_t>(options.keys)) {
        for (std::size_t i = 0; i < slots_.size(); ++i)
            slots_[i].process = next_process_++;
    }

    std::uint64_t events() const { return index_; }

    // Appends the next event as one JSON line with its '\n'.
    void append_next(std::string& out) {
        time_ += 1000 + static_cast<std::int64_t>(rng_() % 50'000);
        if (index_ % 100'000 == 99'999) {
            begin(out, "info", -1, "pause", "");
            out += "\"value\":{\"target\":";
            append_int(out, slots_[rng_() % slots_.size()].process);
            out += ",\"ms\":1}";
            end(out);
            return;
        }
        Slot& slot = slots_[rng_() % slots_.size()];
        Key& key = keys_[slot.key];
        switch (slot.state) {
            case State::Idle:
                slot.key = static_cast<int>(rng_() % keys_.size());
                begin(out, "invoke", slot.process, "acquire", key_name(slot.key));
                out += "\"value\":{\"mode\":\"exclusive\",\"lease_ms\":500}";
                end(out);
                slot.state = State::Acquiring;
                return;
            case State::Acquiring:
                if (key.holder < 0 && rng_() % 1'000'000 < options_.info_ratio * 1e6) {
                    begin(out, "info", slot.process, "acquire", key_name(slot.key));
                    out += "\"value\":null";
                    end(out, "timeout");
                    slot.process = next_process_++;
                    slot.state = State::Idle;
                } else if (key.holder < 0) {
                    key.holder = slot.process;
                    slot.fence = ++key.fence;
                    begin(out, "ok", slot.process, "acquire", key_name(slot.key));
                    out += "\"value\":{\"token\":\"c";
                    append_int(out, slot.process);
                    out.push_back('-');
                    append_int(out, ++slot.grants);
                    out += "\",\"fence\":";
                    append_int(out, slot.fence);
                    out += ",\"mode\":\"exclusive\"}";
                    end(out);
                    slot.state = State::Holding;
                } else {
                    begin(out, "fail", slot.process, "acquire", key_name(slot.key));
                    out += "\"value\":null";
                    end(out, "held");
                    slot.state = State::Idle;
                }
                return;
            case State::Holding:
                begin(out, "invoke", slot.process, "read", key_name(slot.key));
                out += "\"value\":null";
                end(out);
                slot.state = State::Reading;
                return;
            case State::Reading:
                begin(out, "ok", slot.process, "read", key_name(slot.key));
                out += "\"value\":";
                if (key.counter == 0)
                    out += "null";
                else
                    append_int(out, key.counter);
                end(out);
                slot.read = key.counter;
                slot.state = State::Read;
                return;
            case State::Read:
            case State::Writing: {
                const bool invoke = slot.state == State::Read;
                begin(out, invoke ? "invoke" : "ok", slot.process, "write", key_name(slot.key));
                out += "\"value\":";
                append_int(out, slot.read + 1);
                out += ",";
                end(out, "", slot.fence);
                if (!invoke)
                    key.counter = slot.read + 1;
                slot.state = invoke ? State::Writing : State::Written;
                return;
            }
            case State::Written:
                // The hold ends at the release invoke: the next grant may come before its reply.
                key.holder = -1;
                begin(out, "invoke", slot.process, "release", key_name(slot.key));
                out += "\"value\":{\"token\":\"c";
                append_int(out, slot.process);
                out.push_back('-');
                append_int(out, slot.grants);
                out += "\"}";
                end(out);
                slot.state = State::Releasing;
                return;
            case State::Releasing:
                begin(out, "ok", slot.process, "release", key_name(slot.key));
                out += "\"value\":null";
                end(out);
                slot.state = State::Idle;
                return;
        }
    }

    std::string generate(std::uint64_t events) {
        std::string out;
        out.reserve(events * 140);
        while (index_ < events)
            append_next(out);
        return out;
    }

  private:
    enum class State { Idle, Acquiring, Holding, Reading, Read, Writing, Written, Releasing };
    struct Slot {
        std::int64_t process = 0;
        State state = State::Idle;
        int key = 0;
        std::int64_t fence = 0;
        std::int64_t read = 0;
        std::int64_t grants = 0;
    };
    struct Key {
        std::int64_t holder = -1;
        std::int64_t fence = 0;
        std::int64_t counter = 0;
    };

    static void append_int(std::string& out, std::int64_t v) {
        char buf[24];
        auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
        out.append(buf, end);
    }

    std::string key_name(int key) const { return "k" + std::to_string(key); }

    void begin(std::string& out, const char* type, std::int64_t process, const char* f,
               const std::string& key) {
        out += "{\"index\":";
        append_int(out, static_cast<std::int64_t>(index_++));
        out += ",\"type\":\"";
        out += type;
        out += "\",\"process\":";
        if (process < 0)
            out += "\"nemesis\"";
        else
            append_int(out, process);
        out += ",\"f\":\"";
        out += f;
        out += "\",\"key\":\"";
        out += key;
        out += "\",";
    }

    // After the value: time, then error and fence where there are some.
    void end(std::string& out, const char* error = "", std::int64_t fence = 0) {
        if (out.back() != ',')
            out.push_back(',');
        out += "\"time\":";
        append_int(out, time_);
        if (*error) {
            out += ",\"error\":\"";
            out += error;
            out.push_back('"');
        }
        if (fence > 0) {
            out += ",\"fence\":";
            append_int(out, fence);
        }
        out += "}\n";
    }

    GeneratorOptions options_;
    std::mt19937_64 rng_;
    std::vector<Slot> slots_;
    std::vector<Key> keys_;
    std::uint64_t index_ = 0;
    std::int64_t time_ = 0;
    std::int64_t next_process_ = 0;
};

// A Jepsen-style register history: processes read, write and cas a few registers and nothing
// is locked. Each op takes effect at a random moment between its invoke and its completion, so
// the history is linearizable (against `register`, per key); a failed cas says "mismatch", and
// now and then a completion is lost (`info`, the process id retires) whether or not the op took
// effect.
class RegisterHistoryGenerator {
  public:
    explicit RegisterHistoryGenerator(std::uint64_t seed, int processes = 5, int keys = 2)
        : rng_(seed), slots_(static_cast<std::size_t>(processes)), values_(keys) {
        for (auto& slot : slots_)
            slot.process = next_process_++;
    }

    std::string generate(std::uint64_t events) {
        std::string out;
        while (index_ < events) {
            time_ += 1000 + static_cast<std::int64_t>(rng_() % 50'000);
            Slot& slot = slots_[rng_() % slots_.size()];
            switch (slot.state) {
                case State::Idle:
                    invoke(out, slot);
                    break;
                case State::Invoked:
                    apply(slot);
                    break;
                case State::Applied:
                    complete(out, slot);
                    break;
            }
        }
        return out;
    }

  private:
    enum class State { Idle, Invoked, Applied };
    struct Slot {
        std::int64_t process = 0;
        State state = State::Idle;
        int key = 0;
        int f = 0;  // 0 read, 1 write, 2 cas
        std::int64_t a = 0, b = 0;
        std::optional<std::int64_t> read;
        bool matched = true;  // cas
        bool lost = false;    // never took effect
    };

    void line(std::string& out, const char* type, const Slot& slot, const std::string& value,
              const char* error = "") {
        static const char* const names[] = {"read", "write", "cas"};
        out += "{\"index\":" + std::to_string(index_++) + ",\"type\":\"" + type +
               "\",\"process\":" + std::to_string(slot.process) + ",\"f\":\"" + names[slot.f] +
               "\",\"key\":\"r" + std::to_string(slot.key) + "\",\"value\":" + value +
               ",\"time\":" + std::to_string(time_);
        if (*error)
            out += std::string(",\"error\":\"") + error + "\"";
        out += "}\n";
    }

    std::string input(const Slot& slot) const {
        if (slot.f == 1)
            return std::to_string(slot.a);
        if (slot.f == 2)
            return "[" + std::to_string(slot.a) + "," + std::to_string(slot.b) + "]";
        return "null";
    }

    void invoke(std::string& out, Slot& slot) {
        slot.key = static_cast<int>(rng_() % values_.size());
        slot.f = static_cast<int>(rng_() % 3);
        slot.a = static_cast<std::int64_t>(rng_() % 5);
        slot.b = static_cast<std::int64_t>(rng_() % 5);
        line(out, "invoke", slot, input(slot));
        slot.state = State::Invoked;
    }

    void apply(Slot& slot) {
        auto& value = values_[static_cast<std::size_t>(slot.key)];
        slot.lost = rng_() % 50 == 0;
        if (slot.lost) {
            // never reaches the register
        } else if (slot.f == 0) {
            slot.read = value;
        } else if (slot.f == 1) {
            value = slot.a;
        } else {
            slot.matched = value == slot.a;
            if (slot.matched)
                value = slot.b;
        }
        slot.state = State::Applied;
    }

    void complete(std::string& out, Slot& slot) {
        if (slot.lost || rng_() % 40 == 0) {
            // The reply is lost, whether or not the op took effect.
            line(out, "info", slot, "null", "timeout");
            slot.process = next_process_++;
        } else if (slot.f == 0) {
            line(out, "ok", slot, slot.read ? std::to_string(*slot.read) : "null");
        } else if (slot.f == 2 && !slot.matched) {
            line(out, "fail", slot, input(slot), "mismatch");
        } else {
            line(out, "ok", slot, input(slot));
        }
        slot.state = State::Idle;
    }

    std::mt19937_64 rng_;
    std::vector<Slot> slots_;
    std::vector<std::optional<std::int64_t>> values_;
    std::uint64_t index_ = 0;
    std::int64_t time_ = 0;
    std::int64_t next_process_ = 0;
};

// Clients that wait for a lease lock, as `lockbench run --wait-ms` makes them: each acquire waits
// until the lock is free (polling, so whoever polls first wins) or its wait runs out (fail "held":
// the lock was held then), holds it briefly, and releases it. Now and then a reply is lost (in
// doubt, `info`; the process id retires): an acquire granted or not, a release that never reached
// the server, whose lock then stays until its lease runs out. The lock is a correct lease lock,
// so the history is linearizable against `mutex`; with hundreds of clients on one key, hundreds of
// acquires wait at once - the everyday shape of a lock benchmark.
struct WaitingOptions {
    std::uint64_t seed = 1;
    int processes = 50;
    int keys = 1;
    std::int64_t lease_ms = 1000;
    std::int64_t wait_ms = 2000;
    std::int64_t hold_ms = 5;
    double in_doubt_ratio = 0.01;  // of acquires, and of releases: the reply is lost
};

class WaitingLockHistoryGenerator {
  public:
    explicit WaitingLockHistoryGenerator(WaitingOptions options)
        : options_(options),
          rng_(options.seed),
          clients_(static_cast<std::size_t>(options.processes)),
          locks_(static_cast<std::size_t>(options.keys)) {
        for (std::size_t c = 0; c < clients_.size(); ++c) {
            clients_[c].process = next_process_++;
            // Staggered starts, as clients connect one after another.
            schedule(static_cast<std::int64_t>(c) * 20'000, Action::Start, c);
        }
    }

    std::string generate(std::uint64_t events) {
        std::string out;
        while (index_ < events && !queue_.empty()) {
            const Timed next = queue_.top();
            queue_.pop();
            time_ = next.at;
            run(out, next);
        }
        return out;
    }

  private:
    enum class Action {
        Start,
        Grant,
        AcquireReply,
        ReleaseInvoke,
        ReleaseEffect,
        ReleaseReply,
        LeaseEnd,
        WaitDeadline
    };
    struct Timed {
        std::int64_t at;
        std::uint64_t order;  // ties run in scheduling order
        Action action;
        std::size_t who;      // a client, or a lock for LeaseEnd
        std::uint64_t grant;  // LeaseEnd, Grant: which grant or wait it is about
        bool operator>(const Timed& o) const {
            return std::tie(at, order) > std::tie(o.at, o.order);
        }
    };
    struct Client {
        std::int64_t process = 0;
        std::size_t key = 0;
        bool waiting = false;
        std::uint64_t wait = 0;  // which wait a deadline belongs to
        std::uint64_t grant = 0;
        bool reply_lost = false;
        std::int64_t grants = 0;
    };
    struct Lock {
        std::optional<std::size_t> holder;  // the client, while its grant lasts
        std::uint64_t grant = 0;
        std::int64_t lease_end = 0;
        bool grant_coming = false;
        std::vector<std::size_t> waiters;
    };

    std::int64_t ms(std::int64_t v) const { return v * 1'000'000; }
    std::int64_t jitter(std::int64_t max_ns) {
        return static_cast<std::int64_t>(rng_() % static_cast<std::uint64_t>(max_ns));
    }
    bool chance(double p) { return static_cast<double>(rng_() % 1'000'000) < p * 1e6; }

    void schedule(std::int64_t at, Action action, std::size_t who, std::uint64_t grant = 0) {
        queue_.push({at, order_++, action, who, grant});
    }

    void free_lock(std::size_t key) {
        Lock& lock = locks_[key];
        lock.holder.reset();
        offer(key);
    }

    // The first waiter to poll after the lock comes free gets it.
    void offer(std::size_t key) {
        Lock& lock = locks_[key];
        if (lock.holder || lock.grant_coming || lock.waiters.empty())
            return;
        lock.grant_coming = true;
        const std::size_t winner = lock.waiters[rng_() % lock.waiters.size()];
        schedule(time_ + 10'000 + jitter(ms(1)), Action::Grant, winner, clients_[winner].wait);
    }

    void retire(Client& client) { client.process = next_process_++; }

    void run(std::string& out, const Timed& t) {
        Client& client = clients_[t.who < clients_.size() ? t.who : 0];
        switch (t.action) {
            case Action::Start: {
                client.key = rng_() % locks_.size();
                client.waiting = true;
                ++client.wait;
                locks_[client.key].waiters.push_back(t.who);
                line(out, "invoke", client.process, "acquire", client.key,
                     "{\"mode\":\"exclusive\",\"lease_ms\":" + std::to_string(options_.lease_ms) +
                         "}");
                schedule(time_ + ms(options_.wait_ms), Action::WaitDeadline, t.who, client.wait);
                offer(client.key);
                return;
            }
            case Action::Grant: {
                Lock& lock = locks_[client.key];
                lock.grant_coming = false;
                if (!client.waiting || client.wait != t.grant) {
                    offer(client.key);
                    return;
                }
                client.waiting = false;
                std::erase(lock.waiters, t.who);
                lock.holder = t.who;
                lock.grant = ++grant_count_;
                lock.lease_end = time_ + ms(options_.lease_ms);
                client.grant = lock.grant;
                schedule(lock.lease_end, Action::LeaseEnd, client.key, lock.grant);
                client.reply_lost = chance(options_.in_doubt_ratio);
                schedule(time_ + 50'000 + jitter(250'000), Action::AcquireReply, t.who);
                return;
            }
            case Action::AcquireReply:
                if (client.reply_lost) {
                    // Granted, but the client never learns it: the lock waits for its lease.
                    line(out, "info", client.process, "acquire", client.key, "null", "timeout");
                    retire(client);
                    schedule(time_ + jitter(ms(1)) + 1, Action::Start, t.who);
                    return;
                }
                ++client.grants;
                line(out, "ok", client.process, "acquire", client.key,
                     "{\"token\":\"" + token(client) + "\",\"mode\":\"exclusive\"}");
                schedule(time_ + ms(options_.hold_ms) + jitter(ms(1)), Action::ReleaseInvoke,
                         t.who);
                return;
            case Action::ReleaseInvoke:
                line(out, "invoke", client.process, "release", client.key,
                     "{\"token\":\"" + token(client) + "\"}");
                client.reply_lost = chance(options_.in_doubt_ratio);
                if (client.reply_lost) {
                    // Never reached the server: the lock is left to its lease.
                    schedule(time_ + ms(1) + jitter(ms(1)), Action::ReleaseReply, t.who);
                } else {
                    schedule(time_ + 20'000 + jitter(200'000), Action::ReleaseEffect, t.who);
                }
                return;
            case Action::ReleaseEffect:
                if (locks_[client.key].holder == t.who && locks_[client.key].grant == client.grant)
                    free_lock(client.key);
                schedule(time_ + 20'000 + jitter(200'000), Action::ReleaseReply, t.who);
                return;
            case Action::ReleaseReply:
                if (client.reply_lost) {
                    line(out, "info", client.process, "release", client.key, "null", "timeout");
                    retire(client);
                } else {
                    line(out, "ok", client.process, "release", client.key, "null");
                }
                schedule(time_ + jitter(ms(1)) + 1, Action::Start, t.who);
                return;
            case Action::LeaseEnd: {
                Lock& lock = locks_[t.who];
                if (lock.holder && lock.grant == t.grant)
                    free_lock(t.who);
                return;
            }
            case Action::WaitDeadline:
                if (!client.waiting || client.wait != t.grant)
                    return;
                if (!locks_[client.key].holder) {
                    // Free at this moment: the next poll gets it, so keep waiting briefly.
                    schedule(time_ + ms(1), Action::WaitDeadline, t.who, t.grant);
                    return;
                }
                client.waiting = false;
                std::erase(locks_[client.key].waiters, t.who);
                if (chance(options_.in_doubt_ratio)) {
                    line(out, "info", client.process, "acquire", client.key, "null", "timeout");
                    retire(client);
                } else {
                    line(out, "fail", client.process, "acquire", client.key, "null", "held");
                }
                schedule(time_ + jitter(ms(1)) + 1, Action::Start, t.who);
                return;
        }
    }

    std::string token(const Client& client) const {
        return "c" + std::to_string(client.process) + "-" + std::to_string(client.grants);
    }

    void line(std::string& out, const char* type, std::int64_t process, const char* f,
              std::size_t key, const std::string& value, const char* error = "") {
        out += "{\"index\":" + std::to_string(index_++) + ",\"type\":\"" + type +
               "\",\"process\":" + std::to_string(process) + ",\"f\":\"" + f + "\",\"key\":\"k" +
               std::to_string(key) + "\",\"value\":" + value + ",\"time\":" + std::to_string(time_);
        if (*error)
            out += std::string(",\"error\":\"") + error + "\"";
        out += "}\n";
    }

    WaitingOptions options_;
    std::mt19937_64 rng_;
    std::vector<Client> clients_;
    std::vector<Lock> locks_;
    std::priority_queue<Timed, std::vector<Timed>, std::greater<>> queue_;
    std::uint64_t order_ = 0;
    std::uint64_t grant_count_ = 0;
    std::uint64_t index_ = 0;
    std::int64_t time_ = 0;
    std::int64_t next_process_ = 0;
};

// A simulated correct register, as Jepsen's register tests drive one: `processes` clients read,
// write and cas one key, each op taking effect at a random moment inside its interval. A reply is
// lost for a share of ops (`info`, error "timeout"; the client goes on under a fresh process id):
// such an op took effect before the loss, never, or only later - a write stuck in a partition
// that lands after the client gave up (HISTORY.md: an in-doubt op may take effect at any time
// after its invoke, even after the history ends). Values are small (0-4, so many writes write the
// same one) or unique (each write and cas writes a value no other op writes). Uncorrupted, the
// history is linearizable against `register` (with --fail-means observation: a failed cas says
// "mismatch"); `corruption` changes one read's value so that it is not.
struct SimulatedRegisterOptions {
    std::uint64_t seed = 1;
    int processes = 10;
    std::uint64_t ops = 10'000;
    double in_doubt_ratio = 0.05;  // of all ops: the reply is lost
    bool unique_values = false;
    enum class Corruption {
        None,
        ReadNeverWritten,  // a read returns a value no op ever writes
        StaleRead,         // unique values: a read returns a value overwritten before it began
    } corruption = Corruption::None;
    double corrupt_at = 0.5;  // the first read to complete after this share of the ops
};

class SimulatedRegisterGenerator {
  public:
    static constexpr std::int64_t kNeverWritten = 1'000'000'000;

    explicit SimulatedRegisterGenerator(SimulatedRegisterOptions options)
        : options_(options),
          rng_(options.seed),
          slots_(static_cast<std::size_t>(options.processes)) {
        for (auto& slot : slots_)
            slot.process = next_process_++;
    }

    // The event index of the corrupted read's completion (nullopt: nothing was corrupted).
    std::optional<std::uint64_t> corrupted_index() const { return corrupted_index_; }

    std::string generate() {
        std::string out;
        out.reserve(options_.ops * 2 * 110);
        std::uint64_t invoked = 0;
        std::size_t busy = 0;
        while (invoked < options_.ops || busy > 0) {
            time_ += 1000 + static_cast<std::int64_t>(rng_() % 50'000);
            // A delayed effect of an op whose reply was lost lands now and then.
            if (!delayed_.empty() && rng_() % 20 == 0) {
                const std::size_t i = rng_() % delayed_.size();
                apply(delayed_[i]);
                delayed_[i] = delayed_.back();
                delayed_.pop_back();
            }
            Slot& slot = slots_[rng_() % slots_.size()];
            switch (slot.state) {
                case State::Idle:
                    if (invoked == options_.ops)
                        break;
                    invoke(out, slot);
                    ++invoked;
                    ++busy;
                    break;
                case State::Invoked:
                    if (slot.op.lost_reply && slot.op.f != 0) {
                        const auto fate = rng_() % 3;  // before the loss, never, or later
                        if (fate == 0)
                            apply(slot.op);
                        else if (fate == 2)
                            delayed_.push_back(slot.op);
                    } else {
                        apply(slot.op);
                    }
                    slot.state = State::Applied;
                    break;
                case State::Applied:
                    complete(out, slot, invoked);
                    --busy;
                    break;
            }
        }
        return out;
    }

  private:
    enum class State { Idle, Invoked, Applied };
    struct Op {
        int f = 0;  // 0 read, 1 write, 2 cas
        std::int64_t a = 0, b = 0;
        std::optional<std::int64_t> read;
        bool matched = true;
        bool lost_reply = false;
        std::uint64_t invoke_index = 0;
    };
    struct Slot {
        std::int64_t process = 0;
        State state = State::Idle;
        Op op;
    };
    struct CompletedWrite {
        std::int64_t value;
        std::uint64_t invoke_index;
        std::uint64_t complete_index;
    };

    std::int64_t small_value() { return static_cast<std::int64_t>(rng_() % 5); }

    void invoke(std::string& out, Slot& slot) {
        Op& op = slot.op;
        op = Op{};
        const auto which = rng_() % 10;
        op.f = which < 5 ? 0 : which < 8 ? 1 : 2;
        op.lost_reply = static_cast<double>(rng_() % 1'000'000) < options_.in_doubt_ratio * 1e6;
        if (options_.unique_values) {
            if (op.f == 2) {
                // Mostly the value there now, so that most cas ops succeed.
                op.a = value_ && rng_() % 10 < 7
                           ? *value_
                           : static_cast<std::int64_t>(rng_() % (next_value_ + 1));
            } else {
                op.a = ++next_value_;
            }
            op.b = op.f == 2 ? ++next_value_ : 0;
        } else {
            op.a = small_value();
            op.b = small_value();
        }
        op.invoke_index = index_;
        line(out, "invoke", slot.process, op.f, input(op));
        slot.state = State::Invoked;
    }

    void apply(Op& op) {
        if (op.f == 0) {
            op.read = value_;
        } else if (op.f == 1) {
            value_ = op.a;
        } else {
            op.matched = value_ == op.a;
            if (op.matched)
                value_ = op.b;
        }
    }

    void complete(std::string& out, Slot& slot, std::uint64_t invoked) {
        Op& op = slot.op;
        slot.state = State::Idle;
        if (op.lost_reply) {
            line(out, "info", slot.process, op.f, "null", "timeout");
            slot.process = next_process_++;
            return;
        }
        if (op.f == 0) {
            std::optional<std::int64_t> shown = op.read;
            if (!corrupted_index_ &&
                options_.corruption != SimulatedRegisterOptions::Corruption::None &&
                static_cast<double>(invoked) >=
                    options_.corrupt_at * static_cast<double>(options_.ops)) {
                if (auto bad = corrupt(op)) {
                    shown = bad;
                    corrupted_index_ = index_;
                }
            }
            line(out, "ok", slot.process, 0, shown ? std::to_string(*shown) : "null");
        } else if (op.f == 2 && !op.matched) {
            line(out, "fail", slot.process, 2, input(op), "mismatch");
        } else {
            written_.push_back({op.f == 1 ? op.a : op.b, op.invoke_index, index_});
            line(out, "ok", slot.process, op.f, input(op));
        }
    }

    // The value the corrupted read returns instead, if this read can carry the corruption.
    std::optional<std::int64_t> corrupt(const Op& read) const {
        if (options_.corruption == SimulatedRegisterOptions::Corruption::ReadNeverWritten)
            return kNeverWritten;
        // A write that completed before the read began, and one that completed before that one
        // began: the register cannot hold the older one's value any more.
        const auto before = [&](std::uint64_t index) -> const CompletedWrite* {
            for (auto it = written_.rbegin(); it != written_.rend(); ++it) {
                if (it->complete_index < index)
                    return &*it;
            }
            return nullptr;
        };
        const CompletedWrite* newer = before(read.invoke_index);
        const CompletedWrite* older = newer ? before(newer->invoke_index) : nullptr;
        if (older == nullptr)
            return std::nullopt;
        return older->value;
    }

    static std::string input(const Op& op) {
        if (op.f == 1)
            return std::to_string(op.a);
        if (op.f == 2)
            return "[" + std::to_string(op.a) + "," + std::to_string(op.b) + "]";
        return "null";
    }

    void line(std::string& out, const char* type, std::int64_t process, int f,
              const std::string& value, const char* error = "") {
        static const char* const names[] = {"read", "write", "cas"};
        out += "{\"index\":" + std::to_string(index_++) + ",\"type\":\"" + type +
               "\",\"process\":" + std::to_string(process) + ",\"f\":\"" + names[f] +
               "\",\"key\":\"r\",\"value\":" + value + ",\"time\":" + std::to_string(time_);
        if (*error)
            out += std::string(",\"error\":\"") + error + "\"";
        out += "}\n";
    }

    SimulatedRegisterOptions options_;
    std::mt19937_64 rng_;
    std::vector<Slot> slots_;
    std::vector<Op> delayed_;
    std::vector<CompletedWrite> written_;  // ok writes and cas, in completion order
    std::optional<std::int64_t> value_;
    std::int64_t next_value_ = 0;
    std::optional<std::uint64_t> corrupted_index_;
    std::uint64_t index_ = 0;
    std::int64_t time_ = 0;
    std::int64_t next_process_ = 0;
};

}  // namespace lockbench::checker::testing
