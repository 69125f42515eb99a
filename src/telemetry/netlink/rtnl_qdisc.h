// rtnl_qdisc — the queueing disciplines (qdiscs, tc(8)) of the calling process's network
// namespace in one request: an RTM_GETQDISC dump over a NETLINK_ROUTE socket (rtnetlink(7):
// RTM_NEWQDISC messages, struct tcmsg then TCA_* attributes; statistics: TCA_STATS2 nesting
// TCA_STATS_QUEUE, struct gnet_stats_queue of include/uapi/linux/gen_stats.h; the older flat
// TCA_STATS, struct tc_stats of pkt_sched.h). What `tc -s qdisc show` prints: per qdisc its
// drops, overlimits (throttle events of a shaper or policer), requeues, backlog and queue length.
//
// Built on rtnl_dump.h (the socket, the dump loop, the message walk):
//  * parse_rtnl_qdisc_datagram(): a pure parser of one received datagram (tested with
//    hand-built bytes). It yields an RtnlQdiscRecord per RTM_NEWQDISC message and never
//    allocates or reads outside the given bytes, whatever they hold.
//  * RtnlQdiscDumper: RTM_GETQDISC dumps (every device's qdiscs) over an RtnlDumper; dump()
//    never allocates.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "telemetry/netlink/rtnl_dump.h"

namespace reveal::telemetry {

// struct gnet_stats_queue: all 32-bit; the kernel's counters wrap modulo 2^32.
struct QdiscQueueStats {
  std::uint32_t qlen = 0;        // packets queued now
  std::uint32_t backlog = 0;     // bytes queued now
  std::uint32_t drops = 0;       // packets dropped, total
  std::uint32_t requeues = 0;    // packets handed back by the driver (a busy TX ring), total
  std::uint32_t overlimits = 0;  // throttle events (rate limit reached), total
};

// One qdisc, as one RTM_NEWQDISC message of a dump describes it. `kind` views into the
// datagram: valid only during the visitor call that receives it.
struct RtnlQdiscRecord {
  std::int32_t ifindex = 0;   // tcmsg.tcm_ifindex: the device
  std::uint32_t handle = 0;   // tcmsg.tcm_handle (major:minor, 16 bits each)
  std::uint32_t parent = 0;   // tcmsg.tcm_parent: TC_H_ROOT (0xFFFFFFFF) for a device's egress
                              // root, TC_H_INGRESS (0xFFFFFFF1) for ingress/clsact, else a class
  std::string_view kind;      // TCA_KIND without its NUL ("fq_codel", "tbf", "noqueue", ...)
  // TCA_STATS2/TCA_STATS_QUEUE; else the qlen, backlog, drops and overlimits of TCA_STATS
  // (requeues 0: that struct has none); nullopt when the message has neither.
  std::optional<QdiscQueueStats> queue;

  bool is_root() const { return parent == 0xFFFFFFFFu; }
};

// Called for each qdisc of a dump; see FunctionRef (rtnl_dump.h).
using RtnlQdiscVisitor = FunctionRef<void(const RtnlQdiscRecord&)>;

// walk_rtnl_datagram() (rtnl_dump.h: DONE, ERROR, sequence numbers, results kRtnlDumpMore,
// kRtnlDumpDone or -errno) calling on_qdisc with the decoded record of each RTM_NEWQDISC
// message, in message order; other message types are skipped. Besides the walk's -EBADMSG
// cases, malformed bytes give -EBADMSG for an attribute length shorter than its header or
// longer than the bytes left (nested ones too), an RTM_NEWQDISC payload shorter than struct
// tcmsg, a TCA_STATS_QUEUE shorter than struct gnet_stats_queue or a TCA_STATS shorter than
// struct tc_stats. Never allocates; the bytes need no alignment.
int parse_rtnl_qdisc_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq, RtnlQdiscVisitor on_qdisc);

// RTM_GETQDISC dumps over an RtnlDumper (rtnl_dump.h: open, close and dump contracts).
//  * dump(on_qdisc): one request (tcmsg of family AF_UNSPEC, ifindex 0: all devices) and
//    on_qdisc for each qdisc of its answer (parse_rtnl_qdisc_datagram). 0 when the dump
//    completed, else -errno as RtnlDumper::dump. Never allocates.
class RtnlQdiscDumper {
 public:
  RtnlQdiscDumper() = default;                            // the live kernel
  explicit RtnlQdiscDumper(RtnlIo& io) : dumper_(io) {}   // a double (tests); must outlive this

  int open() { return dumper_.open(); }
  void close() { dumper_.close(); }
  bool is_open() const { return dumper_.is_open(); }
  int dump(RtnlQdiscVisitor on_qdisc);

 private:
  RtnlDumper dumper_;
};

}  // namespace reveal::telemetry
