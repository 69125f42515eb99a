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
//
// Two ways to read the same values, chosen at open() (channel names, units, help and values
// do not depend on it):
//  * sysfs: one pread per channel per tick (SysfsAttr). Always used for speed (netlink has no
//    link speed), for fixture roots and other mounts, and whenever netlink is not usable.
//  * rtnetlink: one RTM_GETLINK dump per tick for all interfaces (telemetry/netlink/rtnl_link.h)
//    serves carrier, mtu, operstate and the statistics counters: on the 2-core dev VM with 4
//    interfaces, ~60 us of CPU for the dump against ~3-5 us per pread, i.e. sys.net fell from
//    ~245 to ~75 us per tick (bench/sampling/sample_cost.cpp). Used when all of these hold at open(): the probe was not made
//    sysfs-only, <root>/sys/class/net is the live /sys/class/net (same inode), the socket opens
//    and a first dump succeeds, and every interface directory there is in that dump under the
//    same name with the ifindex its ifindex file shows. The last check is all or nothing:
//    a mismatch means /sys shows another network namespace than the socket's (a host /sys
//    bind-mounted into a container), where a same-named interface with the same index
//    (lo is 1 everywhere) would be another device. A channel stays on sysfs when the first
//    dump lacks its attribute, or for a statistics file with no rtnl_link_stats64 field or
//    one beyond the payload the kernel sent.
//    Same values as sysfs: carrier is NaN while the interface is not IFF_UP (sysfs: EINVAL),
//    operstate maps IF_OPER_* to the codes above, counters are the same dev_get_stats() sums.
//    Dump records are matched to interfaces by ifindex (a renamed interface keeps its
//    channels); an interface missing from a complete dump reads NaN on its netlink channels
//    that tick, and when one of that name comes back with a new index (driver reload,
//    re-created veth) it takes the channels over from the next complete dump on, as sysfs
//    paths would. A failed dump makes every netlink channel NaN that tick (sysfs channels
//    unaffected) and is retried at the next tick on a fresh socket.
// sample() allocates nothing on either path.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "reveal/probe.h"
#include "telemetry/netlink/rtnl_link.h"
#include "telemetry/sysfs/sysfs_attr.h"

namespace reveal::telemetry {

class SysNetProbe final : public Probe {
 public:
  enum class Path : std::uint8_t { automatic, sysfs_only };

  SysNetProbe() : SysNetProbe(Path::automatic) {}
  // sysfs_only: never netlink (e.g. to compare both paths on one host).
  explicit SysNetProbe(Path path);
  // A scripted rtnetlink double (tests) that stands for the kernel whose namespace `root`
  // shows: the live-/sys check is skipped, the ifindex check is not. Must outlive the probe.
  explicit SysNetProbe(RtnlIo& io);
  ~SysNetProbe() override;

  std::string_view name() const override { return "sys.net"; }
  std::string_view description() const override {
    return "Per-interface link state, speed, MTU and statistics counters (/sys/class/net)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

  // How many channels the last open() put on the netlink dump (0: all on sysfs), and why
  // none, in one line (empty when some are).
  std::size_t netlink_channels() const { return nl_reads_.size(); }
  const std::string& sysfs_only_reason() const { return sysfs_only_reason_; }

  // RFC 2863 ifOperStatus number for a /sys/class/net/<if>/operstate word; NaN if unknown.
  static double operstate_code(std::string_view word);
  // The same for an IF_OPER_* value of linux/if.h (IFLA_OPERSTATE); NaN if unknown.
  static double if_oper_code(std::uint8_t if_oper);

 private:
  enum class Decode : std::uint8_t { integer, speed, operstate };
  // A channel's attribute in /sys/class/net/<if>/ (field: carrier, mtu, operstate, speed or a
  // statistics file name), kept from discovery until the path is chosen.
  struct Found {
    std::size_t iface;  // index into the interface names of open()
    std::string field;
    bool statistic;     // a file of statistics/
  };
  struct SysfsRead {
    std::uint32_t channel;
    Decode decode;
    SysfsAttr file;
  };
  enum class NlField : std::uint8_t { carrier, mtu, operstate, stat };
  struct NlRead {
    std::uint32_t channel;
    NlField field;
    std::uint8_t stat;  // NlField::stat: index in rtnl_link_stats64
  };
  struct NlLink {
    std::string ifname;
    std::int32_t ifindex = 0;
    std::uint32_t first = 0, last = 0;  // its reads: nl_reads_[first, last)
    bool seen = false;                  // in the dump being read
    bool present = true;                // in the last complete dump
  };

  // Moves what the dump can serve from sysfs_ to nl_reads_ when netlink is usable (see above);
  // otherwise sets sysfs_only_reason_ and leaves everything on sysfs.
  void choose_netlink(const std::filesystem::path& base, const std::vector<std::string>& ifaces,
                      const std::vector<Found>& found);
  void sample_netlink(std::span<double> out);
  NlLink* link_for(const RtnlLinkRecord& r);
  static double value_of(const NlRead& read, const RtnlLinkRecord& r);

  std::unique_ptr<RtnlLinkDumper> rtnl_;  // null: sysfs only
  bool check_live_ = true;
  std::vector<ChannelInfo> channels_;
  std::vector<SysfsRead> sysfs_;
  std::vector<NlRead> nl_reads_;
  std::vector<NlLink> links_;  // ifname order
  std::vector<std::pair<std::int32_t, std::uint32_t>> by_ifindex_;  // (ifindex, links_ index), sorted
  std::string sysfs_only_reason_;
};

}  // namespace reveal::telemetry
