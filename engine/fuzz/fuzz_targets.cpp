#include "engine/fuzz/fuzz_targets.hpp"

#include "engine/run/workload.hpp"
#include "strategies/external/adapter_registry.hpp"

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
    } catch (const AdapterUnavailable&) {
        // A lock library this build cannot run (the fuzz build makes no adapter jar): the
        // environment's answer, exit 4 on the command line, not the reader's.
        return false;
    }
}

}  // namespace lockbench::fuzz
