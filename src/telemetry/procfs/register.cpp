#include "telemetry/procfs/diskstats.h"
#include "telemetry/procfs/loadavg.h"
#include "telemetry/procfs/meminfo.h"
#include "telemetry/procfs/net_dev.h"
#include "telemetry/procfs/net_snmp.h"
#include "telemetry/procfs/pressure.h"
#include "telemetry/procfs/schedstat.h"
#include "telemetry/procfs/stat.h"
#include "telemetry/procfs/vmstat.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

void add_procfs_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<ProcStatProbe>("proc.stat"));
  out.push_back(registry_entry<ProcMeminfoProbe>("proc.meminfo"));
  out.push_back(registry_entry<ProcVmstatProbe>("proc.vmstat"));
  out.push_back(registry_entry<ProcPressureProbe>("proc.pressure"));
  out.push_back(registry_entry<ProcLoadavgProbe>("proc.loadavg"));
  out.push_back(registry_entry<ProcNetDevProbe>("proc.net.dev"));
  out.push_back(registry_entry<ProcNetSnmpProbe>("proc.net.snmp"));
  out.push_back(registry_entry<ProcDiskstatsProbe>("proc.diskstats"));
  out.push_back(registry_entry<ProcSchedstatProbe>("proc.schedstat"));
}

}  // namespace reveal::telemetry
