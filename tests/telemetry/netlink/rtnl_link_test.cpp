#include "telemetry/netlink/rtnl_link.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "rtnl_fake.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

// What a record said, copied out of the datagram.
struct Got {
  std::int32_t ifindex;
  std::uint32_t flags;
  std::string ifname;
  std::optional<std::uint32_t> mtu;
  std::optional<std::uint8_t> operstate, carrier;
  std::vector<std::uint64_t> stats;
};

int parse(std::span<const std::uint8_t> bytes, std::uint32_t seq, std::vector<Got>& got) {
  return parse_rtnl_link_datagram(bytes, seq, [&](const RtnlLinkRecord& r) {
    auto s = r.stats64();
    got.push_back({r.ifindex, r.flags, std::string(r.ifname), r.mtu, r.operstate, r.carrier,
                   std::vector<std::uint64_t>(s.begin(), s.end())});
  });
}

FakeLink eth(std::int32_t ifindex, const std::string& name) {
  return {ifindex, name, IFF_UP | IFF_RUNNING, 1500, IF_OPER_UP, 1, stats64_from(1000 * ifindex)};
}

TEST(RtnlLinkParse, SeveralLinksInOneDatagram) {
  std::vector<std::uint8_t> b;
  FakeLink lo{1, "lo", IFF_UP | IFF_LOOPBACK, 65536, IF_OPER_UNKNOWN, 1, stats64_from(10)};
  FakeLink down{3, "eth1", 0, 9000, IF_OPER_DOWN, 0, stats64_from(30)};
  append_newlink(b, 7, lo);
  append_newlink(b, 7, eth(2, "eth0"));
  append_newlink(b, 7, down);
  append_done(b, 7);
  std::vector<Got> got;
  EXPECT_EQ(parse(b, 7, got), kRtnlDumpDone);
  ASSERT_EQ(got.size(), 3u);
  EXPECT_EQ(got[0].ifindex, 1);
  EXPECT_EQ(got[0].ifname, "lo");
  EXPECT_EQ(got[0].flags, unsigned(IFF_UP | IFF_LOOPBACK));
  EXPECT_EQ(got[0].mtu, 65536u);
  EXPECT_EQ(got[0].operstate, IF_OPER_UNKNOWN);
  EXPECT_EQ(got[0].carrier, 1);
  ASSERT_EQ(got[0].stats.size(), 25u);  // IFLA_STATS64, not the 32-bit IFLA_STATS beside it
  EXPECT_EQ(got[0].stats[0], 10u);
  EXPECT_EQ(got[0].stats[24], 34u);
  EXPECT_EQ(got[1].ifname, "eth0");
  EXPECT_EQ(got[1].stats[12], 2012u);  // rx_crc_errors
  EXPECT_EQ(got[2].ifindex, 3);
  EXPECT_EQ(got[2].flags, 0u);
  EXPECT_EQ(got[2].operstate, IF_OPER_DOWN);
  EXPECT_EQ(got[2].carrier, 0);
}

TEST(RtnlLinkParse, DatagramWithoutDoneAsksForMore) {
  std::vector<std::uint8_t> first, second;
  append_newlink(first, 3, eth(2, "eth0"));
  append_newlink(second, 3, eth(3, "eth1"));
  append_done(second, 3);
  std::vector<Got> got;
  EXPECT_EQ(parse(first, 3, got), kRtnlDumpMore);
  EXPECT_EQ(parse(second, 3, got), kRtnlDumpDone);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[1].ifname, "eth1");
  EXPECT_EQ(parse({}, 3, got), kRtnlDumpMore);  // an empty datagram says nothing
}

TEST(RtnlLinkParse, AbsentAttributesStayEmpty) {
  std::vector<std::uint8_t> b;
  append_newlink(b, 1, FakeLink{5, "tun0", IFF_UP, std::nullopt, std::nullopt, std::nullopt, std::nullopt});
  std::vector<Got> got;
  EXPECT_EQ(parse(b, 1, got), kRtnlDumpMore);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_FALSE(got[0].mtu);
  EXPECT_FALSE(got[0].operstate);
  EXPECT_FALSE(got[0].carrier);
  EXPECT_TRUE(got[0].stats.empty());
}

