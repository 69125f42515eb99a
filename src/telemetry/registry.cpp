// The probe registry: every probe Reveal ships, in recording order (see reveal/registry.h).
#include "reveal/registry.h"

#include "telemetry/registry_parts.h"

namespace reveal {

const std::vector<ProbeFactory>& probe_registry() {
  using namespace telemetry;
  static const std::vector<ProbeFactory> registry = [] {
    std::vector<ProbeFactory> r;
    add_procfs_probes(r);
    add_sysfs_probes(r);
    add_ethtool_probes(r);
    add_netlink_probes(r);
    add_rdma_probes(r);
    add_cgroup_probes(r);
    add_nvml_probes(r);
    add_perf_probes(r);
    add_self_probes(r);  // last: its channels come after those of the host
    return r;
  }();
  return registry;
}

}  // namespace reveal
