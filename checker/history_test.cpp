#include "checker/history.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/history_generator.hpp"

namespace lockbench::checker {
namespace {

std::vector<Event> read_all(const std::string& text) {
    std::istringstream in(text);
    HistoryReader reader(in);
    std::vector<Event> events;
    Event e;
    while (reader.next(e))
        events.push_back(e);
    return events;
}

// The HistoryError a text raises, or a failure if it parses.
HistoryError error_of(const std::string& text) {
    try {
        read_all(text);
    } catch (const HistoryError& e) {
        return e;
    }
    ADD_FAILURE() << "no HistoryError for:\n" << text;
    return HistoryError(0, "none");
}

constexpr const char* kAcquireInvoke =
    R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"orders","value":{"mode":"exclusive","lease_ms":500},"time":1200})"
    "\n";

TEST(HistoryReader, ReadsTheContractExample) {
    const std::string text =
        std::string(kAcquireInvoke) +
        R"({"index":1,"type":"ok","process":0,"f":"acquire","key":"orders","value":{"token":"c0-1","fence":7,"mode":"exclusive"},"time":98000}
{"index":2,"type":"info","process":"nemesis","f":"pause","value":{"target":0,"ms":800},"time":99000}
{"index":3,"type":"invoke","process":1,"f":"acquire","key":"orders","value":{"mode":"shared","lease_ms":500},"time":150000}
{"index":4,"type":"ok","process":1,"f":"acquire","key":"orders","value":{"token":"c1-1","fence":8,"mode":"shared"},"time":500731000}
)";
    const auto events = read_all(text);
    ASSERT_EQ(events.size(), 5u);
    EXPECT_EQ(events[0].line, 1u);
    EXPECT_EQ(events[0].type, EventType::Invoke);
    EXPECT_EQ(events[0].f, "acquire");
    EXPECT_EQ(events[0].key, "orders");
    EXPECT_EQ(events[0].lease_ms, 500);
    EXPECT_EQ(events[0].mode, LockMode::Exclusive);
    EXPECT_EQ(events[0].value_json, R"({"mode":"exclusive","lease_ms":500})");
    EXPECT_EQ(events[1].type, EventType::Ok);
    EXPECT_EQ(events[1].token, "c0-1");
    EXPECT_EQ(events[1].fence, 7);
    EXPECT_EQ(events[1].time, 98000);
    EXPECT_TRUE(events[2].is_nemesis());
    EXPECT_EQ(events[2].type, EventType::Info);
    EXPECT_EQ(events[2].target, 0);
    EXPECT_EQ(events[2].f, "pause");
    EXPECT_EQ(events[2].key, "");
    EXPECT_EQ(events[3].mode, LockMode::Shared);
    EXPECT_EQ(events[4].mode, LockMode::Shared);
    EXPECT_EQ(events[4].fence, 8);
    EXPECT_EQ(events[4].index, 4u);
    EXPECT_EQ(events[4].line, 5u);
}

TEST(HistoryReader, DecodesReadWriteCasAndTheWriteFence) {
    const auto events = read_all(
        R"({"index":0,"type":"invoke","process":2,"f":"read","key":"k0","value":null,"time":1}
{"index":1,"type":"ok","process":2,"f":"read","key":"k0","value":null,"time":2}
{"index":2,"type":"invoke","process":2,"f":"write","key":"k0","value":8,"time":3,"fence":12}
{"index":3,"type":"fail","process":2,"f":"write","key":"k0","value":8,"time":4,"error":"stale-fence","fence":12}
{"index":4,"type":"invoke","process":2,"f":"cas","key":"k0","value":[ -3 , 4 ],"time":5,"clock":77}
{"index":5,"type":"ok","process":2,"f":"cas","key":"k0","value":[-3,4],"time":6}
{"index":6,"type":"invoke","process":2,"f":"read","key":"k0","time":7}
{"index":7,"type":"ok","process":2,"f":"read","key":"k0","value":41,"time":8}
)");
    ASSERT_EQ(events.size(), 8u);
    EXPECT_FALSE(events[1].number.has_value());
    EXPECT_EQ(events[1].value_json, "null");
    EXPECT_EQ(events[2].number, 8);
    EXPECT_EQ(events[2].fence, 12);
    EXPECT_EQ(events[3].type, EventType::Fail);
    EXPECT_EQ(events[3].error, "stale-fence");
    EXPECT_EQ(events[3].fence, 12);
    ASSERT_TRUE(events[4].cas.has_value());
    EXPECT_EQ(events[4].cas->first, -3);
    EXPECT_EQ(events[4].cas->second, 4);
    EXPECT_EQ(events[4].clock_ms, 77);
    EXPECT_EQ(events[4].value_json, "[ -3 , 4 ]");
    EXPECT_EQ(events[6].value_json, "null");  // value omitted
    EXPECT_EQ(events[7].number, 41);
    EXPECT_FALSE(events[7].fence.has_value());
}

