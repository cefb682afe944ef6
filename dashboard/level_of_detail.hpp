#pragma once

// Level of detail for the timeline: what one row looks like at a given zoom, in at most about one
// bar per pixel. A 1 M-event run has ~250 k holds; drawing each as an item would stall the view,
// while the eye cannot tell apart holds closer than a pixel anyway.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "dashboard/history_model.hpp"

namespace lockbench::dashboard {

struct Bar {
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    std::int32_t key = 0;     // the key of its longest hold: its colour at this zoom
    bool mixed_keys = false;  // holds of several keys merged into this bar
    std::size_t holds = 0;    // how many holds it stands for
    std::size_t first = 0;    // index of its first hold in Timeline::holds
    std::size_t longest = 0;  // index of its longest hold
    bool overlapped =
        false;  // any merged hold overlapped: a violation must never vanish on zoom-out
    bool open_ended = false;
    bool crashed = false;
};

// Bars of `row` that intersect [t0, t1], drawn `pixels` wide: holds whose gap is under one pixel
// merge into one bar, overlapped holds separately from the others and listed after them (drawn on
// top), so the result has at most 2 × (pixels + 1) bars and an overlap never vanishes on zoom-out.
std::vector<Bar> visible_bars(const Timeline& t, std::size_t row, std::int64_t t0, std::int64_t t1,
                              int pixels);

}  // namespace lockbench::dashboard
