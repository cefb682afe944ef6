#include "checker/event_decoder.hpp"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "checker/json_cursor.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

namespace {

using json_cursor::Cursor;
using json_cursor::decoded;
using json_cursor::is_digit;
using json_cursor::kMaxDepth;
using json_cursor::Number;

// Which known field a name is; Unknown fields are validated and skipped.
enum class Field : std::uint8_t {
    Index,
    Type,
    Process,
    F,
    Key,
    Value,
    Time,
    Clock,
    Error,
    Fence,
    Unknown
};

Field field_of(std::string_view name) {
    switch (name.size()) {
        case 1:
            return name[0] == 'f' ? Field::F : Field::Unknown;
        case 3:
            return equals(name, "key") ? Field::Key : Field::Unknown;
        case 4:
            if (equals(name, "type"))
                return Field::Type;
            if (equals(name, "time"))
                return Field::Time;
            return Field::Unknown;
        case 5:
            switch (name[0]) {
                case 'i':
                    return equals(name, "index") ? Field::Index : Field::Unknown;
                case 'v':
                    return equals(name, "value") ? Field::Value : Field::Unknown;
                case 'c':
                    return equals(name, "clock") ? Field::Clock : Field::Unknown;
                case 'e':
                    return equals(name, "error") ? Field::Error : Field::Unknown;
                case 'f':
                    return equals(name, "fence") ? Field::Fence : Field::Unknown;
                default:
                    return Field::Unknown;
            }
        case 7:
            return equals(name, "process") ? Field::Process : Field::Unknown;
        default:
            return Field::Unknown;
    }
}

// `"<known field>":` as the engine writes it (no escapes, no space before the colon), matched
// with fixed-size compares; Unknown sends the caller to the general path.
Field quick_field(const char* p, std::size_t available, std::size_t& length) {
    const auto match = [&](const auto& literal, Field field) {
        constexpr std::size_t n = sizeof literal - 1;
        if (available >= n && std::memcmp(p, literal, n) == 0) {
            length = n;
            return field;
        }
        return Field::Unknown;
    };
    switch (available >= 2 ? p[1] : '\0') {
        case 'i':
            return match("\"index\":", Field::Index);
        case 't':
            return p[2] == 'y' ? match("\"type\":", Field::Type) : match("\"time\":", Field::Time);
        case 'p':
            return match("\"process\":", Field::Process);
        case 'f':
            return p[2] == '"' ? match("\"f\":", Field::F) : match("\"fence\":", Field::Fence);
        case 'k':
            return match("\"key\":", Field::Key);
        case 'v':
            return match("\"value\":", Field::Value);
        case 'c':
            return match("\"clock\":", Field::Clock);
        case 'e':
            return match("\"error\":", Field::Error);
        default:
            return Field::Unknown;
    }
}

constexpr const char* kFieldNames[] = {"index", "type", "process", "f",     "key",
                                       "value", "time", "clock",   "error", "fence"};

void reset(Event& e, std::uint64_t line) {
    e.line = line;
    e.index = 0;
    e.type = EventType::Invoke;
    e.process = 0;
    e.library = false;
    e.f.clear();
    e.key.clear();
    e.time = 0;
    e.clock_ms.reset();
    e.error.clear();
    e.value_json.assign("null");
    e.number.reset();
    e.cas.reset();
    e.token.clear();
    e.fence.reset();
    e.mode = LockMode::Exclusive;
    e.lease_ms.reset();
    e.target.reset();
}

[[noreturn]] void field_error(std::uint64_t line, Field field, std::string_view requirement) {
    throw HistoryError(line, "field `" + std::string(kFieldNames[static_cast<int>(field)]) + "` " +
                                 std::string(requirement));
}

// The checks subtract times and add leases to them in 64 bits; bounded here, no sum or
// difference of a few of them can overflow. Both bounds are about 31 years.
constexpr std::int64_t kMaxTimeNs = 1'000'000'000'000'000'000;
constexpr std::int64_t kMaxLeaseMs = 1'000'000'000'000;
constexpr const char* kTimeRequirement = "must be an integer between -10^18 and 10^18 (ns)";
constexpr const char* kProcessRequirement = "must be an integer >= 0, \"nemesis\" or \"library\"";

bool time_in_range(std::int64_t time) {
    return time >= -kMaxTimeNs && time <= kMaxTimeNs;
}

// What a line's fields leave for after its object is read: which known fields it had, its value's
// text, and a fence given beside the value (null or absent: none).
struct GeneralFields {
    std::uint16_t seen = 0;
    std::string_view raw_value;
    std::optional<std::int64_t> top_fence;
};

// At a field name: which known field it is, the cursor after its ':'.
Field read_field_name(Cursor& c, std::string& scratch, std::uint64_t line) {
    if (c.peek() != '"')
        c.invalid("expected a field name");
    std::size_t quick_length = 0;
    const Field quick = quick_field(c.pos(), c.remaining(), quick_length);
    if (quick != Field::Unknown) {
        c.seek(c.pos() + quick_length);
        return quick;
    }
    bool escaped = false;
    const std::string_view name = decoded(c.skip_string(escaped), escaped, scratch, line);
    c.skip_space();
    c.expect(':', "expected ':' after a field name");
    return field_of(name);
}

// A known field given twice would leave the event to whichever came last.
void mark_seen(std::uint16_t& seen, Field field, std::uint64_t line) {
    if (field == Field::Unknown)
        return;
    const auto bit = static_cast<std::uint16_t>(1u << static_cast<int>(field));
    if (seen & bit)
        throw HistoryError(line, "field `" + std::string(kFieldNames[static_cast<int>(field)]) +
                                     "` appears twice");
    seen = static_cast<std::uint16_t>(seen | bit);
}

std::uint64_t read_index(Cursor& c, std::uint64_t line) {
    if (c.peek() != '-' && !is_digit(c.peek()))
        field_error(line, Field::Index, "must be an integer >= 0");
    const Number n = c.read_number();
    if (!n.integer || n.value < 0)
        field_error(line, Field::Index, "must be an integer >= 0");
    return static_cast<std::uint64_t>(n.value);
}

EventType read_type(Cursor& c, std::string& scratch, std::uint64_t line) {
    if (c.peek() != '"')
        field_error(line, Field::Type, "must be one of invoke, ok, fail, info");
    bool escaped = false;
    const std::string_view type = decoded(c.skip_string(escaped), escaped, scratch, line);
    if (equals(type, "invoke"))
        return EventType::Invoke;
    if (equals(type, "ok"))
        return EventType::Ok;
    if (equals(type, "fail"))
        return EventType::Fail;
    if (equals(type, "info"))
        return EventType::Info;
    field_error(line, Field::Type, "must be one of invoke, ok, fail, info");
}

// A client's number, or "nemesis" / "library" (both kNemesisProcess; a library's is marked).
void read_process(Cursor& c, std::string& scratch, std::uint64_t line, Event& e) {
    if (c.peek() == '"') {
        bool escaped = false;
        const std::string_view name = decoded(c.skip_string(escaped), escaped, scratch, line);
        if (equals(name, "library"))
            e.library = true;
        else if (!equals(name, "nemesis"))
            field_error(line, Field::Process, kProcessRequirement);
        e.process = kNemesisProcess;
        return;
    }
    if (c.peek() != '-' && !is_digit(c.peek()))
        field_error(line, Field::Process, kProcessRequirement);
    const Number n = c.read_number();
    if (!n.integer || n.value < 0)
        field_error(line, Field::Process, kProcessRequirement);
    e.process = n.value;
}

// key and error: a string, or null for none (`out` stays empty).
void read_string_or_null(Cursor& c, Field field, std::uint64_t line, std::string& out) {
    if (c.peek() == '"')
        c.read_string(out);
    else if (!c.consume_literal("null"))
        field_error(line, field, "must be a string");
}

// time, clock and fence: an integer; clock and fence may be null (nullopt).
std::optional<std::int64_t> read_integer(Cursor& c, Field field, std::uint64_t line) {
    const bool nullable = field != Field::Time;
    if (nullable && c.consume_literal("null"))
        return std::nullopt;
    if (c.peek() != '-' && !is_digit(c.peek()))
        field_error(line, field, "must be an integer");
    const Number n = c.read_number();
    if (!n.integer)
        field_error(line, field, "must be an integer");
    if (field == Field::Time && !time_in_range(n.value))
        field_error(line, field, kTimeRequirement);
    return n.value;
}

// At a field name: reads the field and its value into `e` (the value and a top-level fence into
// `fields`, for after the object); an unknown field's value is checked and skipped.
void read_field(Cursor& c, std::string& scratch, std::uint64_t line, Event& e,
                GeneralFields& fields) {
    const Field field = read_field_name(c, scratch, line);
    c.skip_space();
    mark_seen(fields.seen, field, line);
    switch (field) {
        case Field::Index:
            e.index = read_index(c, line);
            break;
        case Field::Type:
            e.type = read_type(c, scratch, line);
            break;
        case Field::Process:
            read_process(c, scratch, line, e);
            break;
        case Field::F:
            if (c.peek() != '"')
                field_error(line, field, "must be a string");
            c.read_string(e.f);
            break;
        case Field::Key:
            read_string_or_null(c, field, line, e.key);
            break;
        case Field::Error:
            read_string_or_null(c, field, line, e.error);
            break;
        case Field::Value: {
            const char* start = c.pos();
            c.skip_value();
            fields.raw_value = std::string_view(start, static_cast<std::size_t>(c.pos() - start));
            break;
        }
        case Field::Time:
            e.time = *read_integer(c, field, line);
            break;
        case Field::Clock:
            if (const auto clock = read_integer(c, field, line))
                e.clock_ms = clock;
            break;
        case Field::Fence:
            if (const auto fence = read_integer(c, field, line))
                fields.top_fence = fence;
            break;
        case Field::Unknown:
            c.skip_value();
            break;
    }
}

void require_fields(std::uint16_t seen, std::uint64_t line) {
    for (Field required : {Field::Index, Field::Type, Field::Process, Field::F, Field::Time}) {
        if (!(seen & (1u << static_cast<int>(required))))
            throw HistoryError(
                line,
                "missing field `" + std::string(kFieldNames[static_cast<int>(required)]) + "`");
    }
}

}  // namespace

