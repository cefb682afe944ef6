#include "dashboard/level_of_detail.hpp"

#include <algorithm>

namespace lockbench::dashboard {

std::vector<Bar> visible_bars(const Timeline& t, std::size_t row, std::int64_t t0, std::int64_t t1,
                              int pixels) {
    std::vector<Bar> out;
    if (row >= t.rows() || t1 <= t0 || pixels <= 0)
        return out;
    const std::int64_t ns_per_px = std::max<std::int64_t>(1, (t1 - t0) / pixels);
    auto first = t.holds.begin() + static_cast<std::ptrdiff_t>(t.row_begin[row]);
    auto last = t.holds.begin() + static_cast<std::ptrdiff_t>(t.row_begin[row + 1]);
    // Holds are sorted by start, not by end: a hold that started up to the row's longest hold
    // before t0 may still reach into the window.
    auto it = std::lower_bound(first, last, t0 - t.row_max_len[row],
                               [](const Hold& h, std::int64_t v) { return h.start_ns < v; });
    // Overlapped holds merge only with each other: merged into their neighbours, one tiny
    // overlap would paint a whole zoomed-out row red.
    std::vector<Bar> red;
    for (; it != last && it->start_ns <= t1; ++it) {
        if (it->end_ns < t0)
            continue;
        std::vector<Bar>& into = it->overlapped ? red : out;
        if (!into.empty() && it->start_ns <= into.back().end_ns + ns_per_px) {
            Bar& b = into.back();
            b.end_ns = std::max(b.end_ns, it->end_ns);
            b.mixed_keys = b.mixed_keys || b.key != it->key;
            // Colouring a mixed bar by its longest hold keeps a zoomed-out row in key colours
            // rather than turning it into one "mixed" grey.
            const Hold& longest = t.holds[b.longest];
            if (it->end_ns - it->start_ns > longest.end_ns - longest.start_ns) {
                b.longest = static_cast<std::size_t>(it - t.holds.begin());
                b.key = it->key;
            }
            ++b.holds;
            b.open_ended = b.open_ended || it->open_ended;
            b.crashed = b.crashed || it->crashed;
            continue;
        }
        into.push_back({.start_ns = it->start_ns,
                        .end_ns = it->end_ns,
                        .key = it->key,
                        .holds = 1,
                        .first = static_cast<std::size_t>(it - t.holds.begin()),
                        .longest = static_cast<std::size_t>(it - t.holds.begin()),
                        .overlapped = it->overlapped,
                        .open_ended = it->open_ended,
                        .crashed = it->crashed});
    }
    // Red last, so it is drawn over the bars it sits in.
    out.insert(out.end(), red.begin(), red.end());
    return out;
}

}  // namespace lockbench::dashboard
