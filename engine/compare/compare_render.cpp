#include "engine/compare/compare_render.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>
#include <vector>

#include "checker/report.hpp"
#include "checker/story/markup_escape.hpp"
#include "engine/compare/sweep.hpp"
#include "engine/run/expectation.hpp"

namespace lockbench {

using nlohmann::json;

std::string k_of_n(const json& counts) {
    return std::to_string(counts["violated"].get<int>()) + " of " +
           std::to_string(counts["runs"].get<int>());
}

Safety safety_of(const json& stats) {
    const json& v = stats["verdict"];
    if (v["violated"].get<int>() > 0)
        return Safety::Unsafe;
    if (v["valid"].get<int>() > 0)
        return Safety::Safe;
    return Safety::Unknown;
}

std::string setting_label(const json& compare, std::size_t index) {
    const json& sweep = compare["sweep"];
    const json& setting = compare["settings"][index]["at"];
    std::string words;
    for (const json& axis : sweep) {
        const std::string path = axis["path"].get<std::string>();
        words += (words.empty() ? "" : " ") + axis["field"].get<std::string>() + "=" +
                 value_text(setting[path].get<double>());
    }
    return words;
}

namespace {

std::string percent(double rate) {
    char buf[16];
    std::snprintf(buf, sizeof buf, "%.0f%%", 100 * rate);
    return buf;
}

std::string interval_text(const json& counts) {
    return percent(counts["wilson_95"][0].get<double>()) + "-" +
           percent(counts["wilson_95"][1].get<double>());
}

std::string number_text(const json& v, const char* format) {
    if (!v.is_number())
        return "-";
    char buf[32];
    std::snprintf(buf, sizeof buf, format, v.get<double>());
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
    explicit SweepGrid(const json& comparison)
        : compare(comparison),
          across(comparison["sweep"][0]),
          down(comparison["sweep"].size() == 2 ? &comparison["sweep"][1] : nullptr),
          columns(across["values"].size()),
          rows(down ? (*down)["values"].size() : 1) {}

    const json& stats_at(const std::string& strategy, std::size_t r, std::size_t c) const {
        return compare["settings"][r * columns + c]["strategies"][strategy];
    }

    const json& compare;
    const json& across;
    const json* down;  // null with one axis
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
std::string heat_cell_text(const json& stats) {
    const json& v = stats["verdict"];
    std::string cell =
        std::to_string(v["violated"].get<int>()) + "/" + std::to_string(v["runs"].get<int>());
    const Safety safety = safety_of(stats);
    if (safety == Safety::Unknown)
        return cell + " ?";
    if (safety == Safety::Safe)
        return cell + " .";
    const double rate = v["violation_rate"].get<double>();
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
            layout.row_labels[r] = (*grid.down)["field"].get<std::string>() + "=" +
                                   value_text((*grid.down)["values"][r].get<double>());
        layout.label_width = std::max(layout.label_width, layout.row_labels[r].size());
    }
    layout.label_width += 2;
    layout.headers.resize(grid.columns);
    for (std::size_t c = 0; c < grid.columns; ++c) {
        layout.headers[c] = grid.across["field"].get<std::string>() + "=" +
                            value_text(grid.across["values"][c].get<double>());
        layout.cell_width = std::max(layout.cell_width, layout.headers[c].size() + 2);
    }
    return layout;
}

// One row of cells, with '|' where the next setting across is on the other side of safe.
std::string heat_map_row(const SweepGrid& grid, const HeatMapLayout& layout,
                         const std::string& strategy, std::size_t r) {
    std::string line = padded(layout.row_labels[r], layout.label_width);
    for (std::size_t c = 0; c < grid.columns; ++c) {
        const json& stats = grid.stats_at(strategy, r, c);
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

std::string format_heat_map(const json& compare, const std::string& strategy) {
    if (compare["sweep"].empty())
        return "";
    const SweepGrid grid(compare);
    const HeatMapLayout layout = heat_map_layout(grid);
    std::ostringstream out;
    out << strategy << ": runs that violated a check, k of n"
        << (grid.down ? " (rows " + (*grid.down)["path"].get<std::string>() + ", columns " +
                            grid.across["path"].get<std::string>() + ")"
                      : "")
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
std::string rates_outcome(const json& stats) {
    std::string words;
    for (const json& rate : stats.value("rate_terms", json::array())) {
        const int undecided = rate["undecided"].get<int>();
        words += (words.empty() ? "" : "; ") + rate["term"].get<std::string>() + " runs; seen in " +
                 std::to_string(rate["held"].get<int>()) + " of " +
                 std::to_string(rate["runs"].get<int>()) +
                 (undecided > 0 ? " (" + std::to_string(undecided) + " undecided)" : "");
    }
    const json met = stats.value("expectation_met", json());
    return words + ": " +
           (met.is_null()     ? "unknown"
            : met.get<bool>() ? "as expected"
                              : "NOT as expected");
}

// "compare: t1, 5 run(s) per strategy, interleaved, 10 s each", and whether all were done.
void write_compare_intro(std::ostream& out, const json& compare) {
    const std::size_t planned = compare.value("runs_planned", std::size_t{0});
    const std::size_t done = compare.value("runs_done", std::size_t{0});
    out << compare.value("kind", std::string("compare")) << ": "
        << compare.value("scenario", std::string()) << ", " << compare.value("repeat", 0)
        << " run(s) per strategy";
    if (!compare["sweep"].empty())
        out << " and setting";
    out << (compare["strategies"].size() > 1 ? ", interleaved, " : ", ")
        << value_text(compare.value("duration_s", 0.0)) << " s each\n";
    if (compare.value("interrupted", false))
        out << "INCOMPLETE: interrupted after " << done << " of " << planned << " runs\n";
    else if (!compare.value("complete", true))
        out << "INCOMPLETE: " << compare["failed"].size() << " of " << planned
            << " runs failed (listed at the end)\n";
}

// "  mutual_exclusion   violated in 5 of 5    57%-100%": a line per check that applied.
void write_check_lines(std::ostream& out, const json& stats) {
    std::set<std::string> names;
    for (const auto& [name, counts] : stats["checks"].items())
        names.insert(name);
    for (const std::string& name : checker::Report::in_check_order(names)) {
        const json& counts = stats["checks"][name];
        if (counts["not_applicable"].get<int>() == counts["runs"].get<int>())
            continue;  // did not apply to this strategy in any run
        std::string extra;
        if (counts["unknown"].get<int>() > 0)
            extra += ", unknown in " + std::to_string(counts["unknown"].get<int>());
        if (counts["not_applicable"].get<int>() > 0)
            extra += ", n/a in " + std::to_string(counts["not_applicable"].get<int>());
        char line[200];
        std::snprintf(line, sizeof line, "  %-18s violated in %-8s  %s%s\n", name.c_str(),
                      k_of_n(counts).c_str(), interval_text(counts).c_str(), extra.c_str());
        out << line;
    }
}

// "  cycles/s           300.0 median (100.0 - 500.0)": `unit` follows the median.
void write_spread_line(std::ostream& out, const char* what, const json& spread, const char* format,
                       const char* unit) {
    char line[200];
    std::snprintf(line, sizeof line, "  %-18s %s%s median (%s - %s)\n", what,
                  number_text(spread["median"], format).c_str(), unit,
                  number_text(spread["min"], format).c_str(),
                  number_text(spread["max"], format).c_str());
    out << line;
}

std::string met_word(const json& met) {
    return met.is_null() ? "unknown" : met.get<bool>() ? "met" : "NOT MET";
}

// The expectation run by run, then over the runs, then each rate term as the runs held it.
void write_expectation_lines(std::ostream& out, const json& stats) {
    out << "  expected           " << stats["expected"].get<std::string>() << ": as expected in "
        << stats["as_expected"].get<int>() << " of " << stats["runs"].get<int>()
        << " run(s); over the runs: " << met_word(stats.value("expectation_met", json())) << "\n";
    for (const json& rate : stats.value("rate_terms", json::array())) {
        out << "    " << rate["term"].get<std::string>() << ": held in " << rate["held"].get<int>()
            << " of " << rate["runs"].get<int>()
            << (rate["undecided"].get<int>() > 0
                    ? " (" + std::to_string(rate["undecided"].get<int>()) + " undecided)"
                    : "")
            << " -> " << met_word(rate["met"]) << "\n";
    }
}

void write_strategy_text(std::ostream& out, const json& compare, const std::string& strategy,
                         const json& stats) {
    const json& v = stats["verdict"];
    out << "\n"
        << strategy << ": " << stats["runs"].get<int>() << " run(s), violated in " << k_of_n(v)
        << " (95% interval " << interval_text(v) << ")\n";
    write_check_lines(out, stats);
    write_spread_line(out, "cycles/s", stats["cycles_per_s"], "%.1f", "");
    write_spread_line(out, "acquire p99", stats["acquire_p99_ms"], "%.3f", " ms");
    if (const json& us = stats.value("server_us_per_cycle", json()); us.is_object())
        write_spread_line(out, "server cpu/cycle", us, "%.1f", " us");
    if (stats["expected"].is_string() && compare["sweep"].empty()) {
        if (only_rates(stats["expected"].get<std::string>()))
            out << "  expected           " << rates_outcome(stats) << "\n";
        else
            write_expectation_lines(out, stats);
    }
    out << "  reading            " << stats["reading"].get<std::string>() << "\n";
}

}  // namespace

std::string format_compare(const json& compare) {
    std::ostringstream out;
    write_compare_intro(out, compare);
    const std::vector<std::string> strategies = compare["strategies"];
    if (!compare["sweep"].empty()) {
        out << "\nheat maps ('.' none violated, one '#' per third of runs violated, '|' and '=' "
               "the boundary between safe and unsafe settings, '?' not judged)\n";
        for (const auto& strategy : strategies)
            out << "\n" << format_heat_map(compare, strategy);
    }
    const json& settings = compare["settings"];
    for (std::size_t i = 0; i < settings.size(); ++i) {
        const std::string label = setting_label(compare, i);
        if (!label.empty())
            out << "\nat " << label << "\n";
        for (const auto& strategy : strategies)
            write_strategy_text(out, compare, strategy, settings[i]["strategies"][strategy]);
    }
    out << "\nreading: " << compare.value("reading", std::string()) << "\n";
    for (const json& f : compare["failed"]) {
        out << "failed: " << f["strategy"].get<std::string>() << ", round " << f["round"].get<int>()
            << ": " << f["error"].get<std::string>() << "\n";
    }
    return out.str();
}

namespace {

// The SVG heat map in pixels: a cell, and the margins left of and above the grid for the labels.
constexpr int kSvgCellWidth = 96, kSvgCellHeight = 40, kSvgLeft = 170, kSvgTop = 48;

void write_html_head(std::ostream& h, const json& compare) {
    h << "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>lockbench "
      << markup_escape(compare.value("kind", std::string("compare"))) << ": "
      << markup_escape(compare.value("scenario", std::string())) << "</title>\n<style>\n"
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
void write_html_intro(std::ostream& h, const json& compare) {
    h << "<h1>lockbench " << markup_escape(compare.value("kind", std::string("compare"))) << ": "
      << markup_escape(compare.value("scenario", std::string())) << "</h1>\n<p>"
      << compare.value("repeat", 0) << " run(s) per strategy"
      << (compare["sweep"].empty() ? "" : " and setting") << ", interleaved, "
      << value_text(compare.value("duration_s", 0.0)) << " s each.</p>\n";
    if (!compare.value("complete", true)) {
        h << "<p class=\"incomplete\">Incomplete: " << compare.value("runs_done", 0) << " of "
          << compare.value("runs_planned", 0) << " runs done"
          << (compare.value("interrupted", false) ? " (interrupted)" : "") << ".</p>\n";
    }
    h << "<p class=\"reading\">" << markup_escape(compare.value("reading", std::string()))
      << "</p>\n";
}

// Green where safe, grey where not judged, and from a light red at a few runs violated to a
// deep one at every run.
std::string heat_cell_fill(const json& stats) {
    const Safety safety = safety_of(stats);
    if (safety == Safety::Safe)
        return "#a5d6a7";
    if (safety != Safety::Unsafe)
        return "#bdbdbd";
    const double rate = stats["verdict"]["violation_rate"].get<double>();
    const int g = static_cast<int>(205 - 165 * rate);
    char buf[16];
    std::snprintf(buf, sizeof buf, "#%02x%02x%02x", 229 - static_cast<int>(30 * rate), g, g);
    return buf;
}

// The fields' paths with an arrow each, and the values of the first axis over the columns.
void write_svg_axes(std::ostream& h, const SweepGrid& grid) {
    h << "<text x=\"" << kSvgLeft << "\" y=\"14\">"
      << markup_escape(grid.across["path"].get<std::string>()) << " &#8594;</text>\n";
    if (grid.down)
        h << "<text x=\"4\" y=\"14\">" << markup_escape((*grid.down)["path"].get<std::string>())
          << " &#8595;</text>\n";
    for (std::size_t c = 0; c < grid.columns; ++c) {
        h << "<text x=\"" << kSvgLeft + static_cast<int>(c) * kSvgCellWidth + kSvgCellWidth / 2
          << "\" y=\"" << kSvgTop - 8 << "\" text-anchor=\"middle\">"
          << value_text(grid.across["values"][c].get<double>()) << "</text>\n";
    }
}

void write_svg_cell(std::ostream& h, const SweepGrid& grid, const std::string& strategy,
                    std::size_t r, std::size_t c) {
    const json& stats = grid.stats_at(strategy, r, c);
    const json& v = stats["verdict"];
    const int x = kSvgLeft + static_cast<int>(c) * kSvgCellWidth;
    const int y = kSvgTop + static_cast<int>(r) * kSvgCellHeight;
    h << "<rect class=\"cell\" x=\"" << x << "\" y=\"" << y << "\" width=\"" << kSvgCellWidth
      << "\" height=\"" << kSvgCellHeight << "\" fill=\"" << heat_cell_fill(stats)
      << "\" stroke=\"#fff\"><title>" << markup_escape(strategy) << " at "
      << markup_escape(setting_label(grid.compare, r * grid.columns + c)) << ": " << k_of_n(v)
      << " runs violated a check (95% interval " << interval_text(v) << ")</title></rect>\n";
    h << "<text x=\"" << x + kSvgCellWidth / 2 << "\" y=\"" << y + kSvgCellHeight / 2 + 4
      << "\" text-anchor=\"middle\">" << v["violated"].get<int>() << "/" << v["runs"].get<int>()
      << "</text>\n";
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
              << "\" text-anchor=\"end\">" << value_text((*grid.down)["values"][r].get<double>())
              << "</text>\n";
        for (std::size_t c = 0; c < grid.columns; ++c)
            write_svg_cell(h, grid, strategy, r, c);
    }
    // Drawn after the cells so no cell covers them.
    write_svg_boundaries(h, grid, strategy);
    h << "</svg></figure>\n";
}

// The heat maps: violation rate per setting, the boundary between safe and unsafe settings
// drawn as a thick line.
void write_heat_maps_html(std::ostream& h, const json& compare) {
    if (compare["sweep"].empty())
        return;
    const SweepGrid grid(compare);
    h << "<h2>Violation rate over the settings</h2>\n<p>Each cell: runs that violated a "
         "check, k of n. Green: none did; red, deeper as more did; grey: not judged. The "
         "thick line is the boundary between safe and unsafe settings.</p>\n";
    const std::vector<std::string> strategies = compare["strategies"];
    for (const std::string& strategy : strategies)
        write_heat_map_svg(h, grid, strategy);
}

// The checks that applied to some strategy in some run: the table's columns.
std::vector<std::string> applicable_checks(const json& settings) {
    std::set<std::string> names;
    for (const json& s : settings) {
        for (const auto& [strategy, stats] : s["strategies"].items()) {
            for (const auto& [name, counts] : stats["checks"].items()) {
                if (counts["not_applicable"].get<int>() < counts["runs"].get<int>())
                    names.insert(name);
            }
        }
    }
    return checker::Report::in_check_order(names);
}

std::string counts_cell(const json& counts) {
    const bool bad = counts["violated"].get<int>() > 0;
    return std::string("<td class=\"") + (bad ? "bad" : "ok") + "\">" + k_of_n(counts) +
           " <span class=\"ci\">(" + interval_text(counts) + ")</span></td>";
}

// "300.0 (100.0-500.0)": a spread's median, then its range.
std::string spread_html(const json& spread, const char* format) {
    return number_text(spread["median"], format) + " (" + number_text(spread["min"], format) + "-" +
           number_text(spread["max"], format) + ")";
}

void write_strategy_row(std::ostream& h, const std::string& strategy, const json& stats,
                        const std::vector<std::string>& checks) {
    h << "<tr><td>" << markup_escape(strategy) << "</td><td>" << stats["runs"].get<int>() << "</td>"
      << counts_cell(stats["verdict"]);
    for (const auto& name : checks) {
        if (stats["checks"].contains(name) && stats["checks"][name]["not_applicable"].get<int>() <
                                                  stats["checks"][name]["runs"].get<int>())
            h << counts_cell(stats["checks"][name]);
        else
            h << "<td>n/a</td>";
    }
    h << "<td>" << spread_html(stats["cycles_per_s"], "%.1f") << "</td><td>"
      << spread_html(stats["acquire_p99_ms"], "%.3f") << "</td><td class=\"server-cost\">";
    if (const json& us = stats.value("server_us_per_cycle", json()); us.is_object())
        h << spread_html(us, "%.1f");
    else
        h << "not measured";
    h << "</td><td>" << markup_escape(stats["reading"].get<std::string>()) << "</td></tr>\n";
}

// The table, per setting: k of n and the interval for every check, throughput, p99.
void write_setting_tables(std::ostream& h, const json& compare) {
    const json& settings = compare["settings"];
    const std::vector<std::string> strategies = compare["strategies"];
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
        for (const std::string& strategy : strategies)
            write_strategy_row(h, strategy, settings[i]["strategies"][strategy], checks);
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

std::string compare_html(const json& compare) {
    std::ostringstream h;
    write_html_head(h, compare);
    write_html_intro(h, compare);
    write_heat_maps_html(h, compare);
    write_setting_tables(h, compare);
    write_html_foot(h);
    return h.str();
}

}  // namespace lockbench
