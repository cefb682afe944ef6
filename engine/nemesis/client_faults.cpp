#include "engine/nemesis/client_faults.hpp"

#include <cstdlib>
#include <iomanip>
#include <thread>

#include "engine/clients/client.hpp"
#include "engine/topology/deployment.hpp"
#include "engine/topology/fault_proxy.hpp"
#include "strategies/external/external_strategy.hpp"

namespace lockbench {

using nlohmann::json;

std::string read_point(ObjectReader& r, const std::string& fallback) {
    static const std::vector<std::string_view> known{kAnyPoint, kAfterAcquire, kBeforeWrite,
                                                     kBeforeReleaseDelete, kReleaseReply};
    std::string point = r.string("point", fallback);
    if (std::find(known.begin(), known.end(), point) == known.end()) {
        std::string names;
        for (auto k : known)
            names += (names.empty() ? "" : "|") + std::string(k);
        r.fail(r.at("point"), "must be one of " + names + ", not \"" + point + "\"");
    }
    return point;
}

namespace {

// --clients-per-process: the stopped process serves other clients too, which stop with it -
// their workers wait, as the client's own does - and the pause's event names them.
void pause_pack_mates(NemesisContext& ctx, SimulatedClient& client, EventLoop::TimePoint until,
                      json& value) {
    const std::vector<int> mates = adapter_pack_mates(client.session());
    if (mates.empty())
        return;
    note_adapter_process_fault(client.session(), "pause-client");
    value["packed_clients"] = mates;
    for (const int mate : mates) {
        ctx.clients().run_now(static_cast<std::size_t>(mate), &client.session().loop(),
                              [until](SimulatedClient& m) { m.pause(until, true); });
    }
}

// --clients-per-process: the killed process served other clients too; each dies with it (a
// crash event per process id it held, as for the client itself) and has a successor. At once,
// before any of them hears of the dead process: one still alive would start a new one.
void crash_pack_mates(NemesisContext& ctx, SimulatedClient& client, const json& proof) {
    const std::vector<int> mates = adapter_pack_mates(client.session());
    if (mates.empty())
        return;
    note_adapter_process_fault(client.session(), "crash-client");
    expect_adapter_pack_successors(client.session());
    for (const int mate : mates) {
        ctx.clients().run_now(static_cast<std::size_t>(mate), &client.session().loop(),
                              [&ctx, &proof, packed_with = client.index()](SimulatedClient& m) {
                                  for (const auto process : m.processes_holding()) {
                                      ctx.log("crash", json{{"target", process},
                                                            {"client", m.index()},
                                                            {"packed_with", packed_with},
                                                            {"proof", proof}});
                                  }
                                  m.crash();
                              });
    }
}

}  // namespace

PauseClient::PauseClient(ObjectReader& r)
    : duration_(r.integer("duration_ms", 1000, 0, 3'600'000)),
      whole_client_(r.choice<bool>("scope", false, {{"worker", false}, {"client", true}})),
      point_(read_point(r, std::string(kBeforeWrite))) {}

void PauseClient::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.arm(point_, *this, [this, &ctx](SimulatedClient& c) {
        const auto until = EventLoop::now() + duration_;
        const auto process = c.process();
        c.pause(until, whole_client_);
        json value{{"target", process},
                   {"client", c.index()},
                   {"ms", duration_.count()},
                   {"scope", whole_client_ ? "client" : "worker"},
                   {"point", point_}};
        // A lock library's client is its adapter process: the whole-client pause is SIGSTOP,
        // proven by the process's state, and SIGCONT when it ends.
        AdapterProcess* adapter = whole_client_ ? adapter_process(c.session()) : nullptr;
        if (adapter) {
            const pid_t pid = adapter->pid();
            const bool sent = adapter->stop(until);
            std::optional<char> state = process_state(pid);
            // The signal is delivered asynchronously; the state says when it was.
            for (int i = 0; sent && state != 'T' && i < 1000; ++i) {
                std::this_thread::sleep_for(std::chrono::milliseconds(1));
                state = process_state(pid);
            }
            if (state != 'T') {
                adapter->resume();
                missed("client " + std::to_string(c.index()) + "'s adapter (pid " +
                       std::to_string(pid) + ") was not seen stopped (state " +
                       (state ? std::string(1, *state) : std::string("gone")) + ")");
                return std::chrono::milliseconds(0);
            }
            value["proof"] = {{"pid", pid}, {"signal", "SIGSTOP"}, {"state", "T"}};
            pause_pack_mates(ctx, c, until, value);
            c.session().loop().add_timer(until, [&c, pid] {
                // The process may have been replaced meanwhile (it broke, or crashed).
                if (AdapterProcess* now = adapter_process(c.session()); now && now->pid() == pid)
                    now->resume();
            });
        }
        double t = ctx.log("pause", std::move(value));
        took_effect({process});
        auto window =
            ctx.open_window("pause-client", json{{"client", c.index()}, {"process", process}}, t);
        c.session().loop().add_timer(until, [&ctx, window, process] {
            ctx.close_window(window, ctx.log("resume", json{{"target", process}}));
        });
        return std::chrono::milliseconds(0);  // the checkpoint sees the pause and waits it out
    });
}