void EventDecoder::decode(const char* line_begin, const char* line_end, std::uint64_t line,
                          Event& e) {
    bool parsed = false;
    try {
        parsed = decode_canonical(line_begin, line_end, line, e);
    } catch (const HistoryError&) {
        // The general decoder below finds the same fault and describes it.
    }
    if (!parsed)
        decode_general(line_begin, line_end, line, e);
}

void EventDecoder::decode_general(const char* line_begin, const char* line_end, std::uint64_t line,
                                  Event& e) {
    start(line, e);
    Cursor c(line_begin, line_end, line_);
    GeneralFields fields;
    c.skip_space();
    c.expect('{', "expected '{' at the start of an event");
    c.skip_space();
    if (c.peek() == '}') {
        c.seek(c.pos() + 1);
    } else {
        for (;;) {
            c.skip_space();
            read_field(c, name_scratch_, line_, e, fields);
            c.skip_space();
            if (c.peek() == ',') {
                c.seek(c.pos() + 1);
                continue;
            }
            c.expect('}', "expected ',' or '}' after a field");
            break;
        }
    }
    c.skip_space();
    if (!c.at_end())
        c.invalid("unexpected text after the event object");

    require_fields(fields.seen, line_);
    if (!fields.raw_value.empty())
        e.value_json.assign(fields.raw_value.data(), fields.raw_value.size());
    if (fields.top_fence)
        e.fence = fields.top_fence;
    decode_value(e, fields.raw_value);
}

