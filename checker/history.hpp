#pragma once

// Reads history.jsonl (checker/HISTORY.md, a contract) one event at a time. The reader keeps only
// what it needs to validate the stream (the open operation of each process), so a history of any
// length is read in one pass and bounded memory. A malformed line throws HistoryError naming it.

#include <cstdint>
#include <filesystem>
#include <istream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace lockbench::checker {

enum class EventType : std::uint8_t { Invoke, Ok, Fail, Info };
// How a line's `type` field spells it: what the engine writes and the story quotes.
constexpr std::string_view event_type_word(EventType t) {
    switch (t) {
        case EventType::Invoke:
            return "invoke";
        case EventType::Ok:
            return "ok";
        case EventType::Fail:
            return "fail";
        case EventType::Info:
            return "info";
    }
    return "info";
}
enum class LockMode : std::uint8_t { Exclusive, Shared };
// How a lock operation's `mode` spells it.
constexpr std::string_view lock_mode_word(LockMode mode) {
    return mode == LockMode::Shared ? "shared" : "exclusive";
}

inline constexpr std::int64_t kNemesisProcess = -1;

// One line of the history, decoded. Fields a line does not carry keep their defaults.
struct Event {
    std::uint64_t line = 0;  // 1-based line number in the file
    std::uint64_t index = 0;
    EventType type = EventType::Invoke;
    std::int64_t process = 0;  // kNemesisProcess for "nemesis" and for "library"
    // "process": "library" (HISTORY.md): a lock library's own signal, such as "the lock was
    // lost". Its process is kNemesisProcess, so that every reader that passes over the nemesis's
    // events passes over these too: no check judges them, but linearizability places a
    // `late-grant`. Readers that show events (the story, the timeline) tell the two apart by this
    // flag.
    bool library = false;
    std::string f;
    std::string key;        // "" when omitted
    std::int64_t time = 0;  // ns since run start, the engine's one monotonic clock
    std::optional<std::int64_t> clock_ms;
    std::string error;       // fail/info only, "" when absent
    std::string value_json;  // the raw JSON text of `value` ("null" when absent)

    // `value`, decoded where HISTORY.md defines it:
    std::optional<std::int64_t> number;  // read ok / write: the integer (nullopt: null)
    std::optional<std::pair<std::int64_t, std::int64_t>> cas;  // cas: [from, to]
    std::string token;                     // acquire ok, release/renew invoke: value.token
    std::optional<std::int64_t> fence;     // acquire ok: value.fence; a resource write: the
                                           // top-level extra field "fence" it carried
    LockMode mode = LockMode::Exclusive;   // acquire invoke/ok: value.mode
    std::optional<std::int64_t> lease_ms;  // acquire invoke: value.lease_ms
    std::optional<std::int64_t> target;    // nemesis: value.target when it is an integer
                                           // (never for a library's event)

    // True for the nemesis's events and a library's: no client ran them.
    bool is_nemesis() const { return process == kNemesisProcess; }
    bool is_library() const { return library; }
};

class HistoryError : public std::runtime_error {
  public:
    HistoryError(std::uint64_t line, const std::string& message)
        : std::runtime_error("line " + std::to_string(line) + ": " + message), line_(line) {}
    // Where a text that is not a line per event (Jepsen's EDN) put the op: "line L, column C".
    HistoryError(std::uint64_t line, std::uint64_t column, const std::string& message)
        : std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(column) +
                             ": " + message),
          line_(line),
          column_(column) {}
    std::uint64_t line() const { return line_; }
    std::uint64_t column() const { return column_; }  // 0: the error names a line only

  private:
    std::uint64_t line_;
    std::uint64_t column_ = 0;
};

// Decodes a history line by line and validates the sequence: `index` increasing by 1 from 0, a
// completion only for the op its process has in flight, no second invoke while one is. For callers
// that get lines one at a time (the dashboard follows a file as it grows); HistoryReader adds the
// reading of a whole file or stream.
class HistoryParser {
  public:
    HistoryParser();
    ~HistoryParser();
    HistoryParser(const HistoryParser&) = delete;
    HistoryParser& operator=(const HistoryParser&) = delete;

    // Takes the next line, [begin, end) without its newline; *end must be writable (a NUL is
    // written there). Returns false for a blank line, which is allowed only at the end: an event
    // after one throws. Throws HistoryError for a line that is not a valid next event.
    bool parse(char* begin, char* end, Event& event);

    std::uint64_t lines() const;  // lines taken so far

  private:
    struct Sequence;
    std::unique_ptr<Sequence> sequence_;
};

class HistoryReader {
  public:
    // Throws std::system_error when the file cannot be opened (or, from next(), read).
    explicit HistoryReader(const std::filesystem::path& path);
    explicit HistoryReader(std::istream& in);
    ~HistoryReader();
    HistoryReader(const HistoryReader&) = delete;
    HistoryReader& operator=(const HistoryReader&) = delete;

    // Fills `event` with the next event; false at the end. Throws HistoryError for a line that is
    // not a valid event: bad JSON, a missing or mistyped field, `index` not increasing by 1,
    // a completion without an invoke, a second invoke while the process has one in flight.
    bool next(Event& event);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace lockbench::checker
