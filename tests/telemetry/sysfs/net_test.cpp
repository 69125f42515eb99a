#include "telemetry/sysfs/net.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../netlink/rtnl_fake.h"
#include "../probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(SysNetProbe, ChannelsPerInterfaceInNameOrder) {
  SysNetProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  // eth0, eth1: 4 link attributes + the 10 statistics /proc/net/dev lacks; lo has no speed.
  ASSERT_EQ(p.channels().size(), 14u + 14u + 13u);
  const auto n = names(p);
  EXPECT_EQ(std::vector<std::string>(n.begin(), n.begin() + 6),
            (std::vector<std::string>{"sys.net:carrier.eth0", "sys.net:mtu.eth0",
                                      "sys.net:operstate.eth0", "sys.net:speed.eth0",
                                      "sys.net:rx_crc_errors.eth0", "sys.net:rx_frame_errors.eth0"}));
  EXPECT_EQ(n[14], "sys.net:carrier.eth1");
  EXPECT_EQ(n[28], "sys.net:carrier.lo");
  EXPECT_EQ(n[29], "sys.net:mtu.lo");
  EXPECT_EQ(n[30], "sys.net:operstate.lo");
  EXPECT_EQ(n[31], "sys.net:rx_crc_errors.lo");
  EXPECT_EQ(n.back(), "sys.net:tx_window_errors.lo");
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.subsystem, Subsystem::network) << c.name;
    for (const char* dup : {"rx_bytes", "tx_packets", "rx_errors", "tx_dropped", "multicast", "collisions"})
      EXPECT_FALSE(c.name.starts_with(std::string("sys.net:") + dup + ".")) << c.name << ": also in /proc/net/dev";
    EXPECT_EQ(c.name.find("bonding_masters"), std::string::npos);
    EXPECT_FALSE(c.help.empty()) << c.name;
  }
  expect_names_follow_rule(p, "sys.net");
}

TEST(SysNetProbe, UnitsAndKinds) {
  SysNetProbe p;
  ASSERT_TRUE(p.open(fixture("host-2socket")).available);
  auto check = [&](const std::string& name, const std::string& unit, Kind kind) {
    EXPECT_EQ(info(p, name).unit, unit) << name;
    EXPECT_EQ(info(p, name).kind, kind) << name;
  };
  check("sys.net:rx_crc_errors.eth0", "count", Kind::counter);
  check("sys.net:rx_missed_errors.eth0", "count", Kind::counter);
  check("sys.net:tx_carrier_errors.eth0", "count", Kind::counter);
  check("sys.net:speed.eth0", "Mb/s", Kind::gauge);
  check("sys.net:mtu.eth0", "bytes", Kind::gauge);
  check("sys.net:carrier.eth0", "bool", Kind::state);
  check("sys.net:operstate.eth0", "state", Kind::state);
  EXPECT_NE(info(p, "sys.net:operstate.eth0").help.find("up=1 down=2 testing=3 unknown=4 "
                                                         "dormant=5 notPresent=6 lowerLayerDown=7"),
            std::string::npos);
}

TEST(SysNetProbe, ExactValues) {
  SysNetProbe p;
  ASSERT_TRUE(p.open(fixture("host-2socket")).available);
  const auto v = sample(p);
  EXPECT_EQ(value(p, v, "sys.net:carrier.eth0"), 1);
  EXPECT_EQ(value(p, v, "sys.net:mtu.eth0"), 9000);
  EXPECT_EQ(value(p, v, "sys.net:operstate.eth0"), 1);  // up
  EXPECT_EQ(value(p, v, "sys.net:speed.eth0"), 25000);
  EXPECT_EQ(value(p, v, "sys.net:rx_crc_errors.eth0"), 1004);
  EXPECT_EQ(value(p, v, "sys.net:rx_missed_errors.eth0"), 1010);
  EXPECT_EQ(value(p, v, "sys.net:carrier.eth1"), 0);
  EXPECT_EQ(value(p, v, "sys.net:operstate.eth1"), 2);  // down
  EXPECT_TRUE(std::isnan(value(p, v, "sys.net:speed.eth1")));  // -1: unknown
  EXPECT_EQ(value(p, v, "sys.net:mtu.eth1"), 1500);
  EXPECT_EQ(value(p, v, "sys.net:rx_frame_errors.eth1"), 2008);
  EXPECT_EQ(value(p, v, "sys.net:operstate.lo"), 4);  // unknown
  EXPECT_EQ(value(p, v, "sys.net:mtu.lo"), 65536);
  EXPECT_EQ(value(p, v, "sys.net:tx_window_errors.lo"), 3023);
}

