// proc.diskstats — per block device I/O statistics from /proc/diskstats
// (Documentation/admin-guide/iostats.rst): "major minor name" then 11 fields (pre-4.18),
// 15 (4.18+: discards) or 17 (5.5+: flushes); extra trailing fields are ignored. Partition
// lines of kernels before 2.6.25 have 4 fields (reads, sectors read, writes, sectors written):
// those four channels. Lines of any other shape are skipped.
//
// Channels: proc.diskstats:<field>.<device>, e.g. "proc.diskstats:sectors_read.vda", for every
// device present at open except loop* and ram*. Fields: reads_completed reads_merged
// sectors_read read_time_ms writes_completed writes_merged sectors_written write_time_ms
// ios_in_progress io_time_ms weighted_io_time_ms [discards_completed discards_merged
// sectors_discarded discard_time_ms] [flush_completed flush_time_ms].
// Counters (ios_in_progress: gauge); unit "count", "sectors" (512 bytes, whatever the
// device's block size) or "ms"; Subsystem::storage, except zram<N> devices: Subsystem::memory
// (compressed RAM; their writes are swap-outs on a host with zram swap, the usual use, or a
// RAM disk's data: no storage device is involved). Partitions are kept as listed.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcDiskstatsProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.diskstats"; }
  std::string_view description() const override {
    return "Per block device reads, writes, sectors, queue time (/proc/diskstats)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  FileReader file_;
  KeyIndex devices_;
};

}  // namespace reveal::telemetry
