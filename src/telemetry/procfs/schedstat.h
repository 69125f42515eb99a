// proc.schedstat — run-queue time per CPU from /proc/schedstat
// (Documentation/scheduler/sched-stats.rst). From version 15 on, each online CPU has a line
//   cpu<N> yld_count 0 sched_count sched_goidle ttwu_count ttwu_local rq_cpu_time run_delay pcount
// whose last three fields are the nanoseconds tasks ran on that CPU, the nanoseconds runnable
// tasks waited in its run queue, and the number of timeslices run. Domain lines (their layout
// changed in versions 16 and 17) are ignored.
//
// Why: PSI's cpu "some" is the share of time at least one task waited, so it saturates at
// 100 % once a host is oversubscribed; run_delay keeps growing with every extra runnable task
// (its rate is the average number of tasks waiting), so contention added to an already
// saturated host still shows.
//
// Channels (fixed at open, CPUs online at open):
//   proc.schedstat:run_time, proc.schedstat:run_delay   counters, unit "ns", summed over CPUs
//   proc.schedstat:timeslices                           counter, unit "count", summed
//   proc.schedstat:run_delay.cpuN                       counter, unit "ns", per CPU
// All Subsystem::cpu. A CPU line missing or malformed in a sample (hotplug) makes that CPU's
// channel and the three sums NaN for that sample (a gap, not a drop in a counter).
// Unavailable when the file is missing (kernel without CONFIG_SCHEDSTATS), its version is
// below 15 or unknown, or it has no CPU line.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcSchedstatProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.schedstat"; }
  std::string_view description() const override {
    return "Time tasks ran and waited in each CPU's run queue (/proc/schedstat)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  FileReader file_;
  KeyIndex cpus_;            // "cpu0", "cpu1", ...: slot = that CPU's run_delay channel
  std::vector<char> seen_;   // per CPU: its line was parsed in this sample
};

}  // namespace reveal::telemetry