TEST(SysNetProbe, OperstateEncodingRfc2863) {
  EXPECT_EQ(SysNetProbe::operstate_code("up"), 1);
  EXPECT_EQ(SysNetProbe::operstate_code("down"), 2);
  EXPECT_EQ(SysNetProbe::operstate_code("testing"), 3);
  EXPECT_EQ(SysNetProbe::operstate_code("unknown"), 4);
  EXPECT_EQ(SysNetProbe::operstate_code("dormant"), 5);
  EXPECT_EQ(SysNetProbe::operstate_code("notpresent"), 6);
  EXPECT_EQ(SysNetProbe::operstate_code("lowerlayerdown"), 7);
  EXPECT_TRUE(std::isnan(SysNetProbe::operstate_code("bogus")));
  EXPECT_TRUE(std::isnan(SysNetProbe::operstate_code("")));

  TempRoot root("host-2socket");
  SysNetProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write("sys/class/net/eth0/operstate", "lowerlayerdown\n");
  root.write("sys/class/net/eth1/operstate", "dormant\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "sys.net:operstate.eth0"), 7);
  EXPECT_EQ(value(p, v, "sys.net:operstate.eth1"), 5);
}

TEST(SysNetProbe, SpeedUnknownIsNanAndLinkComingUpReads) {
  TempRoot root("host-2socket");
  SysNetProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write("sys/class/net/eth0/speed", "4294967295\n");  // SPEED_UNKNOWN printed unsigned
  EXPECT_TRUE(std::isnan(value(p, sample(p), "sys.net:speed.eth0")));
  root.write("sys/class/net/eth1/speed", "100000\n");
  root.write("sys/class/net/eth1/carrier", "1\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "sys.net:speed.eth1"), 100000);
  EXPECT_EQ(value(p, v, "sys.net:carrier.eth1"), 1);
}

TEST(SysNetProbe, RemovedInterfaceIsNanSiblingsKeepValues) {
  TempRoot root("host-2socket");
  SysNetProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("sys/class/net/eth1");
  const auto v = sample(p);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& name = p.channels()[i].name;
    if (name.ends_with(".eth1"))
      EXPECT_TRUE(std::isnan(v[i])) << name;
    else
      EXPECT_TRUE(std::isfinite(v[i])) << name;
  }
  EXPECT_EQ(value(p, v, "sys.net:rx_crc_errors.eth0"), 1004);
  EXPECT_EQ(value(p, v, "sys.net:mtu.lo"), 65536);
  // The interface comes back (same name): its channels read again.
  root.write("sys/class/net/eth1/mtu", "4000\n");
  EXPECT_EQ(value(p, sample(p), "sys.net:mtu.eth1"), 4000);
}

TEST(SysNetProbe, FollowsClassSymlinksLikeARealHost) {
  TempRoot root("host-2socket");
  root.write("sys/devices/virtual/net/veth9/mtu", "1450\n");
  root.write("sys/devices/virtual/net/veth9/operstate", "up\n");
  root.write("sys/devices/virtual/net/veth9/statistics/rx_crc_errors", "77\n");
  std::filesystem::create_directory_symlink("../../devices/virtual/net/veth9",
                                            root.path() / "sys/class/net/veth9");
  SysNetProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const auto v = sample(p);
  EXPECT_EQ(value(p, v, "sys.net:mtu.veth9"), 1450);
  EXPECT_EQ(value(p, v, "sys.net:operstate.veth9"), 1);
  EXPECT_EQ(value(p, v, "sys.net:rx_crc_errors.veth9"), 77);
  EXPECT_EQ(p.channels().back().name, "sys.net:rx_crc_errors.veth9");  // "veth9" sorts after "lo"
}

TEST(SysNetProbe, UnreadableAttributeIsSkipped) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  TempRoot root("host-2socket");
  ASSERT_EQ(::chmod((root.path() / "sys/class/net/eth0/mtu").c_str(), 0), 0);
  SysNetProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  for (const auto& c : p.channels()) EXPECT_NE(c.name, "sys.net:mtu.eth0");
}

