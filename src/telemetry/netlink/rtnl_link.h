// rtnl_link — the link table of the calling process's network namespace in one request: an
// RTM_GETLINK dump over a NETLINK_ROUTE socket (rtnetlink(7), netlink(7); message and attribute
// layout: include/uapi/linux/netlink.h, rtnetlink.h, if_link.h). One dump answers for every
// interface what sysfs answers with one pread per attribute file and interface: flags, MTU,
// operational state, carrier and the 64-bit statistics (not the link speed, which only sysfs
// and ethtool give).
//
// Built on rtnl_dump.h (the socket, the dump loop, the message walk):
//  * parse_rtnl_link_datagram(): a pure parser of one received datagram (tested with
//    hand-built bytes). It yields an RtnlLinkRecord per RTM_NEWLINK message and never
//    allocates or reads outside the given bytes, whatever they hold.
//  * RtnlLinkDumper: RTM_GETLINK dumps over an RtnlDumper; dump() never allocates.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "telemetry/netlink/rtnl_dump.h"

namespace reveal::telemetry {

// One interface, as one RTM_NEWLINK message of a dump describes it. Views into the datagram:
// valid only during the visitor call that receives it.
struct RtnlLinkRecord {
  // struct rtnl_link_stats64 has 25 u64 fields in Linux 6.x; room for a kernel adding some.
  static constexpr std::size_t kMaxStats = 32;

  std::int32_t ifindex = 0;   // ifinfomsg.ifi_index
  std::uint32_t flags = 0;    // ifinfomsg.ifi_flags: IFF_UP (administratively up), IFF_RUNNING...
  std::string_view ifname;    // IFLA_IFNAME without its NUL; empty when absent
  std::optional<std::uint32_t> mtu;       // IFLA_MTU, bytes
  std::optional<std::uint8_t> operstate;  // IFLA_OPERSTATE, IF_OPER_* of linux/if.h (RFC 2863
                                          // states in another order); the kernel reports
                                          // IF_OPER_DOWN for an interface that is not up
  std::optional<std::uint8_t> carrier;    // IFLA_CARRIER: 1 carrier, 0 none; reported also
                                          // while the interface is down (sysfs: EINVAL then)
  // IFLA_STATS64 (struct rtnl_link_stats64, field order of if_link.h: rx_packets, tx_packets,
  // rx_bytes, ...): the first n_stats values; n_stats = payload / 8 (an older kernel sends
  // fewer fields), capped at kMaxStats, 0 when the attribute is absent. Copied out of the
  // datagram, where the 4-byte aligned attribute payload may not be 8-byte aligned.
  std::array<std::uint64_t, kMaxStats> stats{};
  std::size_t n_stats = 0;

  std::span<const std::uint64_t> stats64() const { return {stats.data(), n_stats}; }
};

// Index in struct rtnl_link_stats64 of the field a /sys/class/net/<if>/statistics/<file> file
// shows (the kernel's files are named after the fields), or nullopt for a name not in the
// struct as this code knows it (rx_packets .. rx_otherhost_dropped, uapi order).
std::optional<std::size_t> rtnl_link_stats64_index(std::string_view field);

// Called for each interface of a dump; see FunctionRef (rtnl_dump.h).
using RtnlLinkVisitor = FunctionRef<void(const RtnlLinkRecord&)>;

// walk_rtnl_datagram() (rtnl_dump.h: DONE, ERROR, sequence numbers, results kRtnlDumpMore,
// kRtnlDumpDone or -errno) calling on_link with the decoded record of each RTM_NEWLINK
// message, in message order; other message types are skipped. Besides the walk's -EBADMSG
// cases, malformed bytes give -EBADMSG for an attribute length shorter than its header or
// longer than the bytes left, an RTM_NEWLINK payload shorter than struct ifinfomsg, an
// IFLA_MTU shorter than 4 bytes or an IFLA_OPERSTATE/IFLA_CARRIER of 0 bytes. Records of the
// datagram before the malformed message have been passed to on_link. Never allocates; the
// bytes need no alignment.
int parse_rtnl_link_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq,
                             RtnlLinkVisitor on_link);

// RTM_GETLINK dumps over an RtnlDumper (rtnl_dump.h: open, close and dump contracts).
//  * dump(on_link): one request (ifinfomsg of family AF_UNSPEC) and on_link for each interface
//    of its answer (parse_rtnl_link_datagram). 0 when the dump completed, else -errno as
//    RtnlDumper::dump. Never allocates.
class RtnlLinkDumper {
 public:
  static constexpr std::size_t kBufferBytes = RtnlDumper::kBufferBytes;

  RtnlLinkDumper() = default;                                // the live kernel
  explicit RtnlLinkDumper(RtnlIo& io) : dumper_(io) {}       // a double (tests); must outlive this

  int open() { return dumper_.open(); }
  void close() { dumper_.close(); }
  bool is_open() const { return dumper_.is_open(); }
  int dump(RtnlLinkVisitor on_link);

 private:
  RtnlDumper dumper_;
};

}  // namespace reveal::telemetry
