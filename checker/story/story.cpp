#include "checker/story/story.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>

#include "checker/history.hpp"
#include "checker/history_words.hpp"
#include "checker/incident.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

using nlohmann::json;

namespace {

constexpr std::int64_t kSecond = 1'000'000'000;
constexpr int kLaneCells = 80;        // swimlane width in cells: label + 80 + frame fits 100
constexpr std::size_t kMaxLanes = 8;  // the holder, the first grantees, a releaser, waiters
constexpr std::size_t kMaxFaultClaims = 3;

std::string at(std::uint64_t index) {
    return "[#" + std::to_string(index) + "]";
}

std::string at(std::uint64_t a, std::uint64_t b) {
    return "[#" + std::to_string(a) + ", #" + std::to_string(b) + "]";
}

// "fence 223", or "" for a grant without one (one item of a parenthesised list).
std::string fence_of(const Event& grant) {
    return grant.fence ? "fence " + std::to_string(*grant.fence) : "";
}

std::string plural(std::uint64_t n, const char* one, const char* many) {
    return std::to_string(n) + " " + (n == 1 ? one : many);
}

std::string list_processes(const std::vector<std::int64_t>& ps) {
    std::string out;
    for (std::size_t i = 0; i < ps.size(); ++i) {
        if (i == 8) {
            out += ", …";
            break;
        }
        out += (i ? ", " : "") + std::to_string(ps[i]);
    }
    return out;
}

std::optional<std::int64_t> int_field(const json& j, const char* name) {
    auto it = j.find(name);
    if (it == j.end() || !it->is_number_integer())
        return std::nullopt;
    return it->get<std::int64_t>();
}

// A nemesis event in plain words: "paused process 1 for 1000 ms".
std::string describe_fault(const Event& e) {
    json v = json::parse(e.value_json, nullptr, false);
    if (!v.is_object())
        v = json::object();
    const auto target = e.target ? "process " + std::to_string(*e.target) : std::string("a client");
    const auto ms = int_field(v, "ms");
    const std::string for_ms = ms ? " for " + std::to_string(*ms) + " ms" : "";
    if (e.f == "pause")
        return "paused " + target + for_ms;
    if (e.f == "stall")
        return "stalled " + target + for_ms + " inside its release";
    if (e.f == "resume")
        return "resumed " + target;
    if (e.f == "crash")
        return "crashed " + target;
    if (e.f == "failover")
        return "failed the master over to its replica (the replica was cut off from it first)";
    if (e.f == "failover-done")
        return "finished the failover: clients now talk to the promoted replica";
    if (e.f == "kill-server")
        return "killed the Redis server";
    if (e.f == "restart-server")
        return "restarted the Redis server";
    if (e.f == "pause-server")
        return "paused the Redis server" + for_ms;
    if (e.f == "resume-server")
        return "resumed the Redis server";
    if (e.f == "clock-jump" || e.f == "clock")
        return "jumped a clock (" + e.value_json + ")";
    if (e.f == "partition")
        return "cut the network (" + e.value_json + ")";
    if (e.f == "heal")
        return "healed the network";
    if (e.f == "partition-client")
        return "cut " + target + " off from ZooKeeper" + for_ms + " (the client itself ran on)";
    if (e.f == "heal-client")
        return "ended the partition of " + target + " from ZooKeeper";
    const auto node = int_field(v, "node");
    const std::string member = "ZooKeeper server " + (node ? std::to_string(*node) : "?");
    const std::string role =
        v.contains("role") && v["role"].is_string() && !v["role"].get<std::string>().empty()
            ? " (the " + v["role"].get<std::string>() + ")"
            : "";
    if (e.f == "kill-zookeeper")
        return "killed " + member + role;
    if (e.f == "restart-zookeeper")
        return "restarted " + member + ", which rejoined" + role;
    if (e.f == "pause-zookeeper")
        return "paused " + member + role + for_ms;
    if (e.f == "resume-zookeeper")
        return "resumed " + member;
    return "recorded `" + e.f + "` " + e.value_json;
}

// A library's "lost" signal (HISTORY.md) as a claim: "At 14.302 s redis-semaphore told process 3
// it lost k0: refresh failed [#41]." `library`: the strategy's name, or "" when unknown.
Claim library_said_lost(const Event& e, const std::string& library) {
    json v = json::parse(e.value_json, nullptr, false);
    if (!v.is_object())
        v = json::object();
    const auto process = int_field(v, "process");
    const std::string text =
        v.contains("text") && v["text"].is_string() ? v["text"].get<std::string>() : "";
    const std::string token =
        v.contains("token") && v["token"].is_string() ? v["token"].get<std::string>() : "";
    return {.kind = ClaimKind::LibrarySaidLost,
            .text = "At " + format_seconds(e.time) + " " +
                    (library.empty() ? std::string("the lock library") : library) + " told " +
                    (process ? "process " + std::to_string(*process) : std::string("a client")) +
                    " it lost " + (e.key.empty() ? std::string("its lock") : e.key) +
                    (text.empty() ? "" : ": " + text) + " " + at(e.index) + ".",
            .events = {e.index},
            .process = process.value_or(-1),
            .time_ns = e.time,
            .token = token,
            .library_text = text};
}

// A library's `late-grant` event (HISTORY.md), as far as it says.
struct LateGrantValue {
    std::optional<std::int64_t> process;
    std::string phase;
    std::optional<bool> ok;
    std::string token;
    std::string text;
};

std::optional<LateGrantValue> late_grant_value(const Event& e) {
    if (!e.is_library() || e.f != "late-grant")
        return std::nullopt;
    const json v = json::parse(e.value_json, nullptr, false);
    if (!v.is_object())
        return std::nullopt;
    LateGrantValue out;
    out.process = int_field(v, "process");
    const auto text_of = [&](const char* name) {
        return v.contains(name) && v[name].is_string() ? v[name].get<std::string>() : "";
    };
    out.phase = text_of("phase");
    out.token = text_of("token");
    out.text = text_of("text");
    if (v.contains("ok") && v["ok"].is_boolean())
        out.ok = v["ok"].get<bool>();
    if (!out.process || (out.phase != "granted" && out.phase != "released"))
        return std::nullopt;
    return out;
}

// The process whose in-doubt acquire a library's `abandoned` event names (HISTORY.md).
std::optional<std::int64_t> abandoned_by(const Event& e) {
    if (!e.is_library() || e.f != "late-grant")
        return std::nullopt;
    const json v = json::parse(e.value_json, nullptr, false);
    if (!v.is_object() || !v.contains("phase") || v["phase"] != "abandoned")
        return std::nullopt;
    return int_field(v, "process");
}

// An abandoned acquire as a claim: "At 4.065 s curator-mutex gave up process 4's acquire of k1,
// answered in doubt at 3.900 s; whatever it held was gone by then [#740, #751]."
Claim library_abandoned(const Event* answered, const Event& abandoned, std::int64_t process,
                        const std::string& library) {
    std::string text = "At " + format_seconds(abandoned.time) + " " +
                       (library.empty() ? std::string("the lock library") : library) +
                       " gave up process " + std::to_string(process) + "'s acquire of " +
                       lock_name(abandoned.key) + ", answered in doubt";
    std::vector<std::uint64_t> events;
    if (answered) {
        text += " at " + format_seconds(answered->time);
        events.push_back(answered->index);
    }
    events.push_back(abandoned.index);
    std::string cited;
    for (std::uint64_t index : events)
        cited += (cited.empty() ? "[#" : ", #") + std::to_string(index);
    return {.kind = ClaimKind::LibraryAbandoned,
            .text = text + "; whatever it held was gone by then " + cited + "].",
            .events = std::move(events),
            .process = process,
            .time_ns = abandoned.time,
            .sort_ns = answered ? answered->time : abandoned.time};
}

// A late grant as a claim: "At 1.500 s kazoo granted process 5's acquire of k0, answered in
// doubt at 1.200 s, and its adapter released it at 1.510 s [#40, #44, #45]." `answered`: the
// acquire's `info`; `released`: the adapter's report of its release, nullptr when none was seen -
// `release_unseen` then says whether none came at all (else the sentence ends at the grant).
Claim library_granted_late(const Event* answered, const Event& granted, const Event* released,
                           bool release_unseen, const std::string& library,
                           const std::string& releaser) {
    const LateGrantValue grant = late_grant_value(granted).value_or(LateGrantValue{});
    const std::int64_t process = grant.process.value_or(-1);
    std::vector<std::uint64_t> events;
    std::string text = "At " + format_seconds(granted.time) + " " +
                       (library.empty() ? std::string("the lock library") : library) +
                       " granted process " + std::to_string(process) + "'s acquire of " +
                       lock_name(granted.key) + ", answered in doubt";
    if (answered) {
        text += " at " + format_seconds(answered->time);
        events.push_back(answered->index);
    }
    events.push_back(granted.index);
    if (released) {
        const LateGrantValue release = late_grant_value(*released).value_or(LateGrantValue{});
        events.push_back(released->index);
        text += release.ok.value_or(false)
                    ? ", and " + releaser + " released it at " + format_seconds(released->time)
                    : ", and " + releaser + " failed to release it at " +
                          format_seconds(released->time) +
                          (release.text.empty() ? "" : " (" + release.text + ")");
    } else if (release_unseen) {
        text += ", and " + releaser + " never said it released it";
    }
    std::sort(events.begin(), events.end());
    std::string cited;
    for (std::uint64_t index : events)
        cited += (cited.empty() ? "[#" : ", #") + std::to_string(index);
    return {
        .kind = ClaimKind::LibraryGrantedLate,
        .text = text + " " + cited + "].",
        .events = std::move(events),
        .process = process,
        .time_ns = granted.time,
        .token = grant.token,
        // Told where its acquire was answered in doubt: what the library did resolves that answer.
        .sort_ns = answered ? answered->time : granted.time};
}

// The events of one key (and the nemesis's) in a window of the history, by index, with what a
// story needs from before the window: each process's last acquire invoke and completion.
class Window {
  public:
    Window(HistoryReader& reader, const std::string& key, std::int64_t from_ns,
           std::int64_t to_ns) {
        Event e;
        std::map<std::int64_t, Event> last_invoke, last_completion;
        while (reader.next(e)) {
            end_ns_ = std::max(end_ns_, e.time);
            const bool ours = (e.is_nemesis() && !e.is_library()) || e.key == key;
            if (!ours)
                continue;
            if (e.time < from_ns) {
                if (e.f == "acquire")
                    (e.type == EventType::Invoke ? last_invoke : last_completion)[e.process] = e;
                continue;
            }
            if (e.time > to_ns)
                continue;
            events_.emplace(e.index, e);
        }
        for (auto* earlier : {&last_invoke, &last_completion}) {
            for (auto& [process, event] : *earlier)
                events_.emplace(event.index, std::move(event));
        }
    }

