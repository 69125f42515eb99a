// sys.cpufreq — current frequency per CPU from
// /sys/devices/system/cpu/cpuN/cpufreq/scaling_cur_freq (Documentation/admin-guide/pm/cpufreq.rst).
//
// Channels: sys.cpufreq:scaling_cur_freq.cpuN for every CPU with a readable file at open,
// ascending N. Gauges, unit "kHz", Subsystem::power_thermal. A CPU taken offline reads NaN.
// Unavailable when no cpufreq driver is loaded (VMs, some containers).
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class SysCpufreqProbe final : public Probe {
 public:
  std::string_view name() const override { return "sys.cpufreq"; }
  std::string_view description() const override {
    return "Current CPU frequency per CPU (/sys/devices/system/cpu/cpu*/cpufreq)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  std::vector<FileReader> files_;  // one per channel
};

}  // namespace reveal::telemetry
