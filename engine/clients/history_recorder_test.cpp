// The history recorder formats each event on the recording thread, into a buffer of its own:
// the bytes it writes must be exactly those of the formatter it replaced (spelled out below), and
// read back, event for event, as what was recorded (checker/HISTORY.md).

#include "engine/clients/history_recorder.hpp"

#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "checker/history.hpp"
#include "checker/testing/temp_dir.hpp"

namespace lockbench {
namespace {

HistoryEvent event(EventType type, std::int64_t process, std::string_view f, std::string key,
                   std::string value = "null", std::string error = {}) {
    HistoryEvent e;
    e.type = type;
    e.process = process;
    e.f = f;
    e.key = std::move(key);
    e.value = std::move(value);
    e.error = std::move(error);
    return e;
}

// Every event type, every kind of process, each optional field with and without, and strings
// that need escaping (quotes, backslashes, control characters) or are not ASCII.
std::vector<HistoryEvent> every_shape() {
    const std::string awkward_key = "k\"q\\b\n\r\t\x01\x1f\x7f-ключ-é-🔒";
    std::vector<HistoryEvent> events;
    auto add = [&](HistoryEvent e) { events.push_back(std::move(e)); };
    add(event(EventType::Invoke, 0, "acquire", "k1", R"({"mode":"exclusive","lease_ms":30000})"));
    {
        auto e = event(EventType::Ok, 0, "acquire", "k1",
                       R"({"token":"c0-03bedd:1","fence":7,"mode":"exclusive"})");
        e.clock_ms = 1'764'000'000'123;
        add(std::move(e));
    }
    add(event(EventType::Invoke, 0, "read", "k1"));
    add(event(EventType::Ok, 0, "read", "k1", "41"));
    {
        auto e = event(EventType::Invoke, 0, "write", "k1", "42");
        e.fence = 7;
        add(std::move(e));
        auto ok = event(EventType::Fail, 0, "write", "k1", "42", "stale-fence");
        ok.fence = -3;
        ok.clock_ms = -1;
        add(std::move(ok));
    }
    add(event(EventType::Invoke, 0, "release", "k1", R"({"token":"c0-03bedd:1"})"));
    add(event(EventType::Ok, 0, "release", "k1"));
    add(event(EventType::Invoke, 12345678901, "acquire", awkward_key, "null"));
    add(event(EventType::Fail, 12345678901, "acquire", awkward_key, "null", "held"));
    add(event(EventType::Invoke, 2, "release", "", R"({"token":"tök\"en"})"));
    add(event(EventType::Info, 2, "release", "", "null",
              "no reply from 127.0.0.1:6379 within 50 ms: \"quoted\" \\ \x02 ünïcode"));
    add(event(EventType::Info, HistoryEvent::kNemesis, "pause", "", R"({"target":3})"));
    add(event(EventType::Info, HistoryEvent::kLibrary, "lost", "k\te",
              R"({"process":3,"token":"0c7e","text":"refresh failed"})"));
    add(event(EventType::Info, HistoryEvent::kNemesis, "crash", "", R"({"target":0})",
              "the nemesis's \"crash\""));
    return events;
}

// The contract's bytes of every_shape()'s events at index 987654321 and time -5, as the formatter
// the recorder replaced wrote them. Spelled out rather than recomputed: a second formatter here
// would only repeat the product's escaping.
const std::vector<std::string> kEveryShapeAt987654321 = {
    R"({"index":987654321,"type":"invoke","process":0,"f":"acquire","key":"k1","value":{"mode":"exclusive","lease_ms":30000},"time":-5})",
    R"({"index":987654321,"type":"ok","process":0,"f":"acquire","key":"k1","value":{"token":"c0-03bedd:1","fence":7,"mode":"exclusive"},"time":-5,"clock":1764000000123})",
    R"({"index":987654321,"type":"invoke","process":0,"f":"read","key":"k1","value":null,"time":-5})",
    R"({"index":987654321,"type":"ok","process":0,"f":"read","key":"k1","value":41,"time":-5})",
    R"({"index":987654321,"type":"invoke","process":0,"f":"write","key":"k1","value":42,"time":-5,"fence":7})",
    R"({"index":987654321,"type":"fail","process":0,"f":"write","key":"k1","value":42,"time":-5,"clock":-1,"error":"stale-fence","fence":-3})",
    R"({"index":987654321,"type":"invoke","process":0,"f":"release","key":"k1","value":{"token":"c0-03bedd:1"},"time":-5})",
    R"({"index":987654321,"type":"ok","process":0,"f":"release","key":"k1","value":null,"time":-5})",
    R"({"index":987654321,"type":"invoke","process":12345678901,"f":"acquire","key":"k\"q\\b\n\r\t\u0001\u001f)"
    "\x7f"
    R"(-ключ-é-🔒","value":null,"time":-5})",
    R"({"index":987654321,"type":"fail","process":12345678901,"f":"acquire","key":"k\"q\\b\n\r\t\u0001\u001f)"
    "\x7f"
    R"(-ключ-é-🔒","value":null,"time":-5,"error":"held"})",
    R"({"index":987654321,"type":"invoke","process":2,"f":"release","key":"","value":{"token":"tök\"en"},"time":-5})",
    R"({"index":987654321,"type":"info","process":2,"f":"release","key":"","value":null,"time":-5,"error":"no reply from 127.0.0.1:6379 within 50 ms: \"quoted\" \\ \u0002 ünïcode"})",
    R"({"index":987654321,"type":"info","process":"nemesis","f":"pause","key":"","value":{"target":3},"time":-5})",
    R"({"index":987654321,"type":"info","process":"library","f":"lost","key":"k\te","value":{"process":3,"token":"0c7e","text":"refresh failed"},"time":-5})",
    R"({"index":987654321,"type":"info","process":"nemesis","f":"crash","key":"","value":{"target":0},"time":-5,"error":"the nemesis's \"crash\""})",
};