void CrashClient::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    // Every process id of this client that still holds a grant dies with it: a grant taken
    // before an `info` is released under a later id, and nobody releases it now.
    const auto processes = client.processes_holding();
    double t = 0;
    // A lock library's client is its adapter process: SIGKILL, proven by the old pid reaped;
    // the successor gets a new process (a new pid) on its first request.
    json proof;
    if (AdapterProcess* adapter = adapter_process(client.session())) {
        const pid_t pid = adapter->pid();
        if (!adapter->crash()) {
            missed("client " + std::to_string(client.index()) + "'s adapter (pid " +
                   std::to_string(pid) + ") was killed but its pid is still there");
            return;
        }
        proof = {{"pid", pid}, {"signal", "SIGKILL"}, {"reaped", true}};
        crash_pack_mates(ctx, client, proof);
    }
    for (const auto process : processes) {
        json value{{"target", process}, {"client", client.index()}};
        if (!proof.is_null())
            value["proof"] = proof;
        t = ctx.log("crash", std::move(value));
    }
    auto window = ctx.open_window(
        "crash-client", json{{"client", client.index()}, {"process", processes.front()}}, t);
    ctx.close_window(window, t);
    client.crash();
    took_effect(processes);
}

SkewClientClock::SkewClientClock(ObjectReader& r)
    : offset_ms_(r.integer("offset_ms", 0, -86'400'000, 86'400'000)),
      drift_(r.number("drift", 0, -0.5, 10)) {}

void SkewClientClock::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.session().clock().set_offset(std::chrono::milliseconds(offset_ms_));
    client.session().clock().set_drift(drift_);
    if (AdapterClient* adapter = adapter_client(client.session());
        adapter && adapter->faketime_file) {
        skew_adapter(ctx, client);
        return;
    }
    double t = ctx.log("clock", json{{"target", client.process()},
                                     {"client", client.index()},
                                     {"offset_ms", offset_ms_},
                                     {"drift", drift_}});
    took_effect({client.process()});
    ctx.open_window("clock-skew", json{{"client", client.index()}, {"process", client.process()}},
                    t);
}

namespace {

std::int64_t unix_ms_now() {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
}

// What a skewed clock must read at real time `real` (Unix ms): the offset, plus the drift since
// the skew.
struct SkewedClock {
    std::int64_t offset_ms = 0;
    double drift = 0;
    std::int64_t since_ms = 0;

    std::int64_t at(std::int64_t real) const {
        return real + offset_ms +
               static_cast<std::int64_t>(static_cast<double>(real - since_ms) * drift);
    }
};

// One asking of an adapter's time: the proof's reading, or why it fails.
struct AdapterTimeReading {
    std::int64_t before = 0, after = 0;
    std::optional<std::int64_t> seen;
    std::string why;
    bool shows = false;  // within 50 ms of the skewed clock over the asking
};

Task<AdapterTimeReading> read_adapter_time(Session& session, SkewedClock expected) {
    AdapterTimeReading r;
    r.before = unix_ms_now();
    try {
        r.seen = co_await adapter_time(session);
    } catch (const std::exception& e) {
        r.why = e.what();
    }
    r.after = unix_ms_now();
    r.shows =
        r.seen && *r.seen >= expected.at(r.before) - 50 && *r.seen <= expected.at(r.after) + 50;
    co_return r;
}

// Why the fault missed, for a reading that does not show `what`.
std::string adapter_skew_missed(int client_index, const AdapterTimeReading& r,
                                const std::string& what) {
    return "client " + std::to_string(client_index) + "'s adapter " +
           (r.seen ? "reports " + std::to_string(*r.seen - (r.before + r.after) / 2) +
                         " ms off, not " + what + " (does its runtime ignore libfaketime?)"
                   : "could not be asked the time: " + r.why);
}

}  // namespace

DetachedTask SkewClientClock::skew_adapter(NemesisContext& ctx, SimulatedClient& client) {
    // libfaketime reads the file on every clock call of the adapter (no cache): the offset, and
    // the drift as libfaketime's rate, hold from now on, for this process and its successors.
    const AdapterClockSkew skew{.offset = std::chrono::milliseconds(offset_ms_),
                                .drift = drift_,
                                .since = std::chrono::system_clock::now()};
    skew_adapter_clock(client.session(), skew);
    note_adapter_process_fault(client.session(), "clock-skew");
    const auto process = client.process();
    const auto index = client.index();
    const SkewedClock expected{.offset_ms = offset_ms_,
                               .drift = drift_,
                               .since_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                                               skew.since.time_since_epoch())
                                               .count()};
    const AdapterTimeReading first = co_await read_adapter_time(client.session(), expected);
    if (!first.shows) {
        missed(adapter_skew_missed(index, first, "the offset"));
        co_return;
    }
    json proof{{"via", "libfaketime"},
               {"adapter_unix_ms", *first.seen},
               {"lockbench_unix_ms", (first.before + first.after) / 2},
               {"drift_applied", true}};
    if (drift_ != 0) {
        // A drift shows only over time: 300 ms later the adapter's clock must have gained
        // 300 ms x drift more (libfaketime's rate also shortens the adapter's own sleeps).
        co_await client.session().loop().sleep_for(std::chrono::milliseconds(300));
        const AdapterTimeReading later = co_await read_adapter_time(client.session(), expected);
        if (!later.shows) {
            missed(adapter_skew_missed(index, later, "the offset plus the drift since the skew"));
            co_return;
        }
        proof["later"] = {{"adapter_unix_ms", *later.seen},
                          {"lockbench_unix_ms", (later.before + later.after) / 2}};
    }
    double t = ctx.log("clock", json{{"target", process},
                                     {"client", index},
                                     {"offset_ms", offset_ms_},
                                     {"drift", drift_},
                                     {"proof", std::move(proof)}});
    took_effect({process});
    ctx.open_window("clock-skew", json{{"client", index}, {"process", process}}, t);
}

