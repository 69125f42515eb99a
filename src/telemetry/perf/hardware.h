// perf.hardware — PMU counters counted system-wide via perf_event_open(2): per online CPU
// one group {cycles (leader), instructions, branches, branch-misses, cache-references,
// cache-misses}, read with TOTAL_TIME_ENABLED/RUNNING, scaled by enabled/running to undo
// multiplexing, summed over CPUs.
//
// Channels (counters): perf:cycles (unit "cycles"), perf:instructions, perf:branches,
// perf:branch-misses (unit "count", Subsystem::cpu), perf:cache-references,
// perf:cache-misses (unit "count", Subsystem::memory: last-level cache traffic).
// A member event the PMU does not support is dropped from the channel list at open.
// Unavailable without a PMU (most VMs: "no PMU exposed (...)") or when refused
// (perf_event_paranoid / CAP_PERFMON). Scaled values are estimates under multiplexing and
// may step back slightly; a group that can never be scheduled (more events than counters,
// e.g. with the NMI watchdog holding one) reads NaN.
#pragma once

#include "reveal/probe.h"
#include "telemetry/perf/perf_group.h"

namespace reveal::telemetry {

class PerfHardwareProbe final : public Probe {
 public:
  std::string_view name() const override { return "perf.hardware"; }
  std::string_view description() const override {
    return "Cycles, instructions, branches, cache references/misses, system-wide (perf_event PMU)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override { groups_.read_sum(out); }

 private:
  std::vector<ChannelInfo> channels_;
  PerfGroups groups_;
};

}  // namespace reveal::telemetry
