#include "telemetry/netlink/qdisc_probe.h"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "reveal/channel.h"
#include "rtnl_fake.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

enum { kDrops, kOverlimits, kRequeues, kBacklog, kQlen };

FakeQdisc root(std::int32_t ifindex, std::uint32_t handle, std::string kind, std::uint32_t drops,
               std::uint32_t overlimits, std::uint32_t backlog = 0) {
  return {ifindex, handle, TC_H_ROOT, std::move(kind), gnet_stats_queue{backlog ? 1u : 0u, backlog, drops, 0, overlimits}};
}

struct Host {
  FakeRtnl kernel;
  QdiscProbe probe{kernel};
  std::vector<double> out;
  Host() {
    kernel.qdiscs = {root(1, 0, "noqueue", 0, 0), root(2, 0, "fq_codel", 100, 5, 3000),
                     FakeQdisc{2, 0, 0x80001, "pfifo_fast", gnet_stats_queue{1, 100, 50, 0, 0}}};
  }
  void open() {
    const ProbeStatus st = probe.open("/nonexistent");
    ASSERT_TRUE(st.available) << st.reason;
    out.assign(probe.channels().size(), -1);
  }
  void sample() { probe.sample(out); }
};

TEST(QdiscProbe, ChannelsAreHostTotalsWithTheirRoles) {
  Host h;
  h.open();
  ASSERT_EQ(h.probe.channels().size(), 5u);
  EXPECT_EQ(h.probe.channels()[kDrops].name, "tc.qdisc:drops");
  EXPECT_EQ(h.probe.channels()[kDrops].kind, Kind::counter);
  EXPECT_EQ(h.probe.channels()[kOverlimits].name, "tc.qdisc:overlimits");
  EXPECT_EQ(h.probe.channels()[kBacklog].unit, "bytes");
  EXPECT_EQ(h.probe.channels()[kBacklog].kind, Kind::gauge);
  for (const auto& c : h.probe.channels()) EXPECT_EQ(c.subsystem, Subsystem::network) << c.name;
  EXPECT_EQ(channel_role("tc.qdisc:drops"), ChannelRole::symptom);
  EXPECT_EQ(channel_role("tc.qdisc:overlimits"), ChannelRole::symptom);
  EXPECT_EQ(channel_role("tc.qdisc:requeues"), ChannelRole::symptom);
  EXPECT_EQ(channel_role("tc.qdisc:backlog"), ChannelRole::load);
  EXPECT_EQ(channel_role("tc.qdisc:qlen"), ChannelRole::load);
}

TEST(QdiscProbe, CountersGrowFromZeroAtOpenOverRootQdiscsOnly) {
  Host h;
  h.open();
  h.sample();
  EXPECT_EQ(h.out[kDrops], 0) << "what was counted before open is history";
  EXPECT_EQ(h.out[kBacklog], 3000) << "roots only: the mq child's 100 bytes are in its root";
  EXPECT_EQ(h.out[kQlen], 1);
  h.kernel.qdiscs[1].queue->drops = 130;
  h.kernel.qdiscs[1].queue->overlimits = 9;
  h.kernel.qdiscs[2].queue->drops = 90;  // a child: not added again
  h.sample();
  EXPECT_EQ(h.out[kDrops], 30);
  EXPECT_EQ(h.out[kOverlimits], 4);
}

TEST(QdiscProbe, A32BitWrapIsGrowth) {
  Host h;
  h.kernel.qdiscs[1].queue->overlimits = 0xFFFFFFF0u;
  h.open();
  h.kernel.qdiscs[1].queue->overlimits = 0x10;
  h.sample();
  EXPECT_EQ(h.out[kOverlimits], 0x20);
}

