// sys.cpuidle — idle-state residency and entry counts, summed over the CPUs, from
// /sys/devices/system/cpu/cpu<N>/cpuidle/state<K>/{name,time,usage}
// (Documentation/admin-guide/pm/cpuidle.rst).
//
// Channels, one pair per idle state name (in the order the lowest-numbered CPU lists them,
// then states only later CPUs have):
//   sys.cpuidle:time.<state>   counter "us"    time all CPUs spent in the state, summed
//   sys.cpuidle:usage.<state>  counter "count" times any CPU entered the state, summed
// <state> is the state's "name" file sanitized (POLL, C1, C1E, C6, ...), falling back to
// "state<K>"; a name repeated within a CPU gets "_<k>". CPUs are matched by state name, so
// hybrid hosts whose core types differ in states sum each state over the CPUs that have it.
// Subsystem::cpu: time in idle states is the complement of busy time (proc.stat has it per
// CPU, every tick); it says nothing about power or temperature by itself.
//
// Cost on big hosts (issue #21): per-CPU channels were CPUs × states × 2 files read every tick
// (1792 on 224 CPUs: 6.1 ms per tick). Now only host-wide sums are published and the files
// are read in stripes (StripedRefresh, kRefreshPeriodS): hosts with at most 16 CPUs read every
// CPU every tick; bigger ones re-read each CPU about every 10 s, and the sums move as the
// stripes come in — a change shows in full within one period. The sums start from the first
// tick's readings and then add each file's increments only: a CPU taken offline stops
// adding, one that comes online (or a counter that resets) starts a new base rather than a
// jump, so the sums stay monotonic. Their rates are the signal: after a failed first read or
// a reset the absolute value is below the kernel's total. A state no CPU could ever read is
// NaN; a CPU with no cpuidle directory at open is never added later. Unavailable without a cpuidle driver (VMs: current_driver "none").
// File descriptors: CPUs × states × 2 stay open within SysfsAttr's budget.
#pragma once

#include <cstddef>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/sysfs/striped_refresh.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysCpuidleProbe final : public Probe {
 public:
  static constexpr double kRefreshPeriodS = 10.0;
  explicit SysCpuidleProbe(StripedRefresh::Clock clock = &StripedRefresh::steady_now_ns) : clock_(clock) {}

  std::string_view name() const override { return "sys.cpuidle"; }
  std::string_view description() const override {
    return "Idle-state time and entries summed over CPUs (/sys/devices/system/cpu/cpu*/cpuidle)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  struct File {
    SysfsAttr attr;
    std::size_t channel = 0;  // the sum it adds to
    double last = 0;          // last value read
    bool seen = false;        // read successfully at least once
  };
  StripedRefresh::Clock clock_;
  StripedRefresh refresh_;
  std::vector<ChannelInfo> channels_;
  std::vector<File> files_;
  std::vector<double> totals_;  // per channel: the published sum (NaN until a file was read)
  std::vector<std::size_t> cpu_begin_;  // files of CPU g: [cpu_begin_[g], cpu_begin_[g + 1])
};

}  // namespace reveal::telemetry
