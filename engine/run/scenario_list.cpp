#include "engine/run/scenario_list.hpp"

#include <algorithm>
#include <cstdlib>
#include <sstream>
#include <sys/ioctl.h>
#include <system_error>
#include <unistd.h>

#include "engine/run/expectation.hpp"
#include "strategies/external/adapter_registry.hpp"

namespace lockbench {

namespace fs = std::filesystem;

namespace {

// Columns a UTF-8 text takes: one per character (the separator "·" is two bytes, one column).
std::size_t columns(const std::string& text) {
    return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
        return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
    }));
}

// The bytes of the first `n` characters of `text`.
std::size_t bytes_of_columns(const std::string& text, std::size_t n) {
    std::size_t seen = 0;
    for (std::size_t i = 0; i < text.size(); ++i) {
        if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80 && seen++ == n)
            return i;
    }
    return text.size();
}

// Below this a line holds too little to read; COLUMNS=5 still gets lines of 20.
constexpr std::size_t kMinColumns = 20;

}  // namespace

std::vector<Workload> load_scenarios(const fs::path& dir) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        if (entry.path().extension() == ".json")
            files.push_back(entry.path());
    }
    if (ec)
        throw WorkloadError(dir.string() + ": " + ec.message());
    std::sort(files.begin(), files.end());
    std::vector<Workload> scenarios;
    for (const auto& f : files) {
        Workload w = Workload::load(f);
        for (const auto& [strategy, outcome] : w.expect) {
            Workload as_run = w;
            as_run.strategy = strategy;
            // A lock library this machine lacks (no node_modules, no JVM) is still listed: what
            // a scenario shows does not depend on what is installed; `strategies` says why not.
            try {
                as_run.validate();
            } catch (const AdapterUnavailable&) {
            }
        }
        scenarios.push_back(std::move(w));
    }
    return scenarios;
}

std::string scenario_summary(const Workload& w) {
    if (!w.summary.empty())
        return w.summary;
    // The first sentence: up to a full stop that ends a word ("0.5 s" is not one).
    for (std::size_t at = w.description.find('.'); at != std::string::npos;
         at = w.description.find('.', at + 1)) {
        if (at + 1 == w.description.size() || w.description[at + 1] == ' ')
            return w.description.substr(0, at + 1);
    }
    return w.description.empty() ? "(no description)" : w.description;
}

std::string expectation_summary(const std::map<std::string, std::string>& expect) {
    // label -> strategies, in the order the labels first appear; failing ones before the rest.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    const auto rank = [](const std::string& label) {
        return label == "safe" ? 2 : label.starts_with("keeps ") ? 1 : 0;
    };
    for (const auto& [strategy, outcome] : expect) {
        const Expectation e = Expectation::parse(outcome);
        std::string violated, kept;
        bool deadlocks = false, saves = false;
        for (const auto& t : e.terms) {
            switch (t.kind) {
                case Expectation::Kind::Violates: {
                    std::string checks = t.check;
                    for (const auto& alternative : t.alternatives)
                        checks += "|" + alternative;
                    if (t.rate) {
                        // A rate is part of the claim: "violates x" alone would overstate it.
                        checks += " in " + std::string(t.rate->at_least ? ">= " : "<= ") +
                                  std::to_string(t.rate->k) + " of " + std::to_string(t.rate->n);
                    }
                    violated += (violated.empty() ? "" : "+") + checks;
                    break;
                }
                case Expectation::Kind::SafeCheck:
                    kept += (kept.empty() ? "" : "+") + t.check;
                    break;
                case Expectation::Kind::Deadlocks:
                    deadlocks = true;
                    break;
                case Expectation::Kind::Saves:
                    saves = true;
                    break;
                case Expectation::Kind::Safe:
                    break;
            }
        }
        std::string label;
        if (!violated.empty())
            label = "violates " + violated;
        if (deadlocks)
            label += (label.empty() ? "" : ", ") + std::string("deadlocks");
        if (saves)
            label += (label.empty() ? "" : ", ") + std::string("fence saves the data");
        if (label.empty())
            label = kept.empty() ? "safe" : "keeps " + kept;
        auto group = std::find_if(groups.begin(), groups.end(),
                                  [&](const auto& g) { return g.first == label; });
        if (group == groups.end())
            group = groups.insert(groups.end(), {label, {}});
        group->second.push_back(strategy);
    }
    std::stable_sort(groups.begin(), groups.end(),
                     [&](const auto& a, const auto& b) { return rank(a.first) < rank(b.first); });
    std::string out;
    for (const auto& [label, strategies] : groups) {
        out += (out.empty() ? "" : " · ") + label + ":";
        for (std::size_t i = 0; i < strategies.size(); ++i)
            out += (i == 0 ? " " : ", ") + strategies[i];
    }
    return out;
}

std::string wrap_columns(const std::string& text, std::size_t width, const std::string& first,
                         const std::string& rest) {
    std::string out, line = first;
    std::size_t used = columns(first);
    bool has_word = false;
    const auto new_line = [&] {
        out += line + "\n";
        line = rest;
        used = columns(rest);
        has_word = false;
    };
    std::istringstream words(text);
    for (std::string word; words >> word;) {
        std::size_t size = columns(word);
        if (has_word && used + 1 + size > width)
            new_line();
        // A word wider than a whole line is cut where the line ends.
        while (!has_word && used + size > width && used < width) {
            const std::size_t room = width - used;
            const std::size_t cut = bytes_of_columns(word, room);
            line += word.substr(0, cut);
            word.erase(0, cut);
            size -= room;
            has_word = true;
            new_line();
        }
        line += (has_word ? " " : "") + word;
        used += (has_word ? 1 : 0) + size;
        has_word = true;
    }
    if (has_word)
        out += line + "\n";
    return out;
}

std::string format_scenarios(const std::vector<Workload>& scenarios, std::size_t width,
                             bool verbose) {
    width = std::max(width, kMinColumns);
    std::string out;
    for (const Workload& w : scenarios) {
        if (!out.empty())
            out += "\n";
        out += wrap_columns(w.name, width, "", "");
        out += wrap_columns(scenario_summary(w), width, "  ", "  ");
        if (w.expect.empty()) {
            out += wrap_columns("expects nothing (no expect block)", width, "  ", "    ");
        } else if (!verbose) {
            out += wrap_columns(expectation_summary(w.expect), width, "  ", "    ");
        } else {
            for (const auto& [strategy, outcome] : w.expect) {
                // Term by term, so that a long expectation wraps between its terms.
                std::string terms = outcome;
                for (std::size_t at = terms.find(','); at != std::string::npos;
                     at = terms.find(',', at + 2))
                    terms.replace(at, 1, ", ");
                out += wrap_columns(strategy + ": " + terms, width, "  ", "      ");
            }
        }
    }
    return out;
}

std::size_t output_columns() {
    if (const char* env = std::getenv("COLUMNS")) {
        char* end = nullptr;
        const long n = std::strtol(env, &end, 10);
        if (end != env && *end == '\0' && n > 0)
            return static_cast<std::size_t>(n);
    }
    winsize size{};
    if (::isatty(STDOUT_FILENO) && ::ioctl(STDOUT_FILENO, TIOCGWINSZ, &size) == 0 &&
        size.ws_col > 0)
        return size.ws_col;
    return 80;
}

}  // namespace lockbench
