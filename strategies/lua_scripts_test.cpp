#include "strategies/lua_scripts.hpp"

#include <gtest/gtest.h>

namespace lockbench {
namespace {

TEST(Sha1Test, MatchesKnownDigests) {
    EXPECT_EQ(sha1_hex(""), "da39a3ee5e6b4b0d3255bfef95601890afd80709");
    EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
    EXPECT_EQ(sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
    EXPECT_EQ(sha1_hex(std::string(1000, 'a')), "291e9a6c66994949b57ba5e650361e98fc36b1ba");
}

TEST(ScriptTest, EmbedsEveryLuaFileByName) {
    Script s("compare_and_delete");
    EXPECT_NE(s.body().find("redis.call('del'"), std::string::npos);
    EXPECT_EQ(s.sha1(), sha1_hex(s.body()));
    EXPECT_THROW(Script("no_such_script"), std::out_of_range);
}

}  // namespace
}  // namespace lockbench
