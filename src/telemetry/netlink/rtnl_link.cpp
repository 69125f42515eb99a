#include "telemetry/netlink/rtnl_link.h"

#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace reveal::telemetry {
namespace {

// struct rtnl_link_stats64 of include/uapi/linux/if_link.h, in field order.
constexpr std::array<std::string_view, 25> kStats64Fields{
    "rx_packets",        "tx_packets",        "rx_bytes",          "tx_bytes",
    "rx_errors",         "tx_errors",         "rx_dropped",        "tx_dropped",
    "multicast",         "collisions",        "rx_length_errors",  "rx_over_errors",
    "rx_crc_errors",     "rx_frame_errors",   "rx_fifo_errors",    "rx_missed_errors",
    "tx_aborted_errors", "tx_carrier_errors", "tx_fifo_errors",    "tx_heartbeat_errors",
    "tx_window_errors",  "rx_compressed",     "tx_compressed",     "rx_nohandler",
    "rx_otherhost_dropped"};

// The attributes of one RTM_NEWLINK after its ifinfomsg. 0 or -EBADMSG.
int parse_link_attributes(std::span<const std::uint8_t> attrs, RtnlLinkRecord& r) {
  return walk_rtattrs(attrs, [&r](std::uint16_t type, std::span<const std::uint8_t> data) -> int {
    switch (type) {
      case IFLA_IFNAME: {  // NUL-terminated; stop at the payload's end if it is not
        const char* s = reinterpret_cast<const char*>(data.data());
        r.ifname = std::string_view(s, ::strnlen(s, data.size()));
        break;
      }
      case IFLA_MTU:
        if (data.size() < sizeof(std::uint32_t)) return -EBADMSG;
        r.mtu = load_unaligned<std::uint32_t>(data);
        break;
      case IFLA_OPERSTATE:
        if (data.empty()) return -EBADMSG;
        r.operstate = data[0];
        break;
      case IFLA_CARRIER:
        if (data.empty()) return -EBADMSG;
        r.carrier = data[0];
        break;
      case IFLA_STATS64:
        r.n_stats = std::min(data.size() / sizeof(std::uint64_t), RtnlLinkRecord::kMaxStats);
        std::memcpy(r.stats.data(), data.data(), r.n_stats * sizeof(std::uint64_t));
        break;
      default:
        break;  // IFLA_STATS (32-bit), IFLA_PAD, IFLA_AF_SPEC, ...: not needed
    }
    return 0;
  });
}

// One answer message of a link dump: on_link with the record of an RTM_NEWLINK (other types
// skipped). 0 or -EBADMSG.
int visit_newlink(std::uint16_t type, std::span<const std::uint8_t> payload, const RtnlLinkVisitor& on_link) {
  if (type != RTM_NEWLINK) return 0;
  if (payload.size() < sizeof(ifinfomsg)) return -EBADMSG;
  const auto ifi = load_unaligned<ifinfomsg>(payload);
  RtnlLinkRecord r;
  r.ifindex = ifi.ifi_index;
  r.flags = ifi.ifi_flags;
  const std::size_t attrs_at = std::min<std::size_t>(payload.size(), NLMSG_ALIGN(sizeof(ifinfomsg)));
  if (int e = parse_link_attributes(payload.subspan(attrs_at), r)) return e;
  on_link(r);
  return 0;
}

}  // namespace

std::optional<std::size_t> rtnl_link_stats64_index(std::string_view field) {
  for (std::size_t i = 0; i < kStats64Fields.size(); ++i)
    if (kStats64Fields[i] == field) return i;
  return std::nullopt;
}

int parse_rtnl_link_datagram(std::span<const std::uint8_t> bytes, std::uint32_t seq,
                             RtnlLinkVisitor on_link) {
  return walk_rtnl_datagram(bytes, seq, [&on_link](std::uint16_t type, std::span<const std::uint8_t> payload) {
    return visit_newlink(type, payload, on_link);
  });
}

int RtnlLinkDumper::dump(RtnlLinkVisitor on_link) {
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  return dumper_.dump(RTM_GETLINK, {reinterpret_cast<const std::uint8_t*>(&ifi), sizeof ifi},
                      [&on_link](std::uint16_t type, std::span<const std::uint8_t> payload) {
                        return visit_newlink(type, payload, on_link);
                      });
}

}  // namespace reveal::telemetry
