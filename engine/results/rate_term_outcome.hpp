#pragma once

// One rate term of an expectation over repeated runs ("violates:mutual_exclusion in >= 1 of 5"):
// in how many runs it held. engine/run's judge_repeated makes it; compare.json and suite.json
// hold it.

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace lockbench {

struct RateTermOutcome {
    std::string term;
    int held = 0;
    int undecided = 0;
    int runs = 0;
    std::optional<bool> met;  // nullopt: the undecided runs could tip it

    // {"term", "held", "undecided", "runs", "met"}
    nlohmann::json to_json() const {
        return {{"term", term},
                {"held", held},
                {"undecided", undecided},
                {"runs", runs},
                {"met", met ? nlohmann::json(*met) : nlohmann::json(nullptr)}};
    }
};

}  // namespace lockbench
