#include "client_faults.hpp"

#include "client.hpp"

namespace lockbench {

using nlohmann::json;

PauseClient::PauseClient(ObjectReader& r)
    : duration_(r.integer("duration_ms", 1000, 0, 3'600'000)),
      whole_client_(r.choice<bool>("scope", false, {{"worker", false}, {"client", true}})) {}

void PauseClient::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    const auto until = EventLoop::now() + duration_;
    const auto process = client.process();
    client.pause(until, whole_client_);
    double t = ctx.log("pause", json{{"target", process},
                                     {"client", client.index()},
                                     {"ms", duration_.count()},
                                     {"scope", whole_client_ ? "client" : "worker"}});
    auto window =
        ctx.open_window("pause-client", json{{"client", client.index()}, {"process", process}}, t);
    client.session().loop().add_timer(until, [&ctx, window, process] {
        ctx.close_window(window, ctx.log("resume", json{{"target", process}}));
    });
}

void CrashClient::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    const auto process = client.process();
    double t = ctx.log("crash", json{{"target", process}, {"client", client.index()}});
    auto window =
        ctx.open_window("crash-client", json{{"client", client.index()}, {"process", process}}, t);
    ctx.close_window(window, t);
    client.crash();
}

SkewClientClock::SkewClientClock(ObjectReader& r)
    : offset_ms_(r.integer("offset_ms", 0, -86'400'000, 86'400'000)),
      drift_(r.number("drift", 0, -0.5, 10)) {}

void SkewClientClock::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.session().clock().set_offset(std::chrono::milliseconds(offset_ms_));
    client.session().clock().set_drift(drift_);
    double t = ctx.log("clock", json{{"target", client.process()},
                                     {"client", client.index()},
                                     {"offset_ms", offset_ms_},
                                     {"drift", drift_}});
    ctx.open_window("clock-skew", json{{"client", client.index()}, {"process", client.process()}},
                    t);
}

StallClient::StallClient(ObjectReader& r)
    : point_(r.string("point", "client.before_write")),
      duration_(r.integer("duration_ms", 1000, 0, 3'600'000)) {}

void StallClient::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.stall_at(point_, duration_);
    double t = ctx.log("stall", json{{"target", client.process()},
                                     {"client", client.index()},
                                     {"point", point_},
                                     {"ms", duration_.count()}});
    auto window = ctx.open_window("stall", json{{"client", client.index()}, {"point", point_}}, t);
    ctx.close_window(window, t + static_cast<double>(duration_.count()) / 1000.0);
}

void LoseReleaseReply::apply_to_client(NemesisContext& ctx, SimulatedClient& client) {
    client.lose_next_release_reply();
    double t = ctx.log("lose-release-reply",
                       json{{"target", client.process()}, {"client", client.index()}});
    auto window = ctx.open_window(
        "lose-release-reply", json{{"client", client.index()}, {"process", client.process()}}, t);
    ctx.close_window(window, t);
}

}  // namespace lockbench
