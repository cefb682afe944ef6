#pragma once

// A strict JSON scanner over one line of a history, used only by the event decoder: it reads the
// few shapes history.jsonl has without building a DOM, and every error names the line and column.
// The line must be followed by a readable NUL (the reader writes one over the newline).

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "checker/history.hpp"

namespace lockbench::checker::json_cursor {

// Nesting deeper than this in an extra field is not a history, it is an attack on the stack.
inline constexpr int kMaxDepth = 64;

inline bool is_json_space(char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

inline bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

struct Number {
    bool integer = false;  // no fraction, no exponent, fits in int64
    std::int64_t value = 0;
};

// The character a one-letter escape stands for (\" \\ \b \f \n \r \t, shared by JSON and EDN), or
// '\0' for any other letter.
inline char unescaped(char e) {
    switch (e) {
        case '"':
        case '\\':
            return e;
        case 'b':
            return '\b';
        case 'f':
            return '\f';
        case 'n':
            return '\n';
        case 'r':
            return '\r';
        case 't':
            return '\t';
        default:
            return '\0';
    }
}

// The value of a hex digit, or -1 for any other character (\uXXXX in JSON and EDN).
inline int hex_digit(char c) {
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

inline void append_utf8(std::string& out, std::uint32_t cp) {
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

// The length of the well-formed UTF-8 sequence at `p` (RFC 3629: no overlong form, no surrogate,
// nothing above U+10FFFF), or 0 when the bytes there are not one. A history's strings must be
// UTF-8 because every report that quotes them is JSON, whose writer refuses anything else.
inline std::size_t utf8_sequence_length(const char* p, const char* end) {
    const auto available = static_cast<std::size_t>(end - p);
    if (available == 0)
        return 0;
    const auto byte = [p](std::size_t i) { return static_cast<unsigned char>(p[i]); };
    const unsigned char lead = byte(0);
    if (lead < 0x80)
        return 1;
    std::size_t length = 0;
    unsigned char second_low = 0x80, second_high = 0xBF;
    if (lead >= 0xC2 && lead <= 0xDF) {
        length = 2;
    } else if (lead >= 0xE0 && lead <= 0xEF) {
        length = 3;
        if (lead == 0xE0)
            second_low = 0xA0;  // below: an overlong form
        else if (lead == 0xED)
            second_high = 0x9F;  // above: a surrogate
    } else if (lead >= 0xF0 && lead <= 0xF4) {
        length = 4;
        if (lead == 0xF0)
            second_low = 0x90;  // below: an overlong form
        else if (lead == 0xF4)
            second_high = 0x8F;  // above: beyond U+10FFFF
    } else {
        return 0;
    }
    if (available < length || byte(1) < second_low || byte(1) > second_high)
        return 0;
    for (std::size_t i = 2; i < length; ++i) {
        if ((byte(i) & 0xC0) != 0x80)
            return 0;
    }
    return length;
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

    [[noreturn, gnu::cold, gnu::noinline]] void invalid_utf8() const {
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X",
                      static_cast<unsigned>(static_cast<unsigned char>(*p_)));
        throw HistoryError(line_, "not valid UTF-8 at column " + std::to_string(p_ - begin_ + 1) +
                                      " (byte " + byte + "): a history is UTF-8 text");
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
        if (*p != '\\' && static_cast<unsigned char>(*p) < 0x80)
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
                    read_unicode_escape();
                    continue;
                }
                if (!is_simple_escape(*p_))
                    invalid("unknown escape sequence");
            } else if (static_cast<unsigned char>(c) < 0x20) {
                invalid("control character inside a string");
            } else if (static_cast<unsigned char>(c) >= 0x80) {
                p_ += utf8_length_here();
                continue;
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
            case '{':
                skip_members('}', "expected ',' or '}' in an object", [&] {
                    if (peek() != '"')
                        invalid("expected a field name");
                    bool escaped = false;
                    skip_string(escaped);
                    skip_space();
                    expect(':', "expected ':' after a field name");
                    skip_space();
                    skip_value(depth + 1);
                });
                return;
            case '[':
                skip_members(']', "expected ',' or ']' in an array",
                             [&] { skip_value(depth + 1); });
                return;
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
    // Steps over an object or array whose opening bracket is at the cursor: `member` validates
    // one member (the cursor on it), the members stand apart by commas until `close`.
    template <class Member>
    void skip_members(char close, std::string_view missing_separator, Member member) {
        ++p_;
        skip_space();
        if (peek() == close) {
            ++p_;
            return;
        }
        for (;;) {
            skip_space();
            member();
            skip_space();
            if (peek() == ',') {
                ++p_;
                continue;
            }
            expect(close, missing_separator);
            return;
        }
    }

    // Characters a string may hold as they are: not '"', not '\\', not a control character; and
    // ASCII only, so that the rare non-ASCII string takes the path that validates its UTF-8.
    static constexpr auto kPlain = [] {
        std::array<bool, 256> plain{};
        for (int c = 0x20; c < 0x80; ++c)
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

    // At a byte >= 0x80: the length of its UTF-8 sequence; throws when it is not one.
    std::size_t utf8_length_here() const {
        const std::size_t length = utf8_sequence_length(p_, end_);
        if (length == 0)
            invalid_utf8();
        return length;
    }

    std::uint32_t read_hex4() {
        if (end_ - p_ < 4)
            invalid("truncated \\u escape");
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const int digit = hex_digit(*p_++);
            if (digit < 0)
                invalid("bad hex digit in a \\u escape");
            v = (v << 4) | static_cast<std::uint32_t>(digit);
        }
        return v;
    }

    // After the backslash and "u" of an escape: the code point it spells, a surrogate pair read
    // whole; throws when a surrogate stands alone.
    std::uint32_t read_unicode_escape() {
        const std::uint32_t cp = read_hex4();
        if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!consume_literal("\\u"))
                invalid("a high surrogate must be followed by a low surrogate");
            const std::uint32_t low = read_hex4();
            if (low < 0xDC00 || low > 0xDFFF)
                invalid("a high surrogate must be followed by a low surrogate");
            return 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        if (cp >= 0xDC00 && cp <= 0xDFFF)
            invalid("a low surrogate without a high surrogate");
        return cp;
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
            if (static_cast<unsigned char>(c) >= 0x80) {
                const std::size_t length = utf8_length_here();
                out.append(p_, length);
                p_ += length;
                continue;
            }
            if (c != '\\') {
                out.push_back(c);
                ++p_;
                continue;
            }
            ++p_;
            if (p_ >= end_)
                break;
            const char e = *p_++;
            if (const char plain = e == '/' ? '/' : unescaped(e)) {
                out.push_back(plain);
                continue;
            }
            switch (e) {
                case 'u':
                    append_utf8(out, read_unicode_escape());
                    break;
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
inline std::string_view decoded(std::string_view raw, bool escaped, std::string& scratch,
                                std::uint64_t line) {
    if (!escaped)
        return raw;
    Cursor decoder(raw.data() - 1, raw.data() + raw.size() + 1, line);
    decoder.read_string(scratch);
    return scratch;
}

}  // namespace lockbench::checker::json_cursor
