#include "telemetry/netlink/rtnl_qdisc.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "rtnl_fake.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

struct Got {
  std::int32_t ifindex;
  std::uint32_t handle, parent;
  std::string kind;
  std::optional<QdiscQueueStats> queue;
};

int parse(std::span<const std::uint8_t> bytes, std::uint32_t seq, std::vector<Got>& got) {
  return parse_rtnl_qdisc_datagram(bytes, seq, [&](const RtnlQdiscRecord& r) {
    got.push_back({r.ifindex, r.handle, r.parent, std::string(r.kind), r.queue});
  });
}

// fq_codel root on eth0 (handle 0), a tbf root on veth (7e57:), an mq child and an ingress.
std::vector<FakeQdisc> host_qdiscs() {
  std::vector<FakeQdisc> q(4);
  q[0] = {2, 0, TC_H_ROOT, "fq_codel", gnet_stats_queue{3, 4500, 17, 2, 0}};
  q[1] = {7, 0x7e570000, TC_H_ROOT, "tbf", gnet_stats_queue{40, 60000, 9, 0, 123456}};
  q[2] = {2, 0, 0x80001, "pfifo_fast", gnet_stats_queue{1, 100, 5, 0, 0}};
  q[3] = {2, 0xffff0000, TC_H_INGRESS, "ingress", gnet_stats_queue{}};
  return q;
}

TEST(RtnlQdiscParse, RecordsCarryDeviceHandleParentKindAndQueueStats) {
  std::vector<std::uint8_t> b;
  for (const auto& q : host_qdiscs()) append_newqdisc(b, 5, q);
  append_done(b, 5);
  std::vector<Got> got;
  EXPECT_EQ(parse(b, 5, got), kRtnlDumpDone);
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[0].kind, "fq_codel");
  EXPECT_EQ(got[0].ifindex, 2);
  EXPECT_EQ(got[0].parent, TC_H_ROOT);
  ASSERT_TRUE(got[0].queue);
  EXPECT_EQ(got[0].queue->qlen, 3u);
  EXPECT_EQ(got[0].queue->backlog, 4500u);
  EXPECT_EQ(got[0].queue->drops, 17u);
  EXPECT_EQ(got[0].queue->requeues, 2u) << "from TCA_STATS2, which has requeues";
  EXPECT_EQ(got[1].kind, "tbf");
  EXPECT_EQ(got[1].handle, 0x7e570000u);
  EXPECT_EQ(got[1].queue->overlimits, 123456u);
  EXPECT_EQ(got[2].parent, 0x80001u);
  EXPECT_EQ(got[3].parent, TC_H_INGRESS);
  RtnlQdiscRecord r;
  r.parent = TC_H_ROOT;
  EXPECT_TRUE(r.is_root());
  r.parent = TC_H_INGRESS;
  EXPECT_FALSE(r.is_root());
}

TEST(RtnlQdiscParse, FlatStatsServeWhenStats2IsAbsent) {
  // A message with only TCA_STATS (no TCA_STATS2): built by hand.
  std::vector<std::uint8_t> b;
  const std::size_t at = begin_message(b, RTM_NEWQDISC, 1);
  tcmsg tcm{};
  tcm.tcm_ifindex = 3;
  tcm.tcm_parent = TC_H_ROOT;
  append_bytes(b, &tcm, sizeof tcm);
  append_attr(b, TCA_KIND, "pfifo", 6);
  tc_stats flat{};
  flat.drops = 8;
  flat.overlimits = 9;
  flat.qlen = 2;
  flat.backlog = 3000;
  append_attr(b, TCA_STATS, &flat, sizeof flat);
  finish_message(b, at);
  // And one with no statistics at all.
  append_newqdisc(b, 1, FakeQdisc{4, 0, TC_H_ROOT, "noqueue", std::nullopt});
  std::vector<Got> got;
  ASSERT_EQ(parse(b, 1, got), kRtnlDumpMore);
  ASSERT_EQ(got.size(), 2u);
  ASSERT_TRUE(got[0].queue);
  EXPECT_EQ(got[0].queue->drops, 8u);
  EXPECT_EQ(got[0].queue->overlimits, 9u);
  EXPECT_EQ(got[0].queue->backlog, 3000u);
  EXPECT_EQ(got[0].queue->requeues, 0u);
  EXPECT_FALSE(got[1].queue);
}

