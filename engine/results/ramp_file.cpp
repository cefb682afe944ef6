#include "engine/results/ramp_file.hpp"

#include "engine/results/result_fields.hpp"

namespace lockbench {

using nlohmann::json;

namespace {

using RampFields = json_input::JsonObject<RampError>;
using result_fields::required_int;

json point_json(const RampPoint& p) {
    return json{{"clients", p.clients},
                {"cycles_per_s", p.cycles_per_s},
                {"acquire_p50_ms", p.acquire_p50_ms},
                {"acquire_p99_ms", p.acquire_p99_ms},
                {"fairness", p.fairness.to_json()},
                {"engine_cpu_share", p.engine_cpu_share},
                {"verdict", checker::to_json(p.verdict)},
                {"run", p.run}};
}

RampPoint read_point(const json& j, const std::string& origin, const std::string& path) {
    RampFields f(j, origin, path);
    return {.clients = required_int(f, "clients"),
            .cycles_per_s = f.required_number("cycles_per_s", 0),
            .acquire_p50_ms = f.required_number("acquire_p50_ms", 0),
            .acquire_p99_ms = f.required_number("acquire_p99_ms", 0),
            .fairness = result_fields::read_fairness(f),
            .engine_cpu_share = f.required_number("engine_cpu_share", 0),
            .verdict = verdict_at(f, f.require("verdict"), f.at("verdict")),
            .run = f.required_string("run")};
}

std::map<std::string, std::vector<RampPoint>> read_curves(RampFields& top) {
    const json& curves = top.require("curves");
    const RampFields curves_object(curves, top.origin(), "/curves");  // an object, or the path
    std::map<std::string, std::vector<RampPoint>> out;
    for (const auto& [strategy, points] : curves.items()) {
        const std::string path = "/curves/" + strategy;
        if (!points.is_array())
            curves_object.fail(path, "must be an array, not " + json_input::type_name(points));
        auto& curve = out[strategy];
        for (std::size_t i = 0; i < points.size(); ++i)
            curve.push_back(read_point(points[i], top.origin(), path + "/" + std::to_string(i)));
    }
    return out;
}

std::vector<int> read_clients(RampFields& top) {
    const json& list = top.required_array("clients");
    std::vector<int> out;
    for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string path = "/clients/" + std::to_string(i);
        if (!list[i].is_number_integer() || list[i].get<std::int64_t>() < 1)
            top.fail(path, "must be a client count (1 or more), not " + list[i].dump());
        out.push_back(list[i].get<int>());
    }
    return out;
}

std::vector<RampFailure> read_failed(RampFields& top) {
    std::vector<RampFailure> out;
    const json* failed = top.optional_array("failed");
    if (!failed)
        return out;
    for (std::size_t i = 0; i < failed->size(); ++i) {
        RampFields f((*failed)[i], top.origin(), "/failed/" + std::to_string(i));
        out.push_back({.strategy = f.required_string("strategy"),
                       .clients = required_int(f, "clients"),
                       .error = f.required_string("error"),
                       .exit_code = required_int(f, "exit_code")});
    }
    return out;
}

std::optional<RampCutShort> read_cut_short(RampFields& top) {
    const json* cut = top.optional_object("interrupted_point");
    if (!cut)
        return std::nullopt;
    RampFields f(*cut, top.origin(), "/interrupted_point");
    return RampCutShort{.strategy = f.required_string("strategy"),
                        .clients = required_int(f, "clients"),
                        .run = f.required_string("run")};
}

}  // namespace

std::size_t RampFile::point_count() const {
    std::size_t n = 0;
    for (const auto& [strategy, points] : curves)
        n += points.size();
    return n;
}

json RampFile::to_json() const {
    json curves_json = json::object();
    for (const auto& [strategy, points] : curves) {
        json& curve = curves_json[strategy] = json::array();
        for (const RampPoint& p : points)
            curve.push_back(point_json(p));
    }
    json failed_json = json::array();
    for (const RampFailure& f : failed) {
        failed_json.push_back({{"strategy", f.strategy},
                               {"clients", f.clients},
                               {"error", f.error},
                               {"exit_code", f.exit_code}});
    }
    json out{{"scenario", scenario},  {"clients", clients},    {"duration_s", duration_s},
             {"curves", curves_json}, {"failed", failed_json}, {"interrupted", interrupted}};
    if (yardstick)
        out["yardstick"] = *yardstick;
    if (interrupted_point) {
        out["interrupted_point"] = {{"strategy", interrupted_point->strategy},
                                    {"clients", interrupted_point->clients},
                                    {"run", interrupted_point->run}};
    }
    return out;
}

RampFile RampFile::from_json(const json& j, const std::string& origin) {
    RampFields top(j, origin, "");
    RampFile ramp;
    ramp.scenario = top.required_string("scenario");
    ramp.clients = read_clients(top);
    ramp.duration_s = top.required_number("duration_s", 0);
    ramp.curves = read_curves(top);
    ramp.failed = read_failed(top);
    ramp.interrupted = top.required_boolean("interrupted");
    ramp.interrupted_point = read_cut_short(top);
    if (const json* y = top.optional_object("yardstick"))
        ramp.yardstick = *y;
    return ramp;
}

}  // namespace lockbench
