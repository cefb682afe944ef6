#pragma once

// Check 2, fencing: per key, a grant's fencing number exceeds that of every grant that completed
// before its acquire began (a repeated or lower number means the counter went back, e.g. after
// a failover; grants that overlap in real time are not ordered), and the protected resource
// never accepts a write whose fence is below one it accepted before the write was sent. A stale
// write the resource rejected (`fail`, error "stale-fence") is a save, not a violation. On a
// history without any fencing number the check does not apply.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

// A violation's witness: {"key", "what": "grant"|"write", "earlier": {...}, "later": {...}}.
class FencingCheck final : public StreamingCheck {
  public:
    explicit FencingCheck(std::size_t max_violations = 100);

    void on_event(const Event& event) override;
    // checks.fencing: {"valid", "violations", "processes", "saves", "saved_processes" (whose stale
    // writes were rejected), "grants_with_fence", "grants_without_fence", "repeated_fences",
    // "writes_with_fence", "stale_writes_accepted"}.
    nlohmann::json result() const override;
    // Called with each stale write the resource rejected (its `fail` event), as it is seen.
    void on_save(std::function<void(const Event&)> callback) { on_save_ = std::move(callback); }

  private:
    // One fenced event as a witness shows it.
    struct Stamp {
        std::int64_t process = 0;
        std::string token;
        std::int64_t fence = 0;
        std::int64_t time_ns = 0;
        std::uint64_t index = 0;
    };
    struct KeyFences {
        std::optional<Stamp> highest_grant;
        std::optional<Stamp> highest_accepted_write;
    };
    struct WriteInFlight {
        std::string key;
        std::optional<std::int64_t> fence;
        // What the resource had accepted when the write was sent: only that is certainly older.
        std::optional<Stamp> accepted_before;
    };

    void on_grant(const Event& event);
    void on_write(const Event& event);
    void add_violation(const std::string& key, const char* what, const Stamp& earlier,
                       const Stamp& later, std::string message);

    HoldNesting nesting_;
    std::unordered_map<std::string, KeyFences> keys_;
    PerProcess<WriteInFlight> writes_;
    // Per process with an acquire in flight: the highest grant completed before it began.
    PerProcess<Stamp> granted_before_;
    ProcessSet saved_processes_;
    std::function<void(const Event&)> on_save_;
    std::uint64_t grants_with_fence_ = 0;
    std::uint64_t grants_without_fence_ = 0;
    std::uint64_t repeated_fences_ = 0;
    std::uint64_t writes_with_fence_ = 0;
    std::uint64_t stale_writes_accepted_ = 0;
    std::uint64_t saves_ = 0;
};

}  // namespace lockbench::checker
