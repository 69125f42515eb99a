// sys.net — per-interface link state and counters from /sys/class/net/<if>/
// (Documentation/ABI/testing/sysfs-class-net, sysfs-class-net-statistics).
//
// Channels, for every interface directory present at open (virtual ones and lo included),
// interfaces in name order, each with its link attributes then its counters:
//   sys.net:carrier.<if>    state "bool"  1 = carrier up, 0 = down; NaN while the interface is
//                                         administratively down (the kernel answers EINVAL)
//   sys.net:mtu.<if>        gauge "bytes"
//   sys.net:operstate.<if>  state "state" RFC 2863 ifOperStatus: up=1 down=2 testing=3
//                                         unknown=4 dormant=5 notPresent=6 lowerLayerDown=7
//   sys.net:speed.<if>      gauge "Mb/s"  NaN when unknown: -1 / 4294967295 (link down,
//                                         virtual NICs) or EINVAL (lo, interface down)
//   sys.net:<file>.<if>     counter, one per file in statistics/ in name order, except the 14
//                           that /proc/net/dev already reports (rx/tx bytes, packets, errors,
//                           dropped, fifo, compressed; multicast, collisions: proc.net.dev has
//                           them), so the detailed error breakdown: rx_crc_errors,
//                           rx_frame_errors, rx_length_errors, rx_missed_errors, rx_nohandler,
//                           rx_over_errors, tx_aborted_errors, tx_carrier_errors,
//                           tx_heartbeat_errors, tx_window_errors (and any file a newer kernel
//                           adds). Unit "bytes" (*_bytes), "packets" (*_packets), else "count".
//                           Skipping the duplicates halves this probe's reads per tick.
// An attribute file absent at open has no channel. All Subsystem::network. Files are per
// network namespace of the reading process, like /proc/net/dev.
#pragma once

#include <cstdint>

#include "reveal/probe.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysNetProbe final : public Probe {
 public:
  std::string_view name() const override { return "sys.net"; }
  std::string_view description() const override {
    return "Per-interface link state, speed, MTU and statistics counters (/sys/class/net)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

  // RFC 2863 ifOperStatus number for a /sys/class/net/<if>/operstate word; NaN if unknown.
  static double operstate_code(std::string_view word);

 private:
  enum class Decode : std::uint8_t { integer, speed, operstate };
  std::vector<ChannelInfo> channels_;
  std::vector<SysfsAttr> files_;  // one per channel
  std::vector<Decode> decode_;    // one per channel
};

}  // namespace reveal::telemetry
