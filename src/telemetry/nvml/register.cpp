#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

// No nvml probe yet.
void add_nvml_probes(std::vector<ProbeFactory>& out) {}

}  // namespace reveal::telemetry
