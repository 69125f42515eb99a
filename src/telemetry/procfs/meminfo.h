// proc.meminfo — every key of /proc/meminfo (proc(5), Documentation/filesystems/proc.rst).
//
// Channels: proc.meminfo:<Key> for each "Key: value [kB]" line present at open, verbatim
// kernel key (e.g. "MemAvailable", "Active(anon)"). Gauges, Subsystem::memory, unit "kB"
// when the line says kB, otherwise "count" (HugePages_Total, ...). Keys are re-found by
// name every sample: a key missing this tick is NaN, a key that appears later is ignored.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcMeminfoProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.meminfo"; }
  std::string_view description() const override {
    return "Memory usage by kind, all keys (/proc/meminfo)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  FileReader file_;
  KeyIndex keys_;
};

}  // namespace reveal::telemetry
