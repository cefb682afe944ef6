#pragma once

// Number flags with bounds, for the subcommands that take them (run, check).

#include <cmath>
#include <sstream>
#include <string>
#include <type_traits>

#include <CLI/CLI.hpp>

namespace lockbench::cli {

// 86400000, not 8.64e+07: a bound as a person writes it.
template <typename T>
std::string bound_words(T bound) {
    if constexpr (std::is_integral_v<T>) {
        return std::to_string(bound);
    } else {
        if (bound == std::floor(bound) && std::fabs(bound) < 1e15)
            return std::to_string(static_cast<long long>(bound));
        std::ostringstream os;
        os << bound;
        return os.str();
    }
}

// A number flag with bounds, worded as the workload file's errors are ("--hold-ms: must be
// between 0 and 86400000, not 1e300"): a negative or huge value would overflow the clock types a
// run computes with, or reach the workload reader and be named by a JSON path the user never
// wrote. --help shows the range.
template <typename T>
CLI::Validator within(T lo, T hi) {
    const std::string type = std::is_floating_point_v<T> ? "FLOAT"
                             : std::is_signed_v<T>       ? "INT"
                                                         : "UINT";
    const std::string lo_words = bound_words(lo), hi_words = bound_words(hi);
    return CLI::Validator(
        [lo, hi, lo_words, hi_words](std::string& text) -> std::string {
            T value{};
            if (CLI::detail::lexical_cast(text, value) && value >= lo && value <= hi)
                return {};
            return "must be between " + lo_words + " and " + hi_words + ", not " + text;
        },
        type + " in [" + lo_words + " - " + hi_words + "]");
}

}  // namespace lockbench::cli
