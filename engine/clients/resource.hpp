#pragma once

// The protected resource, the oracle of damage: inside its critical section a client reads a
// counter and writes it back plus one, so two holders at once lose an update the checker can
// count. With fencing, the write goes to a register that refuses a stale fencing number.

#include <cstdint>
#include <optional>
#include <string>

#include "strategies/client/session.hpp"
#include "strategies/client/task.hpp"
#include "strategies/lua_scripts.hpp"

namespace lockbench {

class ProtectedResource {
  public:
    explicit ProtectedResource(bool fenced) : fenced_(fenced) {}

    // nullopt: never written (the checker reads `null` as 0).
    Task<std::optional<std::int64_t>> read(Session& session, const std::string& key);
    // False only for a fenced write refused as stale.
    Task<bool> write(Session& session, const std::string& key, std::int64_t value,
                     std::optional<std::int64_t> fence);

    bool fenced() const { return fenced_; }
    static std::string counter_key(const std::string& key) { return key + ":counter"; }
    static std::string register_key(const std::string& key) { return key + ":register"; }

  private:
    bool fenced_;
    Script fenced_write_{"fenced_register_write"};
};

}  // namespace lockbench
