#pragma once

// Every strategy by name. Adding one = its file pair + one line in registry.cpp.

#include <functional>
#include <memory>
#include <string_view>
#include <vector>

#include "strategies/strategy.hpp"

namespace lockbench {

struct StrategyInfo {
    std::string_view name;
    std::string_view summary;  // one line: where it comes from and what it does
    Capabilities capabilities;
    std::function<std::unique_ptr<Strategy>(const StrategyOptions&)> make;
};

const std::vector<StrategyInfo>& all_strategies();
// Null if no strategy has that name. A lock library's adapter is probed (started once) to learn
// its capabilities: throws AdapterUnavailable when its runtime or files are missing.
const StrategyInfo* find_strategy(std::string_view name);
// True for a built-in strategy or a registered adapter, without starting the adapter: a scenario
// may name a lock library this machine lacks and still run for the strategies it has.
bool is_strategy_name(std::string_view name);
// One instance per client: instances hold per-client state (watchdogs).
std::unique_ptr<Strategy> make_strategy(std::string_view name, const StrategyOptions& options = {});

}  // namespace lockbench