TEST(HistoryReader, GrantWithoutModeHasTheModeAskedFor) {
    const auto events = read_all(
        R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"k","value":{"mode":"shared"},"time":1}
{"index":1,"type":"ok","process":0,"f":"acquire","key":"k","value":{"token":"t"},"time":2}
)");
    EXPECT_EQ(events[1].mode, LockMode::Shared);
}

TEST(HistoryReader, DecodesStringEscapes) {
    const auto events = read_all(
        R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"a\"b\\c\/d\b\f\n\r\t\u00e9\u20ac\ud83d\ude00","value":null,"time":1}
{"index":1,"type":"ok","process":0,"f":"acquire","key":"","value":{"token":"t\u0041\"x"},"time":2}
{"index":2,"type":"invoke","process":0,"f":"release","value":{"token":"plain"},"time":3}
{"index":3,"type":"fail","process":0,"f":"release","value":null,"time":4,"error":"not-\u0068eld"}
)");
    ASSERT_EQ(events.size(), 4u);
    EXPECT_EQ(events[0].key, "a\"b\\c/d\b\f\n\r\t\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
    EXPECT_EQ(events[1].token, "tA\"x");
    EXPECT_EQ(events[2].token, "plain");
    EXPECT_EQ(events[3].error, "not-held");
}

TEST(HistoryReader, AcceptsUnknownExtraFields) {
    const auto events = read_all(
        R"({"index":0,"extra":{"nested":[1,2.5e3,{"a":null}],"s":"x\"y\ud83d\ude00"},"type":"invoke","process":0,"f":"read","key":"k","value":null,"time":1,"trace":[true,false]}
{ "index" : 1 , "type" : "ok" , "process" : 0 , "f" : "read" , "key" : "k" , "value" : 3 , "time" : 2 , "\u0078" : -0.5 }
)");
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].number, 3);
}

TEST(HistoryReader, TheEngineLayoutAndAnyOtherLayoutDecodeAlike) {
    // The engine's own layout takes a fast path; reordered fields with spaces take the general
    // one. Both must give the same event.
    const auto events = read_all(
        R"({"index":0,"type":"invoke","process":7,"f":"write","key":"k\u0031","value":4,"time":10,"clock":3,"error":"e","fence":9}
{ "fence" : 9 , "error" : "e" , "clock" : 3 , "time" : 10 , "value" : 4 , "key" : "k1" , "f" : "write" , "process" : 8 , "type" : "invoke" , "index" : 1 }
)");
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].process, 7);
    EXPECT_EQ(events[1].process, 8);
    for (const Event* e : {&events[0], &events[1]}) {
        EXPECT_EQ(e->type, EventType::Invoke);
        EXPECT_EQ(e->f, "write");
        EXPECT_EQ(e->key, "k1");
        EXPECT_EQ(e->number, 4);
        EXPECT_EQ(e->value_json, "4");
        EXPECT_EQ(e->time, 10);
        EXPECT_EQ(e->clock_ms, 3);
        EXPECT_EQ(e->error, "e");
        EXPECT_EQ(e->fence, 9);
    }
}

TEST(HistoryReader, EmptyInputIsAnEmptyHistory) {
    EXPECT_TRUE(read_all("").empty());
}

TEST(HistoryReader, FinalLineWithoutNewlineAndTrailingBlankLinesAreFine) {
    std::string text = kAcquireInvoke;
    text.pop_back();
    EXPECT_EQ(read_all(text).size(), 1u);
    EXPECT_EQ(read_all(std::string(kAcquireInvoke) + "\n\n").size(), 1u);
    EXPECT_EQ(read_all(std::string(kAcquireInvoke) + "  \r\n").size(), 1u);
}

