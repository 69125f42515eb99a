#include "telemetry/registry_parts.h"
#include "telemetry/sysfs/cpufreq.h"
#include "telemetry/sysfs/cpuidle.h"
#include "telemetry/sysfs/hwmon.h"
#include "telemetry/sysfs/net.h"
#include "telemetry/sysfs/rapl.h"
#include "telemetry/sysfs/thermal.h"

namespace reveal::telemetry {

void add_sysfs_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<SysCpufreqProbe>("sys.cpufreq"));
  out.push_back(registry_entry<SysNetProbe>("sys.net"));
  out.push_back(registry_entry<SysRaplProbe>("sys.rapl"));
  out.push_back(registry_entry<SysHwmonProbe>("sys.hwmon"));
  out.push_back(registry_entry<SysThermalProbe>("sys.thermal"));
  out.push_back(registry_entry<SysCpuidleProbe>("sys.cpuidle"));
}

}  // namespace reveal::telemetry
