#pragma once

// The fields the readers of a run's files (summary.json, ramp.json) read alike, strictly: a count,
// an int, a nested object, `fairness`. Each error is an Error naming the file and the JSON path.

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "checker/json_object.hpp"
#include "engine/results/rate_term_outcome.hpp"
#include "engine/results/run_summary.hpp"

namespace lockbench::result_fields {

// Written in memory a count may be a signed integer; parsed from text, unsigned.
template <class Error>
std::uint64_t count_of(const json_input::JsonObject<Error>& f, const nlohmann::json& v,
                       const std::string& path) {
    const bool count =
        v.is_number_unsigned() || (v.is_number_integer() && v.get<std::int64_t>() >= 0);
    if (!count)
        f.fail(path, "must be a whole number, not " + v.dump());
    return v.get<std::uint64_t>();
}

template <class Error>
std::uint64_t required_count(json_input::JsonObject<Error>& f, const std::string& field) {
    return count_of(f, f.require(field), f.at(field));
}

template <class Error>
int required_int(json_input::JsonObject<Error>& f, const std::string& field) {
    f.require(field);
    return static_cast<int>(f.integer(field, 0, 0, std::numeric_limits<int>::max()));
}

template <class Error>
json_input::JsonObject<Error> object_at(json_input::JsonObject<Error>& parent,
                                        const std::string& field) {
    return json_input::JsonObject<Error>(parent.require(field), parent.origin(), parent.at(field));
}

// `fairness` (FairnessSummary::to_json): in summary.json, and per point in ramp.json.
template <class Error>
FairnessSummary read_fairness(json_input::JsonObject<Error>& parent) {
    json_input::JsonObject<Error> f = object_at(parent, "fairness");
    FairnessSummary out{.clients = required_count(f, "clients"),
                        .cycles_min = required_count(f, "cycles_min"),
                        .cycles_median = f.required_number("cycles_median", 0),
                        .cycles_max = required_count(f, "cycles_max")};
    if (const nlohmann::json& jain = f.require("jain_index"); !jain.is_null())
        out.jain_index = f.number_of(jain, f.at("jain_index"), 0);
    return out;
}

// `rate_terms` (RateTermOutcome::to_json), in compare.json's strategies and suite.json's repeated
// rows: every field required, `met` true, false or null. Absent in files written before rates were
// judged: none.
template <class Error>
std::vector<RateTermOutcome> read_rate_terms(json_input::JsonObject<Error>& parent) {
    std::vector<RateTermOutcome> out;
    const nlohmann::json* terms = parent.optional_array("rate_terms");
    if (!terms)
        return out;
    for (std::size_t i = 0; i < terms->size(); ++i) {
        json_input::JsonObject<Error> t((*terms)[i], parent.origin(),
                                        parent.at("rate_terms") + "/" + std::to_string(i));
        out.push_back({.term = t.required_string("term"),
                       .held = required_int(t, "held"),
                       .undecided = required_int(t, "undecided"),
                       .runs = required_int(t, "runs"),
                       .met = t.boolean_or_null("met")});
    }
    return out;
}

}  // namespace lockbench::result_fields
