#pragma once

// `--sweep FIELD=v1,v2,…`: one numeric field of the workload - a top-level one (`lease_ms`,
// `hold_ms`), a nested one (`topology.masters`) or a fault's (`faults[0].duration_ms`) - set to
// each value in turn. The field is found in the workload as it runs (every default filled in), so
// a typo or a field that is not a number is refused up front, naming it, instead of an hour of
// runs of an experiment nobody asked for.

#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/run/workload.hpp"

namespace lockbench {

struct SweepAxis {
    std::string field;  // as the user wrote it: "lease_ms", "duration_ms"
    std::string path;   // as it was found, readable: "lease_ms", "faults[0].duration_ms"
    nlohmann::json::json_pointer pointer;
    std::vector<double> values;
    bool integer = false;       // the workload takes whole numbers there (lease_ms)
    bool distribution = false;  // a time drawn per operation, here set to a constant (hold_ms)

    nlohmann::json to_json() const;  // {"field", "path", "values"}
};

// At most this many axes (a heat map has two) and values per axis.
inline constexpr std::size_t kMaxSweepAxes = 2;
inline constexpr std::size_t kMaxSweepValues = 20;

// Parses "FIELD=v1,v2,…" against `workload` (Workload::to_json()). A bare FIELD that is not a
// top-level field is looked for in the faults: the one fault that has it. Throws WorkloadError
// naming the field: unknown, ambiguous, not numeric, or a value that is not a number of its kind.
SweepAxis parse_sweep(const std::string& text, const nlohmann::json& workload);

// The grid's settings, the first axis varying fastest: for axes {a: 1,2} {b: 5,6}, (1,5), (2,5),
// (1,6), (2,6). One empty setting when there is no axis.
std::vector<std::vector<double>> sweep_cells(const std::vector<SweepAxis>& axes);

// `base` with one setting applied; throws WorkloadError (naming the field and value) when the
// workload refuses it (a lease of 0, say).
Workload at_setting(const Workload& base, const std::vector<SweepAxis>& axes,
                    const std::vector<double>& setting);

// 300, 0.5, 1e-06: a value as a person writes it, no trailing zeros.
std::string value_text(double value);

// {"lease_ms": 300, "faults[0].duration_ms": 1000}: where a setting is, by readable path
// (compare.json's settings[i].at).
std::map<std::string, double> setting_at(const std::vector<SweepAxis>& axes,
                                         const std::vector<double>& setting);

// "lease_ms=300 duration_ms=1000" (the user's field names), "" with no axis.
std::string setting_words(const std::vector<SweepAxis>& axes, const std::vector<double>& setting);

}  // namespace lockbench