TEST(HistoryRecorderTest, WritesTheBytesOfTheFormerFormatterForEveryShapeOfEvent) {
    testing::TempDir dir;
    const auto path = dir.path() / "history.jsonl";
    const auto events = every_shape();
    std::string expected;
    {
        HistoryRecorder recorder(path, EventLoop::now());
        // The static formatter, held to the contract's bytes below, for this index and time.
        for (std::size_t i = 0; i < events.size(); ++i) {
            const std::int64_t time = recorder.record(events[i]);
            HistoryRecorder::append_json(expected, events[i], i, time);
            expected += "\n";
        }
        recorder.finish();
        EXPECT_EQ(recorder.events(), events.size());
    }
    EXPECT_EQ(testing::read_file(path), expected);
}

TEST(HistoryRecorderTest, ABorrowedEventReadsBackAsRecordedWithItsClientsClock) {
    testing::TempDir dir;
    const auto path = dir.path() / "history.jsonl";
    const auto events = every_shape();
    const Clock clock = Clock::manual(1'764'000'000'000);
    std::vector<std::int64_t> times;
    {
        HistoryRecorder recorder(path, EventLoop::now());
        for (const HistoryEvent& e : events) {
            // The client's hot path: strings borrowed, the clock read at the event's time.
            times.push_back(recorder.record(HistoryEventView{
                .type = e.type,
                .process = e.process,
                .f = e.f,
                .key = e.key,
                .value = e.value,
                .clock_ms = e.clock_ms,
                .clock = e.clock_ms ? nullptr : &clock,
                .error = e.error,
                .fence = e.fence,
            }));
        }
        recorder.finish();
    }
    checker::HistoryReader reader(path);
    checker::Event got;
    for (std::size_t i = 0; i < events.size(); ++i) {
        SCOPED_TRACE("event " + std::to_string(i));
        ASSERT_TRUE(reader.next(got));
        const HistoryEvent& e = events[i];
        EXPECT_EQ(got.index, i);
        EXPECT_EQ(static_cast<int>(got.type), static_cast<int>(e.type));
        EXPECT_EQ(got.library, e.process == HistoryEvent::kLibrary);
        EXPECT_EQ(got.process,
                  e.process == HistoryEvent::kLibrary ? checker::kNemesisProcess : e.process);
        EXPECT_EQ(got.f, e.f);
        EXPECT_EQ(got.key, e.key);
        EXPECT_EQ(got.value_json, e.value);
        EXPECT_EQ(got.time, times[i]);
        EXPECT_EQ(got.clock_ms, e.clock_ms.value_or(1'764'000'000'000));
        EXPECT_EQ(got.error, e.error);
        if (e.f == "write") {
            EXPECT_EQ(got.fence, e.fence);
        }
    }
    EXPECT_FALSE(reader.next(got));
}