namespace {

// Matches a line against the engine's layout piece by piece: each step takes what it matches and
// says whether it did.
class CanonicalMatcher {
  public:
    CanonicalMatcher(const char* begin, const char* end, std::uint64_t line)
        : c_(begin, end, line) {}

    template <std::size_t N>
    bool literal(const char (&text)[N]) {
        constexpr std::size_t n = N - 1;
        if (c_.remaining() < n || std::memcmp(c_.pos(), text, n) != 0)
            return false;
        c_.seek(c_.pos() + n);
        return true;
    }

    bool integer(std::int64_t& out) {
        if (c_.peek() != '-' && !is_digit(c_.peek()))
            return false;
        const Number n = c_.read_number();
        out = n.value;
        return n.integer;
    }

    // After `"type":"`.
    bool type(EventType& type) {
        if (literal("invoke\""))
            type = EventType::Invoke;
        else if (literal("ok\""))
            type = EventType::Ok;
        else if (literal("fail\""))
            type = EventType::Fail;
        else if (literal("info\""))
            type = EventType::Info;
        else
            return false;
        return true;
    }

    // After `"process":`.
    bool process(Event& e) {
        if (literal("\"nemesis\"")) {
            e.process = kNemesisProcess;
        } else if (literal("\"library\"")) {
            e.process = kNemesisProcess;
            e.library = true;
        } else {
            std::int64_t number = 0;
            if (!integer(number) || number < 0)
                return false;
            e.process = number;
        }
        return true;
    }

