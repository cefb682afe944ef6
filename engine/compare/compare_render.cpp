#include "engine/compare/compare_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <vector>

#include "checker/report.hpp"
#include "checker/story/markup_escape.hpp"
#include "engine/compare/sweep.hpp"
#include "engine/run/expectation.hpp"

namespace lockbench {

std::string k_of_n(const CompareCounts& counts) {
    return std::to_string(counts.violated) + " of " + std::to_string(counts.runs);
}

Safety safety_of(const CompareStrategyStats& stats) {
    if (stats.verdict.violated > 0)
        return Safety::Unsafe;
    if (stats.verdict.valid > 0)
        return Safety::Safe;
    return Safety::Unknown;
}

std::string setting_label(const CompareFile& compare, std::size_t index) {
    const std::map<std::string, double>& setting = compare.settings[index].at;
    std::string words;
    for (const CompareAxis& axis : compare.sweep)
        words += (words.empty() ? "" : " ") + axis.field + "=" + value_text(setting.at(axis.path));
    return words;
}

namespace {

std::string percent(double rate) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * rate);
    return buf;
}

std::string interval_text(const CompareCounts& counts) {
    return percent(counts.wilson_95.first) + "-" + percent(counts.wilson_95.second);
}

std::string number_text(const std::optional<double>& v, const char* format) {
    if (!v)
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, format, *v);
    return buf;
}

// Where safe turns unsafe or back between two neighbouring settings; a setting not judged is
// on neither side.
bool safety_boundary(Safety a, Safety b) {
    return a != Safety::Unknown && b != Safety::Unknown && a != b;
}

// A sweep's settings as a grid: the first axis across, the second (if any) down; the settings
// are listed with the first axis varying fastest.
struct SweepGrid {
    explicit SweepGrid(const CompareFile& comparison)
        : compare(comparison),
          across(comparison.sweep[0]),
          down(comparison.sweep.size() == 2 ? &comparison.sweep[1] : nullptr),
          columns(across.values.size()),
          rows(down ? down->values.size() : 1) {}

    const CompareStrategyStats& stats_at(const std::string& strategy, std::size_t r,
                                         std::size_t c) const {
        return compare.settings[r * columns + c].strategies.at(strategy);
    }

    const CompareFile& compare;
    const CompareAxis& across;
    const CompareAxis* down;  // null with one axis
    std::size_t columns;
    std::size_t rows;
};

}  // namespace

namespace {

std::string padded(std::string s, std::size_t width) {
    s.resize(std::max(s.size(), width), ' ');
    return s;
}

std::string without_trailing_spaces(std::string s) {
    while (!s.empty() && s.back() == ' ')
        s.pop_back();
    return s;
}

// "3/3 ###": k of n, then '.' where none violated, one '#' per third of the runs that did, '?'
// where nothing was judged.
std::string heat_cell_text(const CompareStrategyStats& stats) {
    const CompareCounts& v = stats.verdict;
    std::string cell = std::to_string(v.violated) + "/" + std::to_string(v.runs);
    const Safety safety = safety_of(stats);
    if (safety == Safety::Unknown)
        return cell + " ?";
    if (safety == Safety::Safe)
        return cell + " .";
    const double rate = v.violation_rate.value_or(0);
    return cell + " " + std::string(static_cast<std::size_t>(std::ceil(rate * 3)), '#');
}

// The text heat map's columns: the row labels' width, then one cell per value across.
struct HeatMapLayout {
    std::vector<std::string> row_labels;
    std::vector<std::string> headers;
    std::size_t label_width = 0;
    std::size_t cell_width = 9;
};

HeatMapLayout heat_map_layout(const SweepGrid& grid) {
    HeatMapLayout layout;
    layout.row_labels.resize(grid.rows);
    for (std::size_t r = 0; r < grid.rows; ++r) {
        if (grid.down)
            layout.row_labels[r] = grid.down->field + "=" + value_text(grid.down->values[r]);
        layout.label_width = std::max(layout.label_width, layout.row_labels[r].size());
    }
    layout.label_width += 2;
    layout.headers.resize(grid.columns);
    for (std::size_t c = 0; c < grid.columns; ++c) {
        layout.headers[c] = grid.across.field + "=" + value_text(grid.across.values[c]);
        layout.cell_width = std::max(layout.cell_width, layout.headers[c].size() + 2);
    }
    return layout;
}

// One row of cells, with '|' where the next setting across is on the other side of safe.
std::string heat_map_row(const SweepGrid& grid, const HeatMapLayout& layout,
                         const std::string& strategy, std::size_t r) {
    std::string line = padded(layout.row_labels[r], layout.label_width);
    for (std::size_t c = 0; c < grid.columns; ++c) {
        const CompareStrategyStats& stats = grid.stats_at(strategy, r, c);
        const bool edge =
            c + 1 < grid.columns &&
            safety_boundary(safety_of(stats), safety_of(grid.stats_at(strategy, r, c + 1)));
        line += padded(heat_cell_text(stats), layout.cell_width - 2) + (edge ? "| " : "  ");
    }
    return without_trailing_spaces(line);
}

// Under row r: '=' under each cell whose setting below is on the other side of safe; empty
// where there is none.
std::string heat_map_line_under(const SweepGrid& grid, const HeatMapLayout& layout,
                                const std::string& strategy, std::size_t r) {
    std::string under = padded("", layout.label_width);
    bool any = false;
    for (std::size_t c = 0; c < grid.columns; ++c) {
        const bool edge = safety_boundary(safety_of(grid.stats_at(strategy, r, c)),
                                          safety_of(grid.stats_at(strategy, r + 1, c)));
        any = any || edge;
        under +=
            edge ? std::string(layout.cell_width - 2, '=') + "  " : padded("", layout.cell_width);
    }
    return any ? without_trailing_spaces(under) : "";
}

}  // namespace

