// libFuzzer's entry for Jepsen's history.edn as `lockbench check` reads it (fuzz_targets.hpp).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checker/fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    lockbench::checker::fuzz::check_edn_history(
        std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