    const std::map<std::uint64_t, Event>& events() const { return events_; }
    std::int64_t history_end_ns() const { return end_ns_; }

    const Event* at(std::uint64_t index) const {
        auto it = events_.find(index);
        return it == events_.end() ? nullptr : &it->second;
    }
    // The first event after `index` (or, backwards, before it) that `match` accepts.
    template <class Match>
    const Event* after(std::uint64_t index, Match match) const {
        for (auto it = events_.upper_bound(index); it != events_.end(); ++it) {
            if (match(it->second))
                return &it->second;
        }
        return nullptr;
    }
    template <class Match>
    const Event* before(std::uint64_t index, Match match) const {
        auto it = events_.lower_bound(index);
        while (it != events_.begin()) {
            --it;
            if (match(it->second))
                return &it->second;
        }
        return nullptr;
    }

  private:
    std::map<std::uint64_t, Event> events_;
    std::int64_t end_ns_ = 0;
};

bool is(const Event& e, std::int64_t process, const char* f, EventType type) {
    return e.process == process && e.f == f && e.type == type;
}

std::string quoted_names(const std::vector<std::string>& v) {
    std::string out;
    for (std::size_t i = 0; i < v.size(); ++i)
        out += std::string(i == 0 ? "" : i + 1 == v.size() ? " and " : ", ") + "`" + v[i] + "`";
    return out;
}

// "a, b and 2 more": at most `shown` names of a list that may be long.
std::string some_names(const std::vector<std::string>& v, std::size_t shown) {
    std::string out;
    const std::size_t listed = std::min(v.size(), shown);
    for (std::size_t i = 0; i < listed; ++i) {
        const bool last = i + 1 == listed && listed == v.size();
        out += std::string(i == 0 ? "" : last ? " and " : ", ") + v[i];
    }
    if (listed < v.size())
        out += " and " + std::to_string(v.size() - listed) + " more";
    return out;
}

// Where the other scenarios expect the recommended strategies to fail: a lock safe here may be
// the wrong advice (one that never expires stays safe under a pause and deadlocks when its holder
// crashes).
void add_prevention_caveat(Story& story, const StoryContext& context,
                           const std::vector<std::string>& safe,
                           const std::vector<std::string>& fenced) {
    constexpr std::size_t kScenariosShown = 3;
    std::vector<std::string> recommended = fenced;
    recommended.insert(recommended.end(), safe.begin(), safe.end());
    std::string text;
    for (const std::string& strategy : recommended) {
        std::vector<std::string> deadlocks, breaks;
        for (const auto& f : context.failures_elsewhere) {
            if (f.strategy != strategy || f.scenario == context.scenario)
                continue;
            (f.outcome.find("deadlocks") != std::string::npos ? deadlocks : breaks)
                .push_back(f.scenario);
        }
        if (deadlocks.empty() && breaks.empty())
            continue;
        text += text.empty() ? "Elsewhere the shipped scenarios expect " : "; ";
        text += "`" + strategy + "` to";
        if (!deadlocks.empty())
            text += " deadlock in " + some_names(deadlocks, kScenariosShown);
        if (!deadlocks.empty() && !breaks.empty())
            text += ", and to";
        if (!breaks.empty())
            text += " fail in " + some_names(breaks, kScenariosShown);
    }
    if (text.empty())
        return;
    text += " (lockbench scenarios).";
    story.claims.push_back({.kind = ClaimKind::PreventionCaveat, .text = std::move(text)});
}

// What the scenario's expectations say of the other strategies: who stays safe, whose fence
// saves the data. Claims about the shipped expectations, not about this history.
void add_prevention(Story& story, const StoryContext& context) {
    std::vector<std::string> safe, fenced;
    for (const auto& [strategy, outcome] : context.expectations) {
        if (strategy == context.strategy)
            continue;
        if (outcome == "safe" || outcome.rfind("safe:", 0) == 0)
            safe.push_back(strategy);
        else if (outcome.find("saves:fencing") != std::string::npos)
            fenced.push_back(strategy);
    }
    if (safe.empty() && fenced.empty())
        return;
    const auto names = quoted_names;
    std::string text = "What would have prevented it: in " +
                       (context.scenario.empty() ? "this scenario" : context.scenario) + ", ";
    if (!fenced.empty())
        text += names(fenced) + (fenced.size() == 1 ? " has" : " have") +
                " the stale write rejected by the fence";
    if (!fenced.empty() && !safe.empty())
        text += ", and ";
    if (!safe.empty())
        text += names(safe) + (safe.size() == 1 ? " stays" : " stay") + " safe";
    text += " (the scenario's expectations, each asserted by lockbench's own tests).";
    story.claims.push_back({.kind = ClaimKind::Prevention, .text = std::move(text)});
    add_prevention_caveat(story, context, safe, fenced);
}

// Facts the checker already established, read back from the report: its first incident, with
// the grants of the incident's first overlapping pair (from the check's witness for it).
struct IncidentFacts : Incident {
    std::uint64_t hold_index = 0;   // the holder's acquire ok
    std::uint64_t grant_index = 0;  // the first overlapping grant's ok
    std::int64_t grantee = 0;
    std::string grantee_token;
    std::optional<std::uint64_t> released_by;  // the checker's suspect: a release's ok
};

std::optional<IncidentFacts> first_incident(const Report& report) {
    const std::vector<Incident> listed = listed_incidents(report);
    if (listed.empty())
        return std::nullopt;
    IncidentFacts incident;
    static_cast<Incident&>(incident) = listed.front();
    // Its first pair, for the indices of the two grants.
    for (const OverlapEvidence& pair : overlap_evidence(report)) {
        if (pair.key != incident.key || pair.first.token != incident.token ||
            pair.first.process != incident.process)
            continue;
        incident.hold_index = pair.first.start_index;
        incident.grant_index = pair.second.start_index;
        incident.grantee = pair.second.process;
        incident.grantee_token = pair.second.token;
        if (pair.released_by)
            incident.released_by = pair.released_by->index;
        return incident;
    }
    return std::nullopt;
}

// The lost updates the resource check listed: write index -> (overwritten value, its writer,
// its index).
struct LostUpdate {
    std::int64_t overwritten_value = 0;
    std::int64_t overwritten_by = 0;
    std::uint64_t overwritten_index = 0;
};

std::map<std::uint64_t, LostUpdate> lost_updates(const Report& report) {
    std::map<std::uint64_t, LostUpdate> out;
    for (const LostUpdateEvidence& e : lost_update_evidence(report))
        out[e.write.index] = {e.overwritten.value, e.overwritten.process, e.overwritten.index};
    return out;
}

// One process's row in the swimlane.
struct Lane {
    std::int64_t process = 0;
    std::string cells = std::string(kLaneCells, '.');
};

class Swimlane {
  public:
    Swimlane(std::int64_t from_ns, std::int64_t to_ns)
        : from_(from_ns), to_(std::max(to_ns, from_ns + 1)) {}

