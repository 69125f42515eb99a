// Hand-built rtnetlink datagrams and a scripted NETLINK_ROUTE socket, for the rtnl_link and
// rtnl_qdisc parser and dumper tests and the sys.net and tc.qdisc probe tests: no kernel needed.
//
// The append_* helpers write netlink messages the way the kernel lays them out (nlmsghdr,
// then for RTM_NEWLINK an ifinfomsg, for RTM_NEWQDISC a tcmsg, and 4-byte aligned rtattrs).
// FakeRtnl answers each RTM_GETLINK dump request with the current `links` (RTM_GETQDISC: the
// current `qdiscs`), links_per_datagram per datagram, then NLMSG_DONE, following the RtnlIo contract; knobs make it fail the ways the kernel can.
// Within the capacity reserved at construction it allocates nothing (no_alloc_test uses it).
#pragma once

#include <linux/gen_stats.h>
#include <linux/if.h>
#include <linux/netlink.h>
#include <linux/pkt_sched.h>
#include <linux/rtnetlink.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "../probe_test_util.h"
#include "telemetry/netlink/rtnl_link.h"
#include "telemetry/netlink/rtnl_qdisc.h"

namespace reveal::testing {

struct FakeLink {
  std::int32_t ifindex = 0;
  std::string name;
  std::uint32_t flags = 0;  // IFF_UP, ...
  std::optional<std::uint32_t> mtu;
  std::optional<std::uint8_t> operstate;  // IF_OPER_*
  std::optional<std::uint8_t> carrier;
  std::optional<std::vector<std::uint64_t>> stats64;  // IFLA_STATS64 payload, in u64 words
};

struct FakeQdisc {
  std::int32_t ifindex = 0;
  std::uint32_t handle = 0;
  std::uint32_t parent = TC_H_ROOT;
  std::string kind = "fq_codel";
  std::optional<gnet_stats_queue> queue = gnet_stats_queue{};  // TCA_STATS2/TCA_STATS_QUEUE
  bool flat_stats = true;  // also the older TCA_STATS (as the kernel sends), from `queue`
};

// struct rtnl_link_stats64 values base + i for field i (25 fields, as Linux 6.x sends).
inline std::vector<std::uint64_t> stats64_from(std::uint64_t base, std::size_t n = 25) {
  std::vector<std::uint64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = base + i;
  return v;
}

inline void append_bytes(std::vector<std::uint8_t>& b, const void* p, std::size_t n) {
  const auto* c = static_cast<const std::uint8_t*>(p);
  b.insert(b.end(), c, c + n);
}
inline void pad4(std::vector<std::uint8_t>& b) {
  while (b.size() % 4) b.push_back(0);
}

// An rtattr of `type` with `len` bytes of payload, padded to 4 bytes.
inline void append_attr(std::vector<std::uint8_t>& b, std::uint16_t type, const void* data, std::size_t len) {
  rtattr a{};
  a.rta_len = static_cast<std::uint16_t>(RTA_LENGTH(len));
  a.rta_type = type;
  append_bytes(b, &a, sizeof a);
  append_bytes(b, data, len);
  pad4(b);
}

// Starts a message; finish_message(b, at) sets its length once its payload is written.
inline std::size_t begin_message(std::vector<std::uint8_t>& b, std::uint16_t type, std::uint32_t seq,
                                 std::uint16_t flags = NLM_F_MULTI) {
  const std::size_t at = b.size();
  nlmsghdr h{};
  h.nlmsg_type = type;
  h.nlmsg_flags = flags;
  h.nlmsg_seq = seq;
  append_bytes(b, &h, sizeof h);
  return at;
}
inline void finish_message(std::vector<std::uint8_t>& b, std::size_t at) {
  const auto len = static_cast<std::uint32_t>(b.size() - at);
  std::memcpy(b.data() + at, &len, sizeof len);  // nlmsg_len is the first field
  pad4(b);
}

inline void append_newlink(std::vector<std::uint8_t>& b, std::uint32_t seq, const FakeLink& l) {
  const std::size_t at = begin_message(b, RTM_NEWLINK, seq);
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  ifi.ifi_index = l.ifindex;
  ifi.ifi_flags = l.flags;
  append_bytes(b, &ifi, sizeof ifi);
  append_attr(b, IFLA_IFNAME, l.name.c_str(), l.name.size() + 1);
  if (l.mtu) append_attr(b, IFLA_MTU, &*l.mtu, sizeof *l.mtu);
  if (l.operstate) append_attr(b, IFLA_OPERSTATE, &*l.operstate, 1);
  if (l.carrier) append_attr(b, IFLA_CARRIER, &*l.carrier, 1);
  const std::uint32_t stats32[24] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
  append_attr(b, IFLA_STATS, stats32, sizeof stats32);  // the 32-bit copy: must be ignored
  if (l.stats64) append_attr(b, IFLA_STATS64, l.stats64->data(), l.stats64->size() * 8);
  finish_message(b, at);
}

// The nested TCA_STATS2 carries TCA_STATS_BASIC first and TCA_STATS_QUEUE after, as
// gnet_stats_copy_* write them.
inline void append_newqdisc(std::vector<std::uint8_t>& b, std::uint32_t seq, const FakeQdisc& q) {
  const std::size_t at = begin_message(b, RTM_NEWQDISC, seq);
  tcmsg tcm{};
  tcm.tcm_family = AF_UNSPEC;
  tcm.tcm_ifindex = q.ifindex;
  tcm.tcm_handle = q.handle;
  tcm.tcm_parent = q.parent;
  append_bytes(b, &tcm, sizeof tcm);
  append_attr(b, TCA_KIND, q.kind.c_str(), q.kind.size() + 1);
  if (q.queue) {
    const std::size_t nest = b.size();  // the TCA_STATS2 header, its length set below
    append_attr(b, TCA_STATS2 | NLA_F_NESTED, nullptr, 0);
    const gnet_stats_basic basic{12345, 67};
    append_attr(b, TCA_STATS_BASIC, &basic, sizeof basic);
    append_attr(b, TCA_STATS_QUEUE, &*q.queue, sizeof *q.queue);
    const auto nest_len = static_cast<std::uint16_t>(b.size() - nest);
    std::memcpy(b.data() + nest, &nest_len, sizeof nest_len);  // rta_len is the first field
    if (q.flat_stats) {
      tc_stats flat{};
      flat.drops = q.queue->drops;
      flat.overlimits = q.queue->overlimits;
      flat.qlen = q.queue->qlen;
      flat.backlog = q.queue->backlog;
      append_attr(b, TCA_STATS, &flat, sizeof flat);
    }
  }
  finish_message(b, at);
}

inline void append_done(std::vector<std::uint8_t>& b, std::uint32_t seq, int status = 0) {
  const std::size_t at = begin_message(b, NLMSG_DONE, seq);
  append_bytes(b, &status, sizeof status);
  finish_message(b, at);
}

inline void append_error(std::vector<std::uint8_t>& b, std::uint32_t seq, int error) {
  const std::size_t at = begin_message(b, NLMSG_ERROR, seq, 0);
  nlmsgerr e{};
  e.error = error;
  append_bytes(b, &e, sizeof e);
  finish_message(b, at);
}

class FakeRtnl final : public telemetry::RtnlIo {
 public:
  std::vector<FakeLink> links;
  std::vector<FakeQdisc> qdiscs;
  std::size_t links_per_datagram = 2;
  int open_errno = 0;
  int send_errno = 0;        // send() fails with it
  int error_reply = 0;       // the kernel answers NLMSG_ERROR(-error_reply) instead of links
  int done_status = 0;       // the NLMSG_DONE payload (negative: the dump failed)
  bool truncate = false;     // the first datagram does not fit (recv: -EMSGSIZE)
  bool stale_first = false;  // a datagram answering an earlier request comes first
  bool no_done = false;      // no NLMSG_DONE: recv times out (-EAGAIN) after the links