TEST(SysNetProbe, UnavailableWithoutSysClassNet) {
  SysNetProbe p;
  auto st = p.open(fixture("edge-missing"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("sys/class/net"), std::string::npos) << st.reason;
  EXPECT_TRUE(p.channels().empty());
}

TEST(SysNetProbe, CapturedVm) {
  SysNetProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  const auto v = sample(p);
  EXPECT_EQ(value(p, v, "sys.net:mtu.eth0"), 1400);
  EXPECT_EQ(value(p, v, "sys.net:operstate.eth0"), 1);
  EXPECT_TRUE(std::isnan(value(p, v, "sys.net:speed.eth0")));  // virtio: -1
  EXPECT_EQ(value(p, v, "sys.net:operstate.lo"), 4);
  EXPECT_TRUE(std::isfinite(value(p, v, "sys.net:rx_crc_errors.lo")));
}

TEST(SysNetProbe, LiveHost) {
  SysNetProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  std::error_code ec;
  if (!std::filesystem::exists("/sys/class/net/lo/statistics/rx_bytes", ec)) {
    EXPECT_FALSE(st.reason.empty());
    GTEST_SKIP() << "no /sys/class/net/lo here";
  }
  ASSERT_TRUE(st.available) << st.reason;
  const auto v = sample(p);
  EXPECT_TRUE(std::isfinite(value(p, v, "sys.net:rx_crc_errors.lo")));
  EXPECT_TRUE(std::isfinite(value(p, v, "sys.net:mtu.lo")));
  EXPECT_EQ(value(p, v, "sys.net:operstate.lo"), 4);  // lo reports "unknown"
  for (std::size_t i = 0; i < v.size(); ++i)
    if (p.channels()[i].name == "sys.net:speed.lo") {
      EXPECT_TRUE(std::isnan(v[i]));  // EINVAL
    }
}

// --- The rtnetlink path, on a scripted NETLINK_ROUTE (rtnl_fake.h) ---------------------------

TEST(SysNetProbeNetlink, SameChannelsValuesFromTheDump) {
  NetlinkHost host;
  SysNetProbe sysfs(SysNetProbe::Path::sysfs_only), nl(host.kernel);
  ASSERT_TRUE(sysfs.open(host.root.path()).available);
  ASSERT_TRUE(nl.open(host.root.path()).available);
  EXPECT_EQ(sysfs.netlink_channels(), 0u);
  EXPECT_EQ(sysfs.sysfs_only_reason(), "sysfs only by choice");
  ASSERT_EQ(nl.channels().size(), sysfs.channels().size());
  for (std::size_t i = 0; i < nl.channels().size(); ++i) {
    const auto &a = nl.channels()[i], &b = sysfs.channels()[i];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.unit, b.unit);
    EXPECT_EQ(a.kind, b.kind);
    EXPECT_EQ(a.help, b.help);
  }
  EXPECT_EQ(nl.netlink_channels(), nl.channels().size() - 2);  // all but speed.eth0, speed.eth1
  EXPECT_TRUE(nl.sysfs_only_reason().empty());
  const auto v = sample(nl);
  EXPECT_EQ(host.kernel.dumps, 2);  // one at open, one per tick
  EXPECT_EQ(value(nl, v, "sys.net:mtu.lo"), 65535);
  EXPECT_EQ(value(nl, v, "sys.net:mtu.eth0"), 9001);
  EXPECT_EQ(value(nl, v, "sys.net:mtu.eth1"), 1501);
  EXPECT_EQ(value(nl, v, "sys.net:carrier.eth0"), 1);
  EXPECT_EQ(value(nl, v, "sys.net:operstate.eth0"), 1);
  EXPECT_EQ(value(nl, v, "sys.net:operstate.eth1"), 2);
  EXPECT_EQ(value(nl, v, "sys.net:operstate.lo"), 4);
  EXPECT_EQ(value(nl, v, "sys.net:speed.eth0"), 25000);  // sysfs: netlink has no speed
  // Each statistics file reads its rtnl_link_stats64 field (base + uapi index).
  EXPECT_EQ(value(nl, v, "sys.net:rx_length_errors.eth0"), 210);
  EXPECT_EQ(value(nl, v, "sys.net:rx_over_errors.eth0"), 211);
  EXPECT_EQ(value(nl, v, "sys.net:rx_crc_errors.eth0"), 212);
  EXPECT_EQ(value(nl, v, "sys.net:rx_frame_errors.eth0"), 213);
  EXPECT_EQ(value(nl, v, "sys.net:rx_missed_errors.eth0"), 215);
  EXPECT_EQ(value(nl, v, "sys.net:tx_aborted_errors.eth1"), 316);
  EXPECT_EQ(value(nl, v, "sys.net:tx_carrier_errors.eth1"), 317);
  EXPECT_EQ(value(nl, v, "sys.net:tx_heartbeat_errors.eth1"), 319);
  EXPECT_EQ(value(nl, v, "sys.net:tx_window_errors.lo"), 120);
  EXPECT_EQ(value(nl, v, "sys.net:rx_nohandler.lo"), 123);
  for (double x : v) EXPECT_NE(x, -12345.0);  // every channel written
}

