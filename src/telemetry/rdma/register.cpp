#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

// No rdma probe yet.
void add_rdma_probes(std::vector<ProbeFactory>& out) {}

}  // namespace reveal::telemetry
