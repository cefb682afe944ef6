#pragma once

// Helpers for the checker's tests: hand-written histories without hand-maintained indices, built
// from named operations where that reads better than the events, and one check fed through the
// real reader.

#include <algorithm>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "checker/history.hpp"

namespace lockbench::checker::testing {

// Gives each event line of `text` (one JSON object per line, blank lines dropped) its "index"
// field, counting from 0, so a test can insert a line without renumbering the rest.
inline std::string numbered(std::string_view text) {
    std::string out;
    std::size_t index = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        const std::size_t brace = line.find('{');
        if (brace == std::string_view::npos)
            continue;
        out += "{\"index\":" + std::to_string(index++) + ",";
        out += line.substr(brace + 1);
        out += "\n";
    }
    return out;
}

// Builders of hand-written history lines (checker/HISTORY.md), so that a history reads as what
// happened and two tests' histories differ where their stories do. Times in ns; `value`s are
// JSON text.

// One event: `type` ("invoke", "ok", "fail" or "info") of `process`'s `f` on `key`; an `error`
// names why it failed or is in doubt.
inline std::string event(std::string_view type, int process, std::string_view f,
                         std::string_view key, std::string_view value, std::int64_t time,
                         std::string_view error = {}) {
    std::string line = "{\"type\":\"" + std::string(type) +
                       "\",\"process\":" + std::to_string(process) + ",\"f\":\"" + std::string(f) +
                       "\",\"key\":\"" + std::string(key) + "\",\"value\":" + std::string(value) +
                       ",\"time\":" + std::to_string(time);
    if (!error.empty())
        line += ",\"error\":\"" + std::string(error) + "\"";
    return line + "}\n";
}

// A release's or a grant's value naming `token` (none: null).
inline std::string token_value(std::string_view token) {
    return token.empty() ? "null" : "{\"token\":\"" + std::string(token) + "\"}";
}

// `process` asks for `key` at `asked` and is granted it as `token` at `ok`.
inline std::string granted(int process, std::string_view key, std::string_view token,
                           std::int64_t asked, std::int64_t ok) {
    return event("invoke", process, "acquire", key, "null", asked) +
           event("ok", process, "acquire", key, token_value(token), ok);
}

// `process` asks for `key` exclusively with a lease of `lease_ms` at `asked` and is granted it as
// `token` at `ok`.
inline std::string granted_leased(int process, std::string_view key, std::string_view token,
                                  int lease_ms, std::int64_t asked, std::int64_t ok) {
    return event("invoke", process, "acquire", key,
                 "{\"mode\":\"exclusive\",\"lease_ms\":" + std::to_string(lease_ms) + "}", asked) +
           event("ok", process, "acquire", key, token_value(token), ok);
}

// `process` asks for `key` at `asked` and is granted it as `token` with `fence` at `ok`.
inline std::string granted_fenced(int process, std::string_view key, std::string_view token,
                                  std::int64_t fence, std::int64_t asked, std::int64_t ok) {
    return event("invoke", process, "acquire", key, "null", asked) +
           event(
               "ok", process, "acquire", key,
               "{\"token\":\"" + std::string(token) + "\",\"fence\":" + std::to_string(fence) + "}",
               ok);
}

// As granted_leased, with the grant naming its mode, as the Redis strategies' grants do, and its
// `fence` (0: none).
inline std::string granted_exclusive(int process, std::string_view key, std::string_view token,
                                     int lease_ms, std::int64_t asked, std::int64_t ok,
                                     std::int64_t fence = 0) {
    const std::string fence_field = fence ? ",\"fence\":" + std::to_string(fence) : "";
    return event("invoke", process, "acquire", key,
                 "{\"mode\":\"exclusive\",\"lease_ms\":" + std::to_string(lease_ms) + "}", asked) +
           event("ok", process, "acquire", key,
                 "{\"token\":\"" + std::string(token) + "\"" + fence_field +
                     ",\"mode\":\"exclusive\"}",
                 ok);
}

// `process` reads `value` of `key`: asked at `asked`, answered at `ok`.
inline std::string read_ok(int process, std::string_view key, std::int64_t value,
                           std::int64_t asked, std::int64_t ok) {
    return event("invoke", process, "read", key, "null", asked) +
           event("ok", process, "read", key, std::to_string(value), ok);
}

// `process` writes `value` to `key`: asked at `asked`, acknowledged at `ok`.
inline std::string write_ok(int process, std::string_view key, std::int64_t value,
                            std::int64_t asked, std::int64_t ok) {
    return event("invoke", process, "write", key, std::to_string(value), asked) +
           event("ok", process, "write", key, std::to_string(value), ok);
}

