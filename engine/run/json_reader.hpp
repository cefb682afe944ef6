#pragma once

// Workload and fault files are read strictly (finish() rejects unknown fields) with the project's
// one JSON object reader; errors are WorkloadErrors naming the file and the JSON path.

#include "checker/json_object.hpp"
#include "engine/run/workload.hpp"

namespace lockbench {

using json_input::type_name;
using ObjectReader = json_input::JsonObject<WorkloadError>;

}  // namespace lockbench
