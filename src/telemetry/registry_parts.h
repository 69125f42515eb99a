// Each telemetry source folder registers its probes here, so that folders can grow
// independently. Called in this order by probe_registry(); the order is the channel order of
// a recording, so append new probes at the end of a source's list.
#pragma once

#include <vector>

#include "reveal/registry.h"

namespace reveal::telemetry {

void add_procfs_probes(std::vector<ProbeFactory>& out);  // src/telemetry/procfs/register.cpp
void add_sysfs_probes(std::vector<ProbeFactory>& out);   // src/telemetry/sysfs/register.cpp
void add_ethtool_probes(std::vector<ProbeFactory>& out); // src/telemetry/ethtool/register.cpp
void add_netlink_probes(std::vector<ProbeFactory>& out); // src/telemetry/netlink/register.cpp
void add_rdma_probes(std::vector<ProbeFactory>& out);    // src/telemetry/rdma/register.cpp
void add_cgroup_probes(std::vector<ProbeFactory>& out);  // src/telemetry/cgroup/register.cpp
void add_nvml_probes(std::vector<ProbeFactory>& out);    // src/telemetry/nvml/register.cpp
void add_perf_probes(std::vector<ProbeFactory>& out);    // src/telemetry/perf/register.cpp
void add_self_probes(std::vector<ProbeFactory>& out);    // src/telemetry/self/register.cpp

template <class P>
ProbeFactory registry_entry(std::string name, bool enabled_by_default = true) {
  return {std::move(name), enabled_by_default, [] { return std::make_unique<P>(); }};
}

}  // namespace reveal::telemetry