    int cell(std::int64_t t) const {
        const double x = static_cast<double>(t - from_) / static_cast<double>(to_ - from_);
        return std::clamp(static_cast<int>(std::floor(x * kLaneCells)), 0, kLaneCells - 1);
    }
    // Paints [a, b] on `lane` with `c` where the cell holds something less important.
    void span(Lane& lane, std::int64_t a, std::int64_t b, char c) const {
        if (b < from_ || a > to_)
            return;
        for (int i = cell(a); i <= cell(b); ++i) {
            if (rank(c) >= rank(lane.cells[static_cast<std::size_t>(i)]))
                lane.cells[static_cast<std::size_t>(i)] = c;
        }
    }
    void mark(Lane& lane, std::int64_t t, char c) const { span(lane, t, t, c); }
    std::string axis() const {
        std::string line(kLaneCells, ' ');
        const std::string left = format_seconds(from_), right = format_seconds(to_);
        line.replace(0, left.size(), left);
        line.replace(kLaneCells - right.size(), right.size(), right);
        return line;
    }

  private:
    // A point event beats a pause beats an overlap beats a hold beats a wait beats nothing.
    static int rank(char c) {
        switch (c) {
            case 'X':
            case 'L':
            case 'R':
            case 'W':
                return 6;
            case 'z':
                return 5;
            case '#':
                return 4;
            case '=':
                return 3;
            case '-':
                return 2;
            default:
                return 1;
        }
    }
    std::int64_t from_, to_;
};

std::string render_lanes(const Swimlane& lanes, const std::vector<Lane>& rows,
                         const std::string& nemesis) {
    std::ostringstream out;
    out << "         " << lanes.axis() << "\n";
    out << "nemesis |" << nemesis << "|\n";
    for (const Lane& lane : rows) {
        std::string label = "p" + std::to_string(lane.process);
        label.resize(8, ' ');
        out << label << "|" << lane.cells << "|\n";
    }
    out << "         = holds  # holds while another holds  - waits  z paused  ! fault\n"
           "         W wrote (as told above)  L a write that was lost  R write rejected by the "
           "fence"
           "  X crash\n";
    return out.str();
}

// Paints one key's swimlane event by event: holds, waits, pauses and the marks of faults,
// crashes and writes. Spans still open at the end of the window run to its end.
class SwimlanePainter {
  public:
    SwimlanePainter(const std::vector<std::int64_t>& processes, std::int64_t from_ns,
                    std::int64_t to_ns, const std::map<std::uint64_t, LostUpdate>& lost,
                    const std::set<std::uint64_t>& cited)
        : lanes_(from_ns, to_ns), to_ns_(to_ns), cited_(cited), nemesis_(kLaneCells, ' ') {
        for (std::int64_t p : processes)
            rows_.push_back(Lane{p});
        // 'L' goes on the write whose update was lost, in its writer's lane: the overwriting
        // write is cited ('W') by the sentence that tells it.
        for (const auto& [write, update] : lost)
            lost_writes_.insert(update.overwritten_index);
    }

    void on_nemesis(const Event& e) {
        nemesis_[static_cast<std::size_t>(lanes_.cell(e.time))] = '!';
        if (!e.target)
            return;
        if (e.f == "pause" || e.f == "stall")
            pause_start_[*e.target] = e.time;
        else if (e.f == "resume" && pause_start_.count(*e.target)) {
            if (Lane* l = lane_of(*e.target))
                lanes_.span(*l, pause_start_[*e.target], e.time, 'z');
            pause_start_.erase(*e.target);
        } else if (e.f == "crash") {
            if (auto h = hold_start_.find(*e.target); h != hold_start_.end()) {
                holds_.push_back({*e.target, {h->second, e.time}});
                hold_start_.erase(h);
            }
            if (Lane* l = lane_of(*e.target))
                lanes_.mark(*l, e.time, 'X');
        }
    }

    // An event of a client on the drawn key.
    void on_client_event(const Event& e) {
        if (e.f == "acquire" && e.type == EventType::Invoke) {
            wait_start_[e.process] = e.time;
        } else if (e.f == "acquire") {
            if (auto w = wait_start_.find(e.process); w != wait_start_.end()) {
                if (Lane* l = lane_of(e.process))
                    lanes_.span(*l, w->second, e.time, '-');
                wait_start_.erase(w);
            }
            if (e.type == EventType::Ok)
                hold_start_.try_emplace(e.process, e.time);
        } else if (e.f == "release" && e.type == EventType::Invoke) {
            if (auto h = hold_start_.find(e.process); h != hold_start_.end()) {
                holds_.push_back({e.process, {h->second, e.time}});
                hold_start_.erase(h);
            }
        } else if (e.f == "write" && e.type != EventType::Invoke) {
            mark_write(e);
        }
    }

    std::string finish() {
        for (const auto& [p, start] : hold_start_)
            holds_.push_back({p, {start, to_ns_}});
        for (const auto& [p, start] : pause_start_) {
            if (Lane* l = lane_of(p))
                lanes_.span(*l, start, to_ns_, 'z');
        }
        paint_holds();
        return render_lanes(lanes_, rows_, nemesis_);
    }

  private:
    Lane* lane_of(std::int64_t p) {
        for (Lane& l : rows_) {
            if (l.process == p)
                return &l;
        }
        return nullptr;
    }

    void mark_write(const Event& e) {
        Lane* l = lane_of(e.process);
        if (!l)
            return;
        if (e.type == EventType::Ok) {
            if (lost_writes_.count(e.index))
                lanes_.mark(*l, e.time, 'L');
            else if (cited_.count(e.index))
                lanes_.mark(*l, e.time, 'W');
        } else if (e.type == EventType::Fail && e.error == history::kStaleFence)
            lanes_.mark(*l, e.time, 'R');
    }

    // A hold is '#' where another process held the key too, '=' elsewhere.
    void paint_holds() {
        for (const auto& [p, span] : holds_) {
            Lane* l = lane_of(p);
            if (!l)
                continue;
            lanes_.span(*l, span.first, span.second, '=');
            for (const auto& [q, other] : holds_) {
                if (q == p)
                    continue;
                const std::int64_t a = std::max(span.first, other.first);
                const std::int64_t b = std::min(span.second, other.second);
                if (a < b)
                    lanes_.span(*l, a, b, '#');
            }
        }
    }

    const Swimlane lanes_;
    const std::int64_t to_ns_;
    const std::set<std::uint64_t>& cited_;
    std::vector<Lane> rows_;
    std::string nemesis_;
    // Holds (ok acquire to release invoke), waits (acquire invoke to its completion), pauses.
    std::map<std::int64_t, std::int64_t> hold_start_, wait_start_, pause_start_;
    std::vector<std::pair<std::int64_t, std::pair<std::int64_t, std::int64_t>>> holds_;
    std::set<std::uint64_t> lost_writes_;
};

// Draws `processes` over [from, to] from the window's events.
std::string draw(const Window& window, const std::string& key, std::vector<std::int64_t> processes,
                 std::int64_t from_ns, std::int64_t to_ns,
                 const std::map<std::uint64_t, LostUpdate>& lost,
                 const std::set<std::uint64_t>& cited) {
    SwimlanePainter painter(processes, from_ns, to_ns, lost, cited);
    for (const auto& [index, e] : window.events()) {
        if (e.is_library())
            continue;  // told in a sentence; the nemesis lane is for faults
        if (e.is_nemesis())
            painter.on_nemesis(e);
        else if (e.key == key)
            painter.on_client_event(e);
    }
    return painter.finish();
}

class Teller {
  public:
    Teller(HistoryReader& history, const Report& report, const StoryContext& context)
        : history_(history), report_(report), context_(context), lost_(lost_updates(report)) {}

