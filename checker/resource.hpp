#pragma once

// Check 3, resource integrity: no lost update on the lock-protected counter. Inside its critical
// section a client reads the counter of the key it holds and writes read+1, so an `ok` write must
// exceed every `ok` write completed before it was sent; one that does not lost an update. Either
// it overwrote one itself (T1: a holder paused past its lease writes what it read before), or it
// builds on a value that a write sent earlier but delivered late had set back (T13: the counter
// went from 20 back to 13 when a delayed write landed, and the next holder wrote 14). Each stale
// write counts once: after a loss the reference is the value it left, so the next holders'
// increments from there are no loss of their own (a check against the highest value ever
// written would count every write until the counter climbed back). Writes that overlap in real
// time are not ordered, `info` writes are unknown and `fail` writes did not happen, so none of
// those count.
//
// Only writes made while the writer holds the key's lock are judged: a register that no lock
// protects (a Jepsen register history) is linearizability's business, and on a history without
// such writes this check does not apply.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"
#include "checker/incident.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

// A violation's witness: {"key", "overwritten": write, "write": write, "late": write (T13 only:
// the write delivered late that set the counter back)} with a write {"process", "value",
// "time_ns", "index"}.
class ResourceCheck final : public StreamingCheck {
  public:
    explicit ResourceCheck(std::size_t max_violations = 100);

    void on_event(const Event& event) override;
    // checks.resource: {"valid", "violations" (each a lost update), "processes", "reads",
    // "writes" (judged, ok), "unguarded_writes" (outside any hold, not judged), "keys"}.
    nlohmann::json result() const override;
    // Called with each write found to have lost an update (its `ok` event), as it is found.
    void on_lost_update(std::function<void(const Event&)> callback) {
        on_lost_update_ = std::move(callback);
    }

  private:
    // An ok write as the check keeps it is a write as its witness shows it.
    using Write = LostUpdateEvidence::Write;
    struct WriteInFlight {
        // The last write completed before this write was sent (what the counter held then, if
        // no write was delivered late), and the highest completed since the last loss.
        std::optional<Write> written_before;
        std::optional<Write> highest_before;
    };

    void on_write(const Event& event);

    std::function<void(const Event&)> on_lost_update_;
    HoldNesting nesting_;
    std::unordered_map<std::string, Write> latest_;   // per key: the last ok write completed
    std::unordered_map<std::string, Write> highest_;  // per key: the highest since the last loss
    PerProcess<WriteInFlight> in_flight_;             // judged writes, by process
    bool lock_ops_seen_ = false;
    std::uint64_t reads_ = 0;
    std::uint64_t writes_ = 0;
    std::uint64_t unguarded_writes_ = 0;
};

}  // namespace lockbench::checker
