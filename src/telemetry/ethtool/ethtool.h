// ethtool — per-NIC driver statistics, the counters `ethtool -S <if>` prints, read with the
// SIOCETHTOOL ioctl (linux/ethtool.h): ETHTOOL_GSSET_INFO + ETHTOOL_GSTRINGS for the names of
// the ETH_SS_STATS set once at open, ETHTOOL_GSTATS at every tick. They carry what
// /proc/net/dev and /sys/class/net/<if>/statistics lack: priority flow control (PFC) and link
// pause frames (mlx5 rx_prio<N>_pause, tx_prio<N>_pause, rx_pause_ctrl_phy; ixgbe/i40e
// link_xoff_rx, ...) and NIC-level drops and errors (mlx5 rx_discards_phy, rx_out_of_buffer;
// ixgbe rx_missed_errors, ...).
//
// Interfaces: every entry of <root>/sys/class/net, in name order, that has a "device" link
// (a physical NIC: lo, bridges, bonds, veth, VLANs... have none and are skipped), whose
// <root>/sys/class/net/<if>/ifindex equals the interface's index in the network namespace of
// this process. The ioctls always talk to the live kernel, like perf_event, whatever the root:
// the ifindex check keeps a fixture or another namespace's tree (a /host mount in a container
// with its own network namespace) from being paired with a same-named live interface.
//
// Channels: ethtool:<stat>.<if>, one per selected statistic, per interface in the driver's
// order. <stat> is the driver's name sanitized (every character outside [A-Za-z0-9_+-]
// becomes '_': i40e "port.rx_dropped" -> "port_rx_dropped"; a name that then repeats gets
// "_<k>"). All Kind::counter, 64 bits, Subsystem::network (PFC and pause are network flow
// control). Unit: decided by the first of the words (split at non-alphanumerics) that is
// bytes/octets/packets/pkts: "bytes" for bytes or octets, except a size bin such as
// rx_65_to_127_bytes_phy (a number before "bytes": it counts packets) -> "packets";
// "packets" for packets or pkts; otherwise "count".
//
// Selection (drivers report hundreds, mlx5 over a thousand with per-channel stats):
//  1. per-queue statistics are dropped (is_per_queue): a word <q><N> with <q> one of rx, tx,
//     ch, q, rxq, txq, cq, sq, rq, queue, ring, rvec, channel, vec (mlx5 rx0_packets,
//     ch3_events, ptp_cq0_cqe; virtio rx0_drops; hns3 txq0_pktnum); a word queue, ring, rvec,
//     rxq, txq, q, channel, vec or ch followed by a number word (virtio/ixgbe/ice
//     rx_queue_0_bytes, ena queue_0_tx_cnt, nfp txq_0_pkts); rx or tx followed by "-<N>"
//     (i40e/sfc tx-0.tx_packets); a "[<N>]" anywhere (bnxt "[0]: rx_ucast_packets", gve
//     rx_posted_desc[0]). Per-priority counters (rx_prio0_pause, tx_pb_0_pxon,
//     rx_priority_0_xoff) and size bins (rx_64_bytes_phy) are not queues and stay. Their
//     NIC-level sums (mlx5 rx_packets, rx_xdp_drop, ...) stay too, so per-queue errors are
//     dropped with the rest.
//  2. the rest is ranked by class (classify), then driver order: pause/PFC (a name containing
//     pause, pfc, xon or xoff), then drops and errors (discard, drop, err, out_of_buffer,
//     no_buf, nobuf, no_dma, crc, miss, timeout, overflow, overrun, fifo, lost, fail, abort,
//     jabber, undersize, oversize, fragment, illegal), then per-priority traffic (prio), then
//     everything else; the first kMaxStatsPerNic are kept and the channels follow the
//     driver's order. Matching ignores case.
//
// Errors: open() is unavailable with a one-line reason when <root>/sys/class/net is missing,
// when it lists no physical NIC, when the control socket cannot be made, or when no NIC gives
// a channel; the reason then names each NIC's failure, e.g. "eth1: no driver statistics
// (ETHTOOL_GSTRINGS: Operation not supported)", "eth0: only per-queue statistics (20)",
// "eth2: not an interface of this network namespace (ifindex differs from
// <root>/sys/class/net/eth2/ifindex)". One NIC failing never drops its siblings. At a tick,
// a NIC whose GSTATS fails (interface gone: ENODEV) reads NaN for all its channels. A NIC whose
// driver now reports a different number of statistics (mlx5 adds strings for good when more
// channels or traffic classes are configured or AF_XDP is used; virtio_net's follow its queue
// pairs; a driver reload) has its names read again (GSTRINGS, once per new count) and each kept
// statistic found again by its name: it keeps reading; one the driver no longer has is NaN.
//
// Cost per NIC and tick: two ioctls (GSSET_INFO, GSTATS) under the kernel's RTNL lock; the
// driver may query firmware for GSTATS (mlx5: a few commands, about a millisecond). sample()
// allocates nothing (one socket for the probe's lifetime, one preallocated ethtool_stats
// buffer per NIC, the ifreq on the stack) except when a driver's count changes: the names
// read again and the buffer sized anew, once per new count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/ethtool/ethtool_io.h"

namespace reveal::telemetry {

class EthtoolProbe final : public Probe {
 public:
  static constexpr std::size_t kMaxStatsPerNic = 160;
  enum class StatClass : std::uint8_t { pause, drop_error, priority, other };  // rank order

  EthtoolProbe();                                 // the live kernel
  explicit EthtoolProbe(EthtoolIo& io) : io_(&io) {}  // a double (tests); must outlive the probe
  ~EthtoolProbe() override;

  std::string_view name() const override { return "ethtool"; }
  std::string_view description() const override {
    return "NIC driver statistics: PFC/pause frames, NIC-level drops and errors (ethtool -S, "
           "SIOCETHTOOL ioctl)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

  // The selection rule above, for the driver's raw statistic names.
  static bool is_per_queue(std::string_view stat);
  static StatClass classify(std::string_view stat);
  static std::string_view unit_of(std::string_view stat);
  // Indices of the kept statistics, ascending (driver order).
  static std::vector<std::size_t> select(const std::vector<std::string>& stats,
                                         std::size_t cap = kMaxStatsPerNic);

 private:
  static constexpr std::uint32_t kGone = 0xffffffffu;  // a kept statistic the driver no longer has
  struct Nic {
    std::string ifname;
    std::size_t first = 0;             // its first channel
    std::vector<std::uint32_t> pick;   // driver value index per channel (kGone: none now)
    std::vector<std::string> raw;      // the driver's name of each channel's statistic
    EthtoolStatsBuffer buf;            // sized to the driver's count (at open, then at a re-map)
    std::size_t remapped_for = 0;      // the count names were last read again for (0: none)
  };
  // Reads the NIC's names again and finds each kept statistic by its name (the k-th of
  // equal names stays the k-th); the buffer takes the new count. False, nothing changed, when
  // the names cannot be read (EAGAIN while the count still changes). Allocates.
  bool remap(Nic& nic);
  std::unique_ptr<EthtoolIo> owned_;
  EthtoolIo* io_ = nullptr;
  std::vector<ChannelInfo> channels_;
  std::vector<Nic> nics_;
};

}  // namespace reveal::telemetry