    // After a literal that ends with the string's opening quote.
    void string(std::string& out) {
        c_.seek(c_.pos() - 1);
        c_.read_string(out);
    }

    // A value of any kind, as it is written.
    std::string_view raw_value() {
        const char* start = c_.pos();
        c_.skip_value();
        return std::string_view(start, static_cast<std::size_t>(c_.pos() - start));
    }

    bool at_end() const { return c_.at_end(); }

  private:
    Cursor c_;
};

}  // namespace

// The engine writes every event in one layout (engine/clients/history_recorder.cpp):
// {"index":N,"type":"T","process":P,"f":"F","key":"K","value":V,"time":N[,"clock":N]
// [,"error":"E"][,"fence":N]}. Matching that layout in a straight line avoids the general
// parser's per-field dispatch, whose branches a CPU cannot predict. Any other line (another
// order, spaces, extra fields, a mistyped field) returns false and takes the general path,
// which also produces the error messages.
bool EventDecoder::decode_canonical(const char* line_begin, const char* line_end,
                                    std::uint64_t line, Event& e) {
    start(line, e);
    CanonicalMatcher m(line_begin, line_end, line_);
    std::int64_t number = 0;
    if (!m.literal("{\"index\":") || !m.integer(number) || number < 0)
        return false;
    e.index = static_cast<std::uint64_t>(number);
    if (!m.literal(",\"type\":\"") || !m.type(e.type))
        return false;
    if (!m.literal(",\"process\":") || !m.process(e))
        return false;
    if (!m.literal(",\"f\":\""))
        return false;
    m.string(e.f);
    if (m.literal(",\"key\":\""))
        m.string(e.key);
    std::string_view raw_value;
    if (m.literal(",\"value\":"))
        raw_value = m.raw_value();
    if (!m.literal(",\"time\":") || !m.integer(number) || !time_in_range(number))
        return false;
    e.time = number;
    if (m.literal(",\"clock\":")) {
        if (!m.integer(number))
            return false;
        e.clock_ms = number;
    }
    if (m.literal(",\"error\":\""))
        m.string(e.error);
    if (m.literal(",\"fence\":")) {
        if (!m.integer(number))
            return false;
        e.fence = number;
    }
    if (!m.literal("}") || !m.at_end())
        return false;
    if (!raw_value.empty())
        e.value_json.assign(raw_value.data(), raw_value.size());
    decode_value(e, raw_value);
    return true;
}

void EventDecoder::start(std::uint64_t line, Event& e) {
    line_ = line;
    mode_given_ = false;
    reset(e, line);
}

namespace {

// Calls `read_member(name)` with `c` at each member's value of the object `c` is at, whose syntax
// the first pass validated; `read_member` leaves `c` after the value.
template <class ReadMember>
void for_each_member(Cursor& c, std::string& scratch, std::uint64_t line,
                     const ReadMember& read_member) {
    c.seek(c.pos() + 1);
    c.skip_space();
    if (c.peek() == '}')
        return;
    for (;;) {
        c.skip_space();
        bool escaped = false;
        const std::string_view raw_name = c.skip_string(escaped);
        const std::string_view name = decoded(raw_name, escaped, scratch, line);
        c.skip_space();
        c.seek(c.pos() + 1);  // ':' (already validated)
        c.skip_space();
        read_member(name);
        c.skip_space();
        if (c.peek() != ',')
            return;
        c.seek(c.pos() + 1);
    }
}

// Reads an event's value, whose JSON syntax the line's pass validated, into the fields of `e`
// its operation defines (HISTORY.md); a value that breaks them throws the field's error.
class ValueDecoder {
  public:
    ValueDecoder(std::string_view raw, std::uint64_t line, std::string& scratch, Event& e)
        : c_(raw.data(), raw.data() + raw.size(), line), line_(line), scratch_(scratch), e_(e) {}

    // A nemesis's value: only its `target` (the process a crash names) is read.
    void read_nemesis() {
        if (c_.peek() != '{')
            return;
        for_each_member(c_, scratch_, line_, [&](std::string_view name) {
            if (equals(name, "target") && (c_.peek() == '-' || is_digit(c_.peek()))) {
                const Number n = c_.read_number();
                if (n.integer)
                    e_.target = n.value;
            } else {
                c_.skip_value();
            }
        });
    }

