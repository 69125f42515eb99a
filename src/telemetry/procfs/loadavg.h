// proc.loadavg — /proc/loadavg: "1.03 0.45 0.17 1/82 5213" (proc(5)).
//
// Channels (gauges, Subsystem::cpu):
//   proc.loadavg:load1, load5, load15  run-queue load averages over 1/5/15 min, unit "count"
//   proc.loadavg:running               runnable scheduling entities now (field 4, before '/')
//   proc.loadavg:threads               scheduling entities that exist (field 4, after '/')
// The last field (most recent PID) is not a signal and is ignored.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcLoadavgProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.loadavg"; }
  std::string_view description() const override {
    return "Load averages and runnable/total threads (/proc/loadavg)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  FileReader file_;
};

}  // namespace reveal::telemetry