TEST(SysNetProbeNetlink, CarrierIsNanUnlessAdminUp) {
  NetlinkHost host;
  SysNetProbe p(host.kernel);
  ASSERT_TRUE(p.open(host.root.path()).available);
  EXPECT_TRUE(std::isnan(value(p, sample(p), "sys.net:carrier.eth1")));  // down, IFLA_CARRIER 0
  host.kernel.link("eth1")->carrier = 1;
  EXPECT_TRUE(std::isnan(value(p, sample(p), "sys.net:carrier.eth1")));  // still not IFF_UP
  host.kernel.link("eth1")->flags = IFF_UP;
  host.kernel.link("eth1")->carrier = 0;
  EXPECT_EQ(value(p, sample(p), "sys.net:carrier.eth1"), 0);  // up, no carrier
  host.kernel.link("eth1")->carrier = 1;
  EXPECT_EQ(value(p, sample(p), "sys.net:carrier.eth1"), 1);
}

TEST(SysNetProbeNetlink, OperstateMapsIfOperToRfc2863) {
  EXPECT_EQ(SysNetProbe::if_oper_code(IF_OPER_UNKNOWN), 4);
  EXPECT_EQ(SysNetProbe::if_oper_code(IF_OPER_NOTPRESENT), 6);
  EXPECT_EQ(SysNetProbe::if_oper_code(IF_OPER_DOWN), 2);
  EXPECT_EQ(SysNetProbe::if_oper_code(IF_OPER_LOWERLAYERDOWN), 7);
  EXPECT_EQ(SysNetProbe::if_oper_code(IF_OPER_TESTING), 3);
  EXPECT_EQ(SysNetProbe::if_oper_code(IF_OPER_DORMANT), 5);
  EXPECT_EQ(SysNetProbe::if_oper_code(IF_OPER_UP), 1);
  EXPECT_TRUE(std::isnan(SysNetProbe::if_oper_code(7)));
  // Same code as the sysfs word for each state (operstates[] of net/core/net-sysfs.c).
  const char* words[] = {"unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"};
  for (std::uint8_t s = 0; s < 7; ++s)
    EXPECT_EQ(SysNetProbe::if_oper_code(s), SysNetProbe::operstate_code(words[s])) << words[s];

  NetlinkHost host;
  SysNetProbe p(host.kernel);
  ASSERT_TRUE(p.open(host.root.path()).available);
  for (std::uint8_t s = 0; s < 7; ++s) {
    host.kernel.link("eth0")->operstate = s;
    EXPECT_EQ(value(p, sample(p), "sys.net:operstate.eth0"), SysNetProbe::operstate_code(words[s]));
  }
  host.kernel.link("eth0")->operstate = 42;
  EXPECT_TRUE(std::isnan(value(p, sample(p), "sys.net:operstate.eth0")));
}

