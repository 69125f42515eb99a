#include "telemetry/cgroup/cgroup.h"
#include "telemetry/cgroup/throttling.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

// Default cgroup set, or REVEAL_CGROUP_PARENT (see cgroup/cgroup.h).
void add_cgroup_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<CgroupProbe>("cgroup"));
  // CPU quota throttling over every limited cgroup, v2 or v1, followed as they come and go.
  out.push_back(registry_entry<CpuThrottlingProbe>("cgroup.throttling"));
}

}  // namespace reveal::telemetry
