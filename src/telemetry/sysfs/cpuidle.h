// sys.cpuidle — idle-state residency and entry counts per CPU from
// /sys/devices/system/cpu/cpu<N>/cpuidle/state<K>/{name,time,usage}
// (Documentation/admin-guide/pm/cpuidle.rst).
//
// Channels, per CPU (N order) and state (K order), for every state present at open:
//   sys.cpuidle:time.cpu<N>.<state>   counter "us"    total time spent in the state
//   sys.cpuidle:usage.cpu<N>.<state>  counter "count" times the state was entered
// <state> is the state's "name" file sanitized (POLL, C1, C1E, C6, ...), falling back to
// "state<K>"; a name repeated within a CPU gets "_<k>". Subsystem::cpu: time in idle states is
// the complement of the CPU's busy time (it mirrors proc.stat:idle.cpu<N>), so a CPU fault moves
// it; it says nothing about power or temperature by itself. A CPU that goes offline reads NaN. Unavailable without a cpuidle driver (VMs: current_driver "none").
// Note: CPUs x states x 2 file descriptors stay open (2048 on 256 CPUs with 4 states).
#pragma once

#include "reveal/probe.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysCpuidleProbe final : public Probe {
 public:
  std::string_view name() const override { return "sys.cpuidle"; }
  std::string_view description() const override {
    return "Idle-state time and entries per CPU (/sys/devices/system/cpu/cpu*/cpuidle)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  std::vector<SysfsAttr> files_;  // one per channel
};

}  // namespace reveal::telemetry
