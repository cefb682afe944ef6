#include "engine/results/fault_records.hpp"

namespace lockbench {

using json = nlohmann::json;

json FaultWindow::to_json() const {
    return json{{"fault", fault},
                {"target", target},
                {"start_s", start_s},
                {"end_s", end_s ? json(*end_s) : json(nullptr)}};
}

bool FaultFiring::aimed_at_holder() const {
    return target.is_object() && target.contains("holder");
}

json FaultFiring::to_json() const {
    json entry{{"fault", fault},
               {"target", target},
               {"at_s", at_s},
               {"due", due},
               {"took_effect", took_effect},
               {"missed", missed ? json(*missed) : json(nullptr)}};
    if (point)
        entry["point"] = *point;
    if (processes)
        entry["processes"] = *processes;
    return entry;
}

}  // namespace lockbench