    Story tell() {
        Story story = tell_first();
        story.lease_name = lease_name();
        return story;
    }

  private:
    Story tell_first() {
        if (auto incident = first_incident(report_))
            return tell_incident(*incident);
        for (const Witness& w : report_.witnesses) {
            if (w.kind == "deadlock" && w.evidence.is_object())
                return tell_deadlock(w);
        }
        Story story;
        if (!report_.witnesses.empty()) {
            const Witness& w = report_.witnesses.front();
            story.headline = key_prefix(w.key) + "the " + w.kind + " check found a violation";
            story.key = w.key;
            story.claims.push_back({.kind = ClaimKind::CheckerFound, .text = w.message});
            add_prevention(story, context_);
            return story;
        }
        story.headline = report_.verdict == Verdict::Valid
                             ? "No violation: every check that applies passed."
                             : "No violation was found, but the verdict is " +
                                   std::string(verdict_word(report_.verdict)) + ".";
        story.claims.push_back({.kind = ClaimKind::NoViolation,
                                .text = "The checker judged " + std::to_string(report_.events) +
                                        " events and listed no violation."});
        tell_library_signals(story);
        return story;
    }

  private:
    Story tell_incident(const IncidentFacts& i) {
        Story story;
        story.key = i.key;
        const std::int64_t until = i.end_ns.value_or(i.last_overlap_ns + 2 * kSecond);
        const Window window(history_, i.key, i.start_ns - kSecond,
                            std::max(until, i.last_overlap_ns) + kSecond);
        window_ = &window;
        story.headline = key_prefix(i.key) + "process " + std::to_string(i.process) +
                         "'s lock was granted " +
                         (i.grants == 1 ? std::string("to another process")
                                        : std::to_string(i.grants) + " times to other processes") +
                         " while it still held it" +
                         (context_.strategy.empty() ? "" : " (" + context_.strategy + ")") + ".";

        const HolderGrant holder_grant = tell_holder_grant(story, window, i);
        const Event* grant = window.at(i.grant_index);
        const FreedBy freed = tell_foreign_release(story, window, i, grant);
        tell_faults(story, window, i, holder_grant.window_from, freed.process);
        tell_library_lost(story, window, i);
        tell_library_late_grants(story, window, i.last_overlap_ns);
        tell_lease(story, i, holder_grant, grant, freed);
        tell_overlapping_grants(story, window, i, grant);
        const std::uint64_t holder_last = tell_holder_after_overlap(story, window, i, grant);
        add_prevention(story, context_);
        in_time_order(story);
        draw_incident_swimlane(story, window, i, holder_grant.window_from, holder_last);
        return story;
    }

    // 1. The holder's grant: its acquire and the answer, from which the swimlane starts.
    struct HolderGrant {
        const Event* ok = nullptr;
        const Event* invoke = nullptr;
        std::int64_t window_from = 0;
        // The lease the grant was given: its ok's where the service said (HISTORY.md), else its
        // invoke's - the one the checks expire it by.
        std::optional<std::int64_t> lease_ms() const {
            return ok && ok->lease_ms ? ok->lease_ms : invoke ? invoke->lease_ms : std::nullopt;
        }
    };
    HolderGrant tell_holder_grant(Story& story, const Window& window, const IncidentFacts& i) {
        return tell_acquired(story, window, i.key, i.process, window.at(i.hold_index), i.start_ns);
    }

    // "At ... process P acquired K (token, fence, lease) [#invoke, #ok]" for the grant whose ok is
    // `ok` (nullptr: none found, nothing told); the swimlane then starts at its invoke.
    HolderGrant tell_acquired(Story& story, const Window& window, const std::string& key,
                              std::int64_t process, const Event* ok, std::int64_t window_from) {
        HolderGrant g{.ok = ok, .window_from = window_from};
        g.invoke = g.ok ? window.before(g.ok->index,
                                        [&](const Event& e) {
                                            return is(e, process, "acquire", EventType::Invoke);
                                        })
                        : nullptr;
        if (g.ok && g.invoke) {
            const Event* invoke = g.invoke;
            g.window_from = invoke->time;
            std::string text =
                "At " + format_seconds(ok->time) + " process " + std::to_string(process) +
                " acquired " + lock_name(key) +
                parenthesised({ok->token.empty() ? "" : "token " + ok->token, fence_of(*ok),
                               g.lease_ms()
                                   ? lease_name() + " " + std::to_string(*g.lease_ms()) + " ms"
                                   : ""}) +
                " " + at(invoke->index, ok->index) + ".";
            story.claims.push_back({.kind = ClaimKind::Acquired,
                                    .text = std::move(text),
                                    .events = {invoke->index, ok->index},
                                    .process = process,
                                    .time_ns = ok->time,
                                    .token = ok->token,
                                    .lease_ms = g.lease_ms()});
        }
        return g;
    }

    // 2. A release by someone else that freed it (a late unlock, an unlock after a failed
    //    acquire): the last `ok` release of another grant before the overlapping grant.
    struct FreedBy {
        bool foreign = false;
        std::int64_t process = -1;
    };
    FreedBy tell_foreign_release(Story& story, const Window& window, const IncidentFacts& i,
                                 const Event* grant) {
        FreedBy out;
        if (grant) {
            // The checker's suspect when it named one; else the last such release before it.
            const Event* freed = i.released_by
                                     ? window.at(*i.released_by)
                                     : window.before(grant->index, [&](const Event& e) {
                                           return e.f == "release" && e.type == EventType::Ok &&
                                                  e.process != i.process && e.time >= i.start_ns;
                                       });
            const Event* freed_invoke =
                freed
                    ? window.before(freed->index,
                                    [&](const Event& e) {
                                        return is(e, freed->process, "release", EventType::Invoke);
                                    })
                    : nullptr;
            // Only a release that is not of a hold the releaser was granted after ours began.
            const Event* own_grant = freed_invoke
                                         ? window.before(freed_invoke->index,
                                                         [&](const Event& e) {
                                                             return e.process == freed->process &&
                                                                    e.f == "acquire" &&
                                                                    e.type != EventType::Invoke;
                                                         })
                                         : nullptr;
            const bool foreign =
                freed_invoke && freed_invoke->token != i.token &&
                (!own_grant || own_grant->type != EventType::Ok || own_grant->time < i.start_ns);
            if (foreign) {
                out = {.foreign = true, .process = freed->process};
                story.claims.push_back(
                    {.kind = ClaimKind::ForeignRelease,
                     .text = "At " + format_seconds(freed->time) + " a release by process " +
                             std::to_string(freed->process) + " (asked at " +
                             format_seconds(freed_invoke->time) +
                             (freed_invoke->token.empty() ? ", no token"
                                                          : ", token " + freed_invoke->token) +
                             ") succeeded while process " + std::to_string(i.process) + " held " +
                             lock_name(i.key) + ": it freed a lock that was not its own " +
                             at(freed_invoke->index, freed->index) + ".",
                     .events = {freed_invoke->index, freed->index},
                     .process = freed->process,
                     .other = i.process,
                     .time_ns = freed->time,
                     .token = freed_invoke->token});
                if (own_grant && own_grant->type != EventType::Ok) {
                    story.claims.push_back(
                        {.kind = ClaimKind::FailedAcquireBefore,
                         .text = "Process " + std::to_string(freed->process) +
                                 "'s own acquire had not succeeded: it ended `" +
                                 (own_grant->type == EventType::Fail ? "fail" : "info") +
                                 (own_grant->error.empty() ? "" : " " + own_grant->error) +
                                 "` at " + format_seconds(own_grant->time) + " " +
                                 at(own_grant->index) + ".",
                         .events = {own_grant->index},
                         .process = freed->process,
                         .time_ns = own_grant->time});
                }
            }
        }
        return out;
    }