TEST(RtnlLinkParse, StatsPayloadGivesAsManyFieldsAsItHolds) {
  std::vector<std::uint8_t> b;
  FakeLink old_kernel = eth(2, "eth0");
  old_kernel.stats64 = stats64_from(1, 23);  // before rx_nohandler (Linux < 4.6)
  append_newlink(b, 1, old_kernel);
  FakeLink future = eth(3, "eth1");
  future.stats64 = stats64_from(1, 40);  // more than kMaxStats: capped
  append_newlink(b, 1, future);
  std::vector<Got> got;
  ASSERT_EQ(parse(b, 1, got), kRtnlDumpMore);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].stats.size(), 23u);
  EXPECT_EQ(got[0].stats.back(), 23u);
  EXPECT_EQ(got[1].stats.size(), RtnlLinkRecord::kMaxStats);

  // A payload that is not a whole number of u64: only the whole ones.
  std::vector<std::uint8_t> odd;
  const std::size_t at = begin_message(odd, RTM_NEWLINK, 1);
  ifinfomsg ifi{};
  ifi.ifi_index = 4;
  append_bytes(odd, &ifi, sizeof ifi);
  const auto v = stats64_from(50, 3);
  append_attr(odd, IFLA_STATS64, v.data(), 2 * 8 + 4);
  finish_message(odd, at);
  got.clear();
  ASSERT_EQ(parse(odd, 1, got), kRtnlDumpMore);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].stats, (std::vector<std::uint64_t>{50, 51}));
}

TEST(RtnlLinkParse, OtherSequenceNumbersAreSkipped) {
  std::vector<std::uint8_t> b;
  append_newlink(b, 6, eth(9, "stale"));
  append_done(b, 6);  // the end of an earlier dump: not ours
  append_newlink(b, 7, eth(2, "eth0"));
  std::vector<Got> got;
  EXPECT_EQ(parse(b, 7, got), kRtnlDumpMore);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ifname, "eth0");
}

TEST(RtnlLinkParse, ErrorsFromTheKernel) {
  std::vector<std::uint8_t> b;
  append_error(b, 2, -EPERM);
  std::vector<Got> got;
  EXPECT_EQ(parse(b, 2, got), -EPERM);
  EXPECT_EQ(parse(b, 3, got), kRtnlDumpMore);  // another request's error

  std::vector<std::uint8_t> ack;
  append_error(ack, 2, 0);  // an acknowledgement, then the dump goes on
  append_newlink(ack, 2, eth(2, "eth0"));
  append_done(ack, 2);
  EXPECT_EQ(parse(ack, 2, got), kRtnlDumpDone);
  EXPECT_EQ(got.size(), 1u);

  std::vector<std::uint8_t> failed;
  append_done(failed, 2, -EINTR);  // NLMSG_DONE carrying the dump's failure
  EXPECT_EQ(parse(failed, 2, got), -EINTR);

  std::vector<std::uint8_t> short_error;
  const std::size_t at = begin_message(short_error, NLMSG_ERROR, 2, 0);
  finish_message(short_error, at);  // no room for the error field
  EXPECT_EQ(parse(short_error, 2, got), -EBADMSG);
}

