#pragma once

// How a comparison is shown: compare.txt (text, with a heat map per strategy when swept) and
// compare.html (one self-contained page with SVG heat maps), both drawn from compare.json's
// CompareFile (engine/results) as summarise_compare (compare.hpp) filled it - what is shown here is
// computed there. Also the few words both sides say of compare.json alike: k of n, a setting's
// label, whether it was safe.

#include <cstddef>
#include <string>

#include "engine/results/compare_file.hpp"

namespace lockbench {

// compare.txt: the heat maps (with a sweep), then per setting a block per strategy, then the
// reading.
std::string format_compare(const CompareFile& compare);

// One strategy's heat map of the violation rate over the sweep's settings, as text, with the
// boundary between safe and unsafe settings drawn; "" without a sweep.
std::string format_heat_map(const CompareFile& compare, const std::string& strategy);

// compare.html: one self-contained page (no network): the reading, the tables and, with a sweep,
// an SVG heat map per strategy.
std::string compare_html(const CompareFile& compare);

// "2 of 5": the runs that violated, of its runs.
std::string k_of_n(const CompareCounts& counts);

// safe: no run violated anything; unsafe: some run did; unknown: nothing judged there.
enum class Safety { Safe, Unsafe, Unknown };
Safety safety_of(const CompareStrategyStats& stats);

// "lease_ms=200 hold_ms=50": the sweep's setting `index` in compare.json; "" without a sweep.
std::string setting_label(const CompareFile& compare, std::size_t index);

}  // namespace lockbench
