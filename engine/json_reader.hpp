#pragma once

// Strict reading of JSON objects for workload and fault files: every field a reader takes is
// recorded and finish() rejects the rest, and every error names its JSON path, because a typo in
// a scenario must not silently run a different experiment.

#include <cstdint>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "workload.hpp"

namespace lockbench {

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

// Reads one JSON object strictly: every field it takes is recorded, and finish() rejects the rest.
class ObjectReader {
  public:
    ObjectReader(const nlohmann::json& j, std::string origin, std::string path)
        : j_(j), origin_(std::move(origin)), path_(std::move(path)) {
        if (!j_.is_object())
            fail(path_.empty() ? "/" : path_, "must be an object, not " + type_name(j_));
    }

    [[noreturn]] void fail(const std::string& path, const std::string& what) const {
        throw WorkloadError(origin_ + ": " + path + ": " + what);
    }
    std::string at(const std::string& field) const { return path_ + "/" + field; }

    const nlohmann::json* get(const std::string& field) {
        seen_.insert(field);
        auto it = j_.find(field);
        return it == j_.end() ? nullptr : &*it;
    }
    std::string string(const std::string& field, std::string fallback) {
        const nlohmann::json* v = get(field);
        if (!v)
            return fallback;
        if (!v->is_string())
            fail(at(field), "must be a string, not " + type_name(*v));
        return v->get<std::string>();
    }
    double number(const std::string& field, double fallback, double lo, double hi) {
        const nlohmann::json* v = get(field);
        if (!v)
            return fallback;
        if (!v->is_number())
            fail(at(field), "must be a number, not " + type_name(*v));
        double d = v->get<double>();
        if (!(d >= lo && d <= hi)) {
            std::ostringstream os;
            os << "must be between " << lo << " and " << hi << ", not " << d;
            fail(at(field), os.str());
        }
        return d;
    }
    std::int64_t integer(const std::string& field, std::int64_t fallback, std::int64_t lo,
                         std::int64_t hi) {
        const nlohmann::json* v = get(field);
        if (!v)
            return fallback;
        if (!v->is_number_integer())
            fail(at(field), "must be an integer, not " + type_name(*v));
        auto i = v->get<std::int64_t>();
        if (i < lo || i > hi) {
            fail(at(field), "must be between " + std::to_string(lo) + " and " + std::to_string(hi) +
                                ", not " + std::to_string(i));
        }
        return i;
    }
    bool boolean(const std::string& field, bool fallback) {
        const nlohmann::json* v = get(field);
        if (!v)
            return fallback;
        if (!v->is_boolean())
            fail(at(field), "must be true or false, not " + type_name(*v));
        return v->get<bool>();
    }
    template <typename E>
    E choice(const std::string& field, E fallback,
             const std::vector<std::pair<std::string, E>>& options) {
        const nlohmann::json* v = get(field);
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
    void finish() const {
        for (const auto& [key, value] : j_.items()) {
            if (!seen_.count(key))
                fail(at(key), "unknown field");
        }
    }
    const std::string& origin() const { return origin_; }

  private:
    const nlohmann::json& j_;
    std::string origin_;
    std::string path_;
    std::set<std::string> seen_;
};

}  // namespace lockbench