TEST(RtnlLinkParse, BogusLengthsAreRejected) {
  std::vector<std::uint8_t> good;
  append_newlink(good, 1, eth(2, "eth0"));
  auto with_len = [&](std::uint32_t len) {
    auto b = good;
    std::memcpy(b.data(), &len, sizeof len);
    return b;
  };
  std::vector<Got> got;
  EXPECT_EQ(parse(with_len(0), 1, got), -EBADMSG);                      // shorter than its header
  EXPECT_EQ(parse(with_len(15), 1, got), -EBADMSG);
  EXPECT_EQ(parse(with_len(good.size() + 1), 1, got), -EBADMSG);        // past the datagram
  EXPECT_EQ(parse(with_len(0xffffffffu), 1, got), -EBADMSG);
  EXPECT_EQ(parse(with_len(sizeof(nlmsghdr) + 4), 1, got), -EBADMSG);   // shorter than ifinfomsg
  EXPECT_TRUE(got.empty());

  auto trailing = good;
  trailing.insert(trailing.end(), {1, 2, 3, 4});  // less than a header after the last message
  EXPECT_EQ(parse(trailing, 1, got), -EBADMSG);
  EXPECT_EQ(got.size(), 1u);  // the message before was whole
}

TEST(RtnlLinkParse, TruncatedAttributeIsRejected) {
  // An attribute whose length runs past its message.
  std::vector<std::uint8_t> b;
  const std::size_t at = begin_message(b, RTM_NEWLINK, 1);
  ifinfomsg ifi{};
  ifi.ifi_index = 2;
  append_bytes(b, &ifi, sizeof ifi);
  append_attr(b, IFLA_IFNAME, "eth0", 5);
  const std::size_t mtu_at = b.size();
  const std::uint32_t mtu = 1500;
  append_attr(b, IFLA_MTU, &mtu, sizeof mtu);
  finish_message(b, at);
  std::vector<Got> got;
  ASSERT_EQ(parse(b, 1, got), kRtnlDumpMore);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].mtu, 1500u);

  auto set_rta_len = [&](std::uint16_t len) {
    auto c = b;
    std::memcpy(c.data() + mtu_at, &len, sizeof len);
    return c;
  };
  got.clear();
  EXPECT_EQ(parse(set_rta_len(64), 1, got), -EBADMSG);  // past the message
  EXPECT_EQ(parse(set_rta_len(2), 1, got), -EBADMSG);   // shorter than rtattr
  EXPECT_EQ(parse(set_rta_len(6), 1, got), -EBADMSG);   // IFLA_MTU of 2 bytes
  EXPECT_TRUE(got.empty());

  // An IFLA_IFNAME without its NUL stops at the attribute's end.
  std::vector<std::uint8_t> n;
  const std::size_t nat = begin_message(n, RTM_NEWLINK, 1);
  append_bytes(n, &ifi, sizeof ifi);
  append_attr(n, IFLA_IFNAME, "abcdefgh", 8);
  finish_message(n, nat);
  ASSERT_EQ(parse(n, 1, got), kRtnlDumpMore);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].ifname, "abcdefgh");
}

// Every prefix of a valid dump and random corruptions of it: parsed safely (AddressSanitizer
// builds check that nothing is read outside the bytes), never a record with garbage lengths.
TEST(RtnlLinkParse, MalformedBytesAreSafe) {
  std::vector<std::uint8_t> good;
  append_newlink(good, 1, eth(2, "eth0"));
  append_newlink(good, 1, FakeLink{1, "lo", IFF_UP, 65536, 0, 1, stats64_from(5)});
  append_done(good, 1);
  const std::size_t first_end = [&] {
    std::uint32_t len;
    std::memcpy(&len, good.data(), sizeof len);
    return std::size_t{len};
  }();
  for (std::size_t cut = 0; cut < good.size(); ++cut) {
    std::vector<std::uint8_t> b(good.begin(), good.begin() + cut);  // its own allocation: exact end
    std::vector<Got> got;
    const int rc = parse(b, 1, got);
    if (cut == 0 || cut == first_end) {
      EXPECT_EQ(rc, kRtnlDumpMore) << cut;  // whole messages only
    } else {
      EXPECT_TRUE(rc == -EBADMSG || rc == kRtnlDumpMore) << cut;
    }
    for (const auto& g : got) EXPECT_LE(g.stats.size(), RtnlLinkRecord::kMaxStats);
  }
  std::mt19937 rng(12345);
  for (int round = 0; round < 5000; ++round) {
    auto b = good;
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int f = 0; f < flips; ++f) b[rng() % b.size()] = static_cast<std::uint8_t>(rng());
    std::vector<Got> got;
    const int rc = parse(b, 1, got);
    EXPECT_TRUE(rc == kRtnlDumpMore || rc == kRtnlDumpDone || rc < 0);
  }
}

