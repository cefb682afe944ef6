#include "strategies/lua_scripts.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>

namespace lockbench {

namespace {
std::uint32_t rotl(std::uint32_t x, int n) {
    return (x << n) | (x >> (32 - n));
}
}  // namespace

// FIPS 180-1. Computing the digest locally lets the first call go straight to EVALSHA.
std::string sha1_hex(std::string_view data) {
    std::array<std::uint32_t, 5> h{0x67452301, 0xEFCDAB89, 0x98BADCFE, 0x10325476, 0xC3D2E1F0};
    std::string msg(data);
    std::uint64_t bit_len = static_cast<std::uint64_t>(data.size()) * 8;
    msg.push_back(static_cast<char>(0x80));
    while (msg.size() % 64 != 56)
        msg.push_back('\0');
    for (int i = 7; i >= 0; --i)
        msg.push_back(static_cast<char>((bit_len >> (i * 8)) & 0xff));
    for (std::size_t chunk = 0; chunk < msg.size(); chunk += 64) {
        std::array<std::uint32_t, 80> w{};
        for (int i = 0; i < 16; ++i) {
            auto byte = [&](int k) {
                return static_cast<std::uint32_t>(
                    static_cast<unsigned char>(msg[chunk + 4 * i + k]));
            };
            w[i] = (byte(0) << 24) | (byte(1) << 16) | (byte(2) << 8) | byte(3);
        }
        for (int i = 16; i < 80; ++i)
            w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
        auto [a, b, c, d, e] = h;
        for (int i = 0; i < 80; ++i) {
            std::uint32_t f, k;
            if (i < 20) {
                f = (b & c) | (~b & d);
                k = 0x5A827999;
            } else if (i < 40) {
                f = b ^ c ^ d;
                k = 0x6ED9EBA1;
            } else if (i < 60) {
                f = (b & c) | (b & d) | (c & d);
                k = 0x8F1BBCDC;
            } else {
                f = b ^ c ^ d;
                k = 0xCA62C1D6;
            }
            std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
            e = d;
            d = c;
            c = rotl(b, 30);
            b = a;
            a = t;
        }
        h[0] += a;
        h[1] += b;
        h[2] += c;
        h[3] += d;
        h[4] += e;
    }
    static constexpr char hex[] = "0123456789abcdef";
    std::string out;
    for (auto v : h) {
        for (int i = 7; i >= 0; --i)
            out.push_back(hex[(v >> (i * 4)) & 0xf]);
    }
    return out;
}

Script::Script(std::string_view name) : name_(name) {
    const auto& scripts = lua::all_scripts();
    auto it = scripts.find(name);
    if (it == scripts.end())
        throw std::out_of_range("no embedded Lua script '" + name_ + "'");
    body_ = std::string(it->second);
    sha1_ = sha1_hex(body_);
}

Task<Reply> run_script(RedisConnection& conn, const Script& script, std::vector<std::string> keys,
                       std::vector<std::string> args,
                       std::optional<std::chrono::milliseconds> timeout) {
    std::vector<std::string> cmd;
    cmd.reserve(3 + keys.size() + args.size());
    cmd.push_back("EVALSHA");
    cmd.push_back(script.sha1());
    cmd.push_back(std::to_string(keys.size()));
    for (auto& k : keys)
        cmd.push_back(std::move(k));
    for (auto& a : args)
        cmd.push_back(std::move(a));
    auto first = conn.command_argv(std::move(cmd), timeout);
    try {
        co_return co_await first;
    } catch (const ReplyError& e) {
        if (!e.is_noscript())
            throw;
    }
    cmd = std::move(first).take_args();
    cmd[0] = "EVAL";
    cmd[1] = script.body();
    co_return co_await conn.command_argv(std::move(cmd), timeout);
}

}  // namespace lockbench
