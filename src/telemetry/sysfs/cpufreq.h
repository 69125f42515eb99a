// sys.cpufreq — CPU frequency and policy limits over all CPUs, from
// /sys/devices/system/cpu/cpuN/cpufreq/{scaling_cur_freq,scaling_min_freq,scaling_max_freq}
// (Documentation/admin-guide/pm/cpufreq.rst).
//
// Channels (gauges, unit "kHz", Subsystem::power_thermal), each present when at least one CPU
// has a readable file of its field at open:
//   sys.cpufreq:scaling_cur_freq_mean  mean current frequency over the CPUs
//   sys.cpufreq:scaling_cur_freq_min   lowest current frequency (one throttled core or socket)
//   sys.cpufreq:scaling_cur_freq_max   highest current frequency
//   sys.cpufreq:scaling_min_freq_max   highest policy floor any CPU has (a raised minimum)
//   sys.cpufreq:scaling_max_freq_min   lowest policy cap any CPU has (a lowered maximum)
// Over the CPUs whose file was read at their last turn; a CPU whose file cannot be read (taken
// offline) counts for nothing from its next turn (at once on hosts of at most 16 CPUs, within
// kRefreshPeriodS on bigger ones) until it reads again; NaN when no CPU can be read. A CPU with
// no cpufreq directory at open is never added later.
//
// Cost on big hosts (issue #21): per-CPU channels were 3 files × CPUs read every tick (672 on
// 224 CPUs: 2.4 ms per tick). Files are read in stripes (StripedRefresh, kRefreshPeriodS):
// hosts with at most 16 CPUs read every CPU every tick; bigger ones re-read each CPU about
// every 5 s and aggregate the latest reading of every CPU. Unavailable when no cpufreq driver
// is loaded (VMs, some containers).
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/sysfs/striped_refresh.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysCpufreqProbe final : public Probe {
 public:
  static constexpr double kRefreshPeriodS = 5.0;
  explicit SysCpufreqProbe(StripedRefresh::Clock clock = &StripedRefresh::steady_now_ns) : clock_(clock) {}

  std::string_view name() const override { return "sys.cpufreq"; }
  std::string_view description() const override {
    return "CPU frequency (mean, min, max) and policy limits over CPUs (/sys/devices/system/cpu/cpu*/cpufreq)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  enum Field : std::size_t { kCur, kMin, kMax, kFields };
  enum Stat : std::size_t { kCurMean, kCurMin, kCurMax, kMinMax, kMaxMin, kStats };
  struct Cpu {
    std::array<SysfsAttr, kFields> attr;
    std::array<bool, kFields> open{};
    std::array<double, kFields> last{};  // NaN: not read (yet, or failing)
  };
  StripedRefresh::Clock clock_;
  StripedRefresh refresh_;
  std::vector<ChannelInfo> channels_;
  std::array<std::ptrdiff_t, kStats> slot_{};  // output position of each statistic, -1: absent
  std::vector<Cpu> cpus_;
};

}  // namespace reveal::telemetry
