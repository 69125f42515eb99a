#include "telemetry/netlink/rtnl_qdisc.h"

#include <linux/gen_stats.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace reveal::telemetry {
namespace {

// TCA_STATS2's nested attributes: the queue statistics.
int parse_stats2(std::span<const std::uint8_t> nested, RtnlQdiscRecord& r) {
  return walk_rtattrs(nested, [&r](std::uint16_t type, std::span<const std::uint8_t> data) -> int {
    if (type != TCA_STATS_QUEUE) return 0;  // BASIC, RATE_EST, APP (qdisc-specific), ...
    if (data.size() < sizeof(gnet_stats_queue)) return -EBADMSG;
    const auto q = load_unaligned<gnet_stats_queue>(data);
    r.queue = QdiscQueueStats{q.qlen, q.backlog, q.drops, q.requeues, q.overlimits};
    return 0;
  });
}

// The attributes of one RTM_NEWQDISC after its tcmsg. 0 or -EBADMSG.
int parse_qdisc_attributes(std::span<const std::uint8_t> attrs, RtnlQdiscRecord& r) {
  std::optional<QdiscQueueStats> flat;  // TCA_STATS: used only when TCA_STATS2 has no queue stats
  const int e = walk_rtattrs(attrs, [&](std::uint16_t type, std::span<const std::uint8_t> data) -> int {
    switch (type) {
      case TCA_KIND: {  // NUL-terminated; stop at the payload's end if it is not
        const char* s = reinterpret_cast<const char*>(data.data());
        r.kind = std::string_view(s, ::strnlen(s, data.size()));
        return 0;
      }
      case TCA_STATS2:
        return parse_stats2(data, r);
      case TCA_STATS: {
        if (data.size() < sizeof(tc_stats)) return -EBADMSG;
        const auto s = load_unaligned<tc_stats>(data);
        flat = QdiscQueueStats{s.qlen, s.backlog, s.drops, 0, s.overlimits};
        return 0;
      }
      default:
        return 0;  // TCA_OPTIONS, TCA_XSTATS, TCA_STAB, ...: not needed
    }
  });
  if (e < 0) return e;
  if (!r.queue) r.queue = flat;
  return 0;
}

// One answer message of a qdisc dump: on_qdisc with the record of an RTM_NEWQDISC (other types
// skipped). 0 or -EBADMSG.
int visit_newqdisc(std::uint16_t type, std::span<const std::uint8_t> payload, const RtnlQdiscVisitor& on_qdisc) {
  if (type != RTM_NEWQDISC) return 0;
  if (payload.size() < sizeof(tcmsg)) return -EBADMSG;
  const auto tcm = load_unaligned<tcmsg>(payload);
  RtnlQdiscRecord r;
  r.ifindex = tcm.tcm_ifindex;
  r.handle = tcm.tcm_handle;
  r.parent = tcm.tcm_parent;
  const std::size_t attrs_at = std::min<std::size_t>(payload.size(), NLMSG_ALIGN(sizeof(tcmsg)));
  if (int e = parse_qdisc_attributes(payload.subspan(attrs_at), r)) return e;
  on_qdisc(r);
  return 0;
}

static_assert(TC_H_ROOT == 0xFFFFFFFFu, "RtnlQdiscRecord::is_root");

}  // namespace

int parse_rtnl_qdisc_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq, RtnlQdiscVisitor on_qdisc) {
  return walk_rtnl_datagram(bytes, seq, [&on_qdisc](std::uint16_t type, std::span<const std::uint8_t> payload) {
    return visit_newqdisc(type, payload, on_qdisc);
  });
}

int RtnlQdiscDumper::dump(RtnlQdiscVisitor on_qdisc) {
  tcmsg tcm{};
  tcm.tcm_family = AF_UNSPEC;
  return dumper_.dump(RTM_GETQDISC, {reinterpret_cast<const std::uint8_t*>(&tcm), sizeof tcm},
                      [&on_qdisc](std::uint16_t type, std::span<const std::uint8_t> payload) {
                        return visit_newqdisc(type, payload, on_qdisc);
                      });
}

}  // namespace reveal::telemetry
