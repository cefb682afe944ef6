#include "checker/edn.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <optional>

#include "checker/json_cursor.hpp"

namespace lockbench::checker::edn {

using nlohmann::json;

namespace {

constexpr int kMaxDepth = 64;

bool is_space(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == ',' || c == '\f';
}

bool is_delimiter(char c) {
    return is_space(c) || c == '(' || c == ')' || c == '[' || c == ']' || c == '{' || c == '}' ||
           c == '"' || c == ';' || c == '\0';
}

bool is_digit(char c) {
    return c >= '0' && c <= '9';
}

// The character \uXXXX names, `hex` being its XXXX: none when they are not four hex digits of
// a character (half of a surrogate pair is none).
std::optional<std::string> unicode_character(std::string_view hex) {
    std::uint32_t code = 0;
    bool is_hex = true;
    for (const char c : hex) {
        const int digit = json_cursor::hex_digit(c);
        is_hex = is_hex && digit >= 0;
        code = (code << 4) | static_cast<std::uint32_t>(digit < 0 ? 0 : digit);
    }
    if (!is_hex || (code >= 0xD800 && code <= 0xDFFF))
        return std::nullopt;
    std::string character;
    json_cursor::append_utf8(character, code);
    return character;
}

}  // namespace

char Reader::take() {
    const char c = text_[pos_++];
    if (c == '\n') {
        ++line_;
        column_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
        ++column_;  // a column is a character: a UTF-8 continuation byte is not one
    }
    return c;
}

bool Reader::at_non_ascii() const {
    return !at_end() && static_cast<unsigned char>(text_[pos_]) >= 0x80;
}

void Reader::take_utf8(std::string* out) {
    const std::size_t length =
        json_cursor::utf8_sequence_length(text_.data() + pos_, text_.data() + text_.size());
    if (length == 0) {
        char byte[8];
        std::snprintf(byte, sizeof byte, "0x%02X",
                      static_cast<unsigned>(static_cast<unsigned char>(text_[pos_])));
        fail(std::string("not valid UTF-8 (byte ") + byte + "): EDN is UTF-8 text");
    }
    if (out)
        out->append(text_.substr(pos_, length));
    for (std::size_t i = 0; i < length; ++i)
        take();
}

void Reader::fail(const std::string& what) const {
    fail_at(line_, column_, what);
}

void Reader::fail_at(std::size_t line, std::size_t column, const std::string& what) const {
    throw EdnError(line, column, what);
}

void Reader::skip_space(int depth) {
    while (!at_end()) {
        const char c = peek();
        if (is_space(c)) {
            take();
        } else if (c == ';') {
            while (!at_end() && peek() != '\n') {
                if (at_non_ascii())
                    take_utf8(nullptr);
                else
                    take();
            }
        } else if (c == '#' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '_') {
            // The discarded form counts one level deeper, so that a chain of discards cannot
            // recurse without bound.
            if (depth >= kMaxDepth)
                fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
            take();
            take();
            skip_space(depth + 1);
            if (at_end())
                fail("#_ discards nothing: the text ends");
            const std::size_t recorded = element_positions_.size();
            read_form(depth + 1);  // discarded, and so are the element positions it may have
                                   // recorded
            element_positions_.resize(recorded);
        } else {
            return;
        }
    }
}

bool Reader::next(json& out) {
    skip_space(0);
    if (at_end())
        return false;
    form_position_ = {line_, column_};
    element_positions_.clear();
    out = read_form(0);
    return true;
}

json Reader::read_form(int depth) {
    if (depth > kMaxDepth)
        fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    skip_space(depth);
    if (at_end())
        fail("the text ends where a value was expected");
    const char c = peek();
    switch (c) {
        case '(':
            take();
            return read_collection(')', depth);
        case '[':
            take();
            return read_collection(']', depth);
        case '{':
            take();
            return read_map(depth);
        case ')':
        case ']':
        case '}':
            fail(std::string("unexpected '") + c + "'");
        case '"':
            return read_string();
        case '#': {
            const std::size_t line = line_, column = column_;
            take();
            if (peek() == '{') {
                take();
                return read_collection('}', depth);  // a set
            }
            if (peek() == '#')
                return read_symbolic_value(line, column);
            if (peek() == ':' || is_delimiter(peek()))
                fail_at(line, column, "unsupported dispatch '#" + std::string(1, peek()) + "'");
            // A tagged element: #tag value. The tag says how to interpret the value; a history
            // needs only the value (an instant's text, a record's fields).
            json tag = read_atom();
            if (!tag.is_string())
                fail_at(line, column, "a tag must be a symbol");
            return read_form(depth + 1);
        }
        default:
            return read_atom();
    }
}

json Reader::read_collection(char close, int depth) {
    json out = json::array();
    for (;;) {
        skip_space(depth + 1);
        if (at_end())
            fail(std::string("the text ends inside a collection (missing '") + close + "')");
        if (peek() == close) {
            take();
            return out;
        }
        if (depth == 0)
            element_positions_.push_back({line_, column_});
        out.push_back(read_form(depth + 1));
    }
}

json Reader::read_map(int depth) {
    json out = json::object();
    for (;;) {
        skip_space(depth + 1);
        if (at_end())
            fail("the text ends inside a map (missing '}')");
        if (peek() == '}') {
            take();
            return out;
        }
        const std::size_t line = line_, column = column_;
        json key = read_form(depth + 1);
        if (!key.is_string())
            fail_at(line, column, "a map key must be a keyword, a symbol or a string");
        skip_space(depth + 1);
        if (at_end() || peek() == '}')
            fail("the map key " + key.get<std::string>() + " has no value");
        json value = read_form(depth + 1);
        const std::string name = key.get<std::string>();
        if (out.contains(name))
            fail_at(line, column, "the map key " + name + " appears twice");
        out[name] = std::move(value);
    }
}

std::uint32_t Reader::read_hex4() {
    std::uint32_t code = 0;
    for (int i = 0; i < 4; ++i) {
        const int digit = json_cursor::hex_digit(at_end() ? '\0' : take());
        if (digit < 0)
            fail("\\u needs four hex digits");
        code = (code << 4) | static_cast<std::uint32_t>(digit);
    }
    return code;
}

json Reader::read_string() {
    take();  // the opening quote
    std::string out;
    for (;;) {
        if (at_end())
            fail("the text ends inside a string");
        if (at_non_ascii()) {
            take_utf8(&out);
            continue;
        }
        const std::size_t line = line_, column = column_;
        const char c = take();
        if (c == '"')
            return out;
        if (c != '\\') {
            out.push_back(c);
            continue;
        }
        if (at_end())
            fail("the text ends inside a string");
        const char e = take();
        if (const char plain = json_cursor::unescaped(e)) {
            out.push_back(plain);
            continue;
        }
        switch (e) {
            case 'u': {
                // A character beyond U+FFFF is written as two escapes, a UTF-16 surrogate pair
                // ("\uD83D\uDE00"), as in JSON; either half alone stands for no character.
                std::uint32_t code = read_hex4();
                if (code >= 0xDC00 && code <= 0xDFFF)
                    fail_at(line, column, "a low surrogate without a high surrogate before it");
                if (code >= 0xD800 && code <= 0xDBFF) {
                    if (pos_ + 1 >= text_.size() || text_[pos_] != '\\' || text_[pos_ + 1] != 'u')
                        fail_at(line, column, "a high surrogate without a low surrogate after it");
                    take();
                    take();
                    const std::uint32_t low = read_hex4();
                    if (low < 0xDC00 || low > 0xDFFF)
                        fail_at(line, column, "a high surrogate without a low surrogate after it");
                    code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00);
                }
                json_cursor::append_utf8(out, code);
                break;
            }
            default:
                fail(std::string("unknown escape \\") + e);
        }
    }
}

