#pragma once

// What every embedded server (redis-server, ZooKeeper, etcd) does alike with its process: it
// owns its folder and its ChildProcess, answers for their state, takes the faults' signals, and
// is stopped on every exit path. A server derives from EmbeddedServer and adds only how it
// starts (its arguments) and how it tells it is ready; a group of servers (an ensemble, a
// cluster) starts through start_server_group and finds its leader through wait_for_leader. What
// keeps a server from starting is the machine's: EnvironmentError.

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <sys/types.h>
#include <thread>
#include <utility>
#include <vector>

#include "strategies/client/child_process.hpp"

namespace lockbench {

// The machine cannot give us what we need: no redis-server, a port that never answers, a busy
// port. The CLI maps it to exit code 4.
class EnvironmentError : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

// A server's own folder, /tmp/lockbench-<kind>-XXXXXX (its data, configuration and log), removed
// with everything in it when the server goes, also when its constructor fails.
class ServerDir {
  public:
    ServerDir() = default;
    explicit ServerDir(const std::string& kind);  // throws EnvironmentError
    ~ServerDir();
    ServerDir(ServerDir&& other) noexcept : path_(std::exchange(other.path_, {})) {}
    ServerDir& operator=(ServerDir&& other) noexcept;
    const std::filesystem::path& path() const { return path_; }

  private:
    std::filesystem::path path_;
};

// A loopback TCP port that was free a moment ago (bind to port 0, read it back).
int pick_free_port();
// `n` distinct such ports.
std::vector<int> pick_free_ports(std::size_t n);

class EmbeddedServer {
  public:
    EmbeddedServer(const EmbeddedServer&) = delete;
    EmbeddedServer& operator=(const EmbeddedServer&) = delete;

    pid_t pid() const { return process_.running() ? process_.pid() : -1; }
    const std::filesystem::path& dir() const { return dir_.path(); }
    bool running() const { return process_.running(); }
    // False if the process has exited since (reaps it): a server that died under a run, killed
    // from outside or crashed, must end the run with an error rather than a flood of timeouts.
    bool alive() { return process_.alive(); }
    bool paused() const { return process_.paused(); }

    // SIGSTOP, waited for until /proc says stopped: connections are still accepted by the
    // kernel, nothing is answered.
    void pause() { process_.pause(); }
    void resume() { process_.resume(); }  // SIGCONT: what queued up meanwhile is answered now
    // SIGKILL, as a crash: no shutdown save, no goodbye to clients (reaped: when it returns, the
    // process is gone).
    void kill() { process_.kill_and_reap(); }
    // SIGTERM (after SIGCONT if paused), then SIGKILL if it lingers past the server's grace.
    void stop() { process_.terminate(stop_grace_); }

  protected:
    explicit EmbeddedServer(std::chrono::milliseconds stop_grace) : stop_grace_(stop_grace) {}
    ~EmbeddedServer() { stop(); }

    // How a start ended: the server said it is ready, its process exited, or time ran out.
    enum class Start { Ready, Exited, TimedOut };
    // Asks `ready` every `poll` until it says yes, the process exits or `timeout` runs out; each
    // server says what its own readiness is and how each failure reads.
    template <class Ready>
    Start wait_for_start(std::chrono::milliseconds timeout, std::chrono::milliseconds poll,
                         Ready ready) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        while (std::chrono::steady_clock::now() < deadline) {
            if (!alive())
                return Start::Exited;
            if (ready())
                return Start::Ready;
            std::this_thread::sleep_for(poll);
        }
        return Start::TimedOut;
    }

    // Sets `port` to `wanted`, or for 0 to a port picked free, and calls `start` (spawn, then
    // wait until ready). A picked port can be taken by someone else before the server binds it:
    // while `port_was_busy(error)` says that is why the start failed, the server is stopped and
    // started again on a fresh port, at most five times more. A busy port not tried again is an
    // EnvironmentError "<who>port N is busy"; any other failure is thrown as it is.
    template <class Start, class PortWasBusy>
    void start_on_port(int& port, int wanted, const std::string& who, Start start,
                       PortWasBusy port_was_busy) {
        const bool pick_port = wanted == 0;
        for (int attempt = 0;; ++attempt) {
            port = pick_port ? pick_free_port() : wanted;
            try {
                start();
                return;
            } catch (const EnvironmentError& e) {
                const bool busy = port_was_busy(e);
                stop();
                if (!(busy && pick_port && attempt < 5)) {
                    if (busy)
                        throw EnvironmentError(who + "port " + std::to_string(port) + " is busy");
                    throw;
                }
            }
        }
    }

    ServerDir dir_;  // before process_: the process ends before its folder goes
    ChildProcess process_;

  private:
    std::chrono::milliseconds stop_grace_;
};

// Starts a group of servers side by side and waits until each is ready. `start` constructs every
// member into `members`, on ports it picks afresh on each call. A port picked free may be taken
// before its member binds it, and every member names the others' ports: when a member's last
// `log_lines` lines say `busy` (its "address already in use"), the whole group starts again on
// new ports, at most three times more, if `retry_busy`; any other failure is thrown as it is.
template <class Server, class StartMembers>
void start_server_group(std::vector<std::unique_ptr<Server>>& members, StartMembers start,
                        bool retry_busy, std::size_t log_lines, std::string_view busy) {
    for (int attempt = 0;; ++attempt) {
        try {
            start();
            for (auto& member : members)
                member->wait_ready();
            return;
        } catch (const EnvironmentError&) {
            bool busy_port = false;
            for (auto& member : members)
                busy_port |= member->log_tail(log_lines).find(busy) != std::string::npos;
            members.clear();  // stops every member
            if (!busy_port || !retry_busy || attempt >= 3)
                throw;
        }
    }
}

// Asks `leader` (the group's index of the member that leads, or nothing) every 20 ms until it
// names one; nothing if none was elected within `timeout`.
template <class FindLeader>
std::optional<std::size_t> wait_for_leader(FindLeader leader, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        if (auto found = leader())
            return found;
        if (std::chrono::steady_clock::now() >= deadline)
            return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
}

}  // namespace lockbench
