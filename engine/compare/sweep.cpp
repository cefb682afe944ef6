#include "engine/compare/sweep.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

namespace lockbench {

using nlohmann::json;

namespace {

// "faults[0].duration_ms" or "topology.masters" as JSON pointer tokens; "" when malformed.
std::vector<std::string> path_tokens(const std::string& path) {
    std::vector<std::string> tokens;
    std::string token;
    for (std::size_t i = 0; i < path.size(); ++i) {
        const char c = path[i];
        if (c == '.') {
            if (token.empty() && (tokens.empty() || path[i - 1] != ']'))
                return {};
            if (!token.empty())
                tokens.push_back(token);
            token.clear();
        } else if (c == '[') {
            if (!token.empty())
                tokens.push_back(token);
            token.clear();
            const std::size_t close = path.find(']', i);
            if (close == std::string::npos || close == i + 1)
                return {};
            const std::string index = path.substr(i + 1, close - i - 1);
            if (!std::all_of(index.begin(), index.end(),
                             [](char d) { return d >= '0' && d <= '9'; }))
                return {};
            tokens.push_back(index);
            i = close;
        } else {
            token.push_back(c);
        }
    }
    if (!token.empty())
        tokens.push_back(token);
    else if (path.empty() || path.back() == '.')
        return {};
    return tokens;
}

json::json_pointer pointer_of(const std::vector<std::string>& tokens) {
    json::json_pointer p;
    for (const auto& t : tokens)
        p /= t;
    return p;
}

bool is_constant_distribution(const json& v) {
    return v.is_object() && v.size() == 1 && v.contains("constant") && v["constant"].is_number();
}

// The faults that have `field`, as readable paths.
std::vector<std::string> faults_with(const json& workload, const std::string& field) {
    std::vector<std::string> found;
    const json& faults = workload.value("faults", json::array());
    for (std::size_t i = 0; i < faults.size(); ++i) {
        if (faults[i].is_object() && faults[i].contains(field))
            found.push_back("faults[" + std::to_string(i) + "]." + field);
    }
    return found;
}

double parse_value(const std::string& text, const std::string& whole) {
    const char* begin = text.c_str();
    char* end = nullptr;
    const double value = std::strtod(begin, &end);
    if (text.empty() || end != begin + text.size() || !std::isfinite(value))
        throw WorkloadError("--sweep " + whole + ": '" + text + "' is not a number");
    return value;
}

}  // namespace

json SweepAxis::to_json() const {
    return json{{"field", field}, {"path", path}, {"values", values}};
}

std::string value_text(double value) {
    std::ostringstream os;
    os.precision(15);
    os << value;
    return os.str();
}

SweepAxis parse_sweep(const std::string& text, const json& workload) {
    const std::size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0)
        throw WorkloadError("--sweep " + text + ": write FIELD=v1,v2,... (e.g. lease_ms=300,1000)");
    SweepAxis axis;
    axis.field = text.substr(0, eq);
    std::vector<std::string> tokens = path_tokens(axis.field);
    if (tokens.empty())
        throw WorkloadError("--sweep " + text + ": '" + axis.field +
                            "' is not a field path (write lease_ms or faults[0].duration_ms)");
    axis.path = axis.field;
    if (tokens.size() == 1 && !workload.contains(tokens[0])) {
        const std::vector<std::string> found = faults_with(workload, tokens[0]);
        if (found.size() > 1) {
            std::string names;
            for (const auto& f : found)
                names += (names.empty() ? "" : " or ") + f;
            throw WorkloadError("--sweep " + axis.field +
                                ": several faults have it; name one: " + names);
        }
        if (found.size() == 1) {
            axis.path = found.front();
            tokens = path_tokens(axis.path);
        }
    }
    axis.pointer = pointer_of(tokens);
    // Names the workload never had are refused: the run would reject them anyway, but only
    // after the grid was planned, and a misspelt fault field would not be rejected by the
    // workload reader at all.
    if (!workload.contains(axis.pointer))
        throw WorkloadError("--sweep " + axis.field +
                            ": no such field in the workload (a numeric field such as lease_ms, "
                            "hold_ms, topology.masters or faults[0].duration_ms)");
    const json& current = workload.at(axis.pointer);
    axis.distribution = is_constant_distribution(current);
    if (!current.is_number() && !axis.distribution)
        throw WorkloadError("--sweep " + axis.field + ": not a numeric field (it is " +
                            current.dump() + ")");
    axis.integer = current.is_number_integer();
    std::stringstream list(text.substr(eq + 1));
    for (std::string item; std::getline(list, item, ',');) {
        const double value = parse_value(item, text);
        if (axis.integer && value != std::floor(value))
            throw WorkloadError("--sweep " + text + ": " + axis.path +
                                " takes whole numbers, not " + item);
        if (std::find(axis.values.begin(), axis.values.end(), value) != axis.values.end())
            throw WorkloadError("--sweep " + text + ": " + item + " twice");
        axis.values.push_back(value);
    }
    if (!text.empty() && text.back() == ',')
        throw WorkloadError("--sweep " + text + ": an empty value");
    if (axis.values.size() < 2)
        throw WorkloadError("--sweep " + text +
                            ": a sweep needs two values or more (set one value in the workload)");
    if (axis.values.size() > kMaxSweepValues)
        throw WorkloadError("--sweep " + text + ": more than " + std::to_string(kMaxSweepValues) +
                            " values");
    return axis;
}

std::vector<std::vector<double>> sweep_cells(const std::vector<SweepAxis>& axes) {
    if (axes.empty())
        return {{}};
    std::vector<std::vector<double>> cells;
    if (axes.size() == 1) {
        for (double v : axes[0].values)
            cells.push_back({v});
        return cells;
    }
    for (double second : axes[1].values) {
        for (double first : axes[0].values)
            cells.push_back({first, second});
    }
    return cells;
}

Workload at_setting(const Workload& base, const std::vector<SweepAxis>& axes,
                    const std::vector<double>& setting) {
    if (axes.empty())
        return base;
    json j = base.to_json();
    for (std::size_t i = 0; i < axes.size(); ++i) {
        const SweepAxis& axis = axes[i];
        const double v = setting.at(i);
        // A value beyond what an integer field can hold is left a double for the reader to
        // refuse by name, rather than overflowing here.
        json value =
            axis.integer && std::fabs(v) < 9e15 ? json(static_cast<std::int64_t>(v)) : json(v);
        j[axis.pointer] = axis.distribution ? json{{"constant", value}} : value;
    }
    return Workload::from_json(j, "--sweep " + setting_words(axes, setting));
}

std::map<std::string, double> setting_at(const std::vector<SweepAxis>& axes,
                                         const std::vector<double>& setting) {
    std::map<std::string, double> at;
    for (std::size_t i = 0; i < axes.size() && i < setting.size(); ++i)
        at[axes[i].path] = setting[i];
    return at;
}

std::string setting_words(const std::vector<SweepAxis>& axes, const std::vector<double>& setting) {
    std::string words;
    for (std::size_t i = 0; i < axes.size() && i < setting.size(); ++i)
        words += (words.empty() ? "" : " ") + axes[i].field + "=" + value_text(setting[i]);
    return words;
}

}  // namespace lockbench
