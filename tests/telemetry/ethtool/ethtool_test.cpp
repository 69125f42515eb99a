#include "telemetry/ethtool/ethtool.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <fstream>

#include "../probe_test_util.h"
#include "ethtool_fake.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

std::size_t index_in(const FakeEthtool::Nic& n, const std::string& stat) {
  auto it = std::find(n.names.begin(), n.names.end(), stat);
  EXPECT_NE(it, n.names.end()) << stat;
  return static_cast<std::size_t>(it - n.names.begin());
}

std::vector<std::string> channels_of(const Probe& p, const std::string& iface) {
  std::vector<std::string> out;
  for (const auto& c : p.channels())
    if (c.name.ends_with("." + iface)) out.push_back(c.name);
  return out;
}

TEST(EthtoolSelection, PerQueueRule) {
  for (const char* q : {"rx0_packets", "tx12_bytes", "ch3_events", "rx0_xdp_drop", "tx0_dropped",
                        "ptp_cq0_cqe", "txq0_pktnum_rcd", "rx_queue_0_packets", "tx_queue_15_bytes",
                        "queue_0_tx_cnt", "txq_0_pkts", "rvec_1_rx_pkts", "rx_q3_errors", "tx-0.tx_packets",
                        "rx-11.rx_bytes", "[0]: rx_ucast_packets", "rx_posted_desc[0]", "RX0_Packets"})
    EXPECT_TRUE(EthtoolProbe::is_per_queue(q)) << q;
  for (const char* keep : {"rx_packets", "rx_prio0_pause", "tx_prio7_pause_duration", "tx_pb_0_pxon",
                           "port.rx_priority_3_xoff", "rx_priority_0_xoff.nic", "rx_64_bytes_phy",
                           "rx_65_to_127_bytes_phy", "tx_queue_dropped", "rx_out_of_buffer",
                           "link_xoff_rx", "rx_missed_errors", "port.rx_dropped", "rx_pfc_ena_frames_pri0",
                           "os2bmc_rx_by_bmc", "rx_discards_phy", "ch_events", "port.rx_size_64"})
    EXPECT_FALSE(EthtoolProbe::is_per_queue(keep)) << keep;
}

TEST(EthtoolSelection, ClassesAndUnits) {
  using C = EthtoolProbe::StatClass;
  EXPECT_EQ(EthtoolProbe::classify("rx_prio3_pause"), C::pause);
  EXPECT_EQ(EthtoolProbe::classify("rx_pause_ctrl_phy"), C::pause);
  EXPECT_EQ(EthtoolProbe::classify("link_XOFF_rx"), C::pause);
  EXPECT_EQ(EthtoolProbe::classify("tx_pb_2_pxon"), C::pause);
  EXPECT_EQ(EthtoolProbe::classify("rx_pfc_ena_frames_pri0"), C::pause);
  EXPECT_EQ(EthtoolProbe::classify("rx_discards_phy"), C::drop_error);
  EXPECT_EQ(EthtoolProbe::classify("rx_out_of_buffer"), C::drop_error);
  EXPECT_EQ(EthtoolProbe::classify("rx_crc_errors_phy"), C::drop_error);
  EXPECT_EQ(EthtoolProbe::classify("rx_missed_errors"), C::drop_error);
  EXPECT_EQ(EthtoolProbe::classify("tx_queue_dropped"), C::drop_error);
  EXPECT_EQ(EthtoolProbe::classify("tx_timeout_count"), C::drop_error);
  EXPECT_EQ(EthtoolProbe::classify("rx_prio0_bytes"), C::priority);
  EXPECT_EQ(EthtoolProbe::classify("rx_packets"), C::other);
  EXPECT_EQ(EthtoolProbe::classify("rx_csum_complete"), C::other);

  EXPECT_EQ(EthtoolProbe::unit_of("rx_bytes"), "bytes");
  EXPECT_EQ(EthtoolProbe::unit_of("rx_bytes_phy"), "bytes");
  EXPECT_EQ(EthtoolProbe::unit_of("rx_octets.nic"), "bytes");
  EXPECT_EQ(EthtoolProbe::unit_of("rx_prio0_packets"), "packets");
  EXPECT_EQ(EthtoolProbe::unit_of("rx_oversize_pkts_phy"), "packets");
  EXPECT_EQ(EthtoolProbe::unit_of("rx_64_bytes_phy"), "packets");  // a size bin counts packets
  EXPECT_EQ(EthtoolProbe::unit_of("rx_65_to_127_bytes_phy"), "packets");
  EXPECT_EQ(EthtoolProbe::unit_of("rx_pause_ctrl_phy"), "count");
  EXPECT_EQ(EthtoolProbe::unit_of("rx_discards_phy"), "count");
  EXPECT_EQ(EthtoolProbe::unit_of("bytespersec"), "count");  // whole words only
}

