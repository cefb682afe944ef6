// libFuzzer's entry for a workload file as a run reads it (fuzz_targets.hpp).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "engine/fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    lockbench::fuzz::load_workload(std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