// A rate limit put on a veth (tc qdisc replace ... tbf): a new root qdisc whose counts since
// its creation are all new; removing it and the device takes nothing from the totals.
TEST(QdiscProbe, QdiscsComingAndGoingKeepTheCountersMonotonic) {
  Host h;
  h.open();
  h.sample();
  h.kernel.qdiscs.push_back(root(9, 0x7e570000, "tbf", 3, 4000, 60000));
  h.sample();
  EXPECT_EQ(h.out[kDrops], 3);
  EXPECT_EQ(h.out[kOverlimits], 4000);
  EXPECT_EQ(h.out[kBacklog], 63000);
  h.kernel.qdiscs.back().queue->overlimits = 9000;
  h.sample();
  EXPECT_EQ(h.out[kOverlimits], 9000);
  h.kernel.qdiscs.pop_back();  // the rule and the device are gone
  h.sample();
  EXPECT_EQ(h.out[kOverlimits], 9000);
  EXPECT_EQ(h.out[kBacklog], 3000);
  // The same device index and handle back (a new rule): counts from its own 0 again.
  h.kernel.qdiscs.push_back(root(9, 0x7e570000, "tbf", 0, 10));
  h.sample();
  EXPECT_EQ(h.out[kOverlimits], 9010);
}

TEST(QdiscProbe, AFailedDumpIsNanAndItsGrowthComesAtTheNext) {
  Host h;
  h.open();
  h.sample();
  h.kernel.qdiscs[1].queue->drops = 150;
  h.kernel.error_reply = EBUSY;
  h.sample();
  for (double v : h.out) EXPECT_TRUE(std::isnan(v));
  h.kernel.error_reply = 0;
  h.kernel.truncate = true;
  h.sample();
  EXPECT_TRUE(std::isnan(h.out[kDrops]));
  h.kernel.truncate = false;
  h.sample();
  EXPECT_EQ(h.out[kDrops], 50);
}

TEST(QdiscProbe, OpenFailsWithAReason) {
  FakeRtnl kernel;
  kernel.open_errno = EACCES;
  QdiscProbe p(kernel);
  const ProbeStatus st = p.open("/");
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("NETLINK_ROUTE"), std::string::npos) << st.reason;
  kernel.open_errno = 0;
  kernel.error_reply = EPERM;
  const ProbeStatus st2 = p.open("/");
  EXPECT_FALSE(st2.available);
  EXPECT_NE(st2.reason.find("RTM_GETQDISC"), std::string::npos) << st2.reason;
  // The live probe on a fixture tree: its namespace is not the tree's.
  QdiscProbe live;
  const ProbeStatus st3 = live.open(std::filesystem::path(REVEAL_FIXTURES_DIR) / "host-2socket");
  EXPECT_FALSE(st3.available);
  EXPECT_NE(st3.reason.find("not the live"), std::string::npos) << st3.reason;
}

TEST(QdiscProbe, QdiscsBeyondTheTableAreCountedAsUntracked) {
  FakeRtnl kernel;
  for (std::int32_t i = 0; i < std::int32_t(QdiscProbe::kMaxQdiscs) + 5; ++i)
    kernel.qdiscs.push_back(root(i + 1, 0, "noqueue", 0, 0));
  kernel.links_per_datagram = 200;
  QdiscProbe p(kernel);
  ASSERT_TRUE(p.open("/").available);
  EXPECT_EQ(p.untracked_qdiscs(), 5u);
  std::vector<double> out(p.channels().size());
  kernel.qdiscs.back().queue->drops = 7;  // untracked: not counted (never twice)
  p.sample(out);
  EXPECT_EQ(out[kDrops], 0);
  EXPECT_EQ(p.untracked_qdiscs(), 10u);
}

// On this host, where the kernel allows it: the live probe opens on "/" and samples numbers.
TEST(QdiscProbe, LiveHost) {
  QdiscProbe p;
  const ProbeStatus st = p.open("/");
  if (!st.available) GTEST_SKIP() << st.reason;
  std::vector<double> out(p.channels().size());
  p.sample(out);
  p.sample(out);
  for (double v : out) EXPECT_TRUE(std::isfinite(v) && v >= 0);
}

}  // namespace
}  // namespace reveal::telemetry
