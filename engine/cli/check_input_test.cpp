// `lockbench check` on histories that are bad input: each is exit 2 and one line on stderr that
// names the file, the line and the column - never an internal error (exit 5) from a text the
// reader let through and the JSON writer then refused.

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "checker/testing/temp_dir.hpp"
#include "engine/cli/cli_testing.hpp"

namespace lockbench {
namespace {

namespace fs = std::filesystem;

using testing::Cli;
using testing::lockbench;

// `lockbench check FILE ARGS` with `text` as the file.
Cli check(const testing::TempDir& scratch, const std::string& name, const std::string& text,
          const std::string& args = "") {
    const fs::path history = scratch.path() / name;
    std::ofstream(history, std::ios::binary) << text;
    return lockbench(scratch, "check '" + history.string() + "' " + args);
}

// Two grants of one key at once, in Jepsen's EDN: a violation whose report quotes the key.
std::string edn_overlap(const std::string& key) {
    std::string text = "[";
    for (const char* process : {"0", "1"}) {
        text += "{:type :invoke :f :acquire :process " + std::string(process) + " :value [\"" +
                key + "\" nil]}\n";
        text += "{:type :ok :f :acquire :process " + std::string(process) + " :value [\"" + key +
                "\" {:token \"t" + process + "\"}]}\n";
    }
    return text + "]";
}

TEST(CheckInputTest, AnEdnSurrogatePairIsOneCharacterInTheJsonReport) {
    testing::TempDir scratch;
    const Cli r = check(scratch, "emoji.edn", edn_overlap(R"(\uD83D\uDE00)"), "--json");
    EXPECT_EQ(r.code, 1) << r.err;  // the overlap, judged
    EXPECT_EQ(r.err, "");
    EXPECT_NE(r.out.find("\xF0\x9F\x98\x80"), std::string::npos) << r.out;

    const Cli lone = check(scratch, "lone.edn", edn_overlap(R"(\uD83D)"), "--json");
    EXPECT_EQ(lone.code, 2);
    EXPECT_EQ(lone.err, "lockbench: " + (scratch.path() / "lone.edn").string() +
                            ": line 1, column 49: a high surrogate without a low surrogate "
                            "after it\n");
}

TEST(CheckInputTest, ALatin1ByteInEdnIsBadInputAtItsLineAndColumn) {
    testing::TempDir scratch;
    const Cli r = check(scratch, "latin1.edn", edn_overlap("caf\xE9"), "--json");
    EXPECT_EQ(r.code, 2);
    EXPECT_EQ(r.out, "");
    EXPECT_EQ(r.err, "lockbench: " + (scratch.path() / "latin1.edn").string() +
                         ": line 1, column 52: not valid UTF-8 (byte 0xE9): EDN is UTF-8 text\n");
}

TEST(CheckInputTest, InvalidUtf8InAJsonlTokenIsBadInputAtItsLineAndColumn) {
    testing::TempDir scratch;
    const std::string text =
        "{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"acquire\",\"key\":\"k\","
        "\"value\":null,\"time\":1}\n"
        "{\"index\":1,\"type\":\"ok\",\"process\":0,\"f\":\"acquire\",\"key\":\"k\","
        "\"value\":{\"token\":\"t\xE9\"},\"time\":2}\n"
        "{\"index\":2,\"type\":\"invoke\",\"process\":1,\"f\":\"acquire\",\"key\":\"k\","
        "\"value\":null,\"time\":3}\n"
        "{\"index\":3,\"type\":\"ok\",\"process\":1,\"f\":\"acquire\",\"key\":\"k\","
        "\"value\":{\"token\":\"u\"},\"time\":4}\n";
    for (const char* args : {"--json", ""}) {
        const Cli r = check(scratch, "history.jsonl", text, args);
        EXPECT_EQ(r.code, 2) << args;
        EXPECT_EQ(r.out, "") << args;
        EXPECT_EQ(r.err, "lockbench: " + (scratch.path() / "history.jsonl").string() +
                             ": line 2: not valid UTF-8 at column 79 (byte 0xE9): a history is "
                             "UTF-8 text\n")
            << args;
    }
}

TEST(CheckInputTest, InfInEdnIsAValueAndSwallowsNothing) {
    testing::TempDir scratch;
    // The ##Inf used to take the `}` after it as its value: "unexpected '}'", exit 2.
    const Cli r = check(scratch, "inf.edn",
                        "[{:type :invoke :f :read :process 0 :value nil :latency ##Inf}\n"
                        " {:type :ok :f :read :process 0 :value nil :latency ##-Inf}]\n",
                        "--model register");
    EXPECT_EQ(r.code, 0) << r.out << r.err;
    EXPECT_EQ(r.err, "");
    // Where the history needs a number, the infinity is bad input at its line.
    const Cli time = check(scratch, "time.edn",
                           "[{:type :invoke :f :read :process 0 :value nil}\n"
                           " {:type :ok :f :read :process 0 :value ##NaN}]\n",
                           "--model register");
    EXPECT_EQ(time.code, 2) << time.out;
    EXPECT_EQ(
        time.err.rfind("lockbench: " + (scratch.path() / "time.edn").string() + ": line 2: ", 0),
        0u)
        << time.err;
}

}  // namespace
}  // namespace lockbench