std::string format_heat_map(const CompareFile& compare, const std::string& strategy) {
    if (compare.sweep.empty())
        return "";
    const SweepGrid grid(compare);
    const HeatMapLayout layout = heat_map_layout(grid);
    std::ostringstream out;
    out << strategy << ": runs that violated a check, k of n"
        << (grid.down ? " (rows " + grid.down->path + ", columns " + grid.across.path + ")" : "")
        << "\n";
    std::string header = padded("", layout.label_width);
    for (const auto& h : layout.headers)
        header += padded(h, layout.cell_width);
    out << without_trailing_spaces(header) << "\n";
    for (std::size_t r = 0; r < grid.rows; ++r) {
        out << heat_map_row(grid, layout, strategy, r) << "\n";
        if (r + 1 < grid.rows)
            out << heat_map_line_under(grid, layout, strategy, r) << "\n";
    }
    return out.str();
}

namespace {

// An expectation of rates only ("violates:mutual_exclusion in >= 2 of 3"): no single run
// decides it, so "as expected in 0 of n run(s)" would be true and say nothing.
bool only_rates(const std::string& expected) {
    try {
        return Expectation::parse(expected).only_rates();
    } catch (const std::invalid_argument&) {
        return false;  // a grammar this build does not know: said as it is, run by run
    }
}

// "violates:mutual_exclusion in >= 2 of 3 runs; seen in 3 of 3: as expected": each rate as the
// runs met it, then whether they met them all.
std::string rates_outcome(const CompareStrategyStats& stats) {
    std::string words;
    for (const RateTermOutcome& rate : stats.rate_terms) {
        words += (words.empty() ? "" : "; ") + rate.term + " runs; seen in " +
                 std::to_string(rate.held) + " of " + std::to_string(rate.runs) +
                 (rate.undecided > 0 ? " (" + std::to_string(rate.undecided) + " undecided)" : "");
    }
    const std::optional<bool> met = stats.expectation_met;
    return words + ": " + (!met ? "unknown" : *met ? "as expected" : "NOT as expected");
}

// "compare: t1, 5 run(s) per strategy, interleaved, 10 s each", and whether all were done.
void write_compare_intro(std::ostream& out, const CompareFile& compare) {
    const std::size_t planned = compare.runs_planned;
    const std::size_t done = compare.runs_done;
    out << compare.kind << ": " << compare.scenario << ", " << compare.repeat
        << " run(s) per strategy";
    if (!compare.sweep.empty())
        out << " and setting";
    out << (compare.strategies.size() > 1 ? ", interleaved, " : ", ")
        << value_text(compare.duration_s) << " s each\n";
    if (compare.interrupted)
        out << "INCOMPLETE: interrupted after " << done << " of " << planned << " runs\n";
    else if (!compare.complete)
        out << "INCOMPLETE: " << compare.failed.size() << " of " << planned
            << " runs failed (listed at the end)\n";
}

// "  mutual_exclusion   violated in 5 of 5    57%-100%": a line per check that applied.
void write_check_lines(std::ostream& out, const CompareStrategyStats& stats) {
    std::set<std::string> names;
    for (const auto& [name, counts] : stats.checks)
        names.insert(name);
    for (const std::string& name : checker::Report::in_check_order(names)) {
        const CompareCounts& counts = stats.checks.at(name);
        if (counts.not_applicable == counts.runs)
            continue;  // did not apply to this strategy in any run
        std::string extra;
        if (counts.unknown > 0)
            extra += ", unknown in " + std::to_string(counts.unknown);
        if (counts.not_applicable > 0)
            extra += ", n/a in " + std::to_string(counts.not_applicable);
        char line[200];
        std::snprintf(line, sizeof line, "  %-18s violated in %-8s  %s%s\n", name.c_str(),
                      k_of_n(counts).c_str(), interval_text(counts).c_str(), extra.c_str());
        out << line;
    }
}

// "  cycles/s           300.0 median (100.0 - 500.0)": `unit` follows the median.
void write_spread_line(std::ostream& out, const char* what, const CompareSpread& spread,
                       const char* format, const char* unit) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-18s %s%s median (%s - %s)\n", what,
                  number_text(spread.median, format).c_str(), unit,
                  number_text(spread.min, format).c_str(), number_text(spread.max, format).c_str());
    out << line;
}

