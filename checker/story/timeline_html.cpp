#include "checker/story/timeline_html.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "checker/history.hpp"
#include "checker/history_words.hpp"
#include "checker/incident.hpp"
#include "checker/mutual_exclusion.hpp"
#include "checker/story/markup_escape.hpp"
#include "checker/story/timeline_assets.hpp"
#include "checker/streaming.hpp"

namespace lockbench::checker {

using nlohmann::json;

namespace {

constexpr int kLaneHeight = 18;
constexpr int kLaneGap = 4;
constexpr int kTopMargin = 24;  // the axis
constexpr std::size_t kMaxTimelineLanes = 200;

// Milliseconds, the SVG's x unit: short numbers, exact enough at any zoom a browser allows.
std::string ms(std::int64_t ns) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4f", static_cast<double>(ns) / 1e6);
    return buf;
}

struct DrawnHold {
    std::uint64_t id = 0;
    std::string key;
    std::int64_t process = 0;
    LockMode mode = LockMode::Exclusive;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
    bool crashed = false;
    std::optional<std::int64_t> lease_end_ns;
};

struct Band {
    std::int64_t process = 0;
    std::int64_t start_ns = 0;
    std::int64_t end_ns = 0;
};

struct Mark {
    std::int64_t process = 0;
    std::int64_t time_ns = 0;
    std::string what;  // "lost", "rejected"
    std::uint64_t index = 0;
};

// A lock library's own "you lost the lock", or its giving up an acquire answered in doubt
// (HISTORY.md: "process": "library", `lost` and `late-grant` phase `abandoned`).
struct LibrarySignal {
    std::int64_t process = -1;
    std::int64_t time_ns = 0;
    std::uint64_t index = 0;
    std::string key;
    std::string text;
    bool abandoned = false;
};

// A lock the library granted late, for an acquire its adapter had answered in doubt
// (HISTORY.md, `late-grant`): held from the grant until the adapter's release, or - the release
// failed or was never reported - until its lease ran out (the run's end without one).
struct LateHold {
    std::int64_t process = 0;
    std::string key;
    std::int64_t start_ns = 0;
    std::uint64_t index = 0;
    std::optional<std::int64_t> lease_ms;  // its acquire's
    std::optional<std::int64_t> released_ns;
    bool release_failed = false;
    std::optional<std::int64_t> end_ns;  // set when the release freed it
};

// Everything the page draws, collected in one pass with the checker's own hold rule.
class Collector : public HoldObserver {
  public:
    // Keeps the first `max_holds` holds, and up to as many in [window_from, window_to]: memory
    // stays bounded however long the run, and the story's window can always be drawn.
    Collector(std::size_t max_holds, std::int64_t window_from, std::int64_t window_to)
        : max_holds_(max_holds), window_from_(window_from), window_to_(window_to) {}

    void hold_ended(const HoldSpan& h) override {
        ++seen_holds;
        if (first_overlap && (h.id == first_overlap->earlier || h.id == first_overlap->later))
            first_overlap->end_ns = std::min(first_overlap->end_ns.value_or(h.end_ns), h.end_ns);
        const bool in_window = h.end_ns >= window_from_ && h.start_ns <= window_to_;
        if (holds.size() >= max_holds_ && (!in_window || window_holds.size() >= max_holds_))
            return;
        DrawnHold d{h.id, *h.key, h.process, h.mode, h.start_ns, h.end_ns, h.crashed, {}};
        if (auto it = lease_end_.find(h.process);
            it != lease_end_.end() && it->second.first == h.start_ns)
            d.lease_end_ns = it->second.second;
        if (in_window && window_holds.size() < max_holds_)
            window_holds.push_back(d);
        if (holds.size() < max_holds_)
            holds.push_back(std::move(d));
    }
    void overlap_found(std::uint64_t earlier, std::uint64_t later, std::int64_t at_ns) override {
        overlapped.insert(earlier);
        overlapped.insert(later);
        if (!first_overlap)
            first_overlap = Overlap{earlier, later, at_ns, std::nullopt};
    }