TEST(SysNetProbeNetlink, InterfaceMissingFromTheDumpIsNan) {
  NetlinkHost host;
  SysNetProbe p(host.kernel);
  ASSERT_TRUE(p.open(host.root.path()).available);
  const FakeLink eth0 = *host.kernel.link("eth0");
  host.kernel.links.erase(host.kernel.links.begin() + 1);
  auto v = sample(p);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& name = p.channels()[i].name;
    if (name == "sys.net:speed.eth0") {
      EXPECT_EQ(v[i], 25000) << name;  // on sysfs, whose file is still there
    } else if (name.ends_with(".eth0")) {
      EXPECT_TRUE(std::isnan(v[i])) << name;
    } else if (name != "sys.net:carrier.eth1" && name != "sys.net:speed.eth1") {
      EXPECT_TRUE(std::isfinite(v[i])) << name;
    }
  }
  // Back under the same index: reads again.
  host.kernel.links.push_back(eth0);
  EXPECT_EQ(value(p, sample(p), "sys.net:mtu.eth0"), 9001);

  // Re-created under a new index (driver reload): gone one tick, then the new one is eth0.
  host.kernel.links.pop_back();
  EXPECT_TRUE(std::isnan(value(p, sample(p), "sys.net:mtu.eth0")));
  FakeLink again = eth0;
  again.ifindex = 17;
  again.mtu = 4000;
  host.kernel.links.push_back(again);
  EXPECT_EQ(value(p, sample(p), "sys.net:mtu.eth0"), 4000);
  EXPECT_EQ(value(p, sample(p), "sys.net:rx_crc_errors.eth0"), 212);

  // Renamed (same index): the channels follow the index; a newcomer taking the old name
  // while the renamed interface is still there does not take them.
  host.kernel.link("eth0")->name = "wan0";
  FakeLink newcomer = eth0;
  newcomer.ifindex = 18;
  newcomer.mtu = 1280;
  host.kernel.links.push_back(newcomer);
  EXPECT_EQ(value(p, sample(p), "sys.net:mtu.eth0"), 4000);
}

TEST(SysNetProbeNetlink, FailedDumpIsNanThenRecovers) {
  NetlinkHost host;
  SysNetProbe p(host.kernel);
  ASSERT_TRUE(p.open(host.root.path()).available);
  host.kernel.links_per_datagram = 1;
  auto only_speed_finite = [&](const std::vector<double>& v) {
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto& name = p.channels()[i].name;
      if (name == "sys.net:speed.eth0") {
        EXPECT_EQ(v[i], 25000) << name;  // a sysfs sibling is unaffected
      } else {
        EXPECT_TRUE(std::isnan(v[i])) << name;
      }
    }
  };
  host.kernel.error_reply = EIO;
  only_speed_finite(sample(p));
  host.kernel.error_reply = 0;
  EXPECT_EQ(value(p, sample(p), "sys.net:mtu.lo"), 65535);

  // Failing after some records were read: those are not kept either.
  host.kernel.done_status = -EINTR;
  only_speed_finite(sample(p));
  host.kernel.done_status = 0;
  host.kernel.truncate = true;
  only_speed_finite(sample(p));
  host.kernel.truncate = false;
  const int opens = host.kernel.opens;
  EXPECT_EQ(value(p, sample(p), "sys.net:rx_crc_errors.eth1"), 312);
  EXPECT_EQ(host.kernel.opens, opens + 1);  // on a fresh socket
}

TEST(SysNetProbeNetlink, ShortStatsPayloadLeavesTheRestOnSysfs) {
  NetlinkHost host;
  host.kernel.link("eth0")->stats64 = stats64_from(200, 12);  // up to rx_over_errors (11)
  SysNetProbe p(host.kernel);
  ASSERT_TRUE(p.open(host.root.path()).available);
  const auto v = sample(p);
  EXPECT_EQ(value(p, v, "sys.net:rx_over_errors.eth0"), 211);    // the dump
  EXPECT_EQ(value(p, v, "sys.net:rx_crc_errors.eth0"), 1004);    // the fixture file
  EXPECT_EQ(value(p, v, "sys.net:rx_crc_errors.eth1"), 312);
  EXPECT_EQ(p.netlink_channels(), p.channels().size() - 2 - 8);  // speeds, 8 of eth0's counters
}

