#include "edn.hpp"

#include <cerrno>
#include <cstdlib>
#include <limits>

#include "json_cursor.hpp"

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

}  // namespace

char Reader::take() {
    const char c = text_[pos_++];
    if (c == '\n') {
        ++line_;
        column_ = 1;
    } else {
        ++column_;
    }
    return c;
}

void Reader::fail(const std::string& what) const {
    fail_at(line_, column_, what);
}

void Reader::fail_at(std::size_t line, std::size_t column, const std::string& what) const {
    throw EdnError(line, column, what);
}

void Reader::skip_space() {
    while (!at_end()) {
        const char c = peek();
        if (is_space(c)) {
            take();
        } else if (c == ';') {
            while (!at_end() && peek() != '\n')
                take();
        } else if (c == '#' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '_') {
            take();
            take();
            skip_space();
            if (at_end())
                fail("#_ discards nothing: the text ends");
            const std::size_t recorded = element_lines_.size();
            read_form(0);  // discarded, and so are the element lines it may have recorded
            element_lines_.resize(recorded);
        } else {
            return;
        }
    }
}

bool Reader::next(json& out) {
    skip_space();
    if (at_end())
        return false;
    form_line_ = line_;
    element_lines_.clear();
    out = read_form(0);
    return true;
}

json Reader::read_form(int depth) {
    if (depth > kMaxDepth)
        fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
    skip_space();
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
        skip_space();
        if (at_end())
            fail(std::string("the text ends inside a collection (missing '") + close + "')");
        if (peek() == close) {
            take();
            return out;
        }
        if (depth == 0)
            element_lines_.push_back(line_);
        out.push_back(read_form(depth + 1));
    }
}

json Reader::read_map(int depth) {
    json out = json::object();
    for (;;) {
        skip_space();
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
        skip_space();
        if (at_end() || peek() == '}')
            fail("the map key " + key.get<std::string>() + " has no value");
        json value = read_form(depth + 1);
        const std::string name = key.get<std::string>();
        if (out.contains(name))
            fail_at(line, column, "the map key " + name + " appears twice");
        out[name] = std::move(value);
    }
}

json Reader::read_string() {
    take();  // the opening quote
    std::string out;
    for (;;) {
        if (at_end())
            fail("the text ends inside a string");
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
                std::uint32_t cp = 0;
                for (int i = 0; i < 4; ++i) {
                    const int digit = json_cursor::hex_digit(at_end() ? '\0' : take());
                    if (digit < 0)
                        fail("\\u needs four hex digits");
                    cp = (cp << 4) | static_cast<std::uint32_t>(digit);
                }
                json_cursor::append_utf8(out, cp);
                break;
            }
            default:
                fail(std::string("unknown escape \\") + e);
        }
    }
}

json Reader::read_atom() {
    const std::size_t line = line_, column = column_;
    if (peek() == '\\') {  // a character: \a, \newline, \space, \uXXXX
        take();
        std::string name;
        if (!at_end())
            name.push_back(take());
        while (!at_end() && !is_delimiter(peek()))
            name.push_back(take());
        if (name.size() == 1)
            return name;
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
    const std::size_t start = pos_;
    while (!at_end() && !is_delimiter(peek()))
        take();
    const std::string_view token = text_.substr(start, pos_ - start);
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
    if (is_digit(token[0]) || signed_number) {
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
    if (token[0] == ':') {
        if (token.size() == 1)
            fail_at(line, column, "a keyword needs a name");
        return std::string(token.substr(1));
    }
    return std::string(token);  // a symbol
}

}  // namespace lockbench::checker::edn
