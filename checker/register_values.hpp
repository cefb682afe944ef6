#pragma once

// What a register op writes and what it saw, as both passes that run before the search
// (register_refutation.cpp, unique_values.cpp) read it: one reading, so the two cannot drift.

#include <cstddef>
#include <cstdint>
#include <optional>

#include "checker/linearizability_partition.hpp"
#include "checker/models.hpp"  // mix_hash

namespace lockbench::checker::lin::register_values {

// A register's content: nil (absent) or a number.
struct Value {
    bool nil = true;
    std::int64_t number = 0;
    friend bool operator==(const Value&, const Value&) = default;
};
struct ValueHash {
    std::size_t operator()(const Value& v) const {
        return v.nil ? 0x6e696cULL : mix_hash(static_cast<std::uint64_t>(v.number) + 1);
    }
};

inline bool is_ok(const SearchOp& op) {
    return op.op.outcome == OpOutcome::Ok;
}
// Ops that may write a value: writes, and cas ops that succeeded or are in doubt.
inline bool may_write(const SearchOp& op) {
    return op.op.kind == OpKind::Write ||
           (op.op.kind == OpKind::Cas && op.op.outcome != OpOutcome::Observation);
}
inline Value written_value(const SearchOp& op) {
    return {false, op.op.kind == OpKind::Write ? op.op.value : op.op.cas_to};
}
// The value an ok read or ok cas saw (needed the register to hold), if `op` is such an observer.
inline std::optional<Value> observed_value(const SearchOp& op) {
    if (!is_ok(op)) {
        return std::nullopt;
    }
    if (op.op.kind == OpKind::Read) {
        return Value{op.op.read_nil, op.op.read_nil ? 0 : op.op.value};
    }
    if (op.op.kind == OpKind::Cas) {
        return Value{false, op.op.value};
    }
    return std::nullopt;
}

}  // namespace lockbench::checker::lin::register_values