TEST(EthtoolSelection, CapKeepsPauseThenErrorsThenPrioritiesInDriverOrder) {
  std::vector<std::string> s;
  for (int i = 0; i < 20; ++i) s.push_back("misc_" + std::to_string(i));            // 0..19 other
  for (int i = 0; i < 5; ++i) s.push_back("rx_prio" + std::to_string(i) + "_bytes");  // 20..24 prio
  for (int i = 0; i < 4; ++i) s.push_back("err_" + std::to_string(i) + "_count");     // 25..28 errors
  for (int i = 0; i < 3; ++i) s.push_back("tx_prio" + std::to_string(i) + "_pause");  // 29..31 pause
  for (int i = 0; i < 6; ++i) s.push_back("rx" + std::to_string(i) + "_packets");     // 32..37 queues
  EXPECT_EQ(EthtoolProbe::select(s, 10),
            (std::vector<std::size_t>{20, 21, 22, 25, 26, 27, 28, 29, 30, 31}));
  EXPECT_EQ(EthtoolProbe::select(s, 3), (std::vector<std::size_t>{29, 30, 31}));
  EXPECT_EQ(EthtoolProbe::select(s, 0), std::vector<std::size_t>{});
  const auto all = EthtoolProbe::select(s);  // under the default cap: everything but queues
  ASSERT_EQ(all.size(), 32u);
  for (std::size_t i = 0; i < all.size(); ++i) EXPECT_EQ(all[i], i);
  // The default cap holds per NIC.
  std::vector<std::string> many;
  for (int i = 0; i < 500; ++i) many.push_back("stat_" + std::to_string(i) + (i % 5 == 0 ? "_pause" : ""));
  const auto capped = EthtoolProbe::select(many);
  ASSERT_EQ(capped.size(), EthtoolProbe::kMaxStatsPerNic);
  EXPECT_EQ(std::count_if(capped.begin(), capped.end(), [](std::size_t i) { return i % 5 == 0; }), 100);
}

