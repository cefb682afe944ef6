#include "engine/cli/machine_output.hpp"

#include <cerrno>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

namespace lockbench::cli {

using nlohmann::json;

namespace {

// RFC 4180: a field with a comma, a quote or a line break is quoted, its quotes doubled. A
// missing value (null) is an empty field; true/false/"unknown" as they are.
std::string field(const json& value) {
    std::string text;
    if (value.is_null())
        return text;
    if (value.is_string())
        text = value.get<std::string>();
    else
        text = value.dump();
    if (text.find_first_of(",\"\r\n") == std::string::npos)
        return text;
    std::string quoted = "\"";
    for (char c : text) {
        quoted += c;
        if (c == '"')
            quoted += '"';
    }
    return quoted + "\"";
}

std::string row(const std::vector<json>& fields) {
    std::string line;
    for (std::size_t i = 0; i < fields.size(); ++i)
        line += (i ? "," : "") + field(fields[i]);
    return line + "\n";
}

// A value at a JSON path, null where any part of it is missing (an older or partial document).
json at(const json& j, const char* pointer) {
    const json::json_pointer path(pointer);
    return j.contains(path) ? j.at(path) : json();
}

}  // namespace

std::string file_text(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in)
        throw std::system_error(errno, std::generic_category(), "cannot read " + file.string());
    return text.str();
}

std::string run_csv(const RunSummary& s, const std::filesystem::path& dir) {
    return row({"scenario", "strategy", "clients", "seed", "duration_s", "cycles", "cycles_per_s",
                "acquire_p50_ms", "acquire_p99_ms", "acquire_p999_ms", "release_p50_ms",
                "release_p99_ms", "valid", "violations", "expected", "as_expected", "interrupted",
                "dir"}) +
           row({s.scenario, s.strategy, s.clients, s.seed, s.duration_s, s.cycles, s.cycles_per_s,
                s.acquire.p50, s.acquire.p99, s.acquire.p999, s.release.p50, s.release.p99,
                checker::to_json(s.verdict.verdict), s.verdict.violation_count(),
                s.expected ? json(*s.expected) : json(nullptr),
                s.as_expected ? json(*s.as_expected) : json(nullptr), s.interrupted, dir.string()});
}

std::string suite_csv(const SuiteTable& table, const std::vector<SuiteRow>& each_run,
                      const std::filesystem::path& dir) {
    std::string out = row({"scenario", "strategy", "repeat", "outcome", "expected", "valid",
                           "violations", "violation_kinds", "cycles_per_s", "acquire_p50_ms",
                           "acquire_p99_ms", "duration_s", "attempts", "detail", "dir"});
    // A repeated suite's rows are its pairs, each over N runs: a script wants the runs.
    const bool repeated = table.repeat.has_value();
    for (const SuiteRow& r : repeated ? each_run : table.runs) {
        const char* outcome = !r.as_expected   ? "unknown"
                              : *r.as_expected ? "as expected"
                                               : "unexpected";
        std::string kinds;
        for (const auto& kind : r.violation_kinds)
            kinds += (kinds.empty() ? "" : ";") + kind;
        out += row({r.scenario, r.strategy, repeated ? json(r.round.value_or(1)) : json(1), outcome,
                    r.expected ? json(*r.expected) : json(nullptr), checker::to_json(r.valid),
                    r.violations, kinds, r.cycles_per_s, r.acquire_p50_ms, r.acquire_p99_ms,
                    r.duration_s, r.attempts, nullptr, (dir / r.dir).string()});
    }
    for (const json& f : table.failed) {
        out += row({at(f, "/scenario"), at(f, "/strategy"), repeated ? at(f, "/round") : json(1),
                    "failed", nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                    nullptr, at(f, "/attempts"), at(f, "/error"), nullptr});
    }
    for (const json& k : table.skipped) {
        out += row({at(k, "/scenario"), at(k, "/strategy"), nullptr, "skipped", nullptr, nullptr,
                    nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, at(k, "/reason"),
                    nullptr});
    }
    return out;
}

std::string ramp_csv(const RampFile& ramp, const std::filesystem::path& dir) {
    std::string out = row({"strategy", "clients", "cycles_per_s", "acquire_p50_ms",
                           "acquire_p99_ms", "jain_index", "engine_cpu_share", "valid", "dir"});
    for (const auto& [strategy, points] : ramp.curves) {
        for (const RampPoint& p : points) {
            const json jain = p.fairness.jain_index ? json(*p.fairness.jain_index) : json();
            out +=
                row({strategy, p.clients, p.cycles_per_s, p.acquire_p50_ms, p.acquire_p99_ms, jain,
                     p.engine_cpu_share, checker::to_json(p.verdict), (dir / p.run).string()});
        }
    }
    return out;
}

}  // namespace lockbench::cli
