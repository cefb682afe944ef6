#pragma once

// timeline.html: a run you can send to a colleague. One self-contained file (no network, no
// external script or font): the story on top, then an SVG swimlane per process - holds, the
// holds the checker found overlapping in red, lease expiries, faults - with the incidents
// highlighted, zoomable with the wheel, the buttons or the keys, and opened on the first
// incident's first overlap - a millisecond of overlap in an incident of seconds is seen at once -
// with the whole incident one key away (as Jepsen's timeline.html, aimed at locks). Holds and
// overlaps come from the checker's own mutual-exclusion check, so the picture and the verdict
// cannot disagree.

#include <filesystem>
#include <istream>
#include <string>

#include "checker/report.hpp"
#include "checker/story/story.hpp"

namespace lockbench::checker {

struct TimelineOptions {
    std::string title;  // "t1-holder-paused / set_nx_px"
    // Beyond this many holds, only those in the story's window are drawn (and the page says so):
    // a browser stays responsive, the file stays small enough to mail.
    std::size_t max_holds = 20000;
};

// The page for `history`, judged as `report`, told as `story`. Throws what HistoryReader throws.
std::string timeline_html(std::istream& history, const Report& report, const Story& story,
                          const TimelineOptions& options);
std::string timeline_html(const std::filesystem::path& history, const Report& report,
                          const Story& story, const TimelineOptions& options);

}  // namespace lockbench::checker
