// proc.vmstat — every field of /proc/vmstat (virtual memory statistics, "key value" lines).
//
// Channels: proc.vmstat:<key> for each key present at open.
//   nr_*            gauges, unit "pages" (current counts of pages in a state)
//   pgpgin/pgpgout  counters, unit "kB" (KiB paged in/out from block devices), Subsystem::storage
//   everything else counters, unit "count" (pgfault, pgmajfault, pswpin, ...)
// Subsystem::memory unless noted. Each line is first matched against the key that followed the
// previous one at open (KeyIndex::match_next); a key is looked up by name only where lines were
// added, removed or moved since.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcVmstatProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.vmstat"; }
  std::string_view description() const override {
    return "Virtual memory event counters and page-state gauges (/proc/vmstat)";
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
