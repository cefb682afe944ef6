#pragma once

// The streaming checks (mutual exclusion, fencing, resource) over the history while it is being
// written, for the progress line: how many violations they have found so far. The verdict is
// still the checker's own pass over the whole file once the run has ended (linearizability and
// liveness need the end); this only reads the same lines earlier, so a terminal shows a lock
// breaking as it breaks rather than seconds later.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "checker/fencing.hpp"
#include "checker/history.hpp"
#include "checker/mutual_exclusion.hpp"
#include "checker/resource.hpp"

namespace lockbench {

class LiveViolations {
  public:
    explicit LiveViolations(std::filesystem::path history);

    // Reads the whole lines written since the last call and returns the violations found so far
    // (the sum the report's count will start from). A line the checker refuses stops the live
    // count where it was: the final check reports that history properly.
    std::uint64_t poll();

  private:
    std::filesystem::path path_;
    std::ifstream in_;
    std::string partial_;  // a line the writer has not finished yet
    checker::HistoryParser parser_;
    // One witness each: only the counts are shown, and they stay exact.
    checker::MutualExclusionCheck mutual_exclusion_{1};
    checker::FencingCheck fencing_{1};
    checker::ResourceCheck resource_{1};
    bool stopped_ = false;
};

}  // namespace lockbench
