#include "telemetry/rdma/rdma.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

void add_rdma_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<RdmaProbe>("rdma"));
}

}  // namespace reveal::telemetry
