// rdma — InfiniBand / RoCE / iWARP port counters and link state from
// /sys/class/infiniband/<dev>/ports/<port>/ (see port_files.h for the file formats).
//
// Channels: rdma:<field>.<dev>.<port>, e.g. "rdma:port_xmit_data.mlx5_0.1", for every device
// (natural order: mlx5_2 before mlx5_10) and port (ascending) present at open, in this order:
//   state        state, unit "enum": IB PortState 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER
//   phys_state   state, unit "enum": 5 LinkUp, 2 Polling, 3 Disabled, ... (port_files.h)
//   rate         gauge, unit "Gb/s" ("100 Gb/sec (4X EDR)" -> 100)
//   counters/*   every file that holds a number at open, by file name, ascending. Counters.
//                port_xmit_data / port_rcv_data are in 4-octet words in sysfs and are
//                multiplied by 4 here: unit "bytes". *_packets: "packets"; port_xmit_wait:
//                "ticks"; the rest "count". The legacy PMA counters (no PortCountersExtended)
//                are 32-bit (data, packets) or 8/16-bit (errors) and *saturate* rather than
//                wrap: a saturated counter reads a flat rate of 0, never a reset.
//   saturated_counters  gauge, unit "count": how many of the port's counters/ files read
//                exactly their legacy PMA maximum, 2^bits − 1 (port_files.h, pma_counter_bits:
//                255, 65535, 4294967295 ...): saturated counters no longer count, so their
//                rates read 0 while the errors go on. 0 on a healthy port; a symptom
//                (reveal/channel.h). Present when the port has such a file.
//   hw_counters/* every numeric file except "lifespan" (a setting: the driver's cache time in
//                ms, not a counter), by file name, ascending. Counters, unit "count" or
//                "packets". A name that collides with a counters/ name gets the prefix "hw_".
//   <dev>/hw_counters/* device-level driver counters (not per port), channels
//                rdma:<field>.<dev>, after the device's ports; same rules as the port's.
// Field names are the kernel's file names with every character other than letters, digits,
// '_' and '-' replaced by '_' (a space, comma or '.' in a driver's counter name), so the
// index is everything after the first '.' following ':' ("<dev>.<port>", or "<dev>").
// Subsystem::interconnect throughout.
//
// Tolerance: a file unreadable at open or not numeric there ("N/A" on iWARP devices), a
// device without counters/ (no PMA) or without hw_counters/ skips only those fields. A file
// that becomes unreadable or non-numeric later reads NaN; a device whose directory
// disappears reads NaN for its channels only (and resumes if it comes back). Ports and
// devices added after open are ignored. Some drivers fail reading "rate" while the link is
// down (EINVAL): a port down at open then has no rate channel.
//
// Cost: one pread per channel and tick. mlx5 hw_counters answers from a firmware query cached
// for "lifespan" ms (default 10), so the per-port reads of one tick share one query.
//
// Gap — PFC pause frames: RoCE priority-flow-control pause counters are not in the RDMA
// sysfs tree on mlx5 (neither ports/<n>/counters nor hw_counters) nor in the netdev's
// /sys/class/net/<if>/statistics; they exist only as ethtool statistics of the associated
// netdev (ethtool -S <if>: rx_prio<N>_pause, tx_prio<N>_pause, rx_pause_ctrl_phy, ...; the
// netdev is named in ports/<n>/gid_attrs/ndevs/0). A future ethtool probe (ETHTOOL_GSTATS
// ioctl) should cover them.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class RdmaProbe final : public Probe {
 public:
  std::string_view name() const override { return "rdma"; }
  std::string_view description() const override {
    return "InfiniBand/RoCE port counters, driver hw counters and link state "
           "(/sys/class/infiniband)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  enum class Format : std::uint8_t { enum_prefix, rate, counter };
  struct Field {  // one per channel, same order
    FileReader file;
    Format format = Format::counter;
    double scale = 1;
  };
  // A port's saturated_counters channel: the raw maxima of its legacy counters, by channel.
  struct Saturation {
    std::size_t channel = 0;
    std::vector<std::pair<std::size_t, double>> counters;  // (channel, 2^bits − 1 before scaling)
  };
  std::vector<ChannelInfo> channels_;
  std::vector<Field> fields_;  // one per file channel; the saturation channels come after them
  std::vector<Saturation> saturation_;
};

}  // namespace reveal::telemetry