TEST(SysNetProbeNetlink, MismatchKeepsEverythingOnSysfs) {
  {  // another namespace's tree: an index that differs
    NetlinkHost host;
    host.root.write("sys/class/net/eth1/ifindex", "33\n");
    SysNetProbe p(host.kernel);
    ASSERT_TRUE(p.open(host.root.path()).available);
    EXPECT_EQ(p.netlink_channels(), 0u);
    EXPECT_NE(p.sysfs_only_reason().find("eth1: the RTM_GETLINK dump's ifindex differs"), std::string::npos)
        << p.sysfs_only_reason();
    const auto v = sample(p);
    EXPECT_EQ(value(p, v, "sys.net:mtu.eth0"), 9000);  // the tree's values
    EXPECT_EQ(value(p, v, "sys.net:rx_crc_errors.eth0"), 1004);
    EXPECT_FALSE(host.kernel.is_open);
  }
  {  // an interface the kernel does not have
    NetlinkHost host;
    host.kernel.links.pop_back();
    SysNetProbe p(host.kernel);
    ASSERT_TRUE(p.open(host.root.path()).available);
    EXPECT_EQ(p.netlink_channels(), 0u);
    EXPECT_NE(p.sysfs_only_reason().find("eth1: not in"), std::string::npos) << p.sysfs_only_reason();
  }
  {  // no ifindex file (the fixture as captured)
    FakeRtnl kernel;
    kernel.links = NetlinkHost().kernel.links;
    SysNetProbe p(kernel);
    ASSERT_TRUE(p.open(fixture("host-2socket")).available);
    EXPECT_EQ(p.netlink_channels(), 0u);
    EXPECT_NE(p.sysfs_only_reason().find("eth0: no interface index in"), std::string::npos)
        << p.sysfs_only_reason();
  }
  {  // no socket, or a first dump that fails
    NetlinkHost host;
    host.kernel.open_errno = EAFNOSUPPORT;
    SysNetProbe p(host.kernel);
    ASSERT_TRUE(p.open(host.root.path()).available);
    EXPECT_EQ(p.netlink_channels(), 0u);
    EXPECT_NE(p.sysfs_only_reason().find("NETLINK_ROUTE socket"), std::string::npos);
    host.kernel.open_errno = 0;
    host.kernel.error_reply = EPERM;
    ASSERT_TRUE(p.open(host.root.path()).available);
    EXPECT_EQ(p.netlink_channels(), 0u);
    EXPECT_NE(p.sysfs_only_reason().find("RTM_GETLINK dump"), std::string::npos);
    EXPECT_EQ(value(p, sample(p), "sys.net:mtu.eth1"), 1500);
  }
  {  // a fixture root with the live kernel: never paired
    SysNetProbe p;
    ASSERT_TRUE(p.open(fixture("host-2socket")).available);
    EXPECT_EQ(p.netlink_channels(), 0u);
    EXPECT_NE(p.sysfs_only_reason().find("is not the live /sys/class/net"), std::string::npos);
  }
}

// This host: both paths give the same values for lo (counters may only grow from the
// sysfs reading to the netlink one, taken after it).
TEST(SysNetProbeNetlink, LiveHostAgreesWithSysfs) {
  std::error_code ec;
  if (!std::filesystem::exists("/sys/class/net/lo/statistics/rx_crc_errors", ec))
    GTEST_SKIP() << "no /sys/class/net/lo here";
  SysNetProbe sysfs(SysNetProbe::Path::sysfs_only), nl;
  ASSERT_TRUE(sysfs.open("/").available);
  ASSERT_TRUE(nl.open("/").available);
  if (nl.netlink_channels() == 0) GTEST_SKIP() << "netlink unusable here: " << nl.sysfs_only_reason();
  ASSERT_EQ(names(nl), names(sysfs));
  const auto a = sample(sysfs);
  const auto b = sample(nl);
  int compared = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto& c = nl.channels()[i];
    if (!c.name.ends_with(".lo")) continue;
    ++compared;
    if (c.kind == Kind::counter) {
      ASSERT_TRUE(std::isfinite(a[i]) && std::isfinite(b[i])) << c.name;
      EXPECT_GE(b[i], a[i]) << c.name;
    } else if (std::isnan(a[i])) {
      EXPECT_TRUE(std::isnan(b[i])) << c.name;
    } else {
      EXPECT_EQ(b[i], a[i]) << c.name;
    }
  }
  EXPECT_GE(compared, 13);
  EXPECT_EQ(value(nl, b, "sys.net:operstate.lo"), 4);
  EXPECT_GE(nl.netlink_channels(), 12u);  // lo at least: carrier, mtu, operstate, 10 counters
}

}  // namespace
}  // namespace reveal::telemetry