std::string met_word(const std::optional<bool>& met) {
    return !met ? "unknown" : *met ? "met" : "NOT MET";
}

// The expectation run by run, then over the runs, then each rate term as the runs held it.
void write_expectation_lines(std::ostream& out, const CompareStrategyStats& stats) {
    out << "  expected           " << stats.expected.value_or("") << ": as expected in "
        << stats.as_expected.value_or(0) << " of " << stats.runs
        << " run(s); over the runs: " << met_word(stats.expectation_met) << "\n";
    for (const RateTermOutcome& rate : stats.rate_terms) {
        out << "    " << rate.term << ": held in " << rate.held << " of " << rate.runs
            << (rate.undecided > 0 ? " (" + std::to_string(rate.undecided) + " undecided)" : "")
            << " -> " << met_word(rate.met) << "\n";
    }
}

void write_strategy_text(std::ostream& out, const CompareFile& compare, const std::string& strategy,
                         const CompareStrategyStats& stats) {
    const CompareCounts& v = stats.verdict;
    out << "\n"
        << strategy << ": " << stats.runs << " run(s), violated in " << k_of_n(v)
        << " (95% interval " << interval_text(v) << ")\n";
    write_check_lines(out, stats);
    write_spread_line(out, "cycles/s", stats.cycles_per_s, "%.1f", "");
    write_spread_line(out, "acquire p99", stats.acquire_p99_ms, "%.3f", " ms");
    if (stats.server_us_per_cycle)
        write_spread_line(out, "server cpu/cycle", *stats.server_us_per_cycle, "%.1f", " us");
    if (stats.expected && compare.sweep.empty()) {
        if (only_rates(*stats.expected))
            out << "  expected           " << rates_outcome(stats) << "\n";
        else
            write_expectation_lines(out, stats);
    }
    out << "  reading            " << stats.reading << "\n";
}

}  // namespace