    // A read's or write's value: the register's integer.
    void read_number() { e_.number = read_integer("must be an integer or null"); }

    // A compare-and-set's value: [from, to].
    void read_cas() {
        const char* requirement = "must be [from, to] with integers";
        if (c_.peek() != '[')
            error(requirement);
        c_.seek(c_.pos() + 1);
        c_.skip_space();
        const std::int64_t from = read_integer(requirement);
        c_.skip_space();
        if (c_.peek() != ',')
            error(requirement);
        c_.seek(c_.pos() + 1);
        c_.skip_space();
        const std::int64_t to = read_integer(requirement);
        c_.skip_space();
        if (c_.peek() != ']')
            error(requirement);
        e_.cas.emplace(from, to);
    }

    // An acquire's, release's or renew's value: the token, and an acquire's mode (setting
    // `mode_given`), fence and lease.
    void read_lock(bool is_acquire, bool& mode_given) {
        if (c_.peek() != '{')
            error("must be an object or null");
        for_each_member(c_, scratch_, line_, [&](std::string_view name) {
            if (equals(name, "token"))
                read_token();
            else if (is_acquire && equals(name, "mode"))
                read_mode(mode_given);
            else if (is_acquire && equals(name, "fence"))
                read_fence();
            else if (is_acquire && equals(name, "lease_ms"))
                read_lease();
            else
                c_.skip_value();
        });
    }

  private:
    [[noreturn]] void error(std::string_view requirement) const {
        throw HistoryError(line_, "field `value` of `" + e_.f + "` " + std::string(requirement));
    }

    std::int64_t read_integer(std::string_view requirement) {
        if (c_.peek() != '-' && !is_digit(c_.peek()))
            error(requirement);
        const Number n = c_.read_number();
        if (!n.integer)
            error(requirement);
        return n.value;
    }

    void read_token() {
        if (c_.peek() == '"')
            c_.read_string(e_.token);
        else if (!c_.consume_literal("null"))
            error("has a `token` that is not a string");
    }

    void read_mode(bool& mode_given) {
        if (c_.peek() != '"')
            error("has a `mode` that is not \"exclusive\" or \"shared\"");
        bool mode_escaped = false;
        const std::string_view raw_mode = c_.skip_string(mode_escaped);
        const std::string_view mode = decoded(raw_mode, mode_escaped, scratch_, line_);
        if (equals(mode, "exclusive"))
            e_.mode = LockMode::Exclusive;
        else if (equals(mode, "shared"))
            e_.mode = LockMode::Shared;
        else
            error("has a `mode` that is not \"exclusive\" or \"shared\"");
        mode_given = true;
    }

    void read_fence() {
        if (!c_.consume_literal("null"))
            e_.fence = read_integer("has a `fence` that is not an integer");
    }

    void read_lease() {
        if (!c_.consume_literal("null")) {
            constexpr const char* requirement =
                "has a `lease_ms` that is not an integer between 0 and 10^12";
            e_.lease_ms = read_integer(requirement);
            if (*e_.lease_ms < 0 || *e_.lease_ms > kMaxLeaseMs)
                error(requirement);
        }
    }

    Cursor c_;
    std::uint64_t line_;
    std::string& scratch_;
    Event& e_;
};

}  // namespace

void EventDecoder::decode_value(Event& e, std::string_view raw) {
    if (raw.empty() || raw == "null")
        return;
    ValueDecoder value(raw, line_, name_scratch_, e);
    // A library's signal names its client as value.process, never a target: nothing of it can
    // read as a nemesis's crash.
    if (e.library)
        return;
    if (e.is_nemesis()) {
        value.read_nemesis();
        return;
    }
    const std::string& f = e.f;
    if (equals(f, "read") || equals(f, "write")) {
        value.read_number();
        return;
    }
    if (equals(f, "cas")) {
        value.read_cas();
        return;
    }
    const bool is_acquire = equals(f, "acquire");
    if (!is_acquire && !equals(f, "release") && !equals(f, "renew"))
        return;  // an operation HISTORY.md does not define: kept raw in value_json only
    value.read_lock(is_acquire, mode_given_);
}

}  // namespace lockbench::checker
