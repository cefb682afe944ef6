#include "checker/jepsen_history.hpp"

#include <nlohmann/json.hpp>

#include "checker/edn.hpp"

namespace lockbench::checker {

using nlohmann::json;

namespace {

struct JepsenOp {
    json map;
    edn::Position at;
};

bool is_client(const json& op) {
    const auto it = op.find("process");
    return it != op.end() && it->is_number_integer();
}

std::string text_of(const json& v) {
    return v.is_string() ? v.get<std::string>() : v.dump();
}

// The ops of the EDN text, each with where it starts: one vector (or list) of them, or a
// sequence of op maps.
std::vector<JepsenOp> read_jepsen_ops(std::string_view edn_text) {
    edn::Reader reader(edn_text);
    std::vector<JepsenOp> ops;
    json form;
    bool one_collection = false;
    while (reader.next(form)) {
        const bool collection = form.is_array();
        if (one_collection || (collection && !ops.empty())) {
            throw HistoryError(reader.form_position().line, reader.form_position().column,
                               "a history is one vector (or list) of ops, or a sequence of op "
                               "maps, not both");
        }
        if (collection) {
            one_collection = true;
            const auto& positions = reader.element_positions();
            for (std::size_t i = 0; i < form.size(); ++i)
                ops.push_back(
                    {std::move(form[i]), i < positions.size() ? positions[i] : edn::Position{}});
        } else {
            ops.push_back({std::move(form), reader.form_position()});
        }
    }
    return ops;
}

// Whether the history is Jepsen's independent one: every client op's value is [key value].
// Throws for an op that is not a map.
bool is_independent(const std::vector<JepsenOp>& ops) {
    bool any_client = false;
    bool all_pairs = true;
    for (const JepsenOp& op : ops) {
        if (!op.map.is_object())
            throw HistoryError(op.at.line, op.at.column,
                               "an op must be a map, not " + op.map.dump());
        if (!is_client(op.map))
            continue;
        any_client = true;
        const auto v = op.map.find("value");
        const bool pair = v != op.map.end() && v->is_array() && v->size() == 2;
        // A cas's own value [from to] is a pair too; in an independent history it sits inside one
        // ([k [from to]], or [k nil] when a lost reply left it unknown).
        const auto f = op.map.find("f");
        const bool bare_cas = pair && f != op.map.end() && *f == "cas" && (*v)[1].is_number();
        all_pairs = all_pairs && pair && !bare_cas;
    }
    return any_client && all_pairs;
}

// Appends the op at `index` to `jsonl` as one event of history.jsonl. `last_time` is the time of
// the event before: an op without :time gets its index, never earlier than that.
void append_event(std::string& jsonl, std::size_t index, const JepsenOp& jepsen_op,
                  bool independent, std::int64_t& last_time) {
    const json& op = jepsen_op.map;
    const auto malformed = [&](const std::string& what) {
        return HistoryError(jepsen_op.at.line, jepsen_op.at.column, what);
    };
    const auto field = [&](const char* name) -> const json* {
        const auto it = op.find(name);
        return it == op.end() || it->is_null() ? nullptr : &*it;
    };
    const json* type = field("type");
    if (!type || !type->is_string())
        throw malformed("an op needs :type (:invoke, :ok, :fail or :info)");
    const json* f = field("f");
    if (!f || !(f->is_string() || f->is_number()))
        throw malformed("an op needs :f");
    const json* process = field("process");
    if (!process)
        throw malformed("an op needs :process");
    json value = op.contains("value") ? op.at("value") : json();
    std::string key;
    if (independent && process->is_number_integer()) {
        key = text_of(value[0]);
        value = json(value[1]);
    }
    std::int64_t time = static_cast<std::int64_t>(index);
    if (const json* t = field("time"); t && t->is_number_integer())
        time = t->get<std::int64_t>();
    else
        time = std::max(last_time, time);
    last_time = time;

    jsonl += "{\"index\":" + std::to_string(index) +
             ",\"type\":" + json(type->get<std::string>()).dump();
    jsonl += ",\"process\":";
    jsonl += process->is_number_integer() ? process->dump() : std::string("\"nemesis\"");
    jsonl += ",\"f\":" + json(text_of(*f)).dump();
    if (!key.empty())
        jsonl += ",\"key\":" + json(key).dump();
    jsonl += ",\"value\":" + value.dump();
    jsonl += ",\"time\":" + std::to_string(time);
    if (const json* error = field("error"))
        jsonl += ",\"error\":" + json(text_of(*error)).dump();
    jsonl += "}\n";
}

}  // namespace

std::string ConvertedHistory::locate(const HistoryError& e) const {
    std::string what = e.what();
    // An error of the conversion itself already names the EDN line and column.
    if (e.column() != 0 || e.line() < 1 || e.line() > edn_positions.size())
        return what;
    const std::string prefix = "line " + std::to_string(e.line()) + ": ";
    if (what.rfind(prefix, 0) == 0)
        what.erase(0, prefix.size());
    const edn::Position& at = edn_positions[e.line() - 1];
    return "line " + std::to_string(at.line) + ", column " + std::to_string(at.column) + ": " +
           what;
}

void ConvertedHistory::locate(Report& report) const {
    for (auto& ignored : report.ignored_ops) {
        if (ignored.first_line >= 1 && ignored.first_line <= edn_positions.size()) {
            const edn::Position& at = edn_positions[ignored.first_line - 1];
            ignored.first =
                "line " + std::to_string(at.line) + ", column " + std::to_string(at.column);
        }
    }
}

ConvertedHistory jepsen_to_jsonl(std::string_view edn_text) {
    const std::vector<JepsenOp> ops = read_jepsen_ops(edn_text);
    ConvertedHistory out;
    out.independent = is_independent(ops);
    std::int64_t last_time = 0;
    for (std::size_t i = 0; i < ops.size(); ++i) {
        append_event(out.jsonl, i, ops[i], out.independent, last_time);
        out.edn_positions.push_back(ops[i].at);
    }
    return out;
}

}  // namespace lockbench::checker
