// The probe registry: every probe Reveal ships, in recording order (see reveal/registry.h).
#include "reveal/registry.h"

#include "telemetry/perf/hardware.h"
#include "telemetry/perf/software.h"
#include "telemetry/perf/uncore.h"
#include "telemetry/procfs/diskstats.h"
#include "telemetry/procfs/loadavg.h"
#include "telemetry/procfs/meminfo.h"
#include "telemetry/procfs/net_dev.h"
#include "telemetry/procfs/net_snmp.h"
#include "telemetry/procfs/pressure.h"
#include "telemetry/procfs/stat.h"
#include "telemetry/procfs/vmstat.h"
#include "telemetry/registry_parts.h"

namespace reveal {

const std::vector<ProbeFactory>& probe_registry() {
  using namespace telemetry;
  static const std::vector<ProbeFactory> registry = [] {
    std::vector<ProbeFactory> r{
        registry_entry<ProcStatProbe>("proc.stat"),       registry_entry<ProcMeminfoProbe>("proc.meminfo"),
        registry_entry<ProcVmstatProbe>("proc.vmstat"),   registry_entry<ProcPressureProbe>("proc.pressure"),
        registry_entry<ProcLoadavgProbe>("proc.loadavg"), registry_entry<ProcNetDevProbe>("proc.net.dev"),
        registry_entry<ProcNetSnmpProbe>("proc.net.snmp"), registry_entry<ProcDiskstatsProbe>("proc.diskstats"),
    };
    add_sysfs_probes(r);
    add_ethtool_probes(r);
    add_rdma_probes(r);
    add_cgroup_probes(r);
    add_nvml_probes(r);
    r.push_back(registry_entry<PerfSoftwareProbe>("perf.software"));
    r.push_back(registry_entry<PerfHardwareProbe>("perf.hardware"));
    r.push_back(registry_entry<PerfUncoreProbe>("perf.uncore"));
    return r;
  }();
  return registry;
}

}  // namespace reveal