TEST(HistoryReader, BlankLineInsideIsAnError) {
    const auto e = error_of(
        std::string(kAcquireInvoke) + "\n" +
        R"({"index":1,"type":"ok","process":0,"f":"acquire","key":"orders","value":null,"time":2})");
    EXPECT_EQ(e.line(), 2u);
    EXPECT_STREQ(e.what(), "line 2: blank line inside the history");
}

TEST(HistoryReader, MalformedJsonNamesTheLine) {
    const std::string prefix =
        R"({"index":0,"type":"invoke","process":0,"f":"read","value":null,"time":1}
{"index":1,"type":"ok","process":0,"f":"read","value":null,"time":2}
{"index":2,"type":"invoke","process":0,"f":"read","value":null,"time":3}
)";
    const auto e =
        error_of(prefix + R"({"index":3,"type":"ok","process":0,"f":"read","value":nul,"time":4})");
    EXPECT_EQ(e.line(), 4u);
    EXPECT_EQ(std::string(e.what()).rfind("line 4: not valid JSON: ", 0), 0u) << e.what();

    for (const std::string bad : {
             R"({"index":0,"type":"invoke","process":0,"f":"read","time":1)",
             R"({"index":0,"type":"invoke","process":0,"f":"read","time":1}})",
             R"({"index":0,"type":"invoke","process":0,"f":"read","time":01})",
             R"({"index":0,"type":"invoke","process":0,"f":"re\qd","time":1})",
             R"({"index":0,"type":"invoke","process":0,"f":"read","time":1,"x":[1,]})",
             R"({"index":0,"type":"invoke","process":0,"f":"read","time":1,"x":"\ud83d"})",
             R"({"index":0,"type":"invoke","process":0,"f":"read","time":1,"x":"\ude00"})",
             R"({"index":0,"type":"invoke","process":0,"f":"\ud83dx","time":1})",
             R"({"index":0,"type":"invoke","process":0,"f":"\ude00","time":1})",
             "{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"re\tad\",\"time\":1}",
             R"({"index":0 "type":"invoke","process":0,"f":"read","time":1})",
             R"([1,2])",
         }) {
        const auto err = error_of(bad);
        EXPECT_EQ(err.line(), 1u) << bad;
        EXPECT_EQ(std::string(err.what()).rfind("line 1: not valid JSON: ", 0), 0u)
            << bad << " -> " << err.what();
    }
}

// A history is UTF-8 (HISTORY.md): a byte that is not is rejected where it is read, naming the
// line and the column, because every report that quotes the text - `check --json` - is JSON,
// whose writer cannot carry it.
TEST(HistoryReader, InvalidUtf8IsRejectedWithItsLineAndColumn) {
    const std::string grant =
        "{\"index\":1,\"type\":\"ok\",\"process\":0,\"f\":\"acquire\",\"key\":\"orders\","
        "\"value\":{\"token\":\"caf\xE9\"},\"time\":2}\n";
    const auto latin1 = error_of(std::string(kAcquireInvoke) + grant);
    EXPECT_EQ(latin1.line(), 2u);
    EXPECT_STREQ(latin1.what(),
                 "line 2: not valid UTF-8 at column 86 (byte 0xE9): a history is UTF-8 text");
    // Wherever the byte is: a known field, a field name, an unknown field's value, a truncated
    // sequence, an overlong form, an encoded surrogate, a code point beyond U+10FFFF.
    for (const std::string& bad : {
             std::string("{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"r\xFF"
                         "d\",") +
                 "\"time\":1}",
             std::string("{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"read\",") +
                 "\"time\":1,\"\x80\":1}",
             std::string("{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"read\",") +
                 "\"time\":1,\"x\":[\"\xE2\x82\"]}",
             std::string("{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"read\",") +
                 "\"time\":1,\"x\":\"\xC0\xAF\"}",
             std::string("{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"read\",") +
                 "\"time\":1,\"error\":\"\xED\xA0\x80\"}",
             std::string("{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"read\",") +
                 "\"key\":\"\xF4\x90\x80\x80\",\"time\":1}",
         }) {
        const auto err = error_of(bad);
        EXPECT_EQ(err.line(), 1u) << bad;
        EXPECT_EQ(std::string(err.what()).rfind("line 1: not valid UTF-8 at column ", 0), 0u)
            << bad << " -> " << err.what();
    }
    // Well-formed UTF-8 of every length is text like any other.
    const auto events = read_all(
        "{\"index\":0,\"type\":\"invoke\",\"process\":0,\"f\":\"read\",\"key\":\"\xC3\xA9"
        "\xE2\x82\xAC\xF0\x9F\x98\x80\",\"time\":1}\n");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].key, "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

