#include "telemetry/cgroup/cgroup.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

// Default cgroup set, or REVEAL_CGROUP_PARENT (see cgroup/cgroup.h).
void add_cgroup_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<CgroupProbe>("cgroup"));
}

}  // namespace reveal::telemetry
