#include "checker/event_decoder.hpp"

#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "checker/history_generator.hpp"

namespace lockbench::checker {
namespace {

// Every field of Event, so that a field one path forgets shows up as a difference.
void expect_same(const Event& a, const Event& b, const std::string& line) {
    SCOPED_TRACE(line);
    EXPECT_EQ(a.line, b.line);
    EXPECT_EQ(a.index, b.index);
    EXPECT_EQ(a.type, b.type);
    EXPECT_EQ(a.process, b.process);
    EXPECT_EQ(a.f, b.f);
    EXPECT_EQ(a.key, b.key);
    EXPECT_EQ(a.time, b.time);
    EXPECT_EQ(a.clock_ms, b.clock_ms);
    EXPECT_EQ(a.error, b.error);
    EXPECT_EQ(a.value_json, b.value_json);
    EXPECT_EQ(a.number, b.number);
    EXPECT_EQ(a.cas, b.cas);
    EXPECT_EQ(a.token, b.token);
    EXPECT_EQ(a.fence, b.fence);
    EXPECT_EQ(a.mode, b.mode);
    EXPECT_EQ(a.lease_ms, b.lease_ms);
    EXPECT_EQ(a.target, b.target);
}

// Lines in the engine's layout (engine/clients/history_recorder.cpp), one per shape HISTORY.md
// defines.
const std::vector<std::string> kEngineLines = {
    R"({"index":0,"type":"invoke","process":0,"f":"acquire","key":"orders","value":{"mode":"exclusive","lease_ms":500},"time":1200,"clock":3})",
    R"({"index":1,"type":"ok","process":0,"f":"acquire","key":"orders","value":{"token":"c0-1","fence":7,"mode":"shared"},"time":98000,"clock":4})",
    R"({"index":2,"type":"info","process":"nemesis","f":"pause","value":{"target":0,"ms":800},"time":99000})",
    R"({"index":3,"type":"info","process":"nemesis","f":"partition","value":{"target":"redis-0"},"time":99001})",
    R"({"index":4,"type":"invoke","process":3,"f":"write","key":"resource","value":12,"time":10,"fence":9})",
    R"({"index":5,"type":"fail","process":3,"f":"write","key":"resource","value":12,"time":11,"error":"stale-fence","fence":9})",
    R"({"index":6,"type":"ok","process":2,"f":"read","key":"r","value":null,"time":12})",
    R"({"index":7,"type":"invoke","process":2,"f":"cas","key":"r","value":[1,-4],"time":13})",
    R"({"index":8,"type":"invoke","process":2,"f":"release","key":"k\u00e9y","value":{"token":"t\"x"},"time":-14})",
    R"({"index":9,"type":"info","process":2,"f":"release","key":"k","time":15,"error":"timeout"})",
};

TEST(EventDecoder, BothPathsDecodeTheEngineLayoutAlike) {
    EventDecoder decoder;
    for (std::string line : kEngineLines) {
        Event fast;
        Event general;
        line.push_back('\0');
        const char* begin = line.data();
        const char* end = line.data() + line.size() - 1;
        ASSERT_TRUE(decoder.decode_canonical(begin, end, 5, fast)) << line;
        decoder.decode_general(begin, end, 5, general);
        expect_same(fast, general, line);
    }
}