  bool is_open = false;
  int opens = 0;
  int dumps = 0;              // requests answered
  nlmsghdr last_request{};    // header of the last request sent
  ifinfomsg last_request_ifi{};

  FakeRtnl() {
    bytes_.reserve(1 << 20);
    ends_.reserve(1 << 12);
  }

  int open() override {
    if (open_errno) return -open_errno;
    if (!is_open) ++opens;
    is_open = true;
    return 0;
  }
  void close() override {
    is_open = false;
    bytes_.clear();
    ends_.clear();
    next_ = 0;
  }

  int send(std::span<const std::uint8_t> msg) override {
    if (!is_open) return -EBADF;
    if (send_errno) return -send_errno;
    if (next_ < ends_.size()) return -EBUSY;  // like the kernel: a dump is still being read
    if (msg.size() < sizeof(nlmsghdr) + sizeof(ifinfomsg)) return -EINVAL;
    std::memcpy(&last_request, msg.data(), sizeof last_request);
    std::memcpy(&last_request_ifi, msg.data() + sizeof(nlmsghdr), sizeof last_request_ifi);
    ++dumps;
    const std::uint32_t seq = last_request.nlmsg_seq;
    bytes_.clear();
    ends_.clear();
    next_ = 0;
    if (stale_first) {
      if (!links.empty()) append_newlink(bytes_, seq - 1, links.front());
      append_done(bytes_, seq - 1);
      ends_.push_back(bytes_.size());
    }
    if (error_reply) {
      append_error(bytes_, seq, -error_reply);
      ends_.push_back(bytes_.size());
      return 0;
    }
    const bool qdisc_dump = last_request.nlmsg_type == RTM_GETQDISC;
    const std::size_t n = qdisc_dump ? qdiscs.size() : links.size();
    for (std::size_t i = 0; i < n; ++i) {
      if (qdisc_dump) append_newqdisc(bytes_, seq, qdiscs[i]);
      else append_newlink(bytes_, seq, links[i]);
      if ((i + 1) % links_per_datagram == 0) ends_.push_back(bytes_.size());
    }
    if (!no_done) append_done(bytes_, seq, done_status);
    if (ends_.empty() || ends_.back() != bytes_.size()) ends_.push_back(bytes_.size());
    return 0;
  }

