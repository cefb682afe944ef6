// `lockbench check` on histories that are bad input: each is exit 2 and one line on stderr that
// names the file, the line and the column - never an internal error (exit 5) from a text the
// reader let through and the JSON writer then refused.

#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

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

// One op of a Jepsen EDN history: `process`'s `f` of `type`, with `value` (EDN).
std::string edn_op(const std::string& type, const std::string& f, int process,
                   const std::string& value = "nil") {
    return "{:type :" + type + " :f :" + f + " :process " + std::to_string(process) + " :value " +
           value + "}";
}

// A Jepsen EDN history of `ops`, one to a line as Jepsen writes them.
std::string edn_history(std::initializer_list<std::string> ops) {
    std::string text;
    for (const std::string& op : ops)
        text += (text.empty() ? "[" : "\n ") + op;
    return text + "]\n";
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
        time.err.rfind(
            "lockbench: " + (scratch.path() / "time.edn").string() + ": line 2, column 2: ", 0),
        0u)
        << time.err;
}

// Every op that is not one names where it is: the line and the column it began at.
TEST(CheckInputTest, AMalformedEdnOpNamesItsLineAndColumn) {
    testing::TempDir scratch;
    const std::string file = (scratch.path() / "h.edn").string();
    for (const auto& [text, message] : std::vector<std::pair<std::string, std::string>>{
             {"[this]\n", "line 1, column 2: an op must be a map, not \"this\""},
             {"[{:f :read :process 0}]\n",
              "line 1, column 2: an op needs :type (:invoke, :ok, :fail or :info)"},
             {"[{:type :invoke :f :read :process 0}\n 42]\n",
              "line 2, column 2: an op must be a map, not 42"},
             {"[{:type :invoke :f :read :process 0}\n {:type :invoke :f :write :process 0 "
              ":value 1}]\n",
              "line 2, column 2: process 0 invokes `write` while its `read` from line 1 is still "
              "in flight"},
         }) {
        const Cli r = check(scratch, "h.edn", text);
        EXPECT_EQ(r.code, 2) << text;
        EXPECT_EQ(r.out, "") << text;
        EXPECT_EQ(r.err, "lockbench: " + file + ": " + message + "\n") << text;
    }
}

const std::string kNothingApplies =
    "  mutual_exclusion  N/A      the history has no lock operations\n"
    "  fencing           N/A      no fencing numbers were issued\n"
    "  resource          N/A      the history has no lock operations\n"
    "  liveness          N/A      the history has no lock operations\n";

// Nothing judged is unknown, and the reason says what was missing: not a hint about registers.
TEST(CheckInputTest, AnEmptyHistoryIsUnknownAndSaysItIsEmpty) {
    testing::TempDir scratch;
    for (const char* name : {"empty.jsonl", "empty.edn"}) {
        const Cli r = check(scratch, name, "");
        EXPECT_EQ(r.code, 3) << name;
        EXPECT_EQ(r.out, "history: 0 events \u2014 UNKNOWN\n" + kNothingApplies +
                             "  unknown: the history is empty: it has no events\n")
            << name;
    }
}

// `lock` for `acquire` is said, once per name with its count and where the first was.
TEST(CheckInputTest, AnOpWhoseFIsUnknownIsNamedNotIgnoredSilently) {
    testing::TempDir scratch;
    const std::string edn =
        edn_history({edn_op("invoke", "lock", 0), edn_op("ok", "lock", 0),
                     edn_op("invoke", "lock", 1), edn_op("ok", "lock", 1),
                     "{:type :info :f :start :process :nemesis}", edn_op("invoke", "unlock", 0)});
    Cli r = check(scratch, "lock.edn", edn);
    EXPECT_EQ(r.code, 3) << r.err;
    EXPECT_EQ(r.out,
              "history: 6 events \u2014 UNKNOWN\n" + kNothingApplies +
                  "  unknown: the history has no operation a check reads (acquire, release, "
                  "renew, read, write, cas)\n"
                  "  ignored: 4 ops with f \"lock\", which no check reads (the first at line 1, "
                  "column 2)\n"
                  "  ignored: 1 op with f \"unlock\", which no check reads (the first at line 6, "
                  "column 2)\n");
    r = check(scratch, "lock.edn", edn, "--json");
    EXPECT_NE(r.out.find(R"("ignored_ops": [
    {
      "count": 4,
      "f": "lock",
      "first": "line 1, column 2"
    },)"),
              std::string::npos)
        << r.out;

    // Beside ops that are judged, in history.jsonl: the line.
    const Cli jsonl =
        check(scratch, "mixed.jsonl",
              R"({"index":0,"type":"invoke","process":0,"f":"acquire","value":null,"time":1}
{"index":1,"type":"ok","process":0,"f":"acquire","value":{"token":"a"},"time":2}
{"index":2,"type":"invoke","process":0,"f":"unlock","value":null,"time":3}
)");
    EXPECT_EQ(jsonl.code, 0) << jsonl.err;
    EXPECT_NE(jsonl.out.find("\n  ignored: 1 op with f \"unlock\", which no check reads (the first "
                             "at line 3)\n"),
              std::string::npos)
        << jsonl.out;
}

