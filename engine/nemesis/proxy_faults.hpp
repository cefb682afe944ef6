#pragma once

// Faults of the network between clients and a node, played by the run's FaultProxy in front of
// each node (toxiproxy's vocabulary; `tc netem` is not in this kernel). Each runs on the nemesis
// thread and heals itself after `duration_ms`.

#include <chrono>
#include <functional>

#include "engine/nemesis/fault.hpp"

namespace lockbench {

class FaultProxy;

class ProxyFault : public Fault {
  public:
    bool needs_proxy() const override { return true; }

  protected:
    FaultProxy& proxy(NemesisContext& ctx) const;
    // The life of a fault that lasts: `turn(proxy, true)` now, logged as name() with `details`,
    // the node and `duration`, in a window of its own; `turn(proxy, false)` when `duration` is
    // over, logged as its heal.
    void turn_on_until_healed(NemesisContext& ctx, std::chrono::milliseconds duration,
                              nlohmann::json details,
                              std::function<void(FaultProxy&, bool on)> turn);
};

// Replies are lost after the server ran the command (T6 on acquire, T7 on unlock): clients time
// out and record `info`, while the lock state changed on the server.
class DropReplies final : public ProxyFault {
  public:
    explicit DropReplies(ObjectReader& r);
    std::string_view name() const override { return "drop-replies"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds duration_;
};

// Replies arrive `delay_ms` late (T11's slow wake-up, T13's delayed message).
class DelayReplies final : public ProxyFault {
  public:
    explicit DelayReplies(ObjectReader& r);
    std::string_view name() const override { return "delay-replies"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds delay_;
    std::chrono::milliseconds duration_;
};

// Every open connection to the node is reset (RST); clients reconnect.
class ResetConnections final : public ProxyFault {
  public:
    explicit ResetConnections(ObjectReader&) {}
    std::string_view name() const override { return "reset-connections"; }
    void apply(NemesisContext& ctx) override;
};

// Nothing crosses between clients and the node for `duration_ms`: a partition of that node,
// e.g. one Redlock master.
class PartitionNode final : public ProxyFault {
  public:
    explicit PartitionNode(ObjectReader& r);
    std::string_view name() const override { return "partition"; }
    void apply(NemesisContext& ctx) override;

  private:
    std::chrono::milliseconds duration_;
};

}  // namespace lockbench
