#pragma once

// Helpers for the checker's tests: hand-written histories without hand-maintained indices, and
// one check fed through the real reader.

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>

#include "checker/history.hpp"

namespace lockbench::checker::testing {

// Gives each event line of `text` (one JSON object per line, blank lines dropped) its "index"
// field, counting from 0, so a test can insert a line without renumbering the rest.
inline std::string numbered(std::string_view text) {
    std::string out;
    std::size_t index = 0;
    while (!text.empty()) {
        const std::size_t nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
        const std::size_t brace = line.find('{');
        if (brace == std::string_view::npos)
            continue;
        out += "{\"index\":" + std::to_string(index++) + ",";
        out += line.substr(brace + 1);
        out += "\n";
    }
    return out;
}

// Runs one streaming check over a numbered history and finishes it at the last event's time.
template <class Check>
void run_check(Check& check, std::string_view text) {
    std::istringstream in{numbered(text)};
    HistoryReader reader(in);
    Event event;
    std::int64_t end_time_ns = 0;
    while (reader.next(event)) {
        end_time_ns = std::max(end_time_ns, event.time);
        check.on_event(event);
    }
    check.finish(end_time_ns);
}

}  // namespace lockbench::checker::testing