std::string format_compare(const CompareFile& compare) {
    std::ostringstream out;
    write_compare_intro(out, compare);
    const std::vector<std::string>& strategies = compare.strategies;
    if (!compare.sweep.empty()) {
        out << "\nheat maps ('.' none violated, one '#' per third of runs violated, '|' and '=' "
               "the boundary between safe and unsafe settings, '?' not judged)\n";
        for (const auto& strategy : strategies)
            out << "\n" << format_heat_map(compare, strategy);
    }
    const std::vector<CompareSetting>& settings = compare.settings;
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const std::string label = setting_label(compare, i);
        if (!label.empty())
            out << "\nat " << label << "\n";
        for (const auto& strategy : strategies)
            write_strategy_text(out, compare, strategy, settings[i].strategies.at(strategy));
    }
    out << "\nreading: " << compare.reading << "\n";
    for (const CompareFailure& f : compare.failed)
        out << "failed: " << f.strategy << ", round " << f.round << ": " << f.error << "\n";
    return out.str();
}

namespace {

// The SVG heat map in pixels: a cell, and the margins left of and above the grid for the labels.
constexpr int kSvgCellWidth = 96, kSvgCellHeight = 40, kSvgLeft = 170, kSvgTop = 48;

void write_html_head(std::ostream& h, const CompareFile& compare) {
    h << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>lockbench "
      << markup_escape(compare.kind) << ": " << markup_escape(compare.scenario)
      << "</title>\n<style>\n"
      << "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222}\n"
      << "h1{font-size:20px}h2{font-size:16px;margin-top:28px}\n"
      << "table{border-collapse:collapse;margin:8px 0}\n"
      << "td,th{border:1px solid #ccc;padding:4px 8px;text-align:left;vertical-align:top}\n"
      << "th{background:#f3f3f3}.bad{color:#b71c1c;font-weight:600}.ok{color:#1b5e20}\n"
      << ".ci{color:#666;font-size:12px}.reading{background:#fff8e1;padding:8px 12px;"
      << "border-left:4px solid #f9a825}.incomplete{color:#b71c1c;font-weight:700}\n"
      << "figure{display:inline-block;margin:8px 24px 8px 0}figcaption{font-weight:600}\n"
      << "svg.heatmap text{font:12px system-ui,sans-serif}\n"
      << ".boundary{stroke:#000;stroke-width:4}\n</style></head>\n<body>\n";
}

// The title, what was run, whether it all was, and the reading.
void write_html_intro(std::ostream& h, const CompareFile& compare) {
    h << "<h1>lockbench " << markup_escape(compare.kind) << ": " << markup_escape(compare.scenario)
      << "</h1>\n<p>" << compare.repeat << " run(s) per strategy"
      << (compare.sweep.empty() ? "" : " and setting") << ", interleaved, "
      << value_text(compare.duration_s) << " s each.</p>\n";
    if (!compare.complete) {
        h << "<p class=\"incomplete\">Incomplete: " << compare.runs_done << " of "
          << compare.runs_planned << " runs done" << (compare.interrupted ? " (interrupted)" : "")
          << ".</p>\n";
    }
    h << "<p class=\"reading\">" << markup_escape(compare.reading) << "</p>\n";
}

// Green where safe, grey where not judged, and from a light red at a few runs violated to a
// deep one at every run.
std::string heat_cell_fill(const CompareStrategyStats& stats) {
    const Safety safety = safety_of(stats);
    if (safety == Safety::Safe)
        return "#a5d6a7";
    if (safety != Safety::Unsafe)
        return "#bdbdbd";
    const double rate = stats.verdict.violation_rate.value_or(0);
    const int g = static_cast<int>(205 - 165 * rate);
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 229 - static_cast<int>(30 * rate), g, g);
    return buf;
}

// The fields' paths with an arrow each, and the values of the first axis over the columns.
void write_svg_axes(std::ostream& h, const SweepGrid& grid) {
    h << "<text x=\"" << kSvgLeft << "\" y=\"14\">" << markup_escape(grid.across.path)
      << " &#8594;</text>\n";
    if (grid.down)
        h << "<text x=\"4\" y=\"14\">" << markup_escape(grid.down->path) << " &#8595;</text>\n";
    for (std::size_t c = 0; c < grid.columns; ++c) {
        h << "<text x=\"" << kSvgLeft + static_cast<int>(c) * kSvgCellWidth + kSvgCellWidth / 2
          << "\" y=\"" << kSvgTop - 8 << "\" text-anchor=\"middle\">"
          << value_text(grid.across.values[c]) << "</text>\n";
    }
}

