#include "telemetry/ethtool/ethtool.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

void add_ethtool_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<EthtoolProbe>("ethtool"));
}

}  // namespace reveal::telemetry
