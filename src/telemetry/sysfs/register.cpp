#include "telemetry/registry_parts.h"
#include "telemetry/sysfs/cpufreq.h"

namespace reveal::telemetry {

void add_sysfs_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<SysCpufreqProbe>("sys.cpufreq"));
}

}  // namespace reveal::telemetry
