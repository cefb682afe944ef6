#pragma once

// Check 3, resource integrity: no lost update on the lock-protected counter (read/write ops on
// the key of the lock). A client reads the counter and writes read+1, so every accepted write
// must exceed every value accepted before it; an `ok` write of v <= the highest value an earlier
// `ok` write put there overwrote someone's update. `info` writes are unknown and `fail` writes
// did not happen, so only `ok` writes count.

#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "history.hpp"

namespace lockbench::checker {

class ResourceCheck {
  public:
    explicit ResourceCheck(std::size_t max_violations = 100);

    void on_event(const Event& event);
    void finish(std::int64_t end_time_ns);

    // checks.resource: {"valid", "violations", "reads", "writes", "keys"}.
    nlohmann::json result() const;
    // Up to max_violations entries {"kind": "resource", "key", "message", "witness"}, witness
    // {"key", "overwritten": write, "write": write} with a write {"process", "value", "time_ns",
    // "index"}.
    nlohmann::json violations() const { return violations_; }
    std::uint64_t violation_count() const { return lost_updates_; }

  private:
    struct Write {
        std::int64_t process = 0;
        std::int64_t value = 0;
        std::int64_t time_ns = 0;
        std::uint64_t index = 0;
    };

    std::size_t max_violations_;
    std::unordered_map<std::string, Write> highest_;  // per key: the highest accepted write
    nlohmann::json violations_ = nlohmann::json::array();
    std::uint64_t reads_ = 0;
    std::uint64_t writes_ = 0;
    std::uint64_t lost_updates_ = 0;
};

}  // namespace lockbench::checker
