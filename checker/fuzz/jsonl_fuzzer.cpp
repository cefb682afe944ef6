// libFuzzer's entry for history.jsonl as `lockbench check` reads it (fuzz_targets.hpp).

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "checker/fuzz/fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    lockbench::checker::fuzz::check_jsonl_history(
        std::string_view(reinterpret_cast<const char*>(data), size));
    return 0;
}
