#include "telemetry/nvml/nvml_probe.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

void add_nvml_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<NvmlProbe>("nvml"));
}

}  // namespace reveal::telemetry