    void on_event(const Event& e) {
        end_ns = std::max(end_ns, e.time);
        if (e.is_library()) {
            // Only `lost` is drawn as a lost lock; a late grant (HISTORY.md) is a hold.
            if (e.f == "late-grant") {
                on_late_grant(e);
                return;
            }
            if (e.f != "lost")
                return;
            const json v = json::parse(e.value_json, nullptr, false);
            LibrarySignal signal{.time_ns = e.time, .index = e.index, .key = e.key};
            if (v.is_object()) {
                signal.process = v.value("process", std::int64_t{-1});
                if (v.contains("text") && v["text"].is_string())
                    signal.text = v["text"].get<std::string>();
            }
            library_signals.push_back(std::move(signal));
            return;
        }
        if (!e.is_nemesis())
            processes.insert(e.process);
        if (e.is_nemesis()) {
            faults.push_back(e);
            if (!e.target)
                return;
            if (e.f == "pause" || e.f == "stall") {
                paused_since_[*e.target] = e.time;
            } else if (e.f == "resume") {
                if (auto it = paused_since_.find(*e.target); it != paused_since_.end()) {
                    pauses.push_back({*e.target, it->second, e.time});
                    paused_since_.erase(it);
                }
            }
            return;
        }
        if (e.f == "acquire" && e.type == EventType::Invoke) {
            lease_ms_[e.process] = e.lease_ms;
        } else if (e.f == "acquire" && e.type == EventType::Ok) {
            // The lease the service applied to this grant, where its ok says (HISTORY.md).
            if (e.lease_ms)
                lease_end_[e.process] = {e.time, e.time + *e.lease_ms * 1'000'000};
            else if (auto it = lease_ms_.find(e.process); it != lease_ms_.end() && it->second)
                lease_end_[e.process] = {e.time, e.time + *it->second * 1'000'000};
        } else if (e.f == "write" && e.type == EventType::Fail && e.error == history::kStaleFence) {
            marks.push_back({e.process, e.time, "rejected", e.index});
        }
    }

    void on_late_grant(const Event& e) {
        const json v = json::parse(e.value_json, nullptr, false);
        if (!v.is_object() || !v.contains("process") || !v["process"].is_number_integer() ||
            !v.contains("phase") || !v["phase"].is_string())
            return;
        const auto process = v["process"].get<std::int64_t>();
        const std::string phase = v["phase"].get<std::string>();
        if (phase == "abandoned") {
            library_signals.push_back({.process = process,
                                       .time_ns = e.time,
                                       .index = e.index,
                                       .key = e.key,
                                       .abandoned = true});
            return;
        }
        if (phase == "granted") {
            if (late_holds.size() >= max_holds_)
                return;
            LateHold hold{.process = process, .key = e.key, .start_ns = e.time, .index = e.index};
            if (auto it = lease_ms_.find(process); it != lease_ms_.end())
                hold.lease_ms = it->second;
            late_holds.push_back(std::move(hold));
            late_open_[process] = late_holds.size() - 1;
        } else if (phase == "released") {
            auto it = late_open_.find(process);
            if (it == late_open_.end())
                return;
            LateHold& hold = late_holds[it->second];
            late_open_.erase(it);
            hold.released_ns = e.time;
            if (v.contains("ok") && v["ok"].is_boolean() && v["ok"].get<bool>())
                hold.end_ns = e.time;
            else
                hold.release_failed = true;
        }
    }

    void finish() {
        for (const auto& [p, since] : paused_since_)
            pauses.push_back({p, since, end_ns});
        for (LateHold& hold : late_holds) {
            if (!hold.end_ns) {
                hold.end_ns = hold.lease_ms
                                  ? std::min(end_ns, hold.start_ns + *hold.lease_ms * 1'000'000)
                                  : end_ns;
            }
        }
    }