// One event of `process`'s write of `value` to `key` with `fence` (0: none), which stands after
// the value as the recorder writes it; an `error` names why it failed (stale-fence).
inline std::string write_event(std::string_view type, int process, std::string_view key,
                               std::int64_t value, std::int64_t fence, std::int64_t time,
                               std::string_view error = {}) {
    const std::string fence_field = fence ? ",\"fence\":" + std::to_string(fence) : "";
    return event(type, process, "write", key, std::to_string(value) + fence_field, time, error);
}

// `process` asks for `key` at `asked` and is refused at `failed` (`error`: why).
inline std::string refused(int process, std::string_view key, std::int64_t asked,
                           std::int64_t failed, std::string_view error = "held") {
    return event("invoke", process, "acquire", key, "null", asked) +
           event("fail", process, "acquire", key, "null", failed, error);
}

// `process` asks to release `token` of `key` at `asked`; released at `ok`.
inline std::string released(int process, std::string_view key, std::string_view token,
                            std::int64_t asked, std::int64_t ok) {
    return event("invoke", process, "release", key, token_value(token), asked) +
           event("ok", process, "release", key, "null", ok);
}

// `process` asks to release `token` of `key` at `asked`; the release fails at `failed` (`error`).
inline std::string release_failed(int process, std::string_view key, std::string_view token,
                                  std::int64_t asked, std::int64_t failed, std::string_view error) {
    return event("invoke", process, "release", key, token_value(token), asked) +
           event("fail", process, "release", key, "null", failed, error);
}

// `process` asks for `f` on `key` at `asked`, and the answer at `info` leaves it in doubt.
inline std::string in_doubt(int process, std::string_view f, std::string_view key,
                            std::string_view value, std::int64_t asked, std::int64_t info,
                            std::string_view error = "timeout") {
    return event("invoke", process, f, key, value, asked) +
           event("info", process, f, key, "null", info, error);
}

// The nemesis crashes process `target` (client 0) at `time`.
inline std::string crashed(int target, std::int64_t time) {
    return "{\"type\":\"info\",\"process\":\"nemesis\",\"f\":\"crash\",\"value\":{\"target\":" +
           std::to_string(target) + ",\"client\":0},\"time\":" + std::to_string(time) + "}\n";
}

// The nemesis pauses process `target` for `ms` at `time`.
inline std::string paused(int target, int ms, std::int64_t time) {
    return "{\"type\":\"info\",\"process\":\"nemesis\",\"f\":\"pause\",\"value\":{\"target\":" +
           std::to_string(target) + ",\"ms\":" + std::to_string(ms) +
           "},\"time\":" + std::to_string(time) + "}\n";
}

// The nemesis resumes the paused process `target` at `time`.
inline std::string resumed(int target, std::int64_t time) {
    return "{\"type\":\"info\",\"process\":\"nemesis\",\"f\":\"resume\",\"value\":{\"target\":" +
           std::to_string(target) + "},\"time\":" + std::to_string(time) + "}\n";
}

// The library granted `process`'s acquire of `key`, which its adapter had answered in doubt, at
// `time` (HISTORY.md, `late-grant`), as `token` (none: unsaid).
inline std::string late_granted(int process, std::string_view key, std::int64_t time,
                                std::string_view token = {}) {
    std::string value = "{\"process\":" + std::to_string(process) + ",\"phase\":\"granted\"";
    if (!token.empty())
        value += ",\"token\":\"" + std::string(token) + "\"";
    return "{\"type\":\"info\",\"process\":\"library\",\"f\":\"late-grant\",\"key\":\"" +
           std::string(key) + "\",\"value\":" + value + "},\"time\":" + std::to_string(time) +
           "}\n";
}

// The library told `process`, holding `key` as `token`, at `time` that it lost the lock, in the
// words `text` (HISTORY.md, `lost`).
inline std::string library_lost(int process, std::string_view key, std::string_view token,
                                std::string_view text, std::int64_t time) {
    return "{\"type\":\"info\",\"process\":\"library\",\"f\":\"lost\",\"key\":\"" +
           std::string(key) + "\",\"value\":{\"process\":" + std::to_string(process) +
           ",\"token\":\"" + std::string(token) + "\",\"text\":\"" + std::string(text) +
           "\"},\"time\":" + std::to_string(time) + "}\n";
}

