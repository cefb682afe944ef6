#include "linearizability_partition.hpp"

namespace lockbench::checker::lin {

namespace {

constexpr std::size_t kPrefixShown = 50;
constexpr std::size_t kConcurrentShown = 10;

nlohmann::json op_json(const RecordedOp& op) {
    nlohmann::json value = nullptr;
    nlohmann::json output = nullptr;
    switch (op.kind) {
        case OpKind::Acquire:
            value = op.mode == LockMode::Shared ? "shared" : "exclusive";
            break;
        case OpKind::Write:
            if (op.input) {
                value = *op.input;
            }
            break;
        case OpKind::Cas:
            if (op.cas) {
                value = nlohmann::json::array({op.cas->first, op.cas->second});
            }
            break;
        case OpKind::Read:
            if (op.output && op.status == Status::Ok) {
                output = *op.output;
            }
            break;
        case OpKind::Release:
            break;
    }
    const char* status = op.status == Status::Ok     ? "ok"
                         : op.status == Status::Fail ? "fail"
                                                     : "info";
    return {{"process", op.process},
            {"f", std::string(op_name(op.kind))},
            {"value", std::move(value)},
            {"output", std::move(output)},
            {"invoke_index", op.invoke_index},
            {"complete_index",
             op.complete_index ? nlohmann::json(*op.complete_index) : nlohmann::json(nullptr)},
            {"status", status}};
}

}  // namespace

std::int64_t process_of(const Partition& partition, std::uint32_t op) {
    return partition.history->ops[partition.ops[op].source].process;
}

nlohmann::json violation_json(Model model, const Partition& partition) {
    const auto& recorded = partition.history->ops;
    const auto& prefix = partition.result.longest_prefix;
    const std::size_t omitted = prefix.size() > kPrefixShown ? prefix.size() - kPrefixShown : 0;
    nlohmann::json shown = nlohmann::json::array();
    for (std::size_t i = omitted; i < prefix.size(); ++i) {
        shown.push_back(op_json(recorded[partition.ops[prefix[i]].source]));
    }
    std::string message = (partition.key->empty() ? "" : *partition.key + ": ") +
                          "not linearizable against " + std::string(to_string(model));
    nlohmann::json unplaceable = nullptr;
    if (partition.result.unplaceable) {
        const RecordedOp& op = recorded[partition.ops[*partition.result.unplaceable].source];
        unplaceable = op_json(op);
        message += ": process " + std::to_string(op.process) + "'s " +
                   std::string(op_name(op.kind)) +
                   (op.status != Status::Fail ? ""
                    : op.error.empty()        ? " (failed)"
                                              : " (failed, " + op.error + ")") +
                   " (index " + std::to_string(op.invoke_index) + ") cannot be placed after " +
                   std::to_string(prefix.size()) + " ops";
    }
    nlohmann::json concurrent = nlohmann::json::array();
    for (const auto op : partition.result.concurrent) {
        if (concurrent.size() == kConcurrentShown) {
            break;
        }
        concurrent.push_back(op_json(recorded[partition.ops[op].source]));
    }
    return {{"kind", "linearizability"},
            {"key", *partition.key},
            {"message", std::move(message)},
            {"witness",
             {{"longest_prefix", std::move(shown)},
              {"longest_prefix_omitted", omitted},
              {"unplaceable", std::move(unplaceable)},
              {"concurrent", std::move(concurrent)}}}};
}

}  // namespace lockbench::checker::lin