json Reader::read_symbolic_value(std::size_t line, std::size_t column) {
    take();  // the second '#'
    std::string name;
    while (!at_end() && !is_delimiter(peek())) {
        if (at_non_ascii())
            take_utf8(&name);
        else
            name.push_back(take());
    }
    // JSON has no infinities and no NaN: they come out as the text that names them, which a
    // history field expecting a number rejects, rather than as a null that means something else.
    if (name == "Inf" || name == "-Inf" || name == "NaN")
        return "##" + name;
    fail_at(line, column, "unknown symbolic value ##" + name + " (EDN has ##Inf, ##-Inf, ##NaN)");
}

json Reader::read_atom() {
    const std::size_t line = line_, column = column_;
    if (peek() == '\\')
        return read_character(line, column);
    const std::string_view token = take_token();
    if (token.empty())
        fail_at(line, column, "unexpected character");
    if (token == "nil")
        return nullptr;
    if (token == "true")
        return true;
    if (token == "false")
        return false;
    const bool signed_number =
        (token[0] == '+' || token[0] == '-') && token.size() > 1 && is_digit(token[1]);
    if (is_digit(token[0]) || signed_number)
        return number_of(token, line, column);
    if (token[0] == ':') {
        if (token.size() == 1)
            fail_at(line, column, "a keyword needs a name");
        return std::string(token.substr(1));
    }
    return std::string(token);  // a symbol
}

json Reader::read_character(std::size_t line, std::size_t column) {
    take();  // the backslash
    std::string name;
    if (at_non_ascii())
        take_utf8(&name);
    else if (!at_end())
        name.push_back(take());
    const std::size_t first_character = name.size();
    while (!at_end() && !is_delimiter(peek())) {
        if (at_non_ascii())
            take_utf8(&name);
        else
            name.push_back(take());
    }
    if (!name.empty() && name.size() == first_character)
        return name;
    if (name.size() == 5 && name[0] == 'u') {
        if (std::optional<std::string> character =
                unicode_character(std::string_view(name).substr(1)))
            return *std::move(character);
    }
    if (name == "newline")
        return "\n";
    if (name == "space")
        return " ";
    if (name == "tab")
        return "\t";
    if (name == "return")
        return "\r";
    fail_at(line, column, "unknown character \\" + name);
}

std::string_view Reader::take_token() {
    const std::size_t start = pos_;
    while (!at_end() && !is_delimiter(peek())) {
        if (at_non_ascii())
            take_utf8(nullptr);
        else
            take();
    }
    return text_.substr(start, pos_ - start);
}

json Reader::number_of(std::string_view token, std::size_t line, std::size_t column) const {
    std::string digits(token);
    const bool is_float = digits.find_first_of(".eEM") != std::string::npos;
    if (!is_float && digits.back() == 'N')
        digits.pop_back();  // an arbitrary-precision integer: fine while it fits
    if (digits.find('/') != std::string::npos)
        fail_at(line, column, "ratios are not supported: " + std::string(token));
    if (is_float && digits.back() == 'M')
        digits.pop_back();
    char* end = nullptr;
    errno = 0;
    if (is_float) {
        const double d = std::strtod(digits.c_str(), &end);
        if (*end != '\0' || errno == ERANGE)
            fail_at(line, column, "not a number: " + std::string(token));
        return d;
    }
    const long long i = std::strtoll(digits.c_str(), &end, 10);
    if (*end != '\0')
        fail_at(line, column, "not a number: " + std::string(token));
    if (errno == ERANGE)
        fail_at(line, column, "integer out of the 64-bit range: " + std::string(token));
    return static_cast<std::int64_t>(i);
}

}  // namespace lockbench::checker::edn
