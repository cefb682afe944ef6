#pragma once

// The one typed reader of JSON objects for every file lockbench reads: workloads and faults (the
// engine), suite.json and baselines (the gate), summary.json (the dashboard). Every error names
// its JSON path, so a person finds a typo or a damaged field in one look. A reader is strict where
// a typo must not silently run another experiment (finish() rejects the fields nobody read) and
// lenient where files grow (results gain fields; older ones lack some, and may say null for
// "not reported": `null_is_absent`).

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace lockbench::json_input {

// "a string", "an object": the words an error message uses.
inline std::string type_name(const nlohmann::json& j) {
    if (j.is_null())
        return "null";
    if (j.is_boolean())
        return "a boolean";
    if (j.is_number())
        return "a number";
    if (j.is_string())
        return "a string";
    if (j.is_array())
        return "an array";
    return "an object";
}

// Where a JSON text stopped being readable: nlohmann reports a byte offset for every error, but
// writes the line and column only into a syntax error's message, not into a number too large for
// a double ("1e400", an out_of_range error).
class ErrorPosition : public nlohmann::json::json_sax_t {
  public:
    std::size_t offset = 0;
    std::string token;

    bool null() override { return true; }
    bool boolean(bool) override { return true; }
    bool number_integer(number_integer_t) override { return true; }
    bool number_unsigned(number_unsigned_t) override { return true; }
    bool number_float(number_float_t, const string_t&) override { return true; }
    bool string(string_t&) override { return true; }
    bool binary(binary_t&) override { return true; }
    bool start_object(std::size_t) override { return true; }
    bool key(string_t&) override { return true; }
    bool end_object() override { return true; }
    bool start_array(std::size_t) override { return true; }
    bool end_array() override { return true; }
    bool parse_error(std::size_t position, const std::string& last_token,
                     const nlohmann::json::exception&) override {
        offset = position;
        token = last_token;
        return false;
    }
};

// Parses a whole JSON text. Every way it can be unreadable (bad syntax, a number no double holds,
// invalid UTF-8) is one Error "ORIGIN: not valid JSON: at line L, column C: WHAT": catching only
// parse_error let an out_of_range escape as an internal error (exit 5) instead of bad input.
template <class Error>
nlohmann::json parse_text(std::string_view text, const std::string& origin) {
    try {
        return nlohmann::json::parse(text);
    } catch (const nlohmann::json::exception& e) {
        std::string what = e.what();
        // nlohmann's "[json.exception.parse_error.101] " tag means nothing to a reader.
        if (const auto tag_end = what.find("] ");
            what.starts_with("[json.") && tag_end != what.npos)
            what.erase(0, tag_end + 2);
        if (what.starts_with("parse error at line"))  // a syntax error: already placed
            throw Error(origin + ": not valid JSON: " + what);
        ErrorPosition where;
        nlohmann::json::sax_parse(text, &where);
        const std::size_t start =
            where.offset >= where.token.size() ? where.offset - where.token.size() : 0;
        std::size_t line = 1, column = 1;
        for (std::size_t i = 0; i < start && i < text.size(); ++i) {
            if (text[i] == '\n') {
                ++line;
                column = 1;
            } else {
                ++column;
            }
        }
        throw Error(origin + ": not valid JSON: at line " + std::to_string(line) + ", column " +
                    std::to_string(column) + ": " + what);
    }
}

inline constexpr double kNoLimit = std::numeric_limits<double>::infinity();

// Error is the exception type the caller's domain throws (WorkloadError, GateInputError, …); it
// is built from the whole message "ORIGIN: PATH: WHAT" (just "PATH: WHAT" without an origin).
template <class Error>
class JsonObject {
  public:
    JsonObject(const nlohmann::json& j, std::string origin, std::string path,
               bool null_is_absent = false)
        : j_(j),
          origin_(std::move(origin)),
          path_(std::move(path)),
          null_is_absent_(null_is_absent) {
        if (!j_.is_object())
            fail(path_.empty() ? "/" : path_, "must be an object, not " + type_name(j_));
    }

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw Error((origin_.empty() ? "" : origin_ + ": ") + path + ": " + what);
    }
    std::string at(const std::string& field) const { return path_ + "/" + field; }
    const std::string& origin() const { return origin_; }
    const std::string& path() const { return path_; }
    bool null_is_absent() const { return null_is_absent_; }

    // The field, or nullptr when it is absent. Marks it read.
    const nlohmann::json* find(const std::string& field) {
        seen_.insert(field);
        auto it = j_.find(field);
        if (it == j_.end() || (null_is_absent_ && it->is_null()))
            return nullptr;
        return &*it;
    }
    const nlohmann::json& require(const std::string& field) {
        const nlohmann::json* v = find(field);
        if (!v)
            fail(at(field), "missing");
        return *v;
    }

    // Optional fields: the fallback when absent.
    std::string string(const std::string& field, std::string fallback) {
        const nlohmann::json* v = find(field);
        return v ? string_of(*v, at(field)) : fallback;
    }
    double number(const std::string& field, double fallback, double lo = -kNoLimit,
                  double hi = kNoLimit) {
        const nlohmann::json* v = find(field);
        return v ? number_of(*v, at(field), lo, hi) : fallback;
    }
    std::int64_t integer(const std::string& field, std::int64_t fallback, std::int64_t lo,
                         std::int64_t hi) {
        const nlohmann::json* v = find(field);
        if (!v)
            return fallback;
        if (!v->is_number_integer())
            fail(at(field), "must be an integer, not " + type_name(*v));
        // Above int64's range get<int64_t>() wraps (2^64-1 read as -1): say the number written.
        const bool beyond_int64 =
            v->is_number_unsigned() &&
            v->get<std::uint64_t>() >
                static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
        auto i = v->get<std::int64_t>();
        if (beyond_int64 || i < lo || i > hi) {
            fail(at(field), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                ", not " + v->dump());
        }
        return i;
    }
    bool boolean(const std::string& field, bool fallback) {
        const nlohmann::json* v = find(field);
        return v ? boolean_of(*v, at(field)) : fallback;
    }
    template <typename E>
    E choice(const std::string& field, E fallback,
             const std::vector<std::pair<std::string, E>>& options) {
        const nlohmann::json* v = find(field);
        if (!v)
            return fallback;
        std::string names;
        for (const auto& [name, value] : options) {
            if (v->is_string() && v->get<std::string>() == name)
                return value;
            names += (names.empty() ? "" : "|") + name;
        }
        fail(at(field), "must be one of " + names + ", not " + v->dump());
    }
    // nullptr when absent; an error when present and not of the kind.
    const nlohmann::json* optional_object(const std::string& field) {
        const nlohmann::json* v = find(field);
        if (v && !v->is_object())
            fail(at(field), "must be an object, not " + type_name(*v));
        return v;
    }
    const nlohmann::json* optional_array(const std::string& field) {
        const nlohmann::json* v = find(field);
        if (v && !v->is_array())
            fail(at(field), "must be an array, not " + type_name(*v));
        return v;
    }
    std::optional<double> optional_number(const std::string& field, double lo = -kNoLimit,
                                          double hi = kNoLimit) {
        const nlohmann::json* v = find(field);
        if (!v || v->is_null())
            return std::nullopt;
        return number_of(*v, at(field), lo, hi);
    }
    // Absent or null: none (a field older files lack, or one that says "not reported").
    std::optional<std::string> optional_string(const std::string& field) {
        const nlohmann::json* v = find(field);
        if (!v || v->is_null())
            return std::nullopt;
        if (!v->is_string())
            fail(at(field), "must be a string or null, not " + type_name(*v));
        return v->get<std::string>();
    }
    std::optional<bool> optional_boolean(const std::string& field) {
        const nlohmann::json* v = find(field);
        if (!v || v->is_null())
            return std::nullopt;
        if (!v->is_boolean())
            fail(at(field), "must be true, false or null, not " + type_name(*v));
        return v->get<bool>();
    }

    // Required fields: "missing" when absent.
    std::string required_string(const std::string& field) {
        return string_of(require(field), at(field));
    }
    double required_number(const std::string& field, double lo = -kNoLimit, double hi = kNoLimit) {
        return number_of(require(field), at(field), lo, hi);
    }
    bool required_boolean(const std::string& field) {
        return boolean_of(require(field), at(field));
    }
    const nlohmann::json& required_array(const std::string& field) {
        const nlohmann::json& v = require(field);
        if (!v.is_array())
            fail(at(field), "must be an array, not " + type_name(v));
        return v;
    }
    // Present, but null says "none".
    std::optional<std::string> string_or_null(const std::string& field) {
        const nlohmann::json& v = require_even_null(field);
        if (v.is_null())
            return std::nullopt;
        if (!v.is_string())
            fail(at(field), "must be a string or null, not " + type_name(v));
        return v.get<std::string>();
    }
    std::optional<bool> boolean_or_null(const std::string& field) {
        const nlohmann::json& v = require_even_null(field);
        if (v.is_null())
            return std::nullopt;
        if (!v.is_boolean())
            fail(at(field), "must be true, false or null, not " + type_name(v));
        return v.get<bool>();
    }

    // A value found elsewhere (an array element), read with the same words.
    double number_of(const nlohmann::json& v, const std::string& path, double lo = -kNoLimit,
                     double hi = kNoLimit) const {
        if (!v.is_number())
            fail(path, "must be a number, not " + type_name(v));
        const double d = v.get<double>();
        if (d >= lo && d <= hi)
            return d;
        std::ostringstream os;
        if (lo == 0 && hi == kNoLimit)
            os << "must not be negative";
        else if (hi == kNoLimit)
            os << "must be at least " << lo << ", not " << d;
        else if (lo == -kNoLimit)
            os << "must be at most " << hi << ", not " << d;
        else
            os << "must be between " << lo << " and " << hi << ", not " << d;
        fail(path, os.str());
    }
    std::string string_of(const nlohmann::json& v, const std::string& path) const {
        if (!v.is_string())
            fail(path, "must be a string, not " + type_name(v));
        return v.get<std::string>();
    }
    bool boolean_of(const nlohmann::json& v, const std::string& path) const {
        if (!v.is_boolean())
            fail(path, "must be true or false, not " + type_name(v));
        return v.get<bool>();
    }

    // Strict readers end with this: a field nobody read is a typo or a misunderstanding.
    void finish() const {
        for (const auto& [key, value] : j_.items()) {
            if (!seen_.count(key))
                fail(at(key), "unknown field");
        }
    }

  private:
    const nlohmann::json& require_even_null(const std::string& field) {
        seen_.insert(field);
        auto it = j_.find(field);
        if (it == j_.end())
            fail(at(field), "missing");
        return *it;
    }

    const nlohmann::json& j_;
    std::string origin_;
    std::string path_;
    bool null_is_absent_;
    std::set<std::string> seen_;
};

}  // namespace lockbench::json_input