// Times and leases are bounded (about 31 years either way), so that the checks' sums and
// differences of them cannot overflow: an absurd value is bad input, not undefined behaviour.
TEST(HistoryReader, TimesAndLeasesBeyondThirtyYearsAreRejected) {
    const std::string invoke = R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"k",)";
    EXPECT_STREQ(error_of(invoke + R"("value":null,"time":9223372036854775807})").what(),
                 "line 1: field `time` must be an integer between -10^18 and 10^18 (ns)");
    EXPECT_STREQ(error_of(invoke + R"("time":-1000000000000000001,"value":null})").what(),
                 "line 1: field `time` must be an integer between -10^18 and 10^18 (ns)");
    EXPECT_STREQ(error_of(invoke + R"("value":{"lease_ms":1000000000001},"time":1})").what(),
                 "line 1: field `value` of `acquire` has a `lease_ms` that is not an integer "
                 "between 0 and 10^12");
    EXPECT_STREQ(error_of(invoke + R"("value":{"lease_ms":-1},"time":1})").what(),
                 "line 1: field `value` of `acquire` has a `lease_ms` that is not an integer "
                 "between 0 and 10^12");
    const auto events =
        read_all(invoke + R"("value":{"lease_ms":1000000000000},"time":-1000000000000000000})");
    ASSERT_EQ(events.size(), 1u);
    EXPECT_EQ(events[0].time, -1'000'000'000'000'000'000);
    EXPECT_EQ(events[0].lease_ms, 1'000'000'000'000);
}

// HISTORY.md, Leases: an acquire's ok may say the lease the service applied to that grant.
TEST(HistoryReader, AnAcquireOkCarriesTheLeaseApplied) {
    const std::string invoke =
        R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"k","value":{"mode":"exclusive","lease_ms":300},"time":1})"
        "\n";
    const std::string ok = R"({"index":1,"type":"ok","process":0,"f":"acquire","key":"k",)";
    const auto events = read_all(
        invoke + ok + R"("value":{"token":"t","mode":"exclusive","lease_ms":2000},"time":2})");
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].lease_ms, 300);
    EXPECT_EQ(events[1].lease_ms, 2000);
    EXPECT_EQ(events[1].token, "t");
    EXPECT_EQ(read_all(invoke + ok + R"("value":{"token":"t"},"time":2})")[1].lease_ms,
              std::nullopt);
    EXPECT_STREQ(
        error_of(invoke + ok + R"("value":{"token":"t","lease_ms":"2000"},"time":2})").what(),
        "line 2: field `value` of `acquire` has a `lease_ms` that is not an integer "
        "between 0 and 10^12");
}

// A line out of place in the stream: the error names its line and what is wrong with it.
TEST(HistoryReader, ALineOutOfPlaceIsAnErrorNamingTheLine) {
    struct Case {
        const char* name;
        std::string text;
        std::uint64_t line;
        const char* what;
    };
    const std::string invoke = kAcquireInvoke;
    const std::string granted =
        invoke + R"({"index":1,"type":"ok","process":0,"f":"acquire","value":null,"time":2})"
                 "\n";
    const Case cases[] = {
        {"BadTypeNamesTheField",
         invoke + R"({"index":1,"type":"done","process":0,"f":"acquire","time":2})", 2,
         "line 2: field `type` must be one of invoke, ok, fail, info"},
        {"IndexMustIncreaseByOne",
         granted + R"({"index":5,"type":"invoke","process":0,"f":"release","value":null,"time":3})",
         3, "line 3: `index` is 5, expected 2"},
        {"IndexMustStartFromZero",
         R"({"index":1,"type":"invoke","process":0,"f":"read","value":null,"time":1})", 1,
         "line 1: `index` is 1, expected 0"},
        {"CompletionWithoutInvoke",
         granted + R"({"index":2,"type":"ok","process":4,"f":"release","value":null,"time":3})", 3,
         "line 3: process 4 completes `release` but has no operation in flight"},
        {"SecondInvokeWhileInFlight",
         invoke + R"({"index":1,"type":"invoke","process":0,"f":"read","value":null,"time":2})", 2,
         "line 2: process 0 invokes `read` while its `acquire` from line 1 is still in flight"},
        {"CompletionOfAnotherOperation",
         invoke + R"({"index":1,"type":"ok","process":0,"f":"read","value":1,"time":2})", 2,
         "line 2: process 0 completes `read` but its operation in flight is `acquire` from line "
         "1"},
    };
    for (const Case& c : cases) {
        SCOPED_TRACE(c.name);
        const HistoryError e = error_of(c.text);
        EXPECT_EQ(e.line(), c.line);
        EXPECT_STREQ(e.what(), c.what);
    }
}

