#include "telemetry/registry_parts.h"
#include "telemetry/self/sampler_probe.h"

namespace reveal::telemetry {

void add_self_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<SamplerProbe>("reveal.sampler"));
}

}  // namespace reveal::telemetry
