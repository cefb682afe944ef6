#include "engine/run/live_violations.hpp"

#include <utility>

namespace lockbench {

LiveViolations::LiveViolations(std::filesystem::path history) : path_(std::move(history)) {}

std::uint64_t LiveViolations::poll() {
    const auto found = [&] {
        return mutual_exclusion_.violation_count() + fencing_.violation_count() +
               resource_.violation_count();
    };
    if (stopped_)
        return found();
    if (!in_.is_open()) {
        in_.open(path_, std::ios::binary);
        if (!in_.is_open())
            return found();  // not created yet
    }
    // Reads on from where it stopped; the end of what is there so far is not the end of the file.
    in_.clear();
    char buffer[1 << 16];
    for (;;) {
        in_.read(buffer, sizeof buffer);
        const std::streamsize got = in_.gcount();
        if (got <= 0)
            break;
        partial_.append(buffer, static_cast<std::size_t>(got));
    }
    std::size_t begin = 0;
    try {
        for (std::size_t end; (end = partial_.find('\n', begin)) != std::string::npos;
             begin = end + 1) {
            checker::Event event;
            if (parser_.parse(partial_.data() + begin, partial_.data() + end, event)) {
                mutual_exclusion_.on_event(event);
                fencing_.on_event(event);
                resource_.on_event(event);
            }
        }
    } catch (const checker::HistoryError&) {
        stopped_ = true;
    }
    partial_.erase(0, begin);
    return found();
}

}  // namespace lockbench
