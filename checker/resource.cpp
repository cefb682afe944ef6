#include "resource.hpp"

#include "streaming.hpp"

namespace lockbench::checker {

using nlohmann::json;

ResourceCheck::ResourceCheck(std::size_t max_violations) : max_violations_(max_violations) {}

void ResourceCheck::on_event(const Event& event) {
    if (event.type != EventType::Ok)
        return;
    const Op op = op_of(event);
    if (op == Op::Read) {
        ++reads_;
        return;
    }
    if (op != Op::Write || !event.number)
        return;
    ++writes_;
    const Write write{event.process, *event.number, event.time, event.index};
    auto [it, first] = highest_.try_emplace(event.key, write);
    if (first)
        return;
    Write& highest = it->second;
    if (write.value > highest.value) {
        highest = write;
        return;
    }
    ++lost_updates_;
    if (violations_.size() >= max_violations_)
        return;
    const auto write_json = [](const Write& w) {
        return json{
            {"process", w.process}, {"value", w.value}, {"time_ns", w.time_ns}, {"index", w.index}};
    };
    violations_.push_back(
        json{{"kind", "resource"},
             {"key", event.key},
             {"message", event.key + ": process " + std::to_string(write.process) + " wrote " +
                             std::to_string(write.value) + " at " + format_seconds(write.time_ns) +
                             " over " + std::to_string(highest.value) + " written by process " +
                             std::to_string(highest.process) + " at " +
                             format_seconds(highest.time_ns) + ": an update was lost"},
             {"witness",
              {{"key", event.key},
               {"overwritten", write_json(highest)},
               {"write", write_json(write)}}}});
}

void ResourceCheck::finish(std::int64_t /*end_time_ns*/) {}

json ResourceCheck::result() const {
    return json{{"valid", lost_updates_ == 0},
                {"violations", lost_updates_},
                {"reads", reads_},
                {"writes", writes_},
                {"keys", highest_.size()}};
}

}  // namespace lockbench::checker