TEST(HistoryRecorderTest, TheStaticFormatterAgreesWithTheReferenceForBothForms) {
    const auto events = every_shape();
    ASSERT_EQ(events.size(), kEveryShapeAt987654321.size());
    for (std::size_t i = 0; i < events.size(); ++i) {
        SCOPED_TRACE("event " + std::to_string(i));
        const HistoryEvent& e = events[i];
        std::string owned;
        HistoryRecorder::append_json(owned, e, 987'654'321, -5);
        EXPECT_EQ(owned, kEveryShapeAt987654321[i]);
        std::string borrowed;
        HistoryRecorder::append_json(borrowed,
                                     HistoryEventView{.type = e.type,
                                                      .process = e.process,
                                                      .f = e.f,
                                                      .key = e.key,
                                                      .value = e.value,
                                                      .clock_ms = e.clock_ms,
                                                      .error = e.error,
                                                      .fence = e.fence},
                                     987'654'321, -5);
        EXPECT_EQ(borrowed, owned);
    }
}

TEST(HistoryRecorderTest, ThreadsRecordingAtOnceGetGaplessIndexesInTimeOrder) {
    testing::TempDir dir;
    const auto path = dir.path() / "history.jsonl";
    constexpr int kThreads = 4;
    constexpr int kCyclesPerThread = 20'000;  // past the writer's early wake-up, several times
    {
        HistoryRecorder recorder(path, EventLoop::now());
        std::vector<std::thread> threads;
        for (int t = 0; t < kThreads; ++t) {
            threads.emplace_back([&recorder, t] {
                const std::string key = "k" + std::to_string(t);
                for (int i = 0; i < kCyclesPerThread; ++i) {
                    const std::string value = std::to_string(i);
                    recorder.record(HistoryEventView{.type = EventType::Invoke,
                                                     .process = t,
                                                     .f = "write",
                                                     .key = key,
                                                     .value = value});
                    recorder.record(HistoryEventView{.type = EventType::Ok,
                                                     .process = t,
                                                     .f = "write",
                                                     .key = key,
                                                     .value = value});
                }
            });
        }
        for (auto& th : threads)
            th.join();
        recorder.finish();
        EXPECT_EQ(recorder.events(), std::uint64_t{2} * kThreads * kCyclesPerThread);
    }
    // The reader itself refuses an index that does not follow the one before.
    checker::HistoryReader reader(path);
    checker::Event got;
    std::int64_t last_time = 0;
    std::vector<int> next_value(kThreads, 0);
    std::vector<bool> invoked(kThreads, false);
    std::uint64_t read = 0;
    while (reader.next(got)) {
        ++read;
        ASSERT_GE(got.time, last_time) << "line " << got.line;
        last_time = got.time;
        const auto t = static_cast<std::size_t>(got.process);
        ASSERT_EQ(got.key, "k" + std::to_string(t));
        ASSERT_EQ(got.value_json, std::to_string(next_value[t])) << "line " << got.line;
        if (invoked[t])
            ++next_value[t];
        invoked[t] = !invoked[t];
    }
    EXPECT_EQ(read, std::uint64_t{2} * kThreads * kCyclesPerThread);
    for (int v : next_value)
        EXPECT_EQ(v, kCyclesPerThread);
}

}  // namespace
}  // namespace lockbench
