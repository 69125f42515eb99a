// rtnl_link — the link table of the calling process's network namespace in one request: an
// RTM_GETLINK dump over a NETLINK_ROUTE socket (rtnetlink(7), netlink(7); message and attribute
// layout: include/uapi/linux/netlink.h, rtnetlink.h, if_link.h). One dump answers for every
// interface what sysfs answers with one pread per attribute file and interface: flags, MTU,
// operational state, carrier and the 64-bit statistics (not the link speed, which only sysfs
// and ethtool give).
//
// Three layers, each usable alone:
//  * parse_rtnl_link_datagram(): a pure parser of one received datagram (tested with
//    hand-built bytes). It yields an RtnlLinkRecord per RTM_NEWLINK message and never
//    allocates or reads outside the given bytes, whatever they hold.
//  * RtnlIo: the socket, behind an interface so that tests script the kernel's datagrams
//    (tests/telemetry/netlink/rtnl_fake.h), like EthtoolIo.
//  * RtnlLinkDumper: one request and the datagrams of its answer, with a receive buffer
//    allocated at open(); dump() never allocates.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <type_traits>

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

// A non-owning reference to a callable taking const RtnlLinkRecord& (a function_ref): passing
// a lambda neither copies nor allocates. The callable must outlive the call it is passed to.
class RtnlLinkVisitor {
 public:
  template <class F>
    requires(!std::same_as<std::remove_cvref_t<F>, RtnlLinkVisitor> &&
             std::invocable<F&, const RtnlLinkRecord&>)
  RtnlLinkVisitor(F&& f)  // NOLINT(google-explicit-constructor): passed like a lambda
      : obj_(const_cast<void*>(static_cast<const void*>(&f))),
        call_([](void* obj, const RtnlLinkRecord& r) { (*static_cast<std::remove_reference_t<F>*>(obj))(r); }) {}
  void operator()(const RtnlLinkRecord& r) const { call_(obj_, r); }

 private:
  void* obj_;
  void (*call_)(void*, const RtnlLinkRecord&);
};

// Results of parse_rtnl_link_datagram() besides -errno.
inline constexpr int kRtnlDumpMore = 0;  // the dump continues in a later datagram
inline constexpr int kRtnlDumpDone = 1;  // NLMSG_DONE of `seq` read: the dump is complete

// Walks the netlink messages of one datagram (what NLMSG_OK/NLMSG_NEXT do, with every length
// checked against the bytes left) and, for each message of sequence number `seq`:
//  * RTM_NEWLINK: calls on_link with the decoded record, in message order;
//  * NLMSG_DONE: returns kRtnlDumpDone, or the negative errno the kernel put in its payload
//    when the dump failed (messages after it are not read);
//  * NLMSG_ERROR: returns its error (-errno); an error of 0 (an acknowledgement) is skipped;
//  * anything else (NLMSG_NOOP, other types) is skipped.
// Messages of another sequence number (the late answer to an earlier request) are skipped.
// Returns kRtnlDumpMore when the datagram ends without DONE. Malformed bytes give -EBADMSG:
// a message or attribute length shorter than its header or longer than the bytes left,
// trailing bytes shorter than a header, an RTM_NEWLINK payload shorter than struct ifinfomsg,
// an IFLA_MTU shorter than 4 bytes or an IFLA_OPERSTATE/IFLA_CARRIER of 0 bytes, an
// NLMSG_ERROR payload shorter than its error field. Records of the datagram before the
// malformed message have been passed to on_link. Never allocates; the bytes need no alignment.
int parse_rtnl_link_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq,
                             RtnlLinkVisitor on_link);

// The NETLINK_ROUTE socket seam.
// Contract (what make_system_rtnl_io() does, and what a double must imitate):
//  * open(): socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE) with a 1 s receive
//    timeout (a kernel that never answers cannot stall the sampler), in the network namespace
//    of the calling process. 0 or -errno; idempotent. close() releases it; idempotent.
//  * send(msg): one datagram to the kernel. 0, or -errno (-EBADF while closed).
//  * recv(buf): the next datagram from the kernel into buf; its length, or -errno: -EMSGSIZE
//    when it was larger than buf (MSG_TRUNC: its tail is lost), -EAGAIN when nothing came
//    within the timeout, -EBADF while closed. Datagrams from another sender than the kernel
//    (netlink port id != 0) are dropped. Retries EINTR.
// None allocates.
class RtnlIo {
 public:
  virtual ~RtnlIo() = default;
  virtual int open() = 0;
  virtual void close() = 0;
  virtual int send(std::span<const std::uint8_t> msg) = 0;
  virtual long recv(std::span<std::uint8_t> buf) = 0;
};

// The live kernel: a new instance with its own socket (made by open()).
std::unique_ptr<RtnlIo> make_system_rtnl_io();

// RTM_GETLINK dumps over an RtnlIo.
//  * open(): opens the io and allocates the receive buffer (kBufferBytes: twice the most the
//    kernel puts in one datagram of a link dump without extension filters, just under
//    32 KiB: net/netlink/af_netlink.c, netlink_dump). 0 or -errno.
//  * dump(on_link): sends one RTM_GETLINK request (NLM_F_REQUEST | NLM_F_DUMP, ifinfomsg of
//    family AF_UNSPEC, a sequence number one more than the last) and reads datagrams until
//    its NLMSG_DONE, calling on_link for each interface (parse_rtnl_link_datagram). 0 when
//    the dump completed, else -errno: of send/recv (-EMSGSIZE: a datagram did not fit),
//    of the kernel (NLMSG_ERROR, a failed NLMSG_DONE), -EBADMSG (malformed), -EBADF when
//    not opened. on_link may have been called for part of the interfaces before a failure.
//    A failed dump closes the socket and the next dump() opens a new one: a dump left half
//    read would leave the kernel's dump state on the socket (a new request answers EBUSY)
//    and its unread datagrams queued. Never allocates.
//  * close(): closes the io and frees the buffer; idempotent; also on destruction.
class RtnlLinkDumper {
 public:
  static constexpr std::size_t kBufferBytes = 64 * 1024;

  RtnlLinkDumper();                                   // the live kernel (make_system_rtnl_io)
  explicit RtnlLinkDumper(RtnlIo& io) : io_(&io) {}   // a double (tests); must outlive this
  ~RtnlLinkDumper();
  RtnlLinkDumper(const RtnlLinkDumper&) = delete;
  RtnlLinkDumper& operator=(const RtnlLinkDumper&) = delete;

  int open();
  void close();
  bool is_open() const { return buf_ != nullptr; }
  int dump(RtnlLinkVisitor on_link);

 private:
  std::unique_ptr<RtnlIo> owned_;
  RtnlIo* io_ = nullptr;
  bool io_open_ = false;
  std::uint32_t seq_ = 0;
  std::unique_ptr<std::uint64_t[]> buf_;  // kBufferBytes, 8-byte aligned
};

}  // namespace reveal::telemetry