TEST(HistoryReader, MissingAndMistypedFields) {
    EXPECT_STREQ(
        error_of(R"({"index":0,"type":"invoke","process":0,"f":"read","value":null})").what(),
        "line 1: missing field `time`");
    EXPECT_STREQ(error_of(R"({"type":"invoke","process":0,"f":"read","time":1})").what(),
                 "line 1: missing field `index`");
    EXPECT_STREQ(error_of(R"({"index":0,"type":"invoke","process":0,"time":1})").what(),
                 "line 1: missing field `f`");
    EXPECT_STREQ(error_of(R"({"index":0,"type":"invoke","process":"bob","f":"x","time":1})").what(),
                 "line 1: field `process` must be an integer >= 0, \"nemesis\" or \"library\"");
    EXPECT_STREQ(error_of(R"({"index":0,"type":"invoke","process":-2,"f":"x","time":1})").what(),
                 "line 1: field `process` must be an integer >= 0, \"nemesis\" or \"library\"");
    EXPECT_STREQ(error_of(R"({"index":0.5,"type":"invoke","process":0,"f":"x","time":1})").what(),
                 "line 1: field `index` must be an integer >= 0");
    EXPECT_STREQ(error_of(R"({"index":0,"type":"invoke","process":0,"f":"x","time":"now"})").what(),
                 "line 1: field `time` must be an integer");
    EXPECT_STREQ(
        error_of(R"({"index":0,"type":"invoke","process":0,"f":"x","time":1,"time":2})").what(),
        "line 1: field `time` appears twice");
    EXPECT_STREQ(
        error_of(R"({"index":0,"type":"invoke","process":0,"f":"write","value":"8","time":1})")
            .what(),
        "line 1: field `value` of `write` must be an integer or null");
    EXPECT_STREQ(
        error_of(
            R"({"index":0,"type":"invoke","process":0,"f":"acquire","value":{"mode":"both"},"time":1})")
            .what(),
        "line 1: field `value` of `acquire` has a `mode` that is not \"exclusive\" or \"shared\"");
    EXPECT_STREQ(
        error_of(R"({"index":0,"type":"invoke","process":0,"f":"cas","value":[1],"time":1})")
            .what(),
        "line 1: field `value` of `cas` must be [from, to] with integers");
}

TEST(HistoryReader, LinesLongerThanTheReadChunk) {
    const std::string big(3 << 20, 'x');
    const auto events = read_all(
        R"({"index":0,"type":"invoke","process":0,"f":"read","value":null,"time":1,"pad":")" + big +
        R"("}
{"index":1,"type":"ok","process":0,"f":"read","value":5,"time":2})");
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[1].number, 5);
}

TEST(HistoryReader, ReadsAGeneratedHistoryAcrossChunkBoundaries) {
    testing::HistoryGenerator generator({.seed = 7});
    const std::string text = generator.generate(30'000);  // several 1 MiB chunks
    std::istringstream in(text);
    HistoryReader reader(in);
    Event e;
    std::uint64_t n = 0;
    while (reader.next(e)) {
        ASSERT_EQ(e.index, n);
        ++n;
    }
    EXPECT_EQ(n, 30'000u);
}

TEST(HistoryReader, OpensFilesAndReportsMissingOnes) {
    EXPECT_THROW(HistoryReader("/nonexistent/history.jsonl"), std::runtime_error);
}

}  // namespace
}  // namespace lockbench::checker