TEST(RtnlLinkParse, UnalignedBytes) {
  std::vector<std::uint8_t> good;
  append_newlink(good, 1, eth(2, "eth0"));
  append_done(good, 1);
  std::vector<std::uint8_t> shifted(good.size() + 1);
  std::memcpy(shifted.data() + 1, good.data(), good.size());
  std::vector<Got> got;
  EXPECT_EQ(parse(std::span(shifted).subspan(1), 1, got), kRtnlDumpDone);
  ASSERT_EQ(got.size(), 1u);
  EXPECT_EQ(got[0].stats[3], 2003u);
}

TEST(RtnlLinkStats64, FieldIndicesFollowTheUapiStruct) {
  EXPECT_EQ(rtnl_link_stats64_index("rx_packets"), 0u);
  EXPECT_EQ(rtnl_link_stats64_index("tx_bytes"), 3u);
  EXPECT_EQ(rtnl_link_stats64_index("collisions"), 9u);
  EXPECT_EQ(rtnl_link_stats64_index("rx_length_errors"), 10u);
  EXPECT_EQ(rtnl_link_stats64_index("rx_crc_errors"), 12u);
  EXPECT_EQ(rtnl_link_stats64_index("rx_missed_errors"), 15u);
  EXPECT_EQ(rtnl_link_stats64_index("tx_aborted_errors"), 16u);
  EXPECT_EQ(rtnl_link_stats64_index("tx_window_errors"), 20u);
  EXPECT_EQ(rtnl_link_stats64_index("rx_nohandler"), 23u);
  EXPECT_EQ(rtnl_link_stats64_index("rx_otherhost_dropped"), 24u);
  EXPECT_FALSE(rtnl_link_stats64_index("rx_bogus"));
  EXPECT_FALSE(rtnl_link_stats64_index(""));
}

TEST(RtnlLinkDumper, OneRequestPerDumpManyDatagrams) {
  FakeRtnl fake;
  for (int i = 1; i <= 5; ++i) fake.links.push_back(eth(i, "eth" + std::to_string(i)));
  fake.links_per_datagram = 2;
  RtnlLinkDumper d(fake);
  std::vector<std::int32_t> seen;
  auto collect = [&](const RtnlLinkRecord& r) { seen.push_back(r.ifindex); };
  EXPECT_EQ(d.dump(collect), -EBADF);  // not opened
  ASSERT_EQ(d.open(), 0);
  ASSERT_EQ(d.dump(collect), 0);
  EXPECT_EQ(seen, (std::vector<std::int32_t>{1, 2, 3, 4, 5}));
  EXPECT_EQ(fake.last_request.nlmsg_type, RTM_GETLINK);
  EXPECT_EQ(fake.last_request.nlmsg_flags, NLM_F_REQUEST | NLM_F_DUMP);
  EXPECT_EQ(fake.last_request.nlmsg_len, NLMSG_LENGTH(sizeof(ifinfomsg)));
  EXPECT_EQ(fake.last_request_ifi.ifi_family, AF_UNSPEC);
  const std::uint32_t seq = fake.last_request.nlmsg_seq;
  seen.clear();
  ASSERT_EQ(d.dump(collect), 0);
  EXPECT_EQ(fake.last_request.nlmsg_seq, seq + 1);
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(fake.opens, 1);  // one socket for every dump
}

