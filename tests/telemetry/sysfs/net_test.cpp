#include "telemetry/sysfs/net.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

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

}  // namespace
}  // namespace reveal::telemetry
