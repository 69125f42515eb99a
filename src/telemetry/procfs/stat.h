// proc.stat — CPU time per state and scheduler totals from /proc/stat (proc(5)).
//
// Channels (fixed at open, only columns present on this kernel):
//   proc.stat:<state>[.cpuN]  state ∈ user nice system idle iowait irq softirq steal;
//                             counter, unit "ticks" (USER_HZ), host total has no index
//   proc.stat:ctxt, proc.stat:processes          counters (context switches, forks)
//   proc.stat:procs_running, proc.stat:procs_blocked   gauges
// All Subsystem::cpu. guest/guest_nice (already included in user/nice) and columns a
// newer kernel may append are ignored. CPUs absent at open (hotplug) are ignored.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcStatProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.stat"; }
  std::string_view description() const override {
    return "CPU time per state, host and per CPU; context switches, forks (/proc/stat)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  FileReader file_;
  KeyIndex lines_;  // line key ("cpu", "cpu3", "ctxt", ...) -> slots
};

}  // namespace reveal::telemetry
