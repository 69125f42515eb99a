// perf.software — kernel software events counted system-wide via perf_event_open(2):
// one group per online CPU (pid = -1), summed over CPUs.
//
// Channels (counters, unit "count"):
//   perf:context-switches  Subsystem::cpu
//   perf:cpu-migrations    Subsystem::cpu
//   perf:page-faults       Subsystem::memory
// The channel source is "perf" (shared with perf.hardware) while the probe is named
// "perf.software" so the two can be enabled separately. Counts the live kernel whatever
// the root; the root only supplies sys/devices/system/cpu/online (falls back to /sys).
// Unavailable with the reason when perf_event_open is refused (perf_event_paranoid,
// missing CAP_PERFMON, seccomp in containers).
#pragma once

#include "reveal/probe.h"
#include "telemetry/perf/perf_group.h"

namespace reveal::telemetry {

class PerfSoftwareProbe final : public Probe {
 public:
  std::string_view name() const override { return "perf.software"; }
  std::string_view description() const override {
    return "Context switches, CPU migrations, page faults, system-wide (perf_event software)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override { groups_.read(out); }

 private:
  std::vector<ChannelInfo> channels_;
  PerfGroups groups_;
};

}  // namespace reveal::telemetry
