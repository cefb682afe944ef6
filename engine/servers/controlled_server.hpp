#pragma once

// A Redis node of the user's own deployment that lockbench may act on for faults, through the
// control the inventory gives for its host (inventory.hpp): OpenSSH, as Jepsen's control node
// does, or a shell on this machine. Every fault undoes itself on the host: the SIGCONT after a
// pause and the restart after a kill are left running there, in the background, when the fault
// begins - so a lockbench killed in the middle of one leaves no server stopped or down for good.
// The server's process id is the one it reports itself (INFO server): the control must reach the
// host (and PID namespace) the server runs in.

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "engine/topology/inventory.hpp"

namespace lockbench {

// Runs `command` with the host's shell through `control` and returns what it printed; throws
// EnvironmentError (embedded_server.hpp) naming the host and the command when it fails or takes
// longer than `timeout`.
std::string run_on_host(const HostControl& control, const std::string& command,
                        std::chrono::milliseconds timeout = std::chrono::seconds(20));

// `text` quoted for a POSIX shell.
std::string shell_quote(const std::string& text);

class ControlledServer {
  public:
    explicit ControlledServer(InventoryNode node) : node_(std::move(node)) {}

    const InventoryNode& node() const { return node_; }
    // Its process id, as it says itself (INFO server); throws EnvironmentError.
    long long pid() const;

    // SIGSTOP now; the host sends the SIGCONT itself after `duration` and a margin.
    void pause(std::chrono::milliseconds duration);
    // SIGCONT now (a no-op for a running process).
    void resume();
    // SIGKILL now; with `restart_after`, the host runs the inventory's restart command by itself
    // that much later.
    void kill(std::optional<std::chrono::milliseconds> restart_after);
    // Drops every packet to its port on its host (iptables INPUT), so nobody reaches it - clients,
    // replicas, sentinels; the host deletes the rule itself after `duration` and a margin.
    void isolate(std::chrono::milliseconds duration);
    // Deletes that rule now.
    void end_isolation();
    // Waits until it answers PING; throws EnvironmentError after `timeout`.
    void wait_until_answers(std::chrono::milliseconds timeout) const;
    bool answers() const;

  private:
    std::string isolation_rule() const;

    InventoryNode node_;
    long long paused_pid_ = 0;
    bool isolated_ = false;
    std::string isolation_tag_;  // the iptables comment that names this isolation's rule
};

}  // namespace lockbench
