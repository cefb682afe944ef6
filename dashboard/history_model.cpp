#include "dashboard/history_model.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

namespace lockbench::dashboard {
namespace {

// The checker says "line N: what"; the window names the file.
[[noreturn]] void rethrow_with_file(const checker::HistoryError& e) {
    std::string what = e.what();
    const std::string prefix = "line " + std::to_string(e.line()) + ": ";
    if (what.rfind(prefix, 0) == 0)
        what.erase(0, prefix.size());
    throw HistoryError("history.jsonl:" + std::to_string(e.line()) + ": " + what);
}

std::string target_text(const checker::Event& e) {
    if (e.target)
        return std::to_string(*e.target);
    // A nemesis event's value is small and rare: a DOM is fine here.
    const auto value = nlohmann::json::parse(e.value_json, nullptr, false);
    if (!value.is_object())
        return {};
    const auto it = value.find("target");
    if (it == value.end() || it->is_null())
        return {};
    return it->is_string() ? it->get<std::string>() : it->dump();
}

}  // namespace

std::size_t Timeline::row_of(std::int64_t process) const {
    auto it = std::lower_bound(processes.begin(), processes.end(), process);
    if (it == processes.end() || *it != process)
        return processes.size();
    return static_cast<std::size_t>(it - processes.begin());
}

// Witnesses are not wanted: the observer sees every overlap, counted or listed.
HistoryModel::HistoryModel() : holds_check_(0) {
    holds_check_.observe(this);
}

HistoryModel::~HistoryModel() = default;

std::size_t HistoryModel::lines() const {
    return static_cast<std::size_t>(parser_.lines());
}

std::int32_t HistoryModel::key_id(const std::string& key) {
    auto [it, inserted] = key_ids_.try_emplace(key, static_cast<std::int32_t>(keys_.size()));
    if (inserted)
        keys_.push_back(key);
    return it->second;
}

Hold HistoryModel::hold_of(const checker::HoldSpan& span) {
    return {.start_ns = span.start_ns,
            .end_ns = span.end_ns,
            .process = span.process,
            .key = key_id(*span.key),
            .mode = span.mode == checker::LockMode::Shared ? HoldMode::shared : HoldMode::exclusive,
            .crashed = span.crashed};
}

void HistoryModel::hold_ended(const checker::HoldSpan& span) {
    closed_.push_back(hold_of(span));
    closed_ids_.push_back(span.id);
}

void HistoryModel::overlap_found(std::uint64_t earlier_id, std::uint64_t later_id,
                                 std::int64_t at_ns) {
    overlapped_ids_.insert(earlier_id);
    overlapped_ids_.insert(later_id);
    if (overlaps_.size() < Timeline::kMaxOverlaps)
        overlaps_.push_back({earlier_id, later_id, at_ns});
}

void HistoryModel::add_line(std::string_view line) {
    line_.assign(line);
    line_.push_back('\0');
    try {
        if (!parser_.parse(line_.data(), line_.data() + line.size(), event_))
            return;  // a blank line carries no event
    } catch (const checker::HistoryError& e) {
        rethrow_with_file(e);
    }
    const checker::Event& e = event_;
    ++events_;
    end_ns_ = std::max(end_ns_, e.time);
    holds_check_.on_event(e);
    if (e.is_library())
        return;  // a library's signal (HISTORY.md) is no fault: not in the nemesis's list
    if (e.is_nemesis()) {
        nemesis_.push_back({e.time, e.f, target_text(e)});
        return;
    }
    if (seen_.insert(e.process).second)
        processes_.push_back(e.process);
    if (e.f == "release" && e.type != checker::EventType::Invoke) {
        // As the engine counts throughput: a cycle ends when its release completes, whatever
        // Redis answered.
        auto second = static_cast<std::size_t>(std::max<std::int64_t>(e.time, 0) / 1'000'000'000);
        if (second >= cycles_per_s_.size())
            cycles_per_s_.resize(second + 1, 0.0);
        ++cycles_per_s_[second];
    }
}

namespace {

// By row (process), each row by start; returns where each hold (by the check's id) went.
std::unordered_map<std::uint64_t, std::size_t> sort_holds_by_row(
    Timeline& t, const std::vector<std::uint64_t>& ids) {
    std::vector<std::size_t> order(t.holds.size());
    for (std::size_t i = 0; i < order.size(); ++i)
        order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
        const Hold& x = t.holds[a];
        const Hold& y = t.holds[b];
        return x.process != y.process ? x.process < y.process : x.start_ns < y.start_ns;
    });
    std::vector<Hold> sorted(t.holds.size());
    std::unordered_map<std::uint64_t, std::size_t> index_of_id;
    index_of_id.reserve(order.size());
    for (std::size_t i = 0; i < order.size(); ++i) {
        sorted[i] = t.holds[order[i]];
        index_of_id.emplace(ids[order[i]], i);
    }
    t.holds = std::move(sorted);
    return index_of_id;
}

// Where each row's holds begin, and its longest hold (holds sorted by row).
void index_rows(Timeline& t) {
    const std::size_t rows = t.processes.size();
    t.row_begin.assign(rows + 1, 0);
    t.row_max_len.assign(rows, 0);
    std::size_t i = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        t.row_begin[r] = i;
        for (; i < t.holds.size() && t.holds[i].process == t.processes[r]; ++i)
            t.row_max_len[r] = std::max(t.row_max_len[r], t.holds[i].end_ns - t.holds[i].start_ns);
    }
    t.row_begin[rows] = i;
}

}  // namespace

