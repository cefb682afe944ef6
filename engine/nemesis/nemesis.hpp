#pragma once

// The nemesis: fires the workload's faults on schedule from the run's main thread, and
// client faults aimed at "the holder of key K" from the client that is granted K next.
// engine/nemesis/ may use clients/, topology/, servers/, strategies/ and checker/ (its target's
// link line in engine/CMakeLists.txt, held to by the `layering` test; the workload it includes
// from run/ is a cycle listed in engine/layering-exceptions.txt).

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/nemesis/fault.hpp"
#include "engine/run/workload.hpp"

namespace lockbench {

class Nemesis {
  public:
    // Parses and validates a `faults` list (errors name /faults/<i>/<field>).
    static std::vector<std::unique_ptr<Fault>> parse(const nlohmann::json& faults,
                                                     const std::string& origin);

    Nemesis(std::vector<std::unique_ptr<Fault>> faults, NemesisContext& ctx,
            EventLoop::TimePoint start);

    // Main thread, every few ms: fires what is due and runs scheduled heals.
    void tick(EventLoop::TimePoint now);
    // Refuses up front what can never fire in this workload (exit 2): a holder of a key the
    // clients never lock, client:N beyond the clients, a first firing after the run's end.
    static void validate(const std::vector<std::unique_ptr<Fault>>& faults, const Workload& w);

    // Client threads, after every grant (`key` as the history names it).
    void on_grant(SimulatedClient& client, const std::string& key);
    // A holder fault whose hold ended before its point: the next holder of its key gets it.
    void rearm(Fault& fault);
    // End of the run: runs every heal still pending (resume, restart), so no server is left
    // paused, killed or half-configured; checks those schedule (a promotion polled for) run at
    // their own pace. The run stops its clients first: nothing they do is timed against this.
    void heal();

    // Every fault with how often it was due before `end_s` (the planned end of the run, or when
    // it was interrupted), how often it took effect, and why not every time.
    std::vector<FaultFiring> report(double end_s) const;

  private:
    struct Scheduled {
        Fault* fault;
        EventLoop::TimePoint next;
        int fired = 0;
    };
    void fire(Fault& fault);

    std::vector<std::unique_ptr<Fault>> faults_;
    std::vector<Scheduled> schedule_;
    NemesisContext& ctx_;
    mutable std::mutex armed_mutex_;
    std::vector<Fault*> armed_;  // holder-targeted client faults waiting for a grant
    std::vector<Fault*> hearing_grants_;
    std::atomic<int> armed_count_{0};
};

}  // namespace lockbench
