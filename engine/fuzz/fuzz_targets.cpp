#include "engine/fuzz/fuzz_targets.hpp"

#include "engine/run/workload.hpp"

namespace lockbench::fuzz {

bool load_workload(std::string_view text) {
    try {
        Workload workload = Workload::parse(text, "fuzz.json");
        workload.resolve();
        workload.validate();
        static_cast<void>(workload.to_json().dump(2));
        return true;
    } catch (const WorkloadError&) {
        return false;
    }
}

}  // namespace lockbench::fuzz