TEST(RtnlLinkDumper, AnswerToAnEarlierRequestIsSkipped) {
  FakeRtnl fake;
  fake.links = {eth(2, "eth0")};
  fake.stale_first = true;
  RtnlLinkDumper d(fake);
  ASSERT_EQ(d.open(), 0);
  int n = 0;
  EXPECT_EQ(d.dump([&](const RtnlLinkRecord&) { ++n; }), 0);
  EXPECT_EQ(n, 1);
}

// A failed dump returns -errno, and the next one runs on a fresh socket (the fake, like the
// kernel, refuses a new dump while one is still being read: EBUSY).
TEST(RtnlLinkDumper, FailuresAndRecovery) {
  FakeRtnl fake;
  fake.links = {eth(1, "a"), eth(2, "b"), eth(3, "c")};
  fake.links_per_datagram = 1;
  RtnlLinkDumper d(fake);
  ASSERT_EQ(d.open(), 0);
  auto none = [](const RtnlLinkRecord&) {};
  fake.truncate = true;
  EXPECT_EQ(d.dump(none), -EMSGSIZE);
  EXPECT_FALSE(fake.is_open);
  fake.truncate = false;
  EXPECT_EQ(d.dump(none), 0);
  EXPECT_EQ(fake.opens, 2);

  fake.error_reply = EPERM;
  EXPECT_EQ(d.dump(none), -EPERM);
  fake.error_reply = 0;
  fake.done_status = -EINTR;
  EXPECT_EQ(d.dump(none), -EINTR);
  fake.done_status = 0;
  fake.no_done = true;
  EXPECT_EQ(d.dump(none), -EAGAIN);  // the receive timeout
  fake.no_done = false;
  fake.send_errno = ENOBUFS;
  EXPECT_EQ(d.dump(none), -ENOBUFS);
  fake.send_errno = 0;
  fake.open_errno = EMFILE;
  EXPECT_EQ(d.dump(none), -EMFILE);  // the socket cannot be made again yet
  fake.open_errno = 0;
  int n = 0;
  EXPECT_EQ(d.dump([&](const RtnlLinkRecord&) { ++n; }), 0);
  EXPECT_EQ(n, 3);
  d.close();
  EXPECT_FALSE(d.is_open());
  EXPECT_EQ(d.dump(none), -EBADF);
}

// The live kernel: lo is in the dump with the index, MTU and counters sysfs shows.
TEST(RtnlLinkDumper, LiveKernel) {
  std::ifstream f("/sys/class/net/lo/ifindex");
  int lo_index = 0;
  if (!(f >> lo_index)) GTEST_SKIP() << "no /sys/class/net/lo here";
  RtnlLinkDumper d;
  if (int e = d.open(); e < 0) GTEST_SKIP() << "no NETLINK_ROUTE socket: " << std::strerror(-e);
  int found = 0;
  std::uint32_t mtu = 0;
  std::size_t n_stats = 0;
  std::uint64_t rx_packets = 0;
  ASSERT_EQ(d.dump([&](const RtnlLinkRecord& r) {
    if (r.ifname != "lo") return;
    ++found;
    EXPECT_EQ(r.ifindex, lo_index);
    mtu = r.mtu.value_or(0);
    n_stats = r.n_stats;
    rx_packets = n_stats ? r.stats[0] : 0;
  }),
            0);
  EXPECT_EQ(found, 1);
  std::uint32_t sys_mtu = 0;
  std::ifstream("/sys/class/net/lo/mtu") >> sys_mtu;
  EXPECT_EQ(mtu, sys_mtu);
  EXPECT_GE(n_stats, 23u);
  std::uint64_t sys_rx = 0;
  std::ifstream("/sys/class/net/lo/statistics/rx_packets") >> sys_rx;
  EXPECT_GE(sys_rx, rx_packets);  // read after the dump: only grows
  ASSERT_EQ(d.dump([](const RtnlLinkRecord&) {}), 0);  // and again on the same socket
}

}  // namespace
}  // namespace reveal::telemetry
