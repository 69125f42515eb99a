// tc.qdisc — host totals of the egress queueing disciplines (qdiscs) of every network device
// in the agent's network namespace, from one RTM_GETQDISC dump per tick (rtnl_qdisc.h; the
// numbers `tc -s qdisc show` prints, and node_exporter's qdisc collector exports per device).
//
// Why: a shaper or policer that holds a link below what it should carry (a stray `tc ... tbf`
// rule, a misconfigured rate limit, a congested NIC queue dropping packets) slows training
// traffic without any interface error counter moving; the qdisc's overlimits, drops and
// backlog are where it shows.
//
// Channels (Subsystem::network), summed over the root egress qdisc of each device
// (parent TC_H_ROOT; an mq or classful root already reports its children's totals, so they
// are not added again; ingress/clsact qdiscs are not egress queues and are left out):
//   tc.qdisc:drops       counter "packets"  packets dropped
//   tc.qdisc:overlimits  counter "count"    throttle events: a packet held back because a
//                                           rate limit was reached
//   tc.qdisc:requeues    counter "count"    packets handed back by a busy driver
//   tc.qdisc:backlog     gauge   "bytes"    bytes queued now
//   tc.qdisc:qlen        gauge   "packets"  packets queued now
// The counters are this probe's own running totals from 0 at open(), which stay monotonic
// while devices and qdiscs come and go (containers' veths, a rule added or removed): each
// tick adds, per qdisc (device index and handle), the 32-bit-wrap-aware growth of the
// kernel's counters since the last dump; a qdisc that appeared since then (its counters start
// at 0 when it is created) adds all it counted; a qdisc gone takes nothing away. Qdiscs of the
// first dump are the starting point. At most kMaxQdiscs root qdiscs are tracked (preallocated
// at open); beyond that, new ones are left out of the counters (still in backlog/qlen) and
// counted in untracked_qdiscs(). A failed dump reads NaN on every channel that tick and is
// retried at the next on a fresh socket; growth is not lost (the next dump adds it).
//
// Only the live namespace: open() fails for a root whose /sys/class/net is not the live one
// (a fixture tree, a host /sys seen from a container), since the socket can only see the
// agent's own namespace. sample() allocates nothing.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/netlink/rtnl_qdisc.h"

namespace reveal::telemetry {

class QdiscProbe final : public Probe {
 public:
  static constexpr std::size_t kMaxQdiscs = 8192;

  QdiscProbe();
  // A scripted rtnetlink double (tests): the live-/sys check is skipped. Must outlive the probe.
  explicit QdiscProbe(RtnlIo& io);
  ~QdiscProbe() override;

  std::string_view name() const override { return "tc.qdisc"; }
  std::string_view description() const override {
    return "Egress queueing disciplines, host totals: drops, overlimits, requeues, backlog (RTM_GETQDISC)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

  // Root qdiscs seen but not tracked since open() (the table was full).
  std::uint64_t untracked_qdiscs() const { return untracked_; }

 private:
  struct Tracked {
    std::int32_t ifindex = 0;
    std::uint32_t handle = 0;
    std::uint32_t drops = 0, overlimits = 0, requeues = 0;  // the kernel's values at the last dump
    bool seen = false;                                       // in the dump being read
  };
  // Reads one dump into the totals; -errno when it failed (the totals keep what it added).
  int read_dump(bool baseline);

  std::unique_ptr<RtnlQdiscDumper> rtnl_;
  bool check_live_ = true;
  std::vector<ChannelInfo> channels_;
  std::vector<Tracked> table_;  // sorted by (ifindex, handle); capacity kMaxQdiscs
  std::vector<Tracked> fresh_;  // qdiscs first seen in the dump being read; capacity kMaxQdiscs
  std::uint64_t drops_ = 0, overlimits_ = 0, requeues_ = 0;  // running totals
  std::uint64_t backlog_ = 0, qlen_ = 0;                     // sums over the last dump
  std::uint64_t untracked_ = 0;
};

}  // namespace reveal::telemetry