    // 3. What the nemesis did to the holder, the releaser or the servers before the overlap ended.
    void tell_faults(Story& story, const Window& window, const IncidentFacts& i,
                     std::int64_t window_from, std::int64_t freed_by) {
        std::size_t faults = 0;
        for (const auto& [index, e] : window.events()) {
            if (!e.is_nemesis() || e.is_library() || e.time > i.last_overlap_ns ||
                faults == kMaxFaultClaims)
                continue;
            // The releaser's faults led to its release; the others must be near the hold.
            const bool on_releaser = e.target && *e.target == freed_by;
            if (!on_releaser && e.time < window_from - kSecond / 2)
                continue;
            if (e.target && *e.target != i.process && !on_releaser)
                continue;
            if (e.f == "resume")
                continue;  // told with the holder's writes, where it matters
            ++faults;
            story.claims.push_back({.kind = ClaimKind::FaultHit,
                                    .text = "At " + format_seconds(e.time) + " the nemesis " +
                                            describe_fault(e) + " " + at(index) + ".",
                                    .events = {index},
                                    .process = e.target.value_or(-1),
                                    .time_ns = e.time,
                                    .fault = e.f});
        }
    }

    // 3b. What the library itself told its user about the key (it lost the lock) before the
    // overlap ended: whether the holder was warned in time.
    void tell_library_lost(Story& story, const Window& window, const IncidentFacts& i) {
        std::size_t signals = 0;
        for (const auto& [index, e] : window.events()) {
            if (!e.is_library() || e.f != "lost" || e.time > i.last_overlap_ns ||
                signals == kMaxFaultClaims)
                continue;
            ++signals;
            story.claims.push_back(library_said_lost(e, library_name()));
        }
    }

    // 3c. The library's late grants of the key up to `until_ns`: a hold nobody alive used,
    // which a refusal or an overlap may owe to it.
    void tell_library_late_grants(Story& story, const Window& window, std::int64_t until_ns) {
        std::size_t told = 0;
        for (const auto& [index, e] : window.events()) {
            if (told == kMaxFaultClaims)
                break;
            if (e.time > until_ns)
                continue;
            const std::optional<LateGrantValue> grant = late_grant_value(e);
            if (!grant || grant->phase != "granted")
                continue;
            const std::int64_t process = *grant->process;
            const auto is_answer = [&](const Event& a) {
                return is(a, process, "acquire", EventType::Info);
            };
            // Its answer came first, or the grant overtook it (HISTORY.md).
            const Event* answered = window.before(index, is_answer);
            if (!answered)
                answered = window.after(index, is_answer);
            const Event* released = window.after(index, [&](const Event& r) {
                const std::optional<LateGrantValue> release = late_grant_value(r);
                return release && release->phase == "released" && release->process == process;
            });
            ++told;
            story.claims.push_back(library_granted_late(answered, e, released, false,
                                                        library_name(), late_releaser()));
        }
    }

    // 4. The lease, against the first overlapping grant.
    void tell_lease(Story& story, const IncidentFacts& i, const HolderGrant& g, const Event* grant,
                    const FreedBy& freed) {
        const Event* ok = g.ok;
        const Event* invoke = g.invoke;
        const std::optional<std::int64_t> lease_ms = g.lease_ms();
        if (ok && invoke && grant) {
            if (!lease_ms) {
                story.claims.push_back({.kind = ClaimKind::NoLease,
                                        .text = "Its lock has no lease: only a release frees "
                                                "it " +
                                                at(invoke->index) + ".",
                                        .events = {invoke->index},
                                        .process = i.process,
                                        .sort_ns = ok->time});
            } else {
                const std::int64_t lease_ns = *lease_ms * 1'000'000;
                const std::int64_t earliest = invoke->time + lease_ns;
                const std::int64_t latest = ok->time + lease_ns;
                Claim c{.events = {invoke->index, ok->index, grant->index},
                        .process = i.process,
                        .time_ns = latest,
                        .lease_ms = lease_ms};
                if (grant->time >= latest) {
                    c.kind = ClaimKind::LeaseRanOut;
                    c.text = "Its " + std::to_string(*lease_ms) + " ms " + lease_name() +
                             " ran out on " + lease_keeper() + " by " + format_seconds(latest) +
                             ", while process " + std::to_string(i.process) +
                             " had not released the lock " + at(invoke->index, ok->index) + ".";
                } else if (grant->time < earliest) {
                    c.sort_ns = grant->time;
                    c.kind = ClaimKind::LeaseStillRan;
                    c.time_ns = earliest;
                    c.text = "Its " + std::to_string(*lease_ms) + " ms " + lease_name() +
                             " still ran until at least " + format_seconds(earliest) +
                             " when the next grant came " + at(grant->index) +
                             (freed.foreign ? ": process " + std::to_string(freed.process) +
                                                  "'s release had deleted the lock."
                                            : ": the lock service lost a lock nobody released.");
                } else {
                    c.kind = ClaimKind::LeaseMayHaveRunOut;
                    c.sort_ns = grant->time;
                    c.text = "Its " + std::to_string(*lease_ms) + " ms " + lease_name() +
                             " may have run out (between " + format_seconds(earliest) + " and " +
                             format_seconds(latest) + ") when the next grant came " +
                             at(grant->index) + ".";
                }
                story.claims.push_back(std::move(c));
            }
        }
    }

    // 5. The overlapping grants; 6. what the first grantee wrote under its grant.
    void tell_overlapping_grants(Story& story, const Window& window, const IncidentFacts& i,
                                 const Event* grant) {
        if (grant) {
            const Event* holder_release = window.after(i.hold_index, [&](const Event& e) {
                return is(e, i.process, "release", EventType::Invoke);
            });
            std::string text = "At " + format_seconds(grant->time) + " process " +
                               std::to_string(grant->process) + " was granted " + lock_name(i.key) +
                               parenthesised({grant->token.empty() ? "" : "token " + grant->token,
                                              fence_of(*grant)}) +
                               " " + at(grant->index) + " while process " +
                               std::to_string(i.process) +
                               " still held it: it had not asked to release it";
            text += holder_release && holder_release->time > grant->time
                        ? " (it did at " + format_seconds(holder_release->time) + ")."
                        : ".";
            story.claims.push_back({.kind = ClaimKind::GrantedWhileHeld,
                                    .text = std::move(text),
                                    .events = {grant->index},
                                    .process = grant->process,
                                    .other = i.process,
                                    .time_ns = grant->time,
                                    .token = grant->token});
            if (i.grants > 1) {
                const Event* last =
                    window.before(window.events().empty() ? 0 : window.events().rbegin()->first + 1,
                                  [&](const Event& e) {
                                      return e.f == "acquire" && e.type == EventType::Ok &&
                                             e.process != i.process && e.time == i.last_overlap_ns;
                                  });
                if (last) {
                    // Whom the grants after the first went to: `processes` names the first
                    // grantee too, which the sentence before has already told. An older
                    // summary.json did not say; then the sentence names nobody.
                    const auto& ps = i.later_processes;
                    const std::string holder = std::to_string(i.process);
                    const std::string went =
                        ps.empty()       ? " overlapped process " + holder + "'s hold "
                        : ps.size() == 1 ? " went to process " + list_processes(ps) +
                                               " while process " + holder + " held it "
                                         : " went to processes " + list_processes(ps) +
                                               " while process " + holder + " held it ";
                    story.claims.push_back(
                        {.kind = ClaimKind::MoreGrants,
                         .text = "Until " + format_seconds(i.last_overlap_ns) + ", " +
                                 plural(i.grants - 1, "more grant", "more grants") + went +
                                 at(last->index) + ".",
                         .events = {last->index},
                         .process = last->process,
                         .other = i.process,
                         .time_ns = last->time,
                         .value = static_cast<std::int64_t>(i.grants - 1)});
                }
            }
            // 6. What the first grantee wrote under its grant.
            if (const Event* w = first_write(window, grant->process, grant->index))
                tell_write(story, *w, "process " + std::to_string(grant->process) + " wrote ");
        }
    }