void write_svg_cell(std::ostream& h, const SweepGrid& grid, const std::string& strategy,
                    std::size_t r, std::size_t c) {
    const CompareStrategyStats& stats = grid.stats_at(strategy, r, c);
    const CompareCounts& v = stats.verdict;
    const int x = kSvgLeft + static_cast<int>(c) * kSvgCellWidth;
    const int y = kSvgTop + static_cast<int>(r) * kSvgCellHeight;
    h << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << kSvgCellWidth
      << "\" height=\"" << kSvgCellHeight << "\" fill=\"" << heat_cell_fill(stats)
      << "\" stroke=\"#fff\"><title>" << markup_escape(strategy) << " at "
      << markup_escape(setting_label(grid.compare, r * grid.columns + c)) << ": " << k_of_n(v)
      << " runs violated a check (95% interval " << interval_text(v) << ")</title></rect>\n";
    h << "<text x=\"" << x + kSvgCellWidth / 2 << "\" y=\"" << y + kSvgCellHeight / 2 + 4
      << "\" text-anchor=\"middle\">" << v.violated << "/" << v.runs << "</text>\n";
}

// A thick line right of a cell and under it where safe turns unsafe or back.
void write_svg_boundaries(std::ostream& h, const SweepGrid& grid, const std::string& strategy) {
    for (std::size_t r = 0; r < grid.rows; ++r) {
        for (std::size_t c = 0; c < grid.columns; ++c) {
            const Safety here = safety_of(grid.stats_at(strategy, r, c));
            const int x = kSvgLeft + static_cast<int>(c) * kSvgCellWidth;
            const int y = kSvgTop + static_cast<int>(r) * kSvgCellHeight;
            if (c + 1 < grid.columns &&
                safety_boundary(here, safety_of(grid.stats_at(strategy, r, c + 1))))
                h << "<line class=\"boundary\" x1=\"" << x + kSvgCellWidth << "\" y1=\"" << y
                  << "\" x2=\"" << x + kSvgCellWidth << "\" y2=\"" << y + kSvgCellHeight
                  << "\"/>\n";
            if (r + 1 < grid.rows &&
                safety_boundary(here, safety_of(grid.stats_at(strategy, r + 1, c))))
                h << "<line class=\"boundary\" x1=\"" << x << "\" y1=\"" << y + kSvgCellHeight
                  << "\" x2=\"" << x + kSvgCellWidth << "\" y2=\"" << y + kSvgCellHeight
                  << "\"/>\n";
        }
    }
}

void write_heat_map_svg(std::ostream& h, const SweepGrid& grid, const std::string& strategy) {
    const int width = kSvgLeft + static_cast<int>(grid.columns) * kSvgCellWidth + 16;
    const int height = kSvgTop + static_cast<int>(grid.rows) * kSvgCellHeight + 16;
    h << "<figure><figcaption>" << markup_escape(strategy)
      << "</figcaption>\n<svg class=\"heatmap\" data-strategy=\"" << markup_escape(strategy)
      << "\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << width << " " << height << "\">\n";
    write_svg_axes(h, grid);
    for (std::size_t r = 0; r < grid.rows; ++r) {
        if (grid.down)
            h << "<text x=\"" << kSvgLeft - 8 << "\" y=\""
              << kSvgTop + static_cast<int>(r) * kSvgCellHeight + kSvgCellHeight / 2 + 4
              << "\" text-anchor=\"end\">" << value_text(grid.down->values[r]) << "</text>\n";
        for (std::size_t c = 0; c < grid.columns; ++c)
            write_svg_cell(h, grid, strategy, r, c);
    }
    // Drawn after the cells so no cell covers them.
    write_svg_boundaries(h, grid, strategy);
    h << "</svg></figure>\n";
}

// The heat maps: violation rate per setting, the boundary between safe and unsafe settings
// drawn as a thick line.
void write_heat_maps_html(std::ostream& h, const CompareFile& compare) {
    if (compare.sweep.empty())
        return;
    const SweepGrid grid(compare);
    h << "<h2>Violation rate over the settings</h2>\n<p>Each cell: runs that violated a "
         "check, k of n. Green: none did; red, deeper as more did; grey: not judged. The "
         "thick line is the boundary between safe and unsafe settings.</p>\n";
    for (const std::string& strategy : compare.strategies)
        write_heat_map_svg(h, grid, strategy);
}