// The adapter released `process`'s late grant of `key` at `time`: `ok` says whether the release
// succeeded.
inline std::string late_released(int process, std::string_view key, std::int64_t time, bool ok) {
    return "{\"type\":\"info\",\"process\":\"library\",\"f\":\"late-grant\",\"key\":\"" +
           std::string(key) + "\",\"value\":{\"process\":" + std::to_string(process) +
           ",\"phase\":\"released\",\"ok\":" + (ok ? "true" : "false") +
           "},\"time\":" + std::to_string(time) + "}\n";
}

// The library gave up `process`'s in-doubt acquire of `key` at `time`, and whatever it held is
// gone (HISTORY.md, `abandoned`).
inline std::string late_abandoned(int process, std::string_view key, std::int64_t time) {
    return "{\"type\":\"info\",\"process\":\"library\",\"f\":\"late-grant\",\"key\":\"" +
           std::string(key) + "\",\"value\":{\"process\":" + std::to_string(process) +
           ",\"phase\":\"abandoned\"},\"time\":" + std::to_string(time) + "}\n";
}

// T1's opening (the paused holder): process 1 takes k0 exclusively with a 300 ms lease as token
// c1-1 (with `fence`, 0: none) at 0.101 s, reads 4 and is paused for `pause_ms` at 0.110 s.
inline std::string t1_holder_reads_and_pauses(int pause_ms, std::int64_t fence = 0) {
    return granted_exclusive(1, "k0", "c1-1", 300, 100000000, 101000000, fence) +
           read_ok(1, "k0", 4, 102000000, 103000000) + paused(1, pause_ms, 110000000);
}

// T1's next holder: process 2 asks for k0 as process 1 did at `asked`, is granted it as c2-1
// (with `fence`, 0: none) at `granted` and reads the same 4, asked a `step` after the grant and
// answered two after it.
inline std::string t1_next_holder_reads(std::int64_t asked, std::int64_t granted, std::int64_t step,
                                        std::int64_t fence = 0) {
    return granted_exclusive(2, "k0", "c2-1", 300, asked, granted, fence) +
           read_ok(2, "k0", 4, granted + step, granted + 2 * step);
}

// `history` with the `insertions` added, each before the event line of its number (counting
// from 0; blank lines do not count), so that a test tells a shared history with events of its
// own among them.
inline std::string with_inserted(std::string_view history,
                                 const std::map<int, std::string>& insertions) {
    std::string out;
    int n = 0;
    while (!history.empty()) {
        const std::size_t nl = history.find('\n');
        const std::string_view line = history.substr(0, nl);
        history = nl == std::string_view::npos ? std::string_view() : history.substr(nl + 1);
        if (line.empty())
            continue;
        if (const auto inserted = insertions.find(n++); inserted != insertions.end())
            out += inserted->second;
        out += line;
        out += "\n";
    }
    return out;
}

// Process 1 takes k0 as token a and releases it: a history every check passes.
inline constexpr const char* kOneHold = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":1}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"a"},"time":2}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"a"},"time":3}
{"type":"ok","process":1,"f":"release","key":"k0","value":null,"time":4}
)";

// Process 1 holds k0 from 0.5 s; process 3 is granted it at 1.204 s; process 1 releases at 1.5 s:
// the smallest mutual-exclusion violation, one incident.
inline constexpr const char* kOverlap = R"(
{"type":"invoke","process":1,"f":"acquire","key":"k0","value":null,"time":400000000}
{"type":"ok","process":1,"f":"acquire","key":"k0","value":{"token":"c1-4","mode":"exclusive"},"time":500000000}
{"type":"invoke","process":3,"f":"acquire","key":"k0","value":null,"time":1100000000}
{"type":"ok","process":3,"f":"acquire","key":"k0","value":{"token":"c3-7","mode":"exclusive"},"time":1204000000}
{"type":"invoke","process":1,"f":"release","key":"k0","value":{"token":"c1-4"},"time":1500000000}
)";

// The events of a history with its indices (as a generator writes it), read by the real reader.
inline std::vector<Event> events_of(const std::string& jsonl) {
    std::istringstream in(jsonl);
    HistoryReader reader(in);
    std::vector<Event> events;
    Event event;
    while (reader.next(event)) {
        events.push_back(event);
    }
    return events;
}

// Runs one streaming check over a numbered history and finishes it at the last event's time.
template <class Check>
void run_check(Check& check, std::string_view text) {
    std::istringstream in{numbered(text)};
    HistoryReader reader(in);
    Event event;
    std::int64_t end_time_ns = 0;
    while (reader.next(event)) {
        end_time_ns = std::max(end_time_ns, event.time);
        check.on_event(event);
    }
    check.finish(end_time_ns);
}

}  // namespace lockbench::checker::testing