TEST(RtnlQdiscParse, ShortStatsAndShortHeaderAreMalformed) {
  std::vector<std::uint8_t> b;
  const std::size_t at = begin_message(b, RTM_NEWQDISC, 1);
  tcmsg tcm{};
  append_bytes(b, &tcm, sizeof tcm);
  std::vector<std::uint8_t> nested;
  const std::uint32_t three[3] = {1, 2, 3};  // a gnet_stats_queue has 5 fields
  append_attr(nested, TCA_STATS_QUEUE, three, sizeof three);
  append_attr(b, TCA_STATS2, nested.data(), nested.size());
  finish_message(b, at);
  std::vector<Got> got;
  EXPECT_EQ(parse(b, 1, got), -EBADMSG);
  EXPECT_TRUE(got.empty());

  std::vector<std::uint8_t> s;
  const std::size_t at2 = begin_message(s, RTM_NEWQDISC, 1);
  append_bytes(s, &tcm, 8);  // half a tcmsg
  finish_message(s, at2);
  EXPECT_EQ(parse(s, 1, got), -EBADMSG);
}

TEST(RtnlQdiscParse, OtherMessagesAndOtherRequestsAreSkipped) {
  std::vector<std::uint8_t> b;
  append_newlink(b, 2, FakeLink{1, "lo", IFF_UP, 65536, 0, 1, stats64_from(5)});  // not a qdisc
  append_newqdisc(b, 1, host_qdiscs()[0]);  // an earlier request's answer
  append_newqdisc(b, 2, host_qdiscs()[1]);
  append_error(b, 1, -EIO);  // an earlier request's error
  append_done(b, 2);
  std::vector<Got> got;
  EXPECT_EQ(parse(b, 2, got), kRtnlDumpDone);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].kind, "tbf");
}

TEST(RtnlQdiscParse, MalformedBytesAreSafe) {
  std::vector<std::uint8_t> good;
  for (const auto& q : host_qdiscs()) append_newqdisc(good, 1, q);
  append_done(good, 1);
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<std::uint8_t> b(good.begin(), good.begin() + std::ptrdiff_t(cut));
    std::vector<Got> got;
    const int rc = parse(b, 1, got);
    EXPECT_TRUE(rc == -EBADMSG || rc == kRtnlDumpMore) << cut;
  }
  std::mt19937 rng(777);
  for (int round = 0; round < 5000; ++round) {
    auto b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    std::vector<Got> got;
    const int rc = parse(b, 1, got);
    EXPECT_TRUE(rc == kRtnlDumpMore || rc == kRtnlDumpDone || rc < 0);
    for (const auto& g : got) EXPECT_LE(g.kind.size(), good.size());
  }
}

TEST(RtnlQdiscDumper, AsksForEveryDevicesQdiscsAndReadsTheWholeAnswer) {
  FakeRtnl kernel;
  kernel.qdiscs = host_qdiscs();
  kernel.links_per_datagram = 3;  // two datagrams
  RtnlQdiscDumper d(kernel);
  ASSERT_EQ(d.open(), 0);
  std::vector<std::string> kinds;
  ASSERT_EQ(d.dump([&](const RtnlQdiscRecord& r) { kinds.emplace_back(r.kind); }), 0);
  EXPECT_EQ(kinds, (std::vector<std::string>{"fq_codel", "tbf", "pfifo_fast", "ingress"}));
  EXPECT_EQ(kernel.last_request.nlmsg_type, RTM_GETQDISC);
  EXPECT_EQ(kernel.last_request.nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(kernel.last_request.nlmsg_len, NLMSG_LENGTH(sizeof(tcmsg)));
  kernel.error_reply = EPERM;
  EXPECT_EQ(d.dump([](const RtnlQdiscRecord&) {}), -EPERM);
  EXPECT_FALSE(kernel.is_open) << "a failed dump closes the socket";
  kernel.error_reply = 0;
  kinds.clear();
  EXPECT_EQ(d.dump([&](const RtnlQdiscRecord& r) { kinds.emplace_back(r.kind); }), 0);
  EXPECT_EQ(kinds.size(), 4u);
  EXPECT_EQ(kernel.opens, 2);
}

// The live kernel, where this host allows a NETLINK_ROUTE socket: every device has a root
// qdisc (noqueue at least) and lo is there.
TEST(RtnlQdiscDumper, LiveKernelAnswers) {
  RtnlQdiscDumper d;
  if (d.open() < 0) GTEST_SKIP() << "no NETLINK_ROUTE socket here";
  int roots = 0;
  const int rc = d.dump([&](const RtnlQdiscRecord& r) { roots += r.is_root(); });
  ASSERT_EQ(rc, 0);
  EXPECT_GE(roots, 1);
}

}  // namespace
}  // namespace reveal::telemetry