TEST(EthtoolProbe, ChannelsOnFixture) {
  FakeEthtool fake;
  script_fixture_host(fake);
  EthtoolProbe p(fake);
  auto st = p.open(fixture("host-ethtool-nics"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_TRUE(st.reason.empty());
  EXPECT_TRUE(fake.is_open);
  // Only the physical NICs are asked, in name order; lo, veth0, br0 are not.
  EXPECT_EQ(fake.asked, (std::vector<std::string>{"eno1", "eth0", "eth1"}));

  EXPECT_EQ(channels_of(p, "eno1"),
            (std::vector<std::string>{"ethtool:rx_unicast.eno1", "ethtool:port_rx_dropped.eno1",
                                      "ethtool:port_link_xoff_rx.eno1", "ethtool:port_rx_priority_3_xoff.eno1",
                                      "ethtool:port_rx_errors_0.eno1", "ethtool:port_rx_errors_1.eno1",
                                      "ethtool:port_rx_size_64.eno1"}));
  const auto eth0 = channels_of(p, "eth0");
  ASSERT_EQ(eth0.size(), 8u + 8u + 32u);  // per-queue rx<N>_, tx<N>_, ch<N>_ dropped
  EXPECT_EQ(std::vector<std::string>(eth0.begin(), eth0.begin() + 9),
            (std::vector<std::string>{"ethtool:rx_packets.eth0", "ethtool:rx_bytes.eth0",
                                      "ethtool:tx_packets.eth0", "ethtool:tx_bytes.eth0",
                                      "ethtool:rx_csum_complete.eth0", "ethtool:tx_queue_dropped.eth0",
                                      "ethtool:rx_wqe_err.eth0", "ethtool:rx_out_of_buffer.eth0",
                                      "ethtool:rx_packets_phy.eth0"}));
  EXPECT_EQ(eth0.back(), "ethtool:tx_prio7_pause.eth0");
  EXPECT_TRUE(channels_of(p, "eth1").empty());  // EOPNOTSUPP: skipped, siblings kept
  EXPECT_EQ(p.channels().size(), 7u + 48u);
  EXPECT_EQ(p.channels().front().name, "ethtool:rx_unicast.eno1");  // eno1 sorts before eth0

  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.kind, Kind::counter) << c.name;
    EXPECT_EQ(c.subsystem, Subsystem::network) << c.name;
    EXPECT_EQ(c.counter_bits, 64) << c.name;
    EXPECT_NE(c.help.find("(ethtool -S "), std::string::npos) << c.help;
    EXPECT_EQ(c.name.find_first_of(" []"), std::string::npos) << c.name;
    const auto field = c.name.substr(8, c.name.rfind('.') - 8);
    EXPECT_EQ(field.find('.'), std::string::npos) << c.name;  // the index is after the only '.'
  }
  expect_names_follow_rule(p, "ethtool");
  EXPECT_EQ(info(p, "ethtool:rx_bytes_phy.eth0").unit, "bytes");
  EXPECT_EQ(info(p, "ethtool:rx_prio2_packets.eth0").unit, "packets");
  EXPECT_EQ(info(p, "ethtool:rx_64_bytes_phy.eth0").unit, "packets");
  EXPECT_EQ(info(p, "ethtool:rx_prio2_pause.eth0").unit, "count");
  EXPECT_EQ(info(p, "ethtool:rx_pause_ctrl_phy.eth0").unit, "count");
  EXPECT_EQ(info(p, "ethtool:rx_prio2_pause.eth0").help,
            "pause/PFC flow control: driver statistic rx_prio2_pause (ethtool -S eth0)");
  EXPECT_EQ(info(p, "ethtool:port_rx_dropped.eno1").help,
            "drops/errors: driver statistic port.rx_dropped (ethtool -S eno1)");
}

TEST(EthtoolProbe, ExactValuesEveryTick) {
  FakeEthtool fake;
  script_fixture_host(fake);
  EthtoolProbe p(fake);
  ASSERT_TRUE(p.open(fixture("host-ethtool-nics")).available);
  const auto& e0 = fake.nics["eth0"];
  const auto& en = fake.nics["eno1"];
  auto v = sample(p);
  EXPECT_TRUE(all_finite(v));
  for (const char* s : {"rx_prio3_pause", "tx_prio0_pause", "rx_pause_ctrl_phy", "rx_discards_phy",
                        "rx_out_of_buffer", "rx_64_bytes_phy", "tx_bytes"})
    EXPECT_EQ(value(p, v, std::string("ethtool:") + s + ".eth0"), 1000 + 7 * index_in(e0, s)) << s;
  EXPECT_EQ(value(p, v, "ethtool:port_link_xoff_rx.eno1"), 5004);
  EXPECT_EQ(value(p, v, "ethtool:port_rx_errors_0.eno1"), 5006);
  EXPECT_EQ(value(p, v, "ethtool:port_rx_errors_1.eno1"), 5007);

  fake.nics["eth0"].values[index_in(e0, "tx_prio3_pause")] = 123456789012345ull;
  fake.nics["eno1"].values[index_in(en, "port.rx_dropped")] = 42;
  v = sample(p);
  EXPECT_EQ(value(p, v, "ethtool:tx_prio3_pause.eth0"), 123456789012345.0);
  EXPECT_EQ(value(p, v, "ethtool:port_rx_dropped.eno1"), 42);
  EXPECT_EQ(value(p, v, "ethtool:rx_prio3_pause.eth0"), 1000 + 7 * index_in(e0, "rx_prio3_pause"));
}

