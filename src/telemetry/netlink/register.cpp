#include "telemetry/netlink/qdisc_probe.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

void add_netlink_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<QdiscProbe>("tc.qdisc"));
}

}  // namespace reveal::telemetry
