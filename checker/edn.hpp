#pragma once

// A small, strict reader of EDN (https://github.com/edn-format/edn) for what Jepsen histories use:
// maps, vectors, lists, sets, keywords, symbols, strings, characters, integers, floats, nil,
// booleans, comments (`;`), discards (`#_`) and tagged elements (`#inst "…"`, a record's
// `#jepsen.history.Op{…}`: the tag is dropped, the element kept). Values come out as JSON:
// keywords and symbols become their name without the colon (`:invoke` → "invoke"), nil → null,
// vectors, lists and sets → arrays, maps → objects (their keys must be keywords, symbols or
// strings), and the symbolic values ##Inf, ##-Inf and ##NaN, which JSON cannot hold, their text
// ("##Inf"). The text must be UTF-8; a string's "\uD83D\uDE00" (a UTF-16 surrogate pair) is one
// character. An error names the line and column (in characters) of the offending character.

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::checker::edn {

class EdnError : public std::runtime_error {
  public:
    EdnError(std::size_t line, std::size_t column, const std::string& what)
        : std::runtime_error("line " + std::to_string(line) + ", column " + std::to_string(column) +
                             ": " + what),
          line_(line),
          column_(column) {}
    std::size_t line() const { return line_; }
    std::size_t column() const { return column_; }

  private:
    std::size_t line_;
    std::size_t column_;
};

// Where a form begins: 1-based line, and column in characters.
struct Position {
    std::size_t line = 0;
    std::size_t column = 0;
};

// Reads the top-level forms of a text one at a time. The text must outlive the reader.
class Reader {
  public:
    explicit Reader(std::string_view text) : text_(text) {}

    // The next top-level form; false at the end of the text. Throws EdnError.
    bool next(nlohmann::json& out);
    // Where the last form returned by next() began, and, when it is a vector, list or
    // set, where each of its elements began.
    Position form_position() const { return form_position_; }
    const std::vector<Position>& element_positions() const { return element_positions_; }

  private:
    nlohmann::json read_form(int depth);
    nlohmann::json read_collection(char close, int depth);
    nlohmann::json read_map(int depth);
    nlohmann::json read_string();
    nlohmann::json read_symbolic_value(std::size_t line, std::size_t column);
    nlohmann::json read_atom();
    // At a backslash: a character (\a, \newline, \space, \uXXXX), as a string.
    nlohmann::json read_character(std::size_t line, std::size_t column);
    // Up to the next delimiter.
    std::string_view take_token();
    // A token that starts like a number, read as one: an integer, or a double.
    nlohmann::json number_of(std::string_view token, std::size_t line, std::size_t column) const;
    std::uint32_t read_hex4();
    // Whitespace, comments and discarded forms (`#_`), a discarded form read at depth + 1.
    void skip_space(int depth);
    // At a byte >= 0x80: takes its whole UTF-8 character (appended to *out when given); a byte
    // that does not start one is an error at its line and column.
    void take_utf8(std::string* out);
    bool at_non_ascii() const;
    [[noreturn]] void fail(const std::string& what) const;
    [[noreturn]] void fail_at(std::size_t line, std::size_t column, const std::string& what) const;
    char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
    bool at_end() const { return pos_ >= text_.size(); }
    char take();

    std::string_view text_;
    std::size_t pos_ = 0;
    std::size_t line_ = 1;
    std::size_t column_ = 1;
    Position form_position_;
    std::vector<Position> element_positions_;
};

}  // namespace lockbench::checker::edn
