#include "telemetry/perf/hardware.h"
#include "telemetry/perf/software.h"
#include "telemetry/perf/uncore.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

void add_perf_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<PerfSoftwareProbe>("perf.software"));
  out.push_back(registry_entry<PerfHardwareProbe>("perf.hardware"));
  out.push_back(registry_entry<PerfUncoreProbe>("perf.uncore"));
}

}  // namespace reveal::telemetry