TEST(EthtoolProbe, FailingNicIsNanSiblingsKeepValues) {
  FakeEthtool fake;
  script_fixture_host(fake);
  EthtoolProbe p(fake);
  ASSERT_TRUE(p.open(fixture("host-ethtool-nics")).available);
  for (int err : {ENODEV, EIO}) {
    fake.nics["eno1"].stats_errno = err;
    const auto v = sample(p);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const auto& name = p.channels()[i].name;
      if (name.ends_with(".eno1"))
        EXPECT_TRUE(std::isnan(v[i])) << name;
      else
        EXPECT_TRUE(std::isfinite(v[i])) << name;
    }
  }
  // Gone from the kernel altogether (unplugged, renamed), then back.
  fake.nics["eno1"].stats_errno = 0;
  const auto saved = fake.nics["eno1"];
  fake.nics.erase("eno1");
  auto v = sample(p);
  EXPECT_TRUE(std::isnan(value(p, v, "ethtool:rx_unicast.eno1")));
  EXPECT_EQ(value(p, v, "ethtool:rx_packets.eth0"), 1000);
  fake.nics["eno1"] = saved;
  v = sample(p);
  EXPECT_EQ(value(p, v, "ethtool:rx_unicast.eno1"), 5000);
  EXPECT_TRUE(all_finite(v));
}

// A count whose names cannot be had (values and names disagree: a driver mid-reload) is NaN
// until they agree again.
TEST(EthtoolProbe, StatCountChangeWithoutNamesIsNanUntilItReturns) {
  FakeEthtool fake;
  script_fixture_host(fake);
  EthtoolProbe p(fake);
  ASSERT_TRUE(p.open(fixture("host-ethtool-nics")).available);
  const std::size_t n = p.channels().size();
  for (std::size_t grow : {1, 64, 1000}) {  // the values grow, the names do not
    fake.nics["eth0"].values.resize(fake.nics["eth0"].names.size() + grow, 9);
    const auto v = sample(p);
    EXPECT_EQ(p.channels().size(), n);  // the channels are those of open
    for (std::size_t i = 0; i < v.size(); ++i)
      EXPECT_EQ(std::isnan(v[i]), p.channels()[i].name.ends_with(".eth0")) << p.channels()[i].name;
  }
  fake.nics["eth0"].values.resize(10);  // shrinks
  EXPECT_TRUE(std::isnan(value(p, sample(p), "ethtool:rx_packets.eth0")));
  fake.nics["eth0"] = mlx5_like_nic(424201);  // the original layout again
  const auto v = sample(p);
  EXPECT_TRUE(all_finite(v));
  EXPECT_EQ(value(p, v, "ethtool:rx_packets.eth0"), 1000);
}

// mlx5 adds strings for good when more channels or traffic classes are configured: the set
// grows (and may reorder) and never returns to its count at open. The kept statistics are
// found again by name, once per new count; one the driver dropped is NaN.
TEST(EthtoolProbe, AGrownSetIsMappedAgainByName) {
  FakeEthtool fake;
  script_fixture_host(fake);
  EthtoolProbe p(fake);
  ASSERT_TRUE(p.open(fixture("host-ethtool-nics")).available);
  const double before = value(p, sample(p), "ethtool:rx_packets.eth0");
  auto& nic = fake.nics["eth0"];
  // New per-channel strings inserted at the front (a reorder) and appended.
  nic.names.insert(nic.names.begin(), {"ch8_events", "ch8_poll"});
  nic.values.insert(nic.values.begin(), {5, 6});
  nic.names.push_back("ch9_events");
  nic.values.push_back(7);
  const std::size_t asked = fake.asked.size();
  auto v = sample(p);
  EXPECT_EQ(fake.asked.size(), asked + 1) << "names read again once";
  EXPECT_EQ(value(p, v, "ethtool:rx_packets.eth0"), before);
  EXPECT_TRUE(all_finite(v));
  v = sample(p);
  EXPECT_EQ(fake.asked.size(), asked + 1) << "not again for the same count";
  EXPECT_EQ(value(p, v, "ethtool:rx_packets.eth0"), before);
  // A kept statistic the driver no longer has: NaN, its siblings read.
  for (std::size_t i = 0; i < nic.names.size(); ++i)
    if (nic.names[i] == "rx_packets") {
      nic.names.erase(nic.names.begin() + std::ptrdiff_t(i));
      nic.values.erase(nic.values.begin() + std::ptrdiff_t(i));
      break;
    }
  v = sample(p);
  EXPECT_TRUE(std::isnan(value(p, v, "ethtool:rx_packets.eth0")));
  std::size_t finite = 0;
  for (std::size_t i = 0; i < v.size(); ++i)
    if (p.channels()[i].name.ends_with(".eth0")) finite += std::isfinite(v[i]);
  EXPECT_GT(finite, 0u);
}

