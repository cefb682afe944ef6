#pragma once

// The lock libraries lockbench drives through adapter processes (PROTOCOL.md): the shipped
// adapters by strategy name, a user's own (`command:<command line>`, from --client-command), and
// what each says of itself when probed (an `init` with no servers, before anything is deployed).
//
// Files resolve against the source tree (scripts) and the build tree (the Curator jar), both
// compiled in as LOCKBENCH_SOURCE_DIR and LOCKBENCH_BINARY_DIR: lockbench runs from its build.

#include <filesystem>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "strategies/strategy.hpp"

namespace lockbench {

// An adapter that cannot run here (runtime or file missing, no answer to the probe): running
// it is an environment failure (exit 4), and `lockbench strategies` lists it with the reason.
class AdapterUnavailable : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

struct AdapterSpec {
    std::string name;     // the strategy name
    std::string summary;  // one line for `lockbench strategies`
    std::vector<std::string> argv;
    // Files that must exist for it to run (its script, its jar, its node_modules), each with
    // what provides it.
    std::vector<std::pair<std::filesystem::path, std::string>> needs;
};

// What an adapter said in its probe's init_ok.
struct AdapterProbe {
    std::string library;
    std::string version;
    std::vector<std::string> services;  // redis | redis-masters | zookeeper | etcd
    Capabilities capabilities;
    bool lost_signal = false;
    bool concurrent = false;
};

inline constexpr std::string_view kCommandPrefix = "command:";

const std::vector<AdapterSpec>& shipped_adapters();
// A shipped adapter, or `command:<command line>`; nothing for any other name.
std::optional<AdapterSpec> find_adapter(std::string_view strategy_name);
// Why `spec` cannot run here (a missing runtime or file), or nothing.
std::optional<std::string> missing_for(const AdapterSpec& spec);
// Probes once per lockbench process and remembers the answer (thread-safe). Throws
// AdapterUnavailable.
const AdapterProbe& probe_adapter(const AdapterSpec& spec);
// The probe's answer read strictly; throws AdapterUnavailable naming what is wrong.
AdapterProbe parse_probe(const std::string& adapter, const nlohmann::json& init_ok);

}  // namespace lockbench