std::shared_ptr<const Timeline> HistoryModel::snapshot() const {
    auto t = std::make_shared<Timeline>();
    t->keys = keys_;
    t->processes = processes_;
    std::sort(t->processes.begin(), t->processes.end());
    t->nemesis = nemesis_;
    t->end_ns = end_ns_;
    t->events = events_;
    t->cycles_per_s = cycles_per_s_;

    std::vector<std::uint64_t> ids = closed_ids_;
    t->holds = closed_;
    addOpenHolds(*t, ids);
    for (std::size_t i = 0; i < t->holds.size(); ++i)
        t->holds[i].overlapped = overlapped_ids_.count(ids[i]) > 0;
    const auto index_of_id = sort_holds_by_row(*t, ids);
    index_rows(*t);
    addOverlaps(*t, index_of_id);
    return t;
}

void HistoryModel::addOpenHolds(Timeline& t, std::vector<std::uint64_t>& ids) const {
    // Open holds are the check's too; their keys may not have been interned yet.
    const auto open = holds_check_.open_holds(end_ns_);
    t.keys.reserve(t.keys.size() + open.size());
    std::unordered_map<std::string, std::int32_t> new_keys;
    for (const checker::HoldSpan& span : open) {
        std::int32_t key = 0;
        if (auto it = key_ids_.find(*span.key); it != key_ids_.end()) {
            key = it->second;
        } else {
            auto [nk, inserted] =
                new_keys.try_emplace(*span.key, static_cast<std::int32_t>(t.keys.size()));
            if (inserted)
                t.keys.push_back(*span.key);
            key = nk->second;
        }
        t.holds.push_back({.start_ns = span.start_ns,
                           .end_ns = span.end_ns,
                           .process = span.process,
                           .key = key,
                           .mode = span.mode == checker::LockMode::Shared ? HoldMode::shared
                                                                          : HoldMode::exclusive,
                           .open_ended = true});
        ids.push_back(span.id);
    }
}

void HistoryModel::addOverlaps(
    Timeline& t, const std::unordered_map<std::uint64_t, std::size_t>& index_of_id) const {
    t.overlap_count = static_cast<std::size_t>(holds_check_.violation_count());
    t.overlaps.reserve(overlaps_.size());
    for (const FoundOverlap& o : overlaps_) {
        const auto a = index_of_id.find(o.earlier);
        const auto b = index_of_id.find(o.later);
        if (a == index_of_id.end() || b == index_of_id.end())
            continue;  // cannot happen: every hold the check found is closed or open
        const Hold& ha = t.holds[a->second];
        const Hold& hb = t.holds[b->second];
        t.overlaps.push_back({a->second, b->second, o.at_ns,
                              std::max(o.at_ns, std::min(ha.end_ns, hb.end_ns)), hb.key});
    }
    std::sort(t.overlaps.begin(), t.overlaps.end(),
              [](const Overlap& a, const Overlap& b) { return a.start_ns < b.start_ns; });
    t.overlapped_holds = static_cast<std::size_t>(
        std::count_if(t.holds.begin(), t.holds.end(), [](const Hold& h) { return h.overlapped; }));
}

std::size_t HistoryFollower::poll(HistoryModel& model, bool at_end) {
    std::ifstream in(path_, std::ios::binary);
    if (!in)
        throw HistoryError(path_.filename().string() + ": cannot read");
    in.seekg(0, std::ios::end);
    auto size = static_cast<std::uint64_t>(in.tellg());
    std::size_t fed = 0;
    if (size < offset_)
        throw HistoryError(path_.filename().string() + ": shrank while being read");
    if (size > offset_) {
        in.seekg(static_cast<std::streamoff>(offset_));
        std::string chunk(size - offset_, '\0');
        in.read(chunk.data(), static_cast<std::streamsize>(chunk.size()));
        chunk.resize(static_cast<std::size_t>(in.gcount()));
        offset_ += chunk.size();
        partial_ += chunk;
        std::size_t begin = 0;
        for (std::size_t nl; (nl = partial_.find('\n', begin)) != std::string::npos;
             begin = nl + 1) {
            model.add_line(std::string_view(partial_).substr(begin, nl - begin));
            ++fed;
        }
        partial_.erase(0, begin);
    }
    if (at_end && !partial_.empty()) {
        std::string last = std::move(partial_);
        partial_.clear();
        try {
            model.add_line(last);
        } catch (const HistoryError& e) {
            // The usual cause: the engine was killed mid-write.
            throw HistoryError(std::string(e.what()) + " (truncated last line?)");
        }
        ++fed;
    }
    return fed;
}

std::shared_ptr<const Timeline> load_history(const std::filesystem::path& path) {
    HistoryModel model;
    HistoryFollower follower(path);
    follower.poll(model, true);
    return model.snapshot();
}

}  // namespace lockbench::dashboard
