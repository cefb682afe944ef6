#pragma once

// Lua scripts live in strategies/lua/*.lua and are embedded at build time (cmake/EmbedText.cmake).
// They run by EVALSHA; a server that does not know the script yet (fresh, restarted, flushed)
// answers NOSCRIPT and the script is sent once with EVAL, which also caches it there.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "strategies/client/redis_connection.hpp"
#include "strategies/client/task.hpp"

namespace lockbench {

namespace lua {
// Generated: script name (file name without .lua) -> source.
const std::map<std::string_view, std::string_view>& all_scripts();
}  // namespace lua

// Lower-case hex SHA-1, as Redis names scripts.
std::string sha1_hex(std::string_view data);

class Script {
  public:
    // `name` is the file name under strategies/lua/ without ".lua"; throws std::out_of_range if
    // no such script was embedded.
    explicit Script(std::string_view name);
    const std::string& name() const { return name_; }
    const std::string& body() const { return body_; }
    const std::string& sha1() const { return sha1_; }

  private:
    std::string name_;
    std::string body_;
    std::string sha1_;
};

Task<Reply> run_script(RedisConnection& conn, const Script& script, std::vector<std::string> keys,
                       std::vector<std::string> args,
                       std::optional<std::chrono::milliseconds> timeout = std::nullopt);

}  // namespace lockbench
