// proc.net.dev — per-interface traffic counters from /proc/net/dev (two header lines, then
// "  eth0: rx_bytes rx_packets ... tx_compressed", 8 receive + 8 transmit columns).
//
// Channels: proc.net.dev:<column>.<interface>, e.g. "proc.net.dev:rx_bytes.eth0", for every
// interface present at open; a name with ':' (an alias, "bond0:1") is kept whole. Columns: rx_/tx_ bytes packets errs drop fifo, rx_frame
// rx_compressed rx_multicast, tx_colls tx_carrier tx_compressed. Counters, unit "bytes"
// (*_bytes), "packets" (*_packets) or "count"; Subsystem::network. counter_bits is 32 on a
// 32-bit kernel (its net_device_stats are unsigned longs: the counters wrap at 2^32, and the
// rate stage corrects such a wrap; the kernel's architecture is <root>/proc/sys/kernel/arch,
// else uname(2) when root is "/"), else 64: some 64-bit drivers also wrap at 32 bits, which the
// rate stage then takes for a reset (a gap), as the width is not known.
// The file is per network namespace (of the reading process).
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcNetDevProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.net.dev"; }
  std::string_view description() const override {
    return "Per-interface bytes, packets, errors, drops (/proc/net/dev)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  std::vector<ChannelInfo> channels_;
  FileReader file_;
  KeyIndex ifaces_;
};

}  // namespace reveal::telemetry