  long recv(std::span<std::uint8_t> buf) override {
    if (!is_open) return -EBADF;
    if (next_ == ends_.size()) return -EAGAIN;
    const std::size_t begin = next_ ? ends_[next_ - 1] : 0;
    const std::size_t len = ends_[next_] - begin;
    const bool first = next_ == 0;
    ++next_;
    if (len > buf.size() || (truncate && first)) return -EMSGSIZE;
    std::memcpy(buf.data(), bytes_.data() + begin, len);
    return static_cast<long>(len);
  }

  FakeLink* link(const std::string& name) {
    for (auto& l : links)
      if (l.name == name) return &l;
    return nullptr;
  }

 private:
  std::vector<std::uint8_t> bytes_;  // the answer to the last request, datagram after datagram
  std::vector<std::size_t> ends_;    // end offset of each datagram in bytes_
  std::size_t next_ = 0;             // the next datagram recv() returns
};

// The host-2socket fixture with the ifindex files a real /sys has, and a kernel that agrees
// with it but for the values (all different from the tree's, to tell the two paths apart):
// lo 1 (up), eth0 2 (up, carrier), eth1 3 (admin down); stats64 100 + i, 200 + i, 300 + i.
struct NetlinkHost {
  TempRoot root{"host-2socket"};
  FakeRtnl kernel;
  NetlinkHost() {
    root.write("sys/class/net/lo/ifindex", "1\n");
    root.write("sys/class/net/eth0/ifindex", "2\n");
    root.write("sys/class/net/eth1/ifindex", "3\n");
    kernel.links = {
        {1, "lo", IFF_UP | IFF_LOOPBACK | IFF_RUNNING, 65535, IF_OPER_UNKNOWN, 1, stats64_from(100)},
        {2, "eth0", IFF_UP | IFF_RUNNING, 9001, IF_OPER_UP, 1, stats64_from(200)},
        {3, "eth1", 0, 1501, IF_OPER_DOWN, 0, stats64_from(300)},
    };
  }
};

}  // namespace reveal::testing