TEST(EthtoolProbe, PerQueueOnlyNicIsSkippedWithItsReason) {
  FakeEthtool fake;
  script_fixture_host(fake);
  fake.nics["eno1"].names = {"rx_queue_0_packets", "rx_queue_0_bytes", "tx_queue_0_packets", "tx_queue_0_bytes"};
  fake.nics["eno1"].values = {1, 2, 3, 4};
  fake.nics["eth0"].strings_errno = EOPNOTSUPP;
  EthtoolProbe p(fake);
  auto st = p.open(fixture("host-ethtool-nics"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason,
            "eno1: only per-queue statistics (4); "
            "eth0: no driver statistics (ETHTOOL_GSTRINGS: Operation not supported); "
            "eth1: no driver statistics (ETHTOOL_GSTRINGS: Operation not supported)");
  EXPECT_TRUE(p.channels().empty());
  EXPECT_FALSE(fake.is_open);  // the socket is not kept for nothing
}

TEST(EthtoolProbe, UnavailableReasons) {
  {  // every NIC: EOPNOTSUPP
    FakeEthtool fake;
    script_fixture_host(fake);
    for (const char* n : {"eth0", "eth1", "eno1"}) fake.nics[n].strings_errno = EOPNOTSUPP;
    EthtoolProbe p(fake);
    auto st = p.open(fixture("host-ethtool-nics"));
    EXPECT_FALSE(st.available);
    EXPECT_NE(st.reason.find("eth0: no driver statistics (ETHTOOL_GSTRINGS: Operation not supported)"),
              std::string::npos)
        << st.reason;
    EXPECT_EQ(st.reason.find('\n'), std::string::npos);
    EXPECT_TRUE(p.channels().empty());
    EXPECT_FALSE(fake.is_open);
  }
  {  // no /sys/class/net
    FakeEthtool fake;
    EthtoolProbe p(fake);
    auto st = p.open(fixture("edge-missing"));
    EXPECT_FALSE(st.available);
    EXPECT_NE(st.reason.find("sys/class/net"), std::string::npos) << st.reason;
    EXPECT_EQ(fake.opens, 0);
  }
  {  // only lo and virtio eth0 without a device entry in this captured tree
    FakeEthtool fake;
    EthtoolProbe p(fake);
    auto st = p.open(fixture("vm-2cpu"));
    EXPECT_FALSE(st.available);
    EXPECT_EQ(st.reason.rfind("no physical NIC under ", 0), 0u) << st.reason;
    EXPECT_EQ(fake.opens, 0);
  }
  {  // the socket cannot be made
    FakeEthtool fake;
    script_fixture_host(fake);
    fake.open_errno = EMFILE;
    EthtoolProbe p(fake);
    auto st = p.open(fixture("host-ethtool-nics"));
    EXPECT_FALSE(st.available);
    EXPECT_EQ(st.reason, "ethtool control socket: Too many open files");
  }
  {  // a tree that is not this network namespace's: ifindex differs or the name is unknown
    FakeEthtool fake;
    script_fixture_host(fake);
    fake.nics["eth0"].ifindex = 2;
    fake.nics.erase("eth1");
    fake.nics.erase("eno1");
    EthtoolProbe p(fake);
    const auto root = fixture("host-ethtool-nics");
    auto st = p.open(root);
    EXPECT_FALSE(st.available);
    const auto base = (root / "sys/class/net").string();
    EXPECT_EQ(st.reason,
              "eno1: not an interface of this network namespace (ifindex differs from " + base +
                  "/eno1/ifindex); eth0: not an interface of this network namespace (ifindex differs "
                  "from " + base + "/eth0/ifindex); eth1: not an interface of this network namespace "
                  "(ifindex differs from " + base + "/eth1/ifindex)");
    EXPECT_TRUE(fake.asked.empty());  // no statistics read from the wrong interface
  }
  {  // no ifindex file (config-2socket: eth0 has a device entry, no ifindex)
    FakeEthtool fake;
    fake.nics["eth0"] = mlx5_like_nic(2);
    EthtoolProbe p(fake);
    auto st = p.open(fixture("config-2socket"));
    EXPECT_FALSE(st.available);
    EXPECT_EQ(st.reason.rfind("eth0: no interface index (", 0), 0u) << st.reason;
    EXPECT_EQ(st.reason.find("veth1"), std::string::npos) << st.reason;  // virtual: not a NIC
  }
}

TEST(EthtoolProbe, ReopenStartsAfresh) {
  FakeEthtool fake;
  script_fixture_host(fake);
  EthtoolProbe p(fake);
  ASSERT_TRUE(p.open(fixture("host-ethtool-nics")).available);
  const std::size_t n = p.channels().size();
  fake.nics["eno1"].strings_errno = EPERM;
  ASSERT_TRUE(p.open(fixture("host-ethtool-nics")).available);
  EXPECT_EQ(p.channels().size(), n - 7);
  EXPECT_TRUE(channels_of(p, "eno1").empty());
  EXPECT_EQ(fake.opens, 2);
  EXPECT_TRUE(all_finite(sample(p)));
}

// The real ioctls on this kernel: lo has no ETH_SS_STATS set, unknown names are ENODEV, and
// gstats() never writes into a buffer whose size is not the driver's count.
TEST(EthtoolSystemIo, LiveKernelContract) {
  auto io = make_system_ethtool_io();
  std::vector<std::string> names;
  EthtoolStatsBuffer none(0);
  EXPECT_EQ(io->gstrings("lo", names), -EBADF);  // not open yet
  if (int e = io->open(); e < 0) GTEST_SKIP() << "no socket here: " << e;
  EXPECT_EQ(io->open(), 0);  // idempotent
  EXPECT_EQ(io->ifindex("lo"), 1);  // the first interface of every network namespace
  EXPECT_EQ(io->ifindex("reveal-nosuch0"), -ENODEV);
  EXPECT_EQ(io->gstrings("reveal-nosuch0", names), -ENODEV);
  EXPECT_EQ(io->gstats("reveal-nosuch0", none), -ENODEV);
  EXPECT_EQ(io->gstrings("lo", names), -EOPNOTSUPP);
  EXPECT_TRUE(names.empty());
  EXPECT_EQ(io->gstats("lo", none), -EOPNOTSUPP);

  std::error_code ec;
  for (std::filesystem::directory_iterator it("/sys/class/net", ec), end; !ec && it != end; it.increment(ec)) {
    const std::string ifname = it->path().filename().string();
    if (io->gstrings(ifname.c_str(), names) != 0 || names.empty()) continue;
    EthtoolStatsBuffer buf(names.size());
    EXPECT_EQ(io->gstats(ifname.c_str(), buf), static_cast<int>(names.size())) << ifname;
    EthtoolStatsBuffer small(names.size() - 1, 0);  // no slack: a write would overrun
    for (auto& w : small.raw()) w = 0xdeadbeef;
    EXPECT_EQ(io->gstats(ifname.c_str(), small), static_cast<int>(names.size())) << ifname;
    for (auto w : small.raw()) EXPECT_EQ(w, 0xdeadbeefu) << ifname;  // header included
    for (const auto& n : names) EXPECT_FALSE(n.empty()) << ifname;
    io->close();
    EXPECT_EQ(io->gstats(ifname.c_str(), buf), -EBADF);
    return;
  }
  GTEST_SKIP() << "no interface with driver statistics here";
}

TEST(EthtoolProbe, LiveHost) {
  EthtoolProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  if (!st.available) {
    EXPECT_FALSE(st.reason.empty());
    EXPECT_EQ(st.reason.find('\n'), std::string::npos);
    GTEST_SKIP() << "ethtool unavailable here: " << st.reason;
  }
  ASSERT_FALSE(p.channels().empty());
  expect_names_follow_rule(p, "ethtool");
  for (const auto& c : p.channels()) {
    const std::string iface = c.name.substr(c.name.rfind('.') + 1);
    std::error_code ec;
    EXPECT_TRUE(std::filesystem::exists(std::filesystem::path("/sys/class/net") / iface / "device", ec))
        << c.name << ": not a physical NIC";
    EXPECT_NE(iface, "lo");
  }
  const auto a = sample(p);
  const auto b = sample(p);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i])) continue;  // a NIC may vanish between ticks
    EXPECT_GE(b[i], a[i]) << p.channels()[i].name;   // counters
  }
}

}  // namespace
}  // namespace reveal::telemetry
