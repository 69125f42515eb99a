// The probe registry: every probe Reveal ships, in recording order (see reveal/registry.h).
#include "reveal/registry.h"

#include "telemetry/perf/hardware.h"
#include "telemetry/perf/software.h"
#include "telemetry/procfs/diskstats.h"
#include "telemetry/procfs/loadavg.h"
#include "telemetry/procfs/meminfo.h"
#include "telemetry/procfs/net_dev.h"
#include "telemetry/procfs/net_snmp.h"
#include "telemetry/procfs/pressure.h"
#include "telemetry/procfs/stat.h"
#include "telemetry/procfs/vmstat.h"
#include "telemetry/sysfs/cpufreq.h"

namespace reveal {
namespace {
template <class P>
ProbeFactory entry(std::string name, bool enabled_by_default = true) {
  return {std::move(name), enabled_by_default, [] { return std::make_unique<P>(); }};
}
}  // namespace

const std::vector<ProbeFactory>& probe_registry() {
  using namespace telemetry;
  static const std::vector<ProbeFactory> registry{
      entry<ProcStatProbe>("proc.stat"),         entry<ProcMeminfoProbe>("proc.meminfo"),
      entry<ProcVmstatProbe>("proc.vmstat"),     entry<ProcPressureProbe>("proc.pressure"),
      entry<ProcLoadavgProbe>("proc.loadavg"),   entry<ProcNetDevProbe>("proc.net.dev"),
      entry<ProcNetSnmpProbe>("proc.net.snmp"),  entry<ProcDiskstatsProbe>("proc.diskstats"),
      entry<SysCpufreqProbe>("sys.cpufreq"),     entry<PerfSoftwareProbe>("perf.software"),
      entry<PerfHardwareProbe>("perf.hardware"),
  };
  return registry;
}

}  // namespace reveal