// The checks that applied to some strategy in some run: the table's columns.
std::vector<std::string> applicable_checks(const std::vector<CompareSetting>& settings) {
    std::set<std::string> names;
    for (const CompareSetting& s : settings) {
        for (const auto& [strategy, stats] : s.strategies) {
            for (const auto& [name, counts] : stats.checks) {
                if (counts.not_applicable < counts.runs)
                    names.insert(name);
            }
        }
    }
    return checker::Report::in_check_order(names);
}

std::string counts_cell(const CompareCounts& counts) {
    const bool bad = counts.violated > 0;
    return std::string("<td class=\"") + (bad ? "bad" : "ok") + "\">" + k_of_n(counts) +
           " <span class=\"ci\">(" + interval_text(counts) + ")</span></td>";
}

// "300.0 (100.0-500.0)": a spread's median, then its range.
std::string spread_html(const CompareSpread& spread, const char* format) {
    return number_text(spread.median, format) + " (" + number_text(spread.min, format) + "-" +
           number_text(spread.max, format) + ")";
}

void write_strategy_row(std::ostream& h, const std::string& strategy,
                        const CompareStrategyStats& stats, const std::vector<std::string>& checks) {
    h << "<tr><td>" << markup_escape(strategy) << "</td><td>" << stats.runs << "</td>"
      << counts_cell(stats.verdict);
    for (const auto& name : checks) {
        if (const auto it = stats.checks.find(name);
            it != stats.checks.end() && it->second.not_applicable < it->second.runs)
            h << counts_cell(it->second);
        else
            h << "<td>n/a</td>";
    }
    h << "<td>" << spread_html(stats.cycles_per_s, "%.1f") << "</td><td>"
      << spread_html(stats.acquire_p99_ms, "%.3f") << "</td><td class=\"server-cost\">";
    if (stats.server_us_per_cycle)
        h << spread_html(*stats.server_us_per_cycle, "%.1f");
    else
        h << "not measured";
    h << "</td><td>" << markup_escape(stats.reading) << "</td></tr>\n";
}

// The table, per setting: k of n and the interval for every check, throughput, p99.
void write_setting_tables(std::ostream& h, const CompareFile& compare) {
    const std::vector<CompareSetting>& settings = compare.settings;
    const std::vector<std::string> checks = applicable_checks(settings);
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const std::string label = setting_label(compare, i);
        if (!label.empty())
            h << "<h2>At " << markup_escape(label) << "</h2>\n";
        h << "<table class=\"compare\"><tr><th>strategy</th><th>runs</th><th>any check "
             "violated</th>";
        for (const auto& name : checks)
            h << "<th>" << markup_escape(name) << "</th>";
        h << "<th>cycles/s median (min-max)</th><th>acquire p99 ms median (min-max)</th>"
             "<th>server CPU us per cycle median (min-max)</th><th>reading</th></tr>\n";
        for (const std::string& strategy : compare.strategies)
            write_strategy_row(h, strategy, settings[i].strategies.at(strategy), checks);
        h << "</table>\n";
    }
}

void write_html_foot(std::ostream& h) {
    h << "<p class=\"ci\">k of n: runs in which the check found a violation, of the runs done; "
         "in brackets the Wilson 95% interval of the violation rate. Each run's own folder "
         "holds its report, story and timeline.</p>\n";
    // Tells a headless browser (the test) that every heat map was laid out with a size.
    h << "<script>window.addEventListener('load',function(){var n=0;"
         "document.querySelectorAll('svg.heatmap').forEach(function(m){"
         "var b=m.getBoundingClientRect();if(b.width>0&&b.height>0)n++;});"
         "document.body.setAttribute('data-heatmaps-drawn',String(n));});</script>\n";
    h << "</body></html>\n";
}

}  // namespace

std::string compare_html(const CompareFile& compare) {
    std::ostringstream h;
    write_html_head(h, compare);
    write_html_intro(h, compare);
    write_heat_maps_html(h, compare);
    write_setting_tables(h, compare);
    write_html_foot(h);
    return h.str();
}

}  // namespace lockbench
