#include "dashboard/percentile_distribution.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace lockbench::dashboard {

std::vector<PercentilePoint> parse_percentile_distribution(const std::string& text) {
    std::vector<PercentilePoint> points;
    std::istringstream in(text);
    std::string line;
    for (int number = 1; std::getline(in, line); ++number) {
        const auto first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#' ||
            line.compare(first, 5, "Value") == 0)
            continue;
        std::istringstream row(line);
        PercentilePoint p;
        if (!(row >> p.value_ms >> p.percentile >> p.total_count) || p.percentile < 0 ||
            p.percentile > 1) {
            throw std::runtime_error("line " + std::to_string(number) +
                                     ": not a percentile row (value percentile count): " + line);
        }
        points.push_back(p);
    }
    return points;
}

std::optional<std::vector<PercentilePoint>> load_percentile_distribution(
    const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in)
        return std::nullopt;
    std::stringstream text;
    text << in.rdbuf();
    try {
        return parse_percentile_distribution(text.str());
    } catch (const std::runtime_error& e) {
        throw std::runtime_error(file.string() + ": " + e.what());
    }
}

}  // namespace lockbench::dashboard