// A history may omit `key` (HISTORY.md): its messages then have no ": " before them, and a grant
// without a token no "(token )".
TEST(CheckInputTest, AHistoryWithoutKeysOrTokensReadsWithoutGaps) {
    testing::TempDir scratch;
    const std::string grants =
        edn_history({edn_op("invoke", "acquire", 0), edn_op("ok", "acquire", 0, "{:token \"a\"}"),
                     edn_op("invoke", "acquire", 1), edn_op("ok", "acquire", 1, "{:token \"b\"}")});
    Cli r = check(scratch, "tokens.edn", grants);
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("incidents (1):\n  process 0 (token a) held it from 0.000 s to the end; 1 "
                         "grant to process 1 overlapped it at 0.000 s\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("violations (1):\n  [mutual_exclusion] process 1 (token b) acquired at "
                         "0.000 s while process 0 (token a) held it since 0.000 s\n"),
              std::string::npos)
        << r.out;

    std::string untokened = grants;
    for (const char* token : {" {:token \"a\"}", " {:token \"b\"}"})
        untokened.replace(untokened.find(token), std::string(token).size(), " nil");
    r = check(scratch, "untokened.edn", untokened, "--story");
    EXPECT_EQ(r.code, 1) << r.err;
    EXPECT_NE(r.out.find("\nprocess 0's lock was granted to another process while it still held "
                         "it.\n"),
              std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("1. At 0.000 s process 0 acquired the lock [#0, #1]."), std::string::npos)
        << r.out;
    EXPECT_NE(r.out.find("3. At 0.000 s process 1 was granted the lock [#3] while"),
              std::string::npos)
        << r.out;
    EXPECT_EQ(r.out.find("(token"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("\n: "), std::string::npos) << r.out;
}

// The text report says what the model expected, as --json's final_path does.
TEST(CheckInputTest, AnUnplaceableOpSaysWhatTheModelExpected) {
    testing::TempDir scratch;
    const Cli r = check(scratch, "release.edn",
                        edn_history({edn_op("invoke", "acquire", 0), edn_op("ok", "acquire", 0),
                                     edn_op("invoke", "release", 1), edn_op("ok", "release", 1)}),
                        "--model mutex --checks linearizability");
    EXPECT_EQ(r.code, 1) << r.err;
    // The search's time in between is the machine's.
    const std::string head =
        "history: 4 events \u2014 INVALID\n"
        "  linearizability   INVALID  mutex, 2 ops on 1 key, ";
    EXPECT_EQ(r.out.substr(0, head.size()), head) << r.out;
    const std::size_t violations = r.out.find("\nviolations");
    ASSERT_NE(violations, std::string::npos) << r.out;
    EXPECT_EQ(r.out.substr(violations),
              "\nviolations (1):\n"
              "  [linearizability] not linearizable against mutex: process 1's release (index 2) "
              "succeeded, but no acquire of that process was invoked before it returned: it "
              "released a lock it cannot have held\n");
}

// checker/HISTORY.md's example, judged: what its prose says is what `lockbench check` answers.
TEST(CheckInputTest, TheHistoryDocumentsExampleIsJudgedAsItSays) {
    const std::string doc = testing::read_file(LOCKBENCH_HISTORY_MD);
    const std::size_t section = doc.find("\n## Example\n");
    ASSERT_NE(section, std::string::npos);
    const std::size_t begin = doc.find("```\n", section) + 4;
    const std::size_t end = doc.find("```\n", begin);
    const std::string example = doc.substr(begin, end - begin);
    const std::string prose = doc.substr(end + 4, doc.find("\n## ", end) - end - 4);
    testing::TempDir scratch;
    const Cli r = check(scratch, "example.jsonl", example, "--model mutex");
    EXPECT_EQ(r.code, 1) << r.out << r.err;
    EXPECT_NE(r.out.find("  mutual_exclusion  INVALID  "), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("  linearizability   VALID    "), std::string::npos) << r.out;
    EXPECT_NE(prose.find("linearizable"), std::string::npos) << prose;
    EXPECT_NE(prose.find("`lockbench check --model mutex` reports it INVALID"), std::string::npos)
        << prose;
}

}  // namespace
}  // namespace lockbench
