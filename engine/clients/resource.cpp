#include "engine/clients/resource.hpp"

#include <charconv>

namespace lockbench {

Task<std::optional<std::int64_t>> ProtectedResource::read(Session& session,
                                                          const std::string& key) {
    // Not a ?: with a co_await in each arm: GCC 12 frees a temporary twice there.
    Reply r;
    if (fenced_) {
        r = co_await session.resource().command("HGET", register_key(key), "value");
    } else {
        r = co_await session.resource().command("GET", counter_key(key));
    }
    if (r.is_nil())
        co_return std::nullopt;
    std::int64_t v = 0;
    const auto& s = r.as_string();
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || end != s.data() + s.size()) {
        throw RedisError("resource " + key + " holds a non-integer: " + s);
    }
    co_return v;
}

Task<bool> ProtectedResource::write(Session& session, const std::string& key, std::int64_t value,
                                    std::optional<std::int64_t> fence) {
    if (!fenced_) {
        co_await session.resource().command("SET", counter_key(key), std::to_string(value));
        co_return true;
    }
    Reply r =
        co_await run_script(session.resource(), fenced_write_, strings(register_key(key)),
                            strings(std::to_string(fence.value_or(0)), std::to_string(value)));
    co_return r.as_integer() == 1;
}

}  // namespace lockbench