StallClient::StallClient(ObjectReader& r)
    : point_(read_point(r, std::string(kBeforeWrite))),
      duration_(r.integer("duration_ms", 1000, 0, 3'600'000)),
      resume_at_next_grant_(
          r.choice<bool>("resume", false, {{"after-duration", false}, {"at-next-grant", true}})) {}

void StallClient::on_grant(SimulatedClient& /*client*/, const std::string& key) {
    if (target().key.empty() || key == target().key)
        last_grant_ns_.store(EventLoop::now().time_since_epoch().count());
}

void StallClient::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.arm(point_, *this, [this, &ctx](SimulatedClient& c) {
        json value{{"target", c.process()},
                   {"client", c.index()},
                   {"point", point_},
                   {"ms", duration_.count()}};
        if (resume_at_next_grant_) {
            value["resume"] = "at-next-grant";
            const auto end = EventLoop::now() + duration_;
            c.stall_until(
                [this, end] { return last_grant_ns_.load() >= end.time_since_epoch().count(); },
                end + std::chrono::seconds(10));
        }
        double t = ctx.log("stall", std::move(value));
        took_effect({c.process()});
        auto window = ctx.open_window("stall", json{{"client", c.index()}, {"point", point_}}, t);
        ctx.close_window(window, t + static_cast<double>(duration_.count()) / 1000.0);
        return duration_;
    });
}

PartitionClient::PartitionClient(ObjectReader& r)
    : duration_(r.integer("duration_ms", 2000, 1, 3'600'000)),
      point_(read_point(r, std::string(kAfterAcquire))) {}

void PartitionClient::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.arm(point_, *this, [this, &ctx](SimulatedClient& c) {
        const auto until = EventLoop::now() + duration_;
        const auto process = c.process();
        if (!c.session().partition_until(until)) {
            missed("client " + std::to_string(c.index()) + " has no ZooKeeper connection to cut");
            return std::chrono::milliseconds(0);
        }
        const double t = ctx.log("partition-client", json{{"target", process},
                                                          {"client", c.index()},
                                                          {"from", "zookeeper"},
                                                          {"ms", duration_.count()},
                                                          {"point", point_}});
        took_effect({process});
        auto window = ctx.open_window("partition-client",
                                      json{{"client", c.index()}, {"process", process}}, t);
        c.session().loop().add_timer(until, [&ctx, window, process] {
            ctx.close_window(window, ctx.log("heal-client", json{{"target", process}}));
        });
        return std::chrono::milliseconds(0);
    });
}

DelayWrite::DelayWrite(ObjectReader& r) : delay_(r.integer("delay_ms", 800, 1, 600'000)) {}

void DelayWrite::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.arm(std::string(kBeforeWrite), *this, [this, &ctx](SimulatedClient& c) {
        FaultProxy* proxy = ctx.deployment().resource_proxy.get();
        // The write is the next request on the resource's connection, which the read before it
        // left connected: the proxy tells its packets by the connection's port.
        const int port = c.session().resource().local_port();
        if (!proxy || port == 0) {
            missed("client " + std::to_string(c.index()) +
                   " had no connection to the resource's own server to delay");
            return std::chrono::milliseconds(0);
        }
        proxy->delay_next_request_from(port, delay_);
        const auto process = c.process();
        const double t =
            ctx.log("delay-write",
                    json{{"target", process}, {"client", c.index()}, {"ms", delay_.count()}});
        took_effect({process});
        auto window =
            ctx.open_window("delay-write", json{{"client", c.index()}, {"process", process}}, t);
        ctx.close_window(window, t + static_cast<double>(delay_.count()) / 1000.0);
        return std::chrono::milliseconds(0);
    });
}

void LoseReleaseReply::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.arm(std::string(kReleaseReply), *this, [this, &ctx](SimulatedClient& c) {
        c.lose_release_reply();
        double t =
            ctx.log("lose-release-reply", json{{"target", c.process()}, {"client", c.index()}});
        took_effect({c.process()});
        auto window = ctx.open_window("lose-release-reply",
                                      json{{"client", c.index()}, {"process", c.process()}}, t);
        ctx.close_window(window, t);
        return std::chrono::milliseconds(0);
    });
}

}  // namespace lockbench