    std::vector<DrawnHold> holds;         // the first max_holds
    std::vector<DrawnHold> window_holds;  // those in the story's window
    std::uint64_t seen_holds = 0;
    std::unordered_set<std::uint64_t> overlapped;
    // The first two holds found overlapping: the page opens on the time both were held, which
    // may be a millisecond inside an incident of seconds.
    struct Overlap {
        std::uint64_t earlier = 0;
        std::uint64_t later = 0;
        std::int64_t start_ns = 0;
        std::optional<std::int64_t> end_ns;  // once the first of the two ended
    };
    std::optional<Overlap> first_overlap;
    std::vector<Event> faults;
    std::vector<Band> pauses;
    std::vector<Mark> marks;
    std::vector<LibrarySignal> library_signals;
    std::vector<LateHold> late_holds;
    std::set<std::int64_t> processes;
    std::int64_t end_ns = 0;

  private:
    std::map<std::int64_t, std::optional<std::int64_t>> lease_ms_;
    std::size_t max_holds_;
    std::int64_t window_from_, window_to_;
    // Each process's last grant: (start, when its lease runs out).
    std::map<std::int64_t, std::pair<std::int64_t, std::int64_t>> lease_end_;
    std::map<std::int64_t, std::int64_t> paused_since_;
    std::map<std::int64_t, std::size_t> late_open_;  // process -> its late hold not yet released
};

// What the chart shows: its lanes (the story's processes first, then the rest in order, up to
// kMaxTimelineLanes), the holds drawn in them, and a note on what is left out.
struct Chart {
    std::vector<std::int64_t> lanes;
    std::map<std::int64_t, int> lane_of;
    std::vector<const DrawnHold*> drawn;
    std::string note;
};

int lane_y(int lane) {
    return kTopMargin + 20 + lane * (kLaneHeight + kLaneGap);
}

Chart lay_out(const Collector& c, const Story& story, const TimelineOptions& options) {
    Chart chart;
    std::vector<std::int64_t>& lanes = chart.lanes;
    std::map<std::int64_t, int>& lane_of = chart.lane_of;
    for (const Claim& claim : story.claims) {
        if (claim.process >= 0 && c.processes.count(claim.process) &&
            std::find(lanes.begin(), lanes.end(), claim.process) == lanes.end())
            lanes.push_back(claim.process);
    }
    std::sort(lanes.begin(), lanes.end());
    for (std::int64_t p : c.processes) {
        if (lanes.size() >= kMaxTimelineLanes)
            break;
        if (std::find(lanes.begin(), lanes.end(), p) == lanes.end())
            lanes.push_back(p);
    }
    std::sort(lanes.begin(), lanes.end());
    for (std::size_t i = 0; i < lanes.size(); ++i)
        lane_of[lanes[i]] = static_cast<int>(i);

    // Too many holds: those in the story's window (the incident), and the page says so.
    std::string& note = chart.note;
    const bool all = c.seen_holds <= options.max_holds;
    std::vector<const DrawnHold*>& drawn = chart.drawn;
    for (const DrawnHold& h : all ? c.holds : c.window_holds) {
        if (lane_of.count(h.process))
            drawn.push_back(&h);
    }
    if (!all) {
        note = "This run has " + std::to_string(c.seen_holds) + " holds; the " +
               std::to_string(drawn.size()) + " drawn are those around the story (" +
               format_seconds(story.window_start_ns) + " to " +
               format_seconds(story.window_end_ns) + ").";
    }
    if (lanes.size() < c.processes.size()) {
        note += (note.empty() ? "" : " ") + std::to_string(lanes.size()) + " of " +
                std::to_string(c.processes.size()) + " processes are drawn.";
    }
    return chart;
}

// The incidents' bands, and the first overlap the page opens on.
void draw_incidents(std::ostream& svg, const std::vector<Incident>& incidents, const Collector& c,
                    int plot_bottom) {
    for (std::size_t n = 0; n < incidents.size(); ++n) {
        const Incident& i = incidents[n];
        const auto [from_ns, to_ns] = i.span(c.end_ns);
        svg << "<rect id=\"incident-" << n << "\" class=\"incident\" x=\"" << ms(from_ns)
            << "\" y=\"" << kTopMargin << "\" width=\""
            << ms(std::max<std::int64_t>(to_ns - from_ns, 1000)) << "\" height=\""
            << plot_bottom - kTopMargin
            << "\" fill=\"#d62728\" fill-opacity=\"0.10\" stroke=\"#d62728\" "
               "stroke-opacity=\"0.6\" vector-effect=\"non-scaling-stroke\"><title>"
            << markup_escape(i.message) << "</title></rect>\n";
    }
    if (const auto& o = c.first_overlap) {
        const std::int64_t to_ns = o->end_ns.value_or(c.end_ns);
        svg << "<rect id=\"overlap-0\" class=\"first-overlap\" x=\"" << ms(o->start_ns) << "\" y=\""
            << kTopMargin << "\" width=\"" << ms(std::max<std::int64_t>(to_ns - o->start_ns, 1000))
            << "\" height=\"" << plot_bottom - kTopMargin
            << "\" fill=\"#d62728\" fill-opacity=\"0.18\" stroke=\"#d62728\" "
               "stroke-dasharray=\"3 2\" vector-effect=\"non-scaling-stroke\"><title>the first "
               "overlap: two holds from "
            << format_seconds(o->start_ns) << " to " << format_seconds(to_ns)
            << "</title></rect>\n";
    }
}

// Pauses, holds (red where the checker found them overlapping) and where their leases ran out.
void draw_holds(std::ostream& svg, const Collector& c, const Chart& chart, const Story& story) {
    const std::map<std::int64_t, int>& lane_of = chart.lane_of;
    for (const Band& p : c.pauses) {
        auto lane = lane_of.find(p.process);
        if (lane == lane_of.end())
            continue;
        svg << "<rect class=\"pause\" x=\"" << ms(p.start_ns) << "\" y=\""
            << lane_y(lane->second) - 2 << "\" width=\"" << ms(p.end_ns - p.start_ns)
            << "\" height=\"" << kLaneHeight + 4
            << "\" fill=\"#9e9e9e\" fill-opacity=\"0.45\"><title>process " << p.process
            << " paused " << format_seconds(p.start_ns) << " to " << format_seconds(p.end_ns)
            << "</title></rect>\n";
    }
    for (const DrawnHold* h : chart.drawn) {
        const int y = lane_y(lane_of.at(h->process));
        const bool bad = c.overlapped.count(h->id) > 0;
        const char* fill = bad ? "#d62728" : h->mode == LockMode::Shared ? "#8fb3d9" : "#4878a8";
        svg << "<rect class=\"hold" << (bad ? " overlap" : "") << "\" x=\"" << ms(h->start_ns)
            << "\" y=\"" << y + 3 << "\" width=\""
            << ms(std::max<std::int64_t>(h->end_ns - h->start_ns, 1000)) << "\" height=\""
            << kLaneHeight - 6 << "\" fill=\"" << fill << "\"><title>" << markup_escape(h->key)
            << ": process " << h->process << " " << (h->mode == LockMode::Shared ? "shared " : "")
            << "held it " << format_seconds(h->start_ns) << " to " << format_seconds(h->end_ns)
            << (h->crashed ? " (crashed)" : "") << (bad ? "; another hold overlapped it" : "")
            << "</title></rect>\n";
        if (h->lease_end_ns && *h->lease_end_ns < h->end_ns) {
            svg << "<line class=\"lease\" x1=\"" << ms(*h->lease_end_ns) << "\" x2=\""
                << ms(*h->lease_end_ns) << "\" y1=\"" << y << "\" y2=\"" << y + kLaneHeight
                << "\" stroke=\"#000\" stroke-width=\"2\" vector-effect=\"non-scaling-stroke\">"
                << "<title>process " << h->process << "'s " << markup_escape(story.lease_name)
                << " ran out by " << format_seconds(*h->lease_end_ns) << "</title></line>\n";
        }
    }
}

// The library's late grants: a hold nobody alive used, hatched in its acquire's lane.
void draw_late_holds(std::ostream& svg, const Collector& c, const Chart& chart) {
    for (const LateHold& h : c.late_holds) {
        auto lane = chart.lane_of.find(h.process);
        if (lane == chart.lane_of.end())
            continue;
        const std::int64_t end_ns = h.end_ns.value_or(c.end_ns);
        svg << "<rect class=\"hold late-grant\" data-process=\"" << h.process << "\" x=\""
            << ms(h.start_ns) << "\" y=\"" << lane_y(lane->second) + 3 << "\" width=\""
            << ms(std::max<std::int64_t>(end_ns - h.start_ns, 1000)) << "\" height=\""
            << kLaneHeight - 6
            << "\" fill=\"#b39ddb\" stroke=\"#5e35b1\" stroke-dasharray=\"3 2\" "
               "vector-effect=\"non-scaling-stroke\"><title>#"
            << h.index << " " << markup_escape(h.key) << ": the library granted process "
            << h.process << "'s acquire, answered in doubt, at " << format_seconds(h.start_ns);
        if (h.released_ns && !h.release_failed)
            svg << "; its adapter released it at " << format_seconds(*h.released_ns);
        else if (h.released_ns)
            svg << "; its adapter failed to release it at " << format_seconds(*h.released_ns);
        else
            svg << "; its adapter never said it released it";
        if (h.release_failed || !h.released_ns) {
            svg << (h.lease_ms ? ", so it held until its lease ran out by "
                               : ", and it has no lease: held to the end at ")
                << format_seconds(end_ns);
        }
        svg << "</title></rect>\n";
    }
}

// Point marks: stale writes the fence rejected, the library's "lost", updates that were lost.
void draw_marks(std::ostream& svg, const Collector& c, const Chart& chart, const Report& report) {
    const std::map<std::int64_t, int>& lane_of = chart.lane_of;
    for (const Mark& m : c.marks) {
        auto lane = lane_of.find(m.process);
        if (lane == lane_of.end())
            continue;
        svg << "<line class=\"mark " << m.what << "\" x1=\"" << ms(m.time_ns) << "\" x2=\""
            << ms(m.time_ns) << "\" y1=\"" << lane_y(lane->second) - 3 << "\" y2=\""
            << lane_y(lane->second) + kLaneHeight + 3
            << "\" stroke=\"#2e7d32\" stroke-width=\"4\" vector-effect=\"non-scaling-stroke\">"
            << "<title>#" << m.index << " the fence rejected process " << m.process
            << "'s stale write</title></line>\n";
    }
    for (const LibrarySignal& l : c.library_signals) {
        auto lane = lane_of.find(l.process);
        if (lane == lane_of.end())
            continue;
        svg << "<line class=\"mark " << (l.abandoned ? "library-abandoned" : "library-lost")
            << "\" x1=\"" << ms(l.time_ns) << "\" x2=\"" << ms(l.time_ns) << "\" y1=\""
            << lane_y(lane->second) - 3 << "\" y2=\"" << lane_y(lane->second) + kLaneHeight + 3
            << "\" stroke=\"" << (l.abandoned ? "#00897b" : "#e91e63")
            << "\" stroke-width=\"4\" vector-effect=\"non-scaling-stroke\">"
            << "<title>#" << l.index << " " << format_seconds(l.time_ns);
        if (l.abandoned) {
            svg << " the library gave up process " << l.process << "'s acquire of "
                << markup_escape(l.key) << ", answered in doubt; whatever it held was gone";
        } else {
            svg << " the library told process " << l.process << " it lost " << markup_escape(l.key)
                << (l.text.empty() ? "" : ": " + markup_escape(l.text));
        }
        svg << "</title></line>\n";
    }
    for (std::size_t n = 0; n < report.witnesses.size(); ++n) {
        const Witness& w = report.witnesses[n];
        if (w.kind != "resource" || w.evidence.is_null())
            continue;
        // On the process whose update was lost, at the write that was lost: the overwriting
        // write is the story's to tell.
        const LostUpdateEvidence::Write lost =
            LostUpdateEvidence::from_json(w.evidence,
                                          "/verdict/violations/" + std::to_string(n) + "/witness")
                .overwritten;
        const std::int64_t loser = lost.process;
        auto lane = lane_of.find(loser);
        if (lane == lane_of.end())
            continue;
        const std::int64_t t = lost.time_ns;
        svg << "<line class=\"mark lost\" data-process=\"" << loser << "\" x1=\"" << ms(t)
            << "\" x2=\"" << ms(t) << "\" y1=\"" << lane_y(lane->second) - 3 << "\" y2=\""
            << lane_y(lane->second) + kLaneHeight + 3
            << "\" stroke=\"#ff9800\" stroke-width=\"4\" vector-effect=\"non-scaling-stroke\">"
            << "<title>" << markup_escape(w.message) << "</title></line>\n";
    }
}

void draw_faults(std::ostream& svg, const Collector& c, int plot_bottom) {
    for (const Event& f : c.faults) {
        svg << "<line class=\"fault\" x1=\"" << ms(f.time) << "\" x2=\"" << ms(f.time) << "\" y1=\""
            << kTopMargin << "\" y2=\"" << plot_bottom
            << "\" stroke=\"#6a1b9a\" stroke-dasharray=\"4 3\" "
               "vector-effect=\"non-scaling-stroke\"><title>#"
            << f.index << " " << format_seconds(f.time) << " nemesis " << markup_escape(f.f) << " "
            << markup_escape(f.value_json) << "</title></line>\n";
    }
}

std::string svg_of(const Collector& c, const Report& report, const Story& story,
                   const Chart& chart) {
    const std::vector<std::int64_t>& lanes = chart.lanes;
    const int left = 70, width = 1100;
    const int height = lane_y(static_cast<int>(lanes.size())) + 8;
    const std::int64_t end_ns = std::max<std::int64_t>(c.end_ns, 1);
    std::ostringstream svg;
    svg << "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"" << left + width + 10
        << "\" height=\"" << height << "\" data-left=\"" << left << "\" data-width=\"" << width
        << "\" data-end=\"" << ms(end_ns) << "\">\n";
    svg << "<defs><clipPath id=\"clip\"><rect x=\"" << left << "\" y=\"0\" width=\"" << width
        << "\" height=\"" << height << "\"/></clipPath></defs>\n<g id=\"axis\"></g>\n";
    // Lane labels and backgrounds stay put; the plot moves.
    svg << "<g class=\"labels\" font-size=\"12\">\n";
    svg << "<text x=\"4\" y=\"" << kTopMargin + 13 << "\">nemesis</text>\n";
    for (std::size_t i = 0; i < lanes.size(); ++i) {
        const int y = lane_y(static_cast<int>(i));
        svg << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << width << "\" height=\""
            << kLaneHeight << "\" fill=\"" << (i % 2 ? "#fafafa" : "#f2f2f2") << "\"/>"
            << "<text x=\"4\" y=\"" << y + 13 << "\">process " << lanes[i] << "</text>\n";
    }
    svg << "</g>\n<g clip-path=\"url(#clip)\"><g id=\"plot\">\n";
    const int plot_top = kTopMargin + 20, plot_bottom = height - 4;
    draw_incidents(svg, listed_incidents(report), c, plot_bottom);
    draw_holds(svg, c, chart, story);
    draw_late_holds(svg, c, chart);
    draw_marks(svg, c, chart, report);
    draw_faults(svg, c, plot_bottom);
    svg << "</g></g>\n<g id=\"fault-labels\" font-size=\"11\" fill=\"#6a1b9a\">\n";
    for (const Event& f : c.faults) {
        svg << "<text y=\"" << kTopMargin + 13 << "\" data-t=\"" << ms(f.time) << "\">"
            << markup_escape(f.f) << (f.target ? " " + std::to_string(*f.target) : "")
            << "</text>\n";
    }
    svg << "</g>\n</svg>\n";
    (void)plot_top;
    return svg.str();
}

std::string page(const Report& report, const Story& story, const TimelineOptions& options,
                 const std::string& note, const std::string& svg) {
    std::ostringstream html;
    const std::string verdict(verdict_word(report.verdict));
    html << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
         << markup_escape(options.title) << " - lockbench timeline</title>\n<style>"
         << timeline_assets().at("timeline.css") << "</style></head>\n<body>\n";
    html << "<h1>" << markup_escape(options.title) << " <span class=\"verdict " << verdict << "\">"
         << verdict << "</span></h1>\n";
    html << "<p class=\"headline\">" << markup_escape(story.headline)
         << "</p>\n<ol class=\"story\">\n";
    for (const Claim& claim : story.claims)
        html << "<li>" << markup_escape(claim.text) << "</li>\n";
    html << "</ol>\n";
    if (!note.empty())
        html << "<p class=\"note\">" << markup_escape(note) << "</p>\n";
    html << "<div class=\"controls\"><button id=\"overlap\">First overlap (o)</button>"
            "<button id=\"first\">Whole incident (i)</button>"
            "<button id=\"whole\">Whole run (w)</button><button id=\"zin\">Zoom in</button>"
            "<button id=\"zout\">Zoom out</button> <span id=\"view\"></span> "
            "(wheel: zoom, drag: pan)</div>\n";
    html << svg;
    html << "<p class=\"legend\"><span><i class=\"sw\" style=\"background:#4878a8\"></i>hold"
            "</span><span><i class=\"sw\" style=\"background:#8fb3d9\"></i>shared hold</span>"
            "<span><i class=\"sw\" style=\"background:#d62728\"></i>hold that overlapped "
            "another</span><span><i class=\"sw\" style=\"background:#f4cccc\"></i>incident"
            "</span><span><i class=\"sw\" style=\"background:#c9c9c9\"></i>paused</span>"
            "<span><i class=\"sw\" style=\"background:#000\"></i>"
         << markup_escape(story.lease_name)
         << " ran out</span>"
            "<span><i class=\"sw\" style=\"background:#ff9800\"></i>an update that was lost"
            "</span>"
            "<span><i class=\"sw\" style=\"background:#2e7d32\"></i>stale write rejected</span>"
            "<span><i class=\"sw\" style=\"background:#e91e63\"></i>the library said the "
            "lock was lost</span>"
            "<span><i class=\"sw\" style=\"background:#b39ddb\"></i>the library granted an "
            "acquire answered in doubt</span>"
            "<span><i class=\"sw\" style=\"background:#00897b\"></i>the library gave up an "
            "acquire answered in doubt</span>"
            "<span><i class=\"sw\" style=\"background:#6a1b9a\"></i>fault</span></p>\n";
    if (!story.swimlane.empty())
        html << "<pre class=\"swimlane\">" << markup_escape(story.swimlane) << "</pre>\n";
    html << "<script>" << timeline_assets().at("timeline.js") << "</script>\n</body></html>\n";
    return html.str();
}

std::string render(Collector& c, const Report& report, const Story& story,
                   const TimelineOptions& options) {
    c.finish();
    const Chart chart = lay_out(c, story, options);
    return page(report, story, options, chart.note, svg_of(c, report, story, chart));
}

std::string build(HistoryReader& reader, const Report& report, const Story& story,
                  const TimelineOptions& options) {
    Collector collector(options.max_holds, story.window_start_ns, story.window_end_ns);
    MutualExclusionCheck holds;
    holds.observe(&collector);
    Event e;
    while (reader.next(e)) {
        collector.on_event(e);
        holds.on_event(e);
    }
    // Holds still open at the end are drawn to the end.
    for (const HoldSpan& h : holds.open_holds(collector.end_ns))
        collector.hold_ended(h);
    return render(collector, report, story, options);
}

}  // namespace

std::string timeline_html(std::istream& history, const Report& report, const Story& story,
                          const TimelineOptions& options) {
    HistoryReader reader(history);
    return build(reader, report, story, options);
}

std::string timeline_html(const std::filesystem::path& history, const Report& report,
                          const Story& story, const TimelineOptions& options) {
    HistoryReader reader(history);
    return build(reader, report, story, options);
}

}  // namespace lockbench::checker
