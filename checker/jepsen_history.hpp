#pragma once

// Jepsen's history.edn as lockbench reads it: each op map becomes one line of history.jsonl
// (checker/HISTORY.md), so an EDN history goes through exactly the reader and checks a JSONL one
// does. The text may be one vector or list of op maps (Knossos's test data) or a sequence of op
// maps (Jepsen's history.edn); keys are keywords (`{:type :invoke, :f :cas, :value [1 4],
// :process 101, :time 99286665244}`).
//
// - `:type` invoke|ok|fail|info, `:f` any name, `:process` an integer, or :nemesis (any other
//   non-integer process is the nemesis too).
// - `:value` as it is; a history where every client op's value is a pair `[k v]` (a cas's being
//   `[k [from to]]`) is a jepsen.independent history: `k` becomes the key, `v` the value, and each
//   key is checked on its own (in parallel).
// - `:time` (ns) when present, else the op's position; `:index` is renumbered from 0.
// - `:error` as text: a keyword or string as it is, anything else in its JSON form.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "checker/edn.hpp"
#include "checker/history.hpp"
#include "checker/report.hpp"

namespace lockbench::checker {

struct ConvertedHistory {
    std::string jsonl;
    std::vector<edn::Position> edn_positions;  // where each op (JSONL line i + 1) began
    bool independent = false;

    // "line L, column C: what" for an error the JSONL reader reported on one of these ops (an
    // error of the conversion, which names them already, as it is).
    std::string locate(const HistoryError& e) const;
    // The report's positions (the first of each ignored f) as EDN lines and columns.
    void locate(Report& report) const;
};

// Throws edn::EdnError for text that is not EDN, and HistoryError (with the EDN line and column)
// for a form that is not an op.
ConvertedHistory jepsen_to_jsonl(std::string_view edn_text);

}  // namespace lockbench::checker