    // 7. What the holder wrote after the overlap began, and its release; returns the index of
    // the holder's last event told.
    std::uint64_t tell_holder_after_overlap(Story& story, const Window& window,
                                            const IncidentFacts& i, const Event* grant) {
        const std::uint64_t from = grant ? grant->index : i.hold_index;
        std::uint64_t holder_last = from;
        if (const Event* w = first_write(window, i.process, from)) {
            const Event* resume = window.before(w->index, [&](const Event& e) {
                return e.is_nemesis() && e.f == "resume" && e.target == i.process;
            });
            std::string lead = "process " + std::to_string(i.process);
            std::vector<std::uint64_t> also;
            if (resume && resume->index > i.hold_index) {
                lead +=
                    ", resumed at " + format_seconds(resume->time) + " " + at(resume->index) + ",";
                also.push_back(resume->index);
            }
            tell_write(story, *w, lead + " wrote ", also);
            holder_last = w->index;
        }
        // Another lost update of the incident when neither write above was one (T5).
        tell_other_lost_update(story, window, i);
        if (const Event* release = window.after(holder_last, [&](const Event& e) {
                return is(e, i.process, "release", EventType::Invoke);
            })) {
            const Event* answer = window.after(release->index, [&](const Event& e) {
                return e.process == i.process && e.f == "release" && e.type != EventType::Invoke;
            });
            std::string text = "At " + format_seconds(release->time) + " process " +
                               std::to_string(i.process) + " asked to release " + lock_name(i.key);
            std::vector<std::uint64_t> events{release->index};
            if (answer) {
                events.push_back(answer->index);
                text += answer->type == EventType::Ok
                            ? "; the server said ok " + at(release->index, answer->index) + "."
                            : "; the answer was `" + std::string(event_type_word(answer->type)) +
                                  (answer->error.empty() ? "" : " " + answer->error) + "` " +
                                  at(release->index, answer->index) + ".";
            } else {
                text += " " + at(release->index) + ".";
            }
            story.claims.push_back({.kind = ClaimKind::Released,
                                    .text = std::move(text),
                                    .events = std::move(events),
                                    .process = i.process,
                                    .time_ns = release->time});
            holder_last = answer ? answer->index : release->index;
        }
        return holder_last;
    }

    // The swimlane: the holder, the first grantees, whoever freed the lock.
    void draw_incident_swimlane(Story& story, const Window& window, const IncidentFacts& i,
                                std::int64_t window_from, std::uint64_t holder_last) {
        std::vector<std::int64_t> processes{i.process};
        const auto add = [&](std::int64_t p) {
            if (p >= 0 && processes.size() < kMaxLanes &&
                std::find(processes.begin(), processes.end(), p) == processes.end())
                processes.push_back(p);
        };
        for (const Claim& c : story.claims)
            add(c.kind == ClaimKind::FaultHit ? -1 : c.process);
        for (std::int64_t p : i.processes)
            add(p);
        std::int64_t window_to = std::max(i.last_overlap_ns, i.end_ns.value_or(i.last_overlap_ns));
        if (const Event* e = window.at(holder_last))
            window_to = std::max(window_to, e->time);
        for (const Claim& c : story.claims) {
            if (c.kind != ClaimKind::Prevention && c.kind != ClaimKind::PreventionCaveat &&
                !c.events.empty())
                window_to = std::max(window_to, c.time_ns);
        }
        const std::int64_t pad = std::max<std::int64_t>((window_to - window_from) / 20, 1'000'000);
        story.window_start_ns = std::max<std::int64_t>(0, window_from - pad);
        story.window_end_ns = window_to + pad;
        std::sort(processes.begin() + 1, processes.end());
        story.swimlane = draw(window, i.key, processes, story.window_start_ns, story.window_end_ns,
                              lost_, cited(story));
    }

    // What the liveness check's deadlock witness says.
    struct DeadlockFacts {
        std::int64_t holder = -1;
        std::int64_t crash_ns = 0;  // when the lock was orphaned
        std::uint64_t crash_index = 0;
        std::int64_t waiter = -1;
        std::optional<std::int64_t> regranted;
        std::string cause;
        bool crashed = false;
    };
    static DeadlockFacts deadlock_facts(const json& ev) {
        DeadlockFacts d;
        d.holder = ev.value("holder", std::int64_t{-1});
        d.crash_ns = ev.value("crash_ns", std::int64_t{0});
        d.crash_index = ev.value("crash_index", std::uint64_t{0});
        d.waiter = ev.value("first_waiter", std::int64_t{-1});
        d.regranted = int_field(ev, "regranted_ns");
        d.cause = ev.value("cause", std::string());
        d.crashed = d.cause == "crash";
        return d;
    }

    Story tell_deadlock(const Witness& w) {
        Story story;
        story.key = w.key;
        const DeadlockFacts d = deadlock_facts(w.evidence);
        const auto& [holder, crash_ns, crash_index, waiter, regranted, cause, crashed] = d;
        const bool granted_late = int_field(w.evidence, "late_granted_ns").has_value();
        // What left the lock behind, for the headline and the last sentence.
        const std::string left = crashed                       ? " crashed holding the lock"
                                 : cause == "failed-release"   ? "'s release failed"
                                 : cause == "in-doubt-release" ? "'s release got no answer"
                                 : granted_late ? "'s acquire, answered in doubt, was granted late"
                                                : "'s acquire got no answer";
        const Window window(history_, w.key, crash_ns - kSecond,
                            regranted.value_or(std::numeric_limits<std::int64_t>::max()));
        window_ = &window;
        story.headline = key_prefix(w.key) + "process " + std::to_string(holder) + left +
                         " and nobody could take it" +
                         (context_.strategy.empty() ? "" : " (" + context_.strategy + ")") + ".";
        const HolderGrant grant =
            tell_acquired(story, window, w.key, holder,
                          window.before(crash_index,
                                        // A copy: clang 14 (the fuzz build's) cannot capture a
                                        // structured binding.
                                        [&, holder = holder](const Event& e) {
                                            return is(e, holder, "acquire", EventType::Ok);
                                        }),
                          crash_ns);
        tell_crash_and_lease(story, window, w.key, d, grant);
        tell_library_late_grants(story, window,
                                 regranted.value_or(std::numeric_limits<std::int64_t>::max()));
        tell_waited_in_vain(story, window, w.key, d);
        const std::int64_t until = tell_never_regranted(story, window, w.key, d,
                                                        int_field(w.evidence, "late_released_ns"));
        add_prevention(story, context_);
        in_time_order(story);
        draw_deadlock_swimlane(story, window, w.key, d, grant.window_from, until);
        return story;
    }

    // The crash that orphaned the lock, and that no lease will free it.
    void tell_crash_and_lease(Story& story, const Window& window, const std::string& key,
                              const DeadlockFacts& d, const HolderGrant& grant) {
        const Event* invoke = grant.invoke;
        const auto& [holder, crash_ns, crash_index, waiter, regranted, cause, crashed] = d;
        if (const Event* crash = window.at(crash_index); crash && crashed) {
            story.claims.push_back({.kind = ClaimKind::Crashed,
                                    .text = "At " + format_seconds(crash->time) +
                                            " the nemesis crashed process " +
                                            std::to_string(holder) + " while it held " +
                                            lock_name(key) + " " + at(crash->index) + ".",
                                    .events = {crash->index},
                                    .process = holder,
                                    .time_ns = crash->time,
                                    .fault = crash->f});
        }
        if (invoke && !grant.lease_ms()) {
            story.claims.push_back({.kind = ClaimKind::NoLease,
                                    .text = "Its lock has no lease: only a release frees it, and "
                                            "a crashed process sends none " +
                                            at(invoke->index) + ".",
                                    .events = {invoke->index},
                                    .process = holder,
                                    .sort_ns = crash_ns});
        }
    }

    // The waiter's attempts that were still waiting at the crash or began after it.
    void tell_waited_in_vain(Story& story, const Window& window, const std::string& key,
                             const DeadlockFacts& d) {
        const auto& [holder, crash_ns, crash_index, waiter, regranted, cause, crashed] = d;
        std::vector<std::uint64_t> attempts;
        std::optional<std::uint64_t> open_attempt;
        for (const auto& [index, e] : window.events()) {
            if (e.process != waiter || e.f != "acquire")
                continue;
            if (e.type == EventType::Invoke) {
                open_attempt = index;
                if (e.time >= crash_ns)
                    attempts.push_back(index);
            } else {
                if (open_attempt && e.time >= crash_ns && window.at(*open_attempt)->time < crash_ns)
                    attempts.insert(attempts.begin(), *open_attempt);
                open_attempt.reset();
            }
        }
        if (!attempts.empty()) {
            std::string cited = "[#" + std::to_string(attempts.front());
            if (attempts.size() > 1)
                cited += " … #" + std::to_string(attempts.back());
            cited += "]";
            const std::int64_t first_ns = window.at(attempts.front())->time;
            story.claims.push_back({.kind = ClaimKind::WaitedInVain,
                                    .text = "From " + format_seconds(first_ns) + " process " +
                                            std::to_string(waiter) + " tried to acquire " +
                                            lock_name(key) + " " +
                                            plural(attempts.size(), "time", "times") +
                                            "; none succeeded " + cited + ".",
                                    .events = attempts,
                                    .process = waiter,
                                    .time_ns = first_ns,
                                    .value = static_cast<std::int64_t>(attempts.size()),
                                    .sort_ns = crash_ns + 1});
        }
    }

