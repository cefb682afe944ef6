#pragma once

// `lockbench scenarios`: each scenario file's name, one line of what it shows, and what it
// expects of each strategy - grouped into a readable summary ("violates mutual_exclusion+resource:
// fenced, set_nx_px · safe: rwlock"), or every expectation as written with `verbose` - in lines
// that fit the terminal.

#include <cstddef>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "engine/run/workload.hpp"

namespace lockbench {

// Every *.json in `dir`, in name order, each read strictly and validated against every strategy
// its expectations name (a scenario the suite would refuse is refused here). Throws WorkloadError.
std::vector<Workload> load_scenarios(const std::filesystem::path& dir);

// The scenario's `summary`, or its description's first sentence when it has none.
std::string scenario_summary(const Workload& w);

// The expectations grouped by what they say, groups separated by " · ": the strategies that
// violate the same checks, those that deadlock, those whose fence saves the data, those safe.
std::string expectation_summary(const std::map<std::string, std::string>& expect);

// `text` in lines of at most `width` columns (counted in characters, not bytes): the first
// starts with `first`, the rest with `rest`. A word longer than a line is cut, so that no line
// is ever wider than `width`. No words, no line.
std::string wrap_columns(const std::string& text, std::size_t width, const std::string& first,
                         const std::string& rest);

// The listing itself: per scenario its name, its summary and its expectation summary (with
// `verbose`, every strategy's expectation as written), wrapped to `width`.
std::string format_scenarios(const std::vector<Workload>& scenarios, std::size_t width,
                             bool verbose);

// The width to wrap to: COLUMNS when it is a positive number, else the terminal's width when
// standard output is one, else 80.
std::size_t output_columns();

}  // namespace lockbench
