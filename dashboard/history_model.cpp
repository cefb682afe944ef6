#include "history_model.hpp"

#include <algorithm>
#include <fstream>

#include <nlohmann/json.hpp>

namespace lockbench::dashboard {
namespace {

using json = nlohmann::json;

[[noreturn]] void bad_line(std::size_t line_no, const std::string& what) {
    throw HistoryError("history.jsonl:" + std::to_string(line_no) + ": " + what);
}

std::string as_text(const json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

// Marks conflicting holds and records the shared intervals, one sweep per key in start order.
// `active` holds the earlier holds still running; in a correct history it has at most one
// exclusive member, so the sweep stays linear except for many concurrent shared holders.
void find_overlaps(Timeline& t) {
    std::vector<std::vector<std::size_t>> by_key(t.keys.size());
    for (std::size_t i = 0; i < t.holds.size(); ++i)
        by_key[static_cast<std::size_t>(t.holds[i].key)].push_back(i);
    std::vector<std::size_t> active;
    for (auto& idx : by_key) {
        std::sort(idx.begin(), idx.end(), [&](std::size_t a, std::size_t b) {
            return t.holds[a].start_ns < t.holds[b].start_ns;
        });
        active.clear();
        for (std::size_t i : idx) {
            Hold& h = t.holds[i];
            // Touching is not overlapping: the next holder may acquire in the nanosecond the
            // previous one released.
            std::erase_if(active, [&](std::size_t a) { return t.holds[a].end_ns <= h.start_ns; });
            for (std::size_t a : active) {
                Hold& other = t.holds[a];
                if (h.mode == HoldMode::shared && other.mode == HoldMode::shared)
                    continue;
                if (other.process == h.process)
                    continue;  // one client's own holds never exclude each other
                h.overlapped = true;
                other.overlapped = true;
                ++t.overlap_count;
                if (t.overlaps.size() < Timeline::kMaxOverlaps)
                    t.overlaps.push_back(
                        {a, i, h.start_ns, std::min(h.end_ns, other.end_ns), h.key});
            }
            active.push_back(i);
        }
    }
    t.overlapped_holds = static_cast<std::size_t>(
        std::count_if(t.holds.begin(), t.holds.end(), [](const Hold& h) { return h.overlapped; }));
    std::sort(t.overlaps.begin(), t.overlaps.end(),
              [](const Overlap& a, const Overlap& b) { return a.start_ns < b.start_ns; });
}

}  // namespace

std::size_t Timeline::row_of(std::int64_t process) const {
    auto it = std::lower_bound(processes.begin(), processes.end(), process);
    if (it == processes.end() || *it != process)
        return processes.size();
    return static_cast<std::size_t>(it - processes.begin());
}

std::int32_t HistoryModel::key_id(const std::string& key) {
    auto [it, inserted] = key_ids_.try_emplace(key, static_cast<std::int32_t>(keys_.size()));
    if (inserted)
        keys_.push_back(key);
    return it->second;
}

void HistoryModel::close(std::int64_t process, std::int32_t key, std::int64_t end_ns,
                         bool crashed) {
    auto it = open_.find({process, key});
    if (it == open_.end())
        return;
    closed_.push_back({.start_ns = it->second.start_ns,
                       .end_ns = std::max(end_ns, it->second.start_ns),
                       .process = process,
                       .key = key,
                       .mode = it->second.mode,
                       .crashed = crashed});
    open_.erase(it);
}

void HistoryModel::add_line(std::string_view line, std::size_t line_no) {
    if (line.find_first_not_of(" \t\r") == std::string_view::npos)
        return;  // a blank line carries no event
    json e;
    try {
        e = json::parse(line);
    } catch (const json::parse_error& err) {
        std::string what = err.what();
        // nlohmann prefixes "[json.exception.parse_error.101] parse error at line 1, column N:";
        // the column is what a reader needs.
        if (auto p = what.find("column"); p != std::string::npos)
            what = what.substr(p);
        bad_line(line_no, "not JSON (" + what + ")");
    }
    if (!e.is_object())
        bad_line(line_no, "an event must be a JSON object");
    auto str = [&](const char* name) -> std::string {
        auto it = e.find(name);
        if (it == e.end() || it->is_null())
            return {};
        if (!it->is_string())
            bad_line(line_no, std::string("\"") + name + "\" must be a string");
        return it->get<std::string>();
    };
    std::string type = str("type");
    std::string f = str("f");
    if (type.empty() || f.empty())
        bad_line(line_no, "missing \"type\" or \"f\"");
    auto time_it = e.find("time");
    if (time_it == e.end() || !time_it->is_number_integer())
        bad_line(line_no, "\"time\" must be an integer (ns since run start)");
    std::int64_t time = time_it->get<std::int64_t>();
    auto proc_it = e.find("process");
    if (proc_it == e.end())
        bad_line(line_no, "missing \"process\"");
    const json value = e.contains("value") ? e["value"] : json();
    ++events_;
    end_ns_ = std::max(end_ns_, time);

    if (proc_it->is_string()) {
        if (proc_it->get<std::string>() != "nemesis")
            bad_line(line_no, "\"process\" must be an integer or \"nemesis\"");
        NemesisEvent n{time, f, {}};
        if (value.is_object() && value.contains("target"))
            n.target = as_text(value["target"]);
        if (f == "crash" && value.is_object() && value.contains("target") &&
            value["target"].is_number_integer()) {
            std::int64_t victim = value["target"].get<std::int64_t>();
            std::vector<std::int32_t> held;
            for (auto it = open_.lower_bound({victim, INT32_MIN});
                 it != open_.end() && it->first.first == victim; ++it)
                held.push_back(it->first.second);
            for (std::int32_t k : held)
                close(victim, k, time, true);
        }
        nemesis_.push_back(std::move(n));
        return;
    }
    if (!proc_it->is_number_integer())
        bad_line(line_no, "\"process\" must be an integer or \"nemesis\"");
    std::int64_t process = proc_it->get<std::int64_t>();
    if (seen_.insert(process).second)
        processes_.push_back(process);

    if (f == "acquire" && type == "ok") {
        std::int32_t key = key_id(str("key"));
        HoldMode mode = HoldMode::exclusive;
        if (value.is_object() && value.contains("mode") && value["mode"] == "shared")
            mode = HoldMode::shared;
        Open& o = open_[{process, key}];
        if (o.depth++ == 0) {
            o.start_ns = time;
            o.mode = mode;
        }
    } else if (f == "release" && type != "invoke") {
        // summary.json counts a cycle when its release completes, whatever Redis answered.
        auto second = static_cast<std::size_t>(std::max<std::int64_t>(time, 0) / 1'000'000'000);
        if (second >= cycles_per_s_.size())
            cycles_per_s_.resize(second + 1, 0.0);
        ++cycles_per_s_[second];
    } else if (f == "release" && type == "invoke") {
        std::int32_t key = key_id(str("key"));
        auto it = open_.find({process, key});
        if (it != open_.end() && --it->second.depth <= 0)
            close(process, key, time, false);
    }
}

std::shared_ptr<const Timeline> HistoryModel::snapshot() const {
    auto t = std::make_shared<Timeline>();
    t->keys = keys_;
    t->processes = processes_;
    std::sort(t->processes.begin(), t->processes.end());
    t->nemesis = nemesis_;
    t->end_ns = end_ns_;
    t->events = events_;
    t->cycles_per_s = cycles_per_s_;
    t->holds.reserve(closed_.size() + open_.size());
    t->holds = closed_;
    for (const auto& [pk, o] : open_) {
        t->holds.push_back({.start_ns = o.start_ns,
                            .end_ns = std::max(end_ns_, o.start_ns),
                            .process = pk.first,
                            .key = pk.second,
                            .mode = o.mode,
                            .open_ended = true});
    }
    std::sort(t->holds.begin(), t->holds.end(), [](const Hold& a, const Hold& b) {
        return a.process != b.process ? a.process < b.process : a.start_ns < b.start_ns;
    });
    const std::size_t rows = t->processes.size();
    t->row_begin.assign(rows + 1, 0);
    t->row_max_len.assign(rows, 0);
    std::size_t i = 0;
    for (std::size_t r = 0; r < rows; ++r) {
        t->row_begin[r] = i;
        for (; i < t->holds.size() && t->holds[i].process == t->processes[r]; ++i)
            t->row_max_len[r] =
                std::max(t->row_max_len[r], t->holds[i].end_ns - t->holds[i].start_ns);
    }
    t->row_begin[rows] = i;
    find_overlaps(*t);
    return t;
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
            model.add_line(std::string_view(partial_).substr(begin, nl - begin), ++line_no_);
            ++fed;
        }
        partial_.erase(0, begin);
    }
    if (at_end && !partial_.empty()) {
        std::string last = std::move(partial_);
        partial_.clear();
        try {
            model.add_line(last, ++line_no_);
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
