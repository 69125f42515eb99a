// sys.cpufreq — frequency per CPU from /sys/devices/system/cpu/cpuN/cpufreq/
// (Documentation/admin-guide/pm/cpufreq.rst).
//
// Channels, every CPU with a readable file at open, ascending N, grouped by field:
//   sys.cpufreq:scaling_cur_freq.cpuN  current frequency
//   sys.cpufreq:scaling_min_freq.cpuN  lowest frequency the governor may select (policy)
//   sys.cpufreq:scaling_max_freq.cpuN  highest frequency the governor may select (policy)
// Gauges, unit "kHz", Subsystem::power_thermal. The min/max channels follow all
// scaling_cur_freq channels, so those keep their positions. A CPU taken offline reads NaN.
// Unavailable when no cpufreq driver is loaded (VMs, some containers).
#pragma once

#include "reveal/probe.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysCpufreqProbe final : public Probe {
 public:
  std::string_view name() const override { return "sys.cpufreq"; }
  std::string_view description() const override {
    return "CPU frequency and policy limits per CPU (/sys/devices/system/cpu/cpu*/cpufreq)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  std::vector<SysfsAttr> files_;  // one per channel
};

}  // namespace reveal::telemetry