TEST(EventDecoder, BothPathsDecodeAGeneratedHistoryAlike) {
    testing::HistoryGenerator generator({.seed = 3, .processes = 16, .keys = 4});
    std::string text;
    for (int i = 0; i < 20'000; ++i)
        generator.append_next(text);
    std::istringstream in(text);
    EventDecoder decoder;
    std::uint64_t line_no = 0;
    for (std::string line; std::getline(in, line);) {
        ++line_no;
        Event fast;
        Event general;
        const char* begin = line.c_str();
        const char* end = begin + line.size();
        ASSERT_TRUE(decoder.decode_canonical(begin, end, line_no, fast)) << line;
        decoder.decode_general(begin, end, line_no, general);
        expect_same(fast, general, line);
    }
    EXPECT_EQ(line_no, 20'000u);
}

TEST(EventDecoder, AnyOtherLayoutTakesTheGeneralPathToTheSameEvent) {
    const std::string engine = kEngineLines[4];
    const std::string other =
        R"({ "fence" : 9, "time" : 10, "value" : 12, "key" : "resource", "f" : "write", "process" : 3, "type" : "invoke", "index" : 4, "extra" : [1, {"a": null}] })";
    EventDecoder decoder;
    Event canonical;
    Event reordered;
    Event unused;
    ASSERT_FALSE(decoder.decode_canonical(other.c_str(), other.c_str() + other.size(), 1, unused));
    decoder.decode(engine.c_str(), engine.c_str() + engine.size(), 1, canonical);
    decoder.decode(other.c_str(), other.c_str() + other.size(), 1, reordered);
    expect_same(canonical, reordered, other);
}

TEST(EventDecoder, ALibrarysSignalIsNoClientsEventAndNeverATarget) {
    // As the engine writes it (the fast path) and reordered (the general path).
    const std::string engine =
        R"({"index":7,"type":"info","process":"library","f":"lost","key":"k0",)"
        R"("value":{"process":3,"token":"t1","text":"refresh failed","target":3},"time":42})";
    const std::string other =
        R"({"process":"library","time":42,"index":7,"f":"lost","type":"info","key":"k0",)"
        R"("value":{"process":3,"token":"t1","text":"refresh failed","target":3}})";
    EventDecoder decoder;
    for (const std::string& line : {engine, other}) {
        Event e;
        decoder.decode(line.c_str(), line.c_str() + line.size(), 1, e);
        EXPECT_TRUE(e.is_library()) << line;
        EXPECT_TRUE(e.is_nemesis()) << line;  // every reader that skips the nemesis skips it
        EXPECT_EQ(e.process, kNemesisProcess) << line;
        EXPECT_EQ(e.f, "lost");
        EXPECT_EQ(e.key, "k0");
        EXPECT_EQ(e.time, 42);
        EXPECT_EQ(e.target, std::nullopt) << "a library's event must never read as a crash";
        EXPECT_EQ(e.value_json, R"({"process":3,"token":"t1","text":"refresh failed","target":3})");
    }
    // The decoder's state does not leak into the next line.
    const std::string nemesis = R"({"index":8,"type":"info","process":"nemesis","f":"crash",)"
                                R"("value":{"target":3},"time":43})";
    Event e;
    decoder.decode(nemesis.c_str(), nemesis.c_str() + nemesis.size(), 2, e);
    EXPECT_FALSE(e.is_library());
    EXPECT_EQ(e.target, 3);
}

TEST(EventDecoder, AMalformedLineIsWordedByTheGeneralPath) {
    // A line that starts in the engine's layout and then goes wrong must get the general path's
    // description, not the fast path's first complaint.
    const std::vector<std::pair<std::string, std::string>> cases = {
        {R"({"index":0,"type":"invoke","process":0,"f":"read","key":"k","time":1.5})",
         "line 2: field `time` must be an integer"},
        {R"({"index":0,"type":"done","process":0,"f":"read","key":"k","time":1})",
         "line 2: field `type` must be one of invoke, ok, fail, info"},
        {R"({"index":0,"type":"ok","process":-1,"f":"read","key":"k","time":1})",
         "line 2: field `process` must be an integer >= 0, \"nemesis\" or \"library\""},
    };
    EventDecoder decoder;
    for (const auto& [line, message] : cases) {
        Event e;
        try {
            decoder.decode(line.c_str(), line.c_str() + line.size(), 2, e);
            ADD_FAILURE() << "no error for " << line;
        } catch (const HistoryError& error) {
            EXPECT_EQ(std::string(error.what()), message) << line;
        }
    }
}

}  // namespace
}  // namespace lockbench::checker