    // How long nobody could take it; returns when that ended (a grant, or the history's end).
    // `late_released_ns`: when the adapter released the library's late grant that held it.
    std::int64_t tell_never_regranted(Story& story, const Window& window, const std::string& key,
                                      const DeadlockFacts& d,
                                      std::optional<std::int64_t> late_released_ns) {
        const auto& [holder, crash_ns, crash_index, waiter, regranted, cause, crashed] = d;
        const std::int64_t until = regranted.value_or(window.history_end_ns());
        story.claims.push_back(
            {.kind = ClaimKind::NeverRegranted,
             .text =
                 "Nobody was granted " + lock_name(key) + " from " +
                 (crashed ? std::string("the crash") : format_seconds(crash_ns)) + " until " +
                 (regranted ? format_seconds(*regranted)
                            : "the end of the history at " + format_seconds(until)) +
                 ": " + format_seconds(until - crash_ns) +
                 (late_released_ns
                      ? ", though the adapter had released process " + std::to_string(holder) +
                            "'s late grant at " + format_seconds(*late_released_ns) + "."
                  : crashed || cause == "lost-acquire"
                      ? " with the lock held by nobody alive."
                      : " with the lock left behind by process " + std::to_string(holder) + "."),
             .process = holder,
             .time_ns = until});
        return until;
    }

    void draw_deadlock_swimlane(Story& story, const Window& window, const std::string& key,
                                const DeadlockFacts& d, std::int64_t window_from,
                                std::int64_t until) {
        std::vector<std::int64_t> processes{d.holder};
        if (d.waiter >= 0 && d.waiter != d.holder)
            processes.push_back(d.waiter);
        const std::int64_t pad = std::max<std::int64_t>((until - window_from) / 20, 1'000'000);
        story.window_start_ns = std::max<std::int64_t>(0, window_from - pad);
        story.window_end_ns = until;
        story.swimlane = draw(window, key, processes, story.window_start_ns, story.window_end_ns,
                              lost_, cited(story));
    }

    static std::set<std::uint64_t> cited(const Story& story) {
        std::set<std::uint64_t> out;
        for (const Claim& c : story.claims)
            out.insert(c.events.begin(), c.events.end());
        return out;
    }

    // The sentences in the order things happened; what would have prevented it comes last.
    static void in_time_order(Story& story) {
        for (Claim& c : story.claims) {
            if (c.sort_ns == Claim::kUnset)
                c.sort_ns = c.time_ns;
        }
        std::stable_sort(
            story.claims.begin(), story.claims.end(), [](const Claim& a, const Claim& b) {
                const bool a_last =
                    a.kind == ClaimKind::Prevention || a.kind == ClaimKind::PreventionCaveat;
                const bool b_last =
                    b.kind == ClaimKind::Prevention || b.kind == ClaimKind::PreventionCaveat;
                if (a_last != b_last)
                    return b_last;
                return a.sort_ns < b.sort_ns;
            });
    }

    // The first completed write of `process` after event `from` (ok, or rejected by the fence).
    static const Event* first_write(const Window& window, std::int64_t process,
                                    std::uint64_t from) {
        return window.after(from, [&](const Event& e) {
            return e.process == process && e.f == "write" &&
                   (e.type == EventType::Ok ||
                    (e.type == EventType::Fail && e.error == history::kStaleFence));
        });
    }

    // Without a violation to tell, what the library said it lost is still worth a line: the first
    // few signals, and how many more there were.
    void tell_library_signals(Story& story) {
        Event e;
        std::uint64_t more = 0;
        std::optional<std::uint64_t> last;
        // Late grants: each acquire answered in doubt (its `info`, by process), and each grant
        // waiting for its release's report, told in the order granted.
        std::unordered_map<std::int64_t, std::pair<std::int64_t, std::uint64_t>> answered;
        struct Late {
            std::optional<Event> answered;
            Event granted;
            std::optional<Event> released;
        };
        std::vector<Late> late;
        std::unordered_map<std::int64_t, std::size_t> awaiting_release;
        std::uint64_t more_late = 0;
        std::optional<std::uint64_t> last_late;
        std::vector<Claim> abandoned;
        std::uint64_t more_abandoned = 0;
        std::optional<std::uint64_t> last_abandoned;
        while (history_.next(e)) {
            if (e.f == "acquire" && e.type == EventType::Info && !e.is_nemesis()) {
                answered.insert_or_assign(e.process, std::pair{e.time, e.index});
                continue;
            }
            if (const std::optional<std::int64_t> process = abandoned_by(e)) {
                if (abandoned.size() < kMaxFaultClaims) {
                    std::optional<Event> answer;
                    if (auto found = answered.find(*process); found != answered.end()) {
                        answer.emplace();
                        answer->time = found->second.first;
                        answer->index = found->second.second;
                    }
                    abandoned.push_back(library_abandoned(answer ? &*answer : nullptr, e, *process,
                                                          library_name()));
                } else {
                    ++more_abandoned;
                    last_abandoned = e.index;
                }
                continue;
            }
            if (const std::optional<LateGrantValue> grant = late_grant_value(e)) {
                const std::int64_t process = *grant->process;
                if (grant->phase == "released") {
                    if (auto it = awaiting_release.find(process); it != awaiting_release.end()) {
                        late[it->second].released = e;
                        awaiting_release.erase(it);
                    }
                } else if (late.size() < kMaxFaultClaims) {
                    std::optional<Event> answer;
                    if (auto found = answered.find(process); found != answered.end()) {
                        answer.emplace();
                        answer->time = found->second.first;
                        answer->index = found->second.second;
                    }
                    late.push_back({std::move(answer), e, std::nullopt});
                    awaiting_release[process] = late.size() - 1;
                } else {
                    ++more_late;
                    last_late = e.index;
                }
                continue;
            }
            if (!e.is_library() || e.f != "lost")
                continue;
            if (story.claims.size() <= kMaxFaultClaims) {
                story.claims.push_back(library_said_lost(e, library_name()));
            } else {
                ++more;
                last = e.index;
            }
        }
        if (more) {
            story.claims.push_back({.kind = ClaimKind::LibrarySaidLost,
                                    .text = "It said so " +
                                            plural(more, "more time", "more times") +
                                            ", the last " + at(*last) + ".",
                                    .events = {*last}});
        }
        for (const Late& l : late) {
            story.claims.push_back(library_granted_late(
                l.answered ? &*l.answered : nullptr, l.granted, l.released ? &*l.released : nullptr,
                !l.released, library_name(), late_releaser()));
        }
        if (more_late) {
            story.claims.push_back({.kind = ClaimKind::LibraryGrantedLate,
                                    .text = "It granted " +
                                            plural(more_late, "more acquire", "more acquires") +
                                            " late, the last " + at(*last_late) + ".",
                                    .events = {*last_late}});
        }
        for (Claim& claim : abandoned)
            story.claims.push_back(std::move(claim));
        if (more_abandoned) {
            story.claims.push_back(
                {.kind = ClaimKind::LibraryAbandoned,
                 .text = "It gave up " + plural(more_abandoned, "more acquire", "more acquires") +
                         " answered in doubt, the last " + at(*last_abandoned) + ".",
                 .events = {*last_abandoned}});
        }
    }

    // The last `f` (an acquire's grant, a write) of the write's key, completed ok before the
    // write with a fence above the write's own.
    const Event* higher_fence_before(const Event& write, const char* f) const {
        if (!window_ || !write.fence)
            return nullptr;
        return window_->before(write.index, [&](const Event& e) {
            return e.f == f && e.type == EventType::Ok && e.key == write.key && e.fence &&
                   *e.fence > *write.fence;
        });
    }

    const Event* last_read_before(const Event& write) const {
        if (!window_)
            return nullptr;
        return window_->before(write.index, [&](const Event& e) {
            return e.process == write.process && e.f == "read" && e.type == EventType::Ok;
        });
    }

