#pragma once

// Linearizability by a Wing-Gong-Lowe search with memoisation of (linearized set, model state),
// partitioned per key and run in parallel across partitions (Lowe 2017; Porcupine's design).
// `fail` and `info` follow checker/HISTORY.md: a fail is an observation only when its error names
// the model's failure condition (an acquire refused as "held", a release answered "not-held", a
// cas "mismatch"), any other fail did not happen; an `info` op, and one still in flight at the
// end, may take effect at any time after its invoke, or never. The lock models are lease locks:
// a grant may end when the lease its acquire asked for runs out.

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "checker/history.hpp"

namespace lockbench::checker {

enum class Model { None, Mutex, RwLock, Register, UnownedMutex };
// "none", "mutex", "rwlock", "register" (also "cas-register"), "unowned-mutex"
std::optional<Model> parse_model(std::string_view name);
std::string_view to_string(Model model);

struct LinearizabilityOptions {
    std::chrono::duration<double> time_limit{30.0};         // then the answer is "unknown"
    std::size_t memory_limit_bytes = std::size_t{2} << 30;  // then the answer is "unknown"
    unsigned threads = 0;                                   // 0: std::thread::hardware_concurrency
    // Every failed conditional op (cas, acquire, release) observed its condition, whatever its
    // error says - as a checker written for a store whose conditional ops fail only on a
    // mismatch reads that store's failures. Default: only a fail whose error names the condition.
    bool every_fail_observes = false;
    // The register's value before the first op (nullopt: nil, as Knossos's (cas-register)).
    std::optional<std::int64_t> initial_value;
    // Off: Lowe's WGL search with memoisation alone, without our prunings (benchmarks only).
    bool prune = true;
    // Register: decide what needs no search before searching - refute an impossible or stale
    // read (register_refutation.cpp), build a linearization of unique values (unique_values.cpp).
    // Mutex and rwlock: build a linearization from the grants' tokens (lock_tokens.cpp,
    // rwlock_tokens.cpp), and where that is stuck refute a definite contradiction
    // (lock_refutation.cpp).
    // Off: the search alone (benchmarks and the cross-check of the passes).
    bool refute = true;
    // Mutex: leave out of the search the in-doubt acquires no linearization needs
    // (lock_tokens.cpp). Off: benchmarks and the cross-check.
    bool drop_unneeded_acquires = true;
};

// Fed every event of a history (nemesis events included; it ignores what its model does not
// use): mutex and rwlock take acquire/release ops, register takes read/write/cas ops, each
// partitioned by key. Memory grows with the ops it keeps, which checks 1-4 never need.
class LinearizabilityChecker {
  public:
    explicit LinearizabilityChecker(Model model);
    ~LinearizabilityChecker();
    LinearizabilityChecker(LinearizabilityChecker&&) noexcept;
    LinearizabilityChecker& operator=(LinearizabilityChecker&&) noexcept;

    void on_event(const Event& event);

    // Runs the search. Returns
    //   {"valid": true|false|"unknown"|"not-applicable" (no op of the model), "model": "...",
    //    "keys": N, "ops": N, "elapsed_s": x,
    //    "keys_without_search": N (register keys decided by register_refutation.hpp or
    //                              unique_values.hpp, lock keys by lock_tokens.hpp,
    //                              rwlock_tokens.hpp or lock_refutation.hpp: the search did not
    //                              run on them),
    //    "acquires_dropped": N (mutex: in-doubt acquires left out of the search, lock_tokens.hpp),
    //    "reason": "..." (unknown: "time limit" or "memory limit"; "not-applicable": why),
    //    "partial": [...] (unknown: how far the search got on each key it gave up on; see
    //                      lin::partial_json),
    //    "processes": [...] (of the unplaceable ops and the ops concurrent with them),
    //    "violations": [ {"kind": "linearizability", "key": "...",
    //                      "message": "one readable line",
    //                      "witness": {"longest_prefix": [ops...], "unplaceable": op,
    //                                  "concurrent": [ops...] (the first 10 whose intervals
    //                                  overlap the unplaceable op's)}} ]}
    // A key refuted before the search (register_refutation.cpp, lock_refutation.cpp) has the same
    // shape with an empty longest_prefix, plus "refuted_by": "unwritten-value"|"stale-read"|
    // "release-without-grant"|"refused-while-free"|"granted-while-held"|"not-held-while-held" and
    // "proof":
    // [{"role": "...", "op": op}] (the ops the argument uses).
    // where an op is {"process", "f", "value", "output", "invoke_index", "complete_index",
    // "status": "ok"|"fail"|"info"}. false beats unknown beats true across keys.
    nlohmann::json check(const LinearizabilityOptions& options);

  private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

}  // namespace lockbench::checker
