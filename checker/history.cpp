#include "history.hpp"

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "streaming.hpp"

namespace lockbench::checker {

namespace {

// Checks 1-4 must keep up with millions of events per second, so a line is parsed in place by a
// strict hand-written scanner instead of building a DOM per line.

constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
// Nesting deeper than this in an extra field is not a history, it is an attack on the stack.
constexpr int kMaxDepth = 64;

bool is_json_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

struct Number {
    bool integer = false;  // no fraction, no exponent, fits in int64
    std::int64_t value = 0;
};

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

void append_utf8(std::string& out, std::uint32_t cp) {
    if (cp < 0x80) {
        out.push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
        out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
        out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
        out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
        out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
}

// A cursor over one line. Every error names the 1-based column, so a person can find the byte.
class Cursor {
  public:
    Cursor(const char* begin, const char* end, std::uint64_t line)
        : begin_(begin), p_(begin), end_(end), line_(line) {}

    const char* pos() const { return p_; }
    std::size_t remaining() const { return static_cast<std::size_t>(end_ - p_); }
    void seek(const char* p) { p_ = p; }
    bool at_end() const { return p_ == end_; }
    char peek() const { return p_ < end_ ? *p_ : '\0'; }

    // The hot loops below run without bounds checks: every line handed to a Cursor is followed
    // by a '\0' sentinel (HistoryReader::Impl::fill writes it), which no loop accepts.
    void skip_space() {
        const char* p = p_;
        while (is_json_space(*p))
            ++p;
        p_ = p;
    }

    [[noreturn, gnu::cold, gnu::noinline]] void invalid(std::string_view what) const {
        throw HistoryError(line_, "not valid JSON: " + std::string(what) + " at column " +
                                      std::to_string(p_ - begin_ + 1));
    }

    void expect(char c, std::string_view what) {
        if (p_ >= end_ || *p_ != c)
            invalid(p_ >= end_ ? std::string(what) + ", found the end of the line"
                               : std::string(what));
        ++p_;
    }

    bool consume_literal(std::string_view word) {
        if (static_cast<std::size_t>(end_ - p_) >= word.size() &&
            std::memcmp(p_, word.data(), word.size()) == 0) {
            p_ += word.size();
            return true;
        }
        return false;
    }

    // At a '"': decodes the string into `out`. The common case (no escapes) is one scan and one
    // assign.
    void read_string(std::string& out) {
        const char* start = p_ + 1;
        const char* p = plain_run(start);
        p_ = p;
        if (*p == '"') {
            out.assign(start, p);
            p_ = p + 1;
            return;
        }
        if (*p != '\\')
            control_or_end();
        out.assign(start, p);
        read_string_slow(out);
    }

    // At a '"': validates the string and returns its raw contents without the quotes; `escaped`
    // says whether it needs decoding.
    std::string_view skip_string(bool& escaped) {
        const char* start = p_ + 1;
        escaped = false;
        const char* p = plain_run(start);
        if (*p == '"') {
            p_ = p + 1;
            return std::string_view(start, static_cast<std::size_t>(p - start));
        }
        p_ = p;
        while (p_ < end_) {
            const char c = *p_;
            if (c == '"') {
                std::string_view raw(start, static_cast<std::size_t>(p_ - start));
                ++p_;
                return raw;
            }
            if (c == '\\') {
                escaped = true;
                ++p_;
                if (p_ >= end_)
                    break;
                if (*p_ == 'u') {
                    ++p_;
                    const std::uint32_t cp = read_hex4();
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (!consume_literal("\\u"))
                            invalid("a high surrogate must be followed by a low surrogate");
                        const std::uint32_t low = read_hex4();
                        if (low < 0xDC00 || low > 0xDFFF)
                            invalid("a high surrogate must be followed by a low surrogate");
                    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        invalid("a low surrogate without a high surrogate");
                    }
                    continue;
                }
                if (!is_simple_escape(*p_))
                    invalid("unknown escape sequence");
            } else if (static_cast<unsigned char>(c) < 0x20) {
                invalid("control character inside a string");
            }
            ++p_;
        }
        invalid("unterminated string");
    }

    Number read_number() {
        const char* p = p_;
        const bool negative = *p == '-';
        if (negative)
            ++p;
        if (!is_digit(*p)) {
            p_ = p;
            invalid("expected a digit");
        }
        Number n;
        n.integer = true;
        // Up to 18 digits cannot overflow an unsigned 64-bit accumulator; longer runs are rare
        // and checked digit by digit.
        std::uint64_t acc = 0;
        const char* digits = p;
        if (*p == '0') {
            ++p;
            if (is_digit(*p)) {
                p_ = p;
                invalid("leading zero in a number");
            }
        } else {
            while (is_digit(*p)) {
                const auto d = static_cast<std::uint64_t>(*p - '0');
                if (p - digits >= 18 && acc > (UINT64_MAX - d) / 10)
                    n.integer = false;
                else
                    acc = acc * 10 + d;
                ++p;
            }
        }
        p_ = p;
        if (*p_ == '.') {
            n.integer = false;
            ++p_;
            if (!is_digit(*p_))
                invalid("expected a digit after '.'");
            while (is_digit(*p_))
                ++p_;
        }
        if (*p_ == 'e' || *p_ == 'E') {
            n.integer = false;
            ++p_;
            if (*p_ == '+' || *p_ == '-')
                ++p_;
            if (!is_digit(*p_))
                invalid("expected a digit in the exponent");
            while (is_digit(*p_))
                ++p_;
        }
        if (n.integer) {
            constexpr auto kMaxMagnitude = static_cast<std::uint64_t>(INT64_MAX);
            if (negative && acc <= kMaxMagnitude + 1)
                n.value = acc == kMaxMagnitude + 1 ? INT64_MIN : -static_cast<std::int64_t>(acc);
            else if (!negative && acc <= kMaxMagnitude)
                n.value = static_cast<std::int64_t>(acc);
            else
                n.integer = false;
        }
        return n;
    }

    // Validates any JSON value and leaves the cursor after it.
    void skip_value(int depth = 0) {
        if (depth > kMaxDepth)
            invalid("nesting too deep");
        switch (peek()) {
            case '"': {
                bool escaped = false;
                skip_string(escaped);
                return;
            }
            case '{': {
                ++p_;
                skip_space();
                if (peek() == '}') {
                    ++p_;
                    return;
                }
                for (;;) {
                    skip_space();
                    if (peek() != '"')
                        invalid("expected a field name");
                    bool escaped = false;
                    skip_string(escaped);
                    skip_space();
                    expect(':', "expected ':' after a field name");
                    skip_space();
                    skip_value(depth + 1);
                    skip_space();
                    if (peek() == ',') {
                        ++p_;
                        continue;
                    }
                    expect('}', "expected ',' or '}' in an object");
                    return;
                }
            }
            case '[': {
                ++p_;
                skip_space();
                if (peek() == ']') {
                    ++p_;
                    return;
                }
                for (;;) {
                    skip_space();
                    skip_value(depth + 1);
                    skip_space();
                    if (peek() == ',') {
                        ++p_;
                        continue;
                    }
                    expect(']', "expected ',' or ']' in an array");
                    return;
                }
            }
            case 't':
                if (!consume_literal("true"))
                    invalid("expected a value");
                return;
            case 'f':
                if (!consume_literal("false"))
                    invalid("expected a value");
                return;
            case 'n':
                if (!consume_literal("null"))
                    invalid("expected a value");
                return;
            default:
                if (peek() == '-' || is_digit(peek())) {
                    read_number();
                    return;
                }
                invalid(at_end() ? "expected a value, found the end of the line"
                                 : "expected a value");
        }
    }

  private:
    // Characters a string may hold as they are: not '"', not '\\', not a control character.
    static constexpr auto kPlain = [] {
        std::array<bool, 256> plain{};
        for (int c = 0x20; c < 256; ++c)
            plain[static_cast<std::size_t>(c)] = c != '"' && c != '\\';
        return plain;
    }();

    static const char* plain_run(const char* p) {
        while (kPlain[static_cast<unsigned char>(*p)])
            ++p;
        return p;
    }

    [[noreturn]] void control_or_end() const {
        invalid(p_ >= end_ ? "unterminated string" : "control character inside a string");
    }

    static bool is_simple_escape(char c) {
        return c == '"' || c == '\\' || c == '/' || c == 'b' || c == 'f' || c == 'n' || c == 'r' ||
               c == 't';
    }

    std::uint32_t read_hex4() {
        if (end_ - p_ < 4)
            invalid("truncated \\u escape");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = *p_++;
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= static_cast<std::uint32_t>(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= static_cast<std::uint32_t>(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= static_cast<std::uint32_t>(c - 'A' + 10);
            else
                invalid("bad hex digit in a \\u escape");
        }
        return v;
    }

    void read_string_slow(std::string& out) {
        while (p_ < end_) {
            const char c = *p_;
            if (c == '"') {
                ++p_;
                return;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                invalid("control character inside a string");
            if (c != '\\') {
                out.push_back(c);
                ++p_;
                continue;
            }
            ++p_;
            if (p_ >= end_)
                break;
            const char e = *p_++;
            switch (e) {
                case '"':
                case '\\':
                case '/':
                    out.push_back(e);
                    break;
                case 'b':
                    out.push_back('\b');
                    break;
                case 'f':
                    out.push_back('\f');
                    break;
                case 'n':
                    out.push_back('\n');
                    break;
                case 'r':
                    out.push_back('\r');
                    break;
                case 't':
                    out.push_back('\t');
                    break;
                case 'u': {
                    std::uint32_t cp = read_hex4();
                    if (cp >= 0xD800 && cp <= 0xDBFF) {
                        if (!consume_literal("\\u"))
                            invalid("a high surrogate must be followed by a low surrogate");
                        const std::uint32_t low = read_hex4();
                        if (low < 0xDC00 || low > 0xDFFF)
                            invalid("a high surrogate must be followed by a low surrogate");
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
                        invalid("a low surrogate without a high surrogate");
                    }
                    append_utf8(out, cp);
                    break;
                }
                default:
                    --p_;
                    invalid("unknown escape sequence");
            }
        }
        invalid("unterminated string");
    }

    const char* begin_;
    const char* p_;
    const char* end_;
    std::uint64_t line_;
};

// The decoded text of a string Cursor::skip_string returned: the raw bytes unless it had escapes.
std::string_view decoded(std::string_view raw, bool escaped, std::string& scratch,
                         std::uint64_t line) {
    if (!escaped)
        return raw;
    Cursor decoder(raw.data() - 1, raw.data() + raw.size() + 1, line);
    decoder.read_string(scratch);
    return scratch;
}

}  // namespace

struct HistoryReader::Impl {
    // Where bytes come from: an owned FILE* (path) or a borrowed istream.
    std::FILE* file = nullptr;
    std::istream* stream = nullptr;
    std::string path;

    std::vector<char> buffer = std::vector<char>(kChunkBytes);
    std::size_t begin = 0;  // first unparsed byte
    std::size_t end = 0;    // one past the last byte read
    bool eof = false;

    std::uint64_t line = 0;
    std::uint64_t next_index = 0;
    std::uint64_t pending_blank_line = 0;  // a blank line is fine only if nothing follows it

    // The op each process has in flight. Process ids are small and dense in practice, so a
    // vector indexed by id; ids beyond it (converted histories) go to a map.
    struct InFlight {
        bool open = false;
        LockMode mode = LockMode::Exclusive;
        std::uint32_t f = 0;  // into op_names
        std::uint64_t line = 0;
    };
    static constexpr std::int64_t kDenseProcesses = std::int64_t{1} << 20;
    std::vector<InFlight> dense;
    std::unordered_map<std::int64_t, InFlight> sparse;
    std::vector<std::string> op_names;

    // Per-line scratch, reused so that steady-state parsing allocates nothing.
    std::string name_scratch;
    bool mode_given = false;

    ~Impl() {
        if (file)
            std::fclose(file);
    }

    std::size_t read_some(char* into, std::size_t capacity) {
        if (file) {
            const std::size_t n = std::fread(into, 1, capacity, file);
            if (n < capacity && std::ferror(file))
                throw std::runtime_error("cannot read " + path + ": " + std::strerror(errno));
            return n;
        }
        stream->read(into, static_cast<std::streamsize>(capacity));
        if (stream->bad())
            throw std::runtime_error("cannot read the history: stream error");
        return static_cast<std::size_t>(stream->gcount());
    }

    // Makes [begin, end) hold at least one complete line, or the last bytes of the input.
    // Returns false when no bytes remain.
    bool fill(const char*& line_begin, const char*& line_end) {
        for (;;) {
            if (begin < end) {
                const void* nl = std::memchr(buffer.data() + begin, '\n', end - begin);
                if (nl) {
                    char* newline = buffer.data() + (static_cast<const char*>(nl) - buffer.data());
                    *newline = '\0';  // the sentinel Cursor relies on
                    line_begin = buffer.data() + begin;
                    line_end = newline;
                    begin = static_cast<std::size_t>(newline - buffer.data()) + 1;
                    return true;
                }
            }
            if (eof) {
                if (begin == end)
                    return false;
                buffer[end] = '\0';  // read_some always leaves this byte free
                line_begin = buffer.data() + begin;
                line_end = buffer.data() + end;
                begin = end;
                return true;
            }
            // Keep the partial line, then read more behind it.
            if (begin > 0) {
                std::memmove(buffer.data(), buffer.data() + begin, end - begin);
                end -= begin;
                begin = 0;
            }
            if (end + 1 >= buffer.size())
                buffer.resize(buffer.size() * 2);  // one line longer than a chunk
            const std::size_t n = read_some(buffer.data() + end, buffer.size() - end - 1);
            if (n == 0)
                eof = true;
            end += n;
        }
    }

    InFlight& in_flight(std::int64_t process) {
        if (process < kDenseProcesses) {
            const auto i = static_cast<std::size_t>(process);
            if (i >= dense.size())
                dense.resize(std::max(i + 1, dense.size() * 2));
            return dense[i];
        }
        return sparse[process];
    }

    std::uint32_t intern_op(const std::string& f) {
        for (std::size_t i = 0; i < op_names.size(); ++i) {
            if (op_names[i] == f)
                return static_cast<std::uint32_t>(i);
        }
        op_names.push_back(f);
        return static_cast<std::uint32_t>(op_names.size() - 1);
    }

    void parse_line(const char* line_begin, const char* line_end, Event& e);
    bool parse_canonical(const char* line_begin, const char* line_end, Event& e);
    void decode_value(Event& e, std::string_view raw);
    void track(Event& e);
};

namespace {

void reset(Event& e) {
    e.index = 0;
    e.type = EventType::Invoke;
    e.process = 0;
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

}  // namespace

void HistoryReader::Impl::parse_line(const char* line_begin, const char* line_end, Event& e) {
    Cursor c(line_begin, line_end, line);
    mode_given = false;
    std::uint16_t seen = 0;
    std::string_view raw_value;
    bool fence_seen_top = false;
    std::optional<std::int64_t> top_fence;

    c.skip_space();
    c.expect('{', "expected '{' at the start of an event");
    c.skip_space();
    if (c.peek() == '}') {
        c.seek(c.pos() + 1);
    } else {
        for (;;) {
            c.skip_space();
            if (c.peek() != '"')
                c.invalid("expected a field name");
            std::size_t quick_length = 0;
            Field field = quick_field(c.pos(), c.remaining(), quick_length);
            if (field != Field::Unknown) {
                c.seek(c.pos() + quick_length);
            } else {
                bool escaped = false;
                const std::string_view name =
                    decoded(c.skip_string(escaped), escaped, name_scratch, line);
                c.skip_space();
                c.expect(':', "expected ':' after a field name");
                field = field_of(name);
            }
            c.skip_space();
            if (field != Field::Unknown) {
                const auto bit = static_cast<std::uint16_t>(1u << static_cast<int>(field));
                if (seen & bit)
                    throw HistoryError(line, "field `" +
                                                 std::string(kFieldNames[static_cast<int>(field)]) +
                                                 "` appears twice");
                seen = static_cast<std::uint16_t>(seen | bit);
            }
            switch (field) {
                case Field::Index: {
                    if (c.peek() != '-' && !is_digit(c.peek()))
                        field_error(line, field, "must be an integer >= 0");
                    const Number n = c.read_number();
                    if (!n.integer || n.value < 0)
                        field_error(line, field, "must be an integer >= 0");
                    e.index = static_cast<std::uint64_t>(n.value);
                    break;
                }
                case Field::Type: {
                    if (c.peek() != '"')
                        field_error(line, field, "must be one of invoke, ok, fail, info");
                    bool type_escaped = false;
                    const std::string_view type =
                        decoded(c.skip_string(type_escaped), type_escaped, name_scratch, line);
                    if (equals(type, "invoke"))
                        e.type = EventType::Invoke;
                    else if (equals(type, "ok"))
                        e.type = EventType::Ok;
                    else if (equals(type, "fail"))
                        e.type = EventType::Fail;
                    else if (equals(type, "info"))
                        e.type = EventType::Info;
                    else
                        field_error(line, field, "must be one of invoke, ok, fail, info");
                    break;
                }
                case Field::Process: {
                    if (c.peek() == '"') {
                        bool process_escaped = false;
                        const std::string_view raw = c.skip_string(process_escaped);
                        if (!equals(decoded(raw, process_escaped, name_scratch, line), "nemesis"))
                            field_error(line, field, "must be an integer >= 0 or \"nemesis\"");
                        e.process = kNemesisProcess;
                    } else {
                        if (c.peek() != '-' && !is_digit(c.peek()))
                            field_error(line, field, "must be an integer >= 0 or \"nemesis\"");
                        const Number n = c.read_number();
                        if (!n.integer || n.value < 0)
                            field_error(line, field, "must be an integer >= 0 or \"nemesis\"");
                        e.process = n.value;
                    }
                    break;
                }
                case Field::F:
                    if (c.peek() != '"')
                        field_error(line, field, "must be a string");
                    c.read_string(e.f);
                    break;
                case Field::Key:
                    if (c.peek() == '"')
                        c.read_string(e.key);
                    else if (!c.consume_literal("null"))
                        field_error(line, field, "must be a string");
                    break;
                case Field::Error:
                    if (c.peek() == '"')
                        c.read_string(e.error);
                    else if (!c.consume_literal("null"))
                        field_error(line, field, "must be a string");
                    break;
                case Field::Value: {
                    const char* start = c.pos();
                    c.skip_value();
                    raw_value = std::string_view(start, static_cast<std::size_t>(c.pos() - start));
                    break;
                }
                case Field::Time:
                case Field::Clock:
                case Field::Fence: {
                    const bool nullable = field != Field::Time;
                    if (nullable && c.consume_literal("null"))
                        break;
                    if (c.peek() != '-' && !is_digit(c.peek()))
                        field_error(line, field, "must be an integer");
                    const Number n = c.read_number();
                    if (!n.integer)
                        field_error(line, field, "must be an integer");
                    if (field == Field::Time) {
                        e.time = n.value;
                    } else if (field == Field::Clock) {
                        e.clock_ms = n.value;
                    } else {
                        fence_seen_top = true;
                        top_fence = n.value;
                    }
                    break;
                }
                case Field::Unknown:
                    c.skip_value();
                    break;
            }
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

    for (Field required : {Field::Index, Field::Type, Field::Process, Field::F, Field::Time}) {
        if (!(seen & (1u << static_cast<int>(required))))
            throw HistoryError(
                line,
                "missing field `" + std::string(kFieldNames[static_cast<int>(required)]) + "`");
    }
    if (!raw_value.empty())
        e.value_json.assign(raw_value.data(), raw_value.size());
    if (fence_seen_top)
        e.fence = top_fence;
    decode_value(e, raw_value);
}

// The engine writes every event in one layout (engine/history_recorder.cpp):
// {"index":N,"type":"T","process":P,"f":"F","key":"K","value":V,"time":N[,"clock":N]
// [,"error":"E"][,"fence":N]}. Matching that layout in a straight line avoids the general
// parser's per-field dispatch, whose branches a CPU cannot predict. Any other line (another
// order, spaces, extra fields, a mistyped field) returns false and takes the general path,
// which also produces the error messages.
bool HistoryReader::Impl::parse_canonical(const char* line_begin, const char* line_end, Event& e) {
    Cursor c(line_begin, line_end, line);
    mode_given = false;
    const auto literal = [&](const auto& text) {
        constexpr std::size_t n = sizeof text - 1;
        if (c.remaining() < n || std::memcmp(c.pos(), text, n) != 0)
            return false;
        c.seek(c.pos() + n);
        return true;
    };
    const auto integer = [&](std::int64_t& out) {
        if (c.peek() != '-' && !is_digit(c.peek()))
            return false;
        const Number n = c.read_number();
        out = n.value;
        return n.integer;
    };
    std::int64_t number = 0;
    if (!literal("{\"index\":") || !integer(number) || number < 0)
        return false;
    e.index = static_cast<std::uint64_t>(number);
    if (!literal(",\"type\":\""))
        return false;
    if (literal("invoke\""))
        e.type = EventType::Invoke;
    else if (literal("ok\""))
        e.type = EventType::Ok;
    else if (literal("fail\""))
        e.type = EventType::Fail;
    else if (literal("info\""))
        e.type = EventType::Info;
    else
        return false;
    if (!literal(",\"process\":"))
        return false;
    if (literal("\"nemesis\"")) {
        e.process = kNemesisProcess;
    } else {
        if (!integer(number) || number < 0)
            return false;
        e.process = number;
    }
    if (!literal(",\"f\":\""))
        return false;
    c.seek(c.pos() - 1);
    c.read_string(e.f);
    if (literal(",\"key\":\"")) {
        c.seek(c.pos() - 1);
        c.read_string(e.key);
    }
    std::string_view raw_value;
    if (literal(",\"value\":")) {
        const char* start = c.pos();
        c.skip_value();
        raw_value = std::string_view(start, static_cast<std::size_t>(c.pos() - start));
    }
    if (!literal(",\"time\":") || !integer(number))
        return false;
    e.time = number;
    if (literal(",\"clock\":")) {
        if (!integer(number))
            return false;
        e.clock_ms = number;
    }
    if (literal(",\"error\":\"")) {
        c.seek(c.pos() - 1);
        c.read_string(e.error);
    }
    if (literal(",\"fence\":")) {
        if (!integer(number))
            return false;
        e.fence = number;
    }
    if (!literal("}") || !c.at_end())
        return false;
    if (!raw_value.empty())
        e.value_json.assign(raw_value.data(), raw_value.size());
    decode_value(e, raw_value);
    return true;
}

void HistoryReader::Impl::decode_value(Event& e, std::string_view raw) {
    if (raw.empty() || raw == "null")
        return;
    Cursor c(raw.data(), raw.data() + raw.size(), line);
    const std::string& f = e.f;
    const auto value_error = [&](std::string_view requirement) {
        throw HistoryError(line, "field `value` of `" + f + "` " + std::string(requirement));
    };
    const auto read_integer = [&](std::string_view requirement) -> std::int64_t {
        if (c.peek() != '-' && !is_digit(c.peek()))
            value_error(requirement);
        const Number n = c.read_number();
        if (!n.integer)
            value_error(requirement);
        return n.value;
    };

    if (e.is_nemesis()) {
        if (c.peek() != '{')
            return;
        c.seek(c.pos() + 1);
        c.skip_space();
        if (c.peek() == '}')
            return;
        for (;;) {
            c.skip_space();
            bool escaped = false;
            const std::string_view raw_name = c.skip_string(escaped);
            const std::string_view name = decoded(raw_name, escaped, name_scratch, line);
            c.skip_space();
            c.seek(c.pos() + 1);  // ':' (already validated)
            c.skip_space();
            if (equals(name, "target") && (c.peek() == '-' || is_digit(c.peek()))) {
                const Number n = c.read_number();
                if (n.integer)
                    e.target = n.value;
            } else {
                c.skip_value();
            }
            c.skip_space();
            if (c.peek() != ',')
                return;
            c.seek(c.pos() + 1);
        }
    }

    if (equals(f, "read") || equals(f, "write")) {
        e.number = read_integer("must be an integer or null");
        return;
    }
    if (equals(f, "cas")) {
        const char* requirement = "must be [from, to] with integers";
        if (c.peek() != '[')
            value_error(requirement);
        c.seek(c.pos() + 1);
        c.skip_space();
        const std::int64_t from = read_integer(requirement);
        c.skip_space();
        if (c.peek() != ',')
            value_error(requirement);
        c.seek(c.pos() + 1);
        c.skip_space();
        const std::int64_t to = read_integer(requirement);
        c.skip_space();
        if (c.peek() != ']')
            value_error(requirement);
        e.cas.emplace(from, to);
        return;
    }
    const bool is_acquire = equals(f, "acquire");
    if (!is_acquire && !equals(f, "release") && !equals(f, "renew"))
        return;  // an operation HISTORY.md does not define: kept raw in value_json only
    if (c.peek() != '{')
        value_error("must be an object or null");
    c.seek(c.pos() + 1);
    c.skip_space();
    if (c.peek() == '}')
        return;
    for (;;) {
        c.skip_space();
        bool escaped = false;
        const std::string_view raw_name = c.skip_string(escaped);
        const std::string_view name = decoded(raw_name, escaped, name_scratch, line);
        c.skip_space();
        c.seek(c.pos() + 1);  // ':' (already validated)
        c.skip_space();
        if (equals(name, "token")) {
            if (c.peek() == '"')
                c.read_string(e.token);
            else if (!c.consume_literal("null"))
                value_error("has a `token` that is not a string");
        } else if (is_acquire && equals(name, "mode")) {
            if (c.peek() != '"')
                value_error("has a `mode` that is not \"exclusive\" or \"shared\"");
            bool mode_escaped = false;
            const std::string_view raw_mode = c.skip_string(mode_escaped);
            const std::string_view mode = decoded(raw_mode, mode_escaped, name_scratch, line);
            if (equals(mode, "exclusive"))
                e.mode = LockMode::Exclusive;
            else if (equals(mode, "shared"))
                e.mode = LockMode::Shared;
            else
                value_error("has a `mode` that is not \"exclusive\" or \"shared\"");
            mode_given = true;
        } else if (is_acquire && equals(name, "fence")) {
            if (!c.consume_literal("null"))
                e.fence = read_integer("has a `fence` that is not an integer");
        } else if (is_acquire && equals(name, "lease_ms")) {
            if (!c.consume_literal("null"))
                e.lease_ms = read_integer("has a `lease_ms` that is not an integer");
        } else {
            c.skip_value();
        }
        c.skip_space();
        if (c.peek() != ',')
            return;
        c.seek(c.pos() + 1);
    }
}

void HistoryReader::Impl::track(Event& e) {
    if (e.index != next_index) {
        throw HistoryError(line, "`index` is " + std::to_string(e.index) + ", expected " +
                                     std::to_string(next_index));
    }
    ++next_index;
    if (e.is_nemesis())
        return;  // a nemesis may run several faults at once; nothing pairs its events
    InFlight& slot = in_flight(e.process);
    if (e.type == EventType::Invoke) {
        if (slot.open) {
            throw HistoryError(line, "process " + std::to_string(e.process) + " invokes `" + e.f +
                                         "` while its `" + op_names[slot.f] + "` from line " +
                                         std::to_string(slot.line) + " is still in flight");
        }
        slot.open = true;
        slot.f = intern_op(e.f);
        slot.line = line;
        slot.mode = e.mode;
        return;
    }
    if (!slot.open) {
        throw HistoryError(line, "process " + std::to_string(e.process) + " completes `" + e.f +
                                     "` but has no operation in flight");
    }
    if (op_names[slot.f] != e.f) {
        throw HistoryError(line, "process " + std::to_string(e.process) + " completes `" + e.f +
                                     "` but its operation in flight is `" + op_names[slot.f] +
                                     "` from line " + std::to_string(slot.line));
    }
    // A grant that does not restate its mode has the mode that was asked for.
    if (e.type == EventType::Ok && !mode_given && equals(e.f, "acquire"))
        e.mode = slot.mode;
    slot.open = false;
    if (e.process >= kDenseProcesses)
        sparse.erase(e.process);  // memory stays bounded by the operations in flight
}

HistoryReader::HistoryReader(const std::filesystem::path& path) : impl_(std::make_unique<Impl>()) {
    impl_->path = path.string();
    impl_->file = std::fopen(impl_->path.c_str(), "rb");
    if (!impl_->file)
        throw std::runtime_error("cannot open " + impl_->path + ": " + std::strerror(errno));
}

HistoryReader::HistoryReader(std::istream& in) : impl_(std::make_unique<Impl>()) {
    impl_->stream = &in;
}

HistoryReader::~HistoryReader() = default;

bool HistoryReader::next(Event& event) {
    Impl& r = *impl_;
    const char* line_begin = nullptr;
    const char* line_end = nullptr;
    for (;;) {
        if (!r.fill(line_begin, line_end))
            return false;  // trailing blank lines are only a trailing newline too many
        ++r.line;
        const char* p = line_begin;
        while (p < line_end && is_json_space(*p))
            ++p;
        if (p == line_end) {
            if (r.pending_blank_line == 0)
                r.pending_blank_line = r.line;
            continue;
        }
        if (r.pending_blank_line != 0)
            throw HistoryError(r.pending_blank_line, "blank line inside the history");
        break;
    }
    reset(event);
    event.line = r.line;
    bool parsed = false;
    try {
        parsed = r.parse_canonical(line_begin, line_end, event);
    } catch (const HistoryError&) {
        // The general parser below finds the same fault and describes it.
    }
    if (!parsed) {
        reset(event);
        event.line = r.line;
        r.parse_line(line_begin, line_end, event);
    }
    r.track(event);
    return true;
}

}  // namespace lockbench::checker