    // `also`: events the lead cites besides the write (a resume); they go after its own.
    void tell_write(Story& story, const Event& w, const std::string& lead,
                    const std::vector<std::uint64_t>& also = {}) {
        const std::string opening = "At " + format_seconds(w.time) + " " + lead;
        const std::string with_fence = w.fence ? " with fence " + std::to_string(*w.fence) : "";
        if (w.type == EventType::Fail) {
            tell_stale_write(story, w, opening, with_fence, also);
            return;
        }
        const auto lost = lost_.find(w.index);
        if (lost == lost_.end()) {
            tell_accepted_write(story, w, opening, with_fence, also);
            return;
        }
        tell_lost_update(story, w, lost->second, opening, with_fence, also);
    }

    static std::vector<std::uint64_t> citing_also(std::vector<std::uint64_t> events,
                                                  const std::vector<std::uint64_t>& also) {
        events.insert(events.end(), also.begin(), also.end());
        return events;
    }

    void tell_stale_write(Story& story, const Event& w, const std::string& opening,
                          const std::string& with_fence, const std::vector<std::uint64_t>& also) {
        // The write the register had accepted with a higher fence: why this one is stale.
        const Event* newer = w.fence ? higher_fence_before(w, "write") : nullptr;
        std::string text = opening + (w.number ? std::to_string(*w.number) : "?") + with_fence;
        std::vector<std::uint64_t> events{w.index};
        if (newer) {
            text += "; the resource had already accepted fence " + std::to_string(*newer->fence) +
                    " (process " + std::to_string(newer->process) + "'s write at " +
                    format_seconds(newer->time) + ") and rejected it as stale " +
                    at(newer->index, w.index) + ".";
            events.push_back(newer->index);
        } else {
            text += "; the resource rejected it as stale " + at(w.index) + ".";
        }
        story.claims.push_back({.kind = ClaimKind::StaleWriteRejected,
                                .text = std::move(text),
                                .events = citing_also(std::move(events), also),
                                .process = w.process,
                                .other = newer ? std::optional(newer->process) : std::nullopt,
                                .time_ns = w.time,
                                .value = w.fence});
    }

    void tell_accepted_write(Story& story, const Event& w, const std::string& opening,
                             const std::string& with_fence,
                             const std::vector<std::uint64_t>& also) {
        // A fenced write the resource took although a higher fence had been granted: the
        // fence refuses only a write older than one it has accepted, and none had landed.
        const Event* newer_grant = w.fence ? higher_fence_before(w, "acquire") : nullptr;
        std::string text = opening + std::to_string(w.number.value_or(0)) + with_fence;
        std::vector<std::uint64_t> events{w.index};
        // A higher fence's write answered before this one was: the two were in flight
        // together and the resource ran this one first (it would have refused it after).
        const Event* concurrent = newer_grant ? higher_fence_before(w, "write") : nullptr;
        if (newer_grant) {
            text += " " + at(w.index) + ", though fence " + std::to_string(*newer_grant->fence) +
                    " had been granted to process " + std::to_string(newer_grant->process) +
                    " at " + format_seconds(newer_grant->time) + " " + at(newer_grant->index);
            events.push_back(newer_grant->index);
            if (concurrent) {
                text += "; process " + std::to_string(concurrent->process) +
                        "'s write with fence " + std::to_string(*concurrent->fence) + " " +
                        at(concurrent->index) +
                        " was in flight at the same time, and the resource ran this one "
                        "first, so it accepted it.";
                events.push_back(concurrent->index);
            } else {
                text +=
                    ": no write with a higher fence had reached the resource yet, so it "
                    "accepted this one.";
            }
        } else {
            text += " " + at(w.index) + ".";
        }
        story.claims.push_back(
            {.kind = ClaimKind::Wrote,
             .text = std::move(text),
             .events = citing_also(std::move(events), also),
             .process = w.process,
             .other = newer_grant ? std::optional(newer_grant->process) : std::nullopt,
             .time_ns = w.time,
             .value = w.number});
    }

    void tell_lost_update(Story& story, const Event& w, const LostUpdate& lost,
                          const std::string& opening, const std::string& with_fence,
                          const std::vector<std::uint64_t>& also) {
        told_lost_.insert(w.index);
        std::string read;
        std::vector<std::uint64_t> events{w.index, lost.overwritten_index};
        if (const Event* r = last_read_before(w)) {
            read = " (it had read " + (r->number ? std::to_string(*r->number) : "nothing") +
                   " at " + format_seconds(r->time) + " " + at(r->index) + ")";
            events.push_back(r->index);
        }
        // Both writes fenced and in order: the register took both, and the read this write
        // was computed from came before the other landed.
        const Event* overwritten = window_ ? window_->at(lost.overwritten_index) : nullptr;
        const bool fences_in_order =
            w.fence && overwritten && overwritten->fence && *overwritten->fence <= *w.fence;
        story.claims.push_back(
            {.kind = ClaimKind::LostUpdate,
             .text = opening + std::to_string(w.number.value_or(0)) + with_fence + read + " over " +
                     std::to_string(lost.overwritten_value) + " written by process " +
                     std::to_string(lost.overwritten_by) +
                     (fences_in_order
                          ? " with fence " + std::to_string(*overwritten->fence) +
                                ": an update was lost " + at(lost.overwritten_index, w.index) +
                                ". The fences came in order, so the resource accepted both: a "
                                "fence refuses only a write older than one it has accepted; it "
                                "does not make the read and the write one step."
                          : ": an update was lost " + at(lost.overwritten_index, w.index) + "."),
             .events = citing_also(std::move(events), also),
             .process = w.process,
             .other = lost.overwritten_by,
             .time_ns = w.time,
             .value = w.number});
    }

    void tell_other_lost_update(Story& story, const Window& window, const IncidentFacts& i) {
        if (!told_lost_.empty())
            return;
        for (const auto& [index, lost] : lost_) {
            const Event* w = window.at(index);
            if (!w || w->time < i.start_ns)
                continue;
            if (w->process != i.process &&
                std::find(i.processes.begin(), i.processes.end(), w->process) == i.processes.end())
                continue;
            tell_write(story, *w, "process " + std::to_string(w->process) + " wrote ");
            return;
        }
    }

    HistoryReader& history_;  // read once, by the one Window a story needs
    const Report& report_;
    const StoryContext& context_;
    // ZooKeeper's locks hold as long as their session: what the history calls the lease is the
    // session timeout the ensemble granted, and it runs out on the ensemble.
    const bool session_lease_ = context_.strategy.starts_with("zk_");
    std::string lease_name() const { return session_lease_ ? "session timeout" : "lease"; }
    const std::string& library_name() const {
        return context_.library.empty() ? context_.strategy : context_.library;
    }
    std::string lease_keeper() const { return session_lease_ ? "the ensemble" : "the server"; }
    // Who releases a late grant: a library's adapter, or lockbench's own ZooKeeper recipe, whose
    // next attempt deletes the node it left.
    std::string late_releaser() const {
        return session_lease_ ? "the client's next attempt" : "its adapter";
    }
    const std::map<std::uint64_t, LostUpdate> lost_;
    std::set<std::uint64_t> told_lost_;
    const Window* window_ = nullptr;  // the window being told
};

}  // namespace

Story tell_story(const std::filesystem::path& history, const Report& report,
                 const StoryContext& context) {
    HistoryReader reader(history);
    return Teller(reader, report, context).tell();
}

Story tell_story(std::istream& history, const Report& report, const StoryContext& context) {
    HistoryReader reader(history);
    return Teller(reader, report, context).tell();
}

namespace {

// `text` in lines of at most `width` columns, the first after `lead`, the rest indented as far.
std::string wrap(const std::string& lead, const std::string& text, std::size_t width) {
    std::string out = lead, line;
    const std::string indent(lead.size(), ' ');
    std::size_t column = lead.size();
    std::istringstream words(text);
    for (std::string word; words >> word;) {
        if (column > lead.size() && column + 1 + word.size() > width) {
            out += "\n" + indent;
            column = indent.size();
        } else if (column > lead.size()) {
            out += ' ';
            ++column;
        }
        out += word;
        column += word.size();
    }
    return out + "\n";
}

}  // namespace

std::string format_story(const Story& story) {
    constexpr std::size_t kWidth = 100;
    std::ostringstream out;
    out << wrap("", story.headline, kWidth) << "\n";
    int n = 0;
    for (const Claim& c : story.claims) {
        const std::string number = std::to_string(++n) + ". ";
        out << wrap(std::string(n < 10 ? "   " : "  ") + number, c.text, kWidth);
    }
    if (!story.swimlane.empty())
        out << "\n" << story.swimlane;
    return out.str();
}

}  // namespace lockbench::checker
