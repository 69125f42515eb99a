#include "telemetry/procfs/net_dev.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"
#include "reveal/features.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcNetDevProbe, ChannelsAndValuesFromVmFixture) {
  ProcNetDevProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  ASSERT_EQ(p.channels().size(), 4u * 16);  // lo, ifb0, ifb1, eth0
  auto n = names(p);
  EXPECT_EQ(n[0], "proc.net.dev:rx_bytes.lo");
  EXPECT_EQ(n[15], "proc.net.dev:tx_compressed.lo");
  EXPECT_EQ(n[48], "proc.net.dev:rx_bytes.eth0");
  EXPECT_EQ(n[48 + 13], "proc.net.dev:tx_colls.eth0");
  expect_names_follow_rule(p, "proc.net.dev");
  const auto& rx = info(p, "proc.net.dev:rx_bytes.eth0");
  EXPECT_EQ(rx.unit, "bytes");
  EXPECT_EQ(rx.kind, Kind::counter);
  EXPECT_EQ(rx.subsystem, Subsystem::network);
  EXPECT_EQ(rx.counter_bits, 64);
  EXPECT_EQ(info(p, "proc.net.dev:tx_packets.eth0").unit, "packets");
  EXPECT_EQ(info(p, "proc.net.dev:rx_drop.eth0").unit, "count");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_bytes.eth0"), 71070505);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_packets.eth0"), 1634);
  EXPECT_EQ(value(p, v, "proc.net.dev:tx_bytes.eth0"), 74946);
  EXPECT_EQ(value(p, v, "proc.net.dev:tx_packets.eth0"), 992);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_bytes.lo"), 16921284);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcNetDevProbe, ExtraColumnAndNoSpaceAfterColon) {
  ProcNetDevProbe p;
  ASSERT_TRUE(p.open(fixture("edge-extra-columns")).available);
  EXPECT_EQ(p.channels().size(), 2u * 16);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_bytes.eth0"), 4294967296.0);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_multicast.eth0"), 6);
  EXPECT_EQ(value(p, v, "proc.net.dev:tx_compressed.eth0"), 12);
  EXPECT_EQ(value(p, v, "proc.net.dev:tx_compressed.lo"), 0);
}

// Interface names may hold ':' (aliases, "bond0:1"): the counters start after the last one.
TEST(ProcNetDevProbe, NamesWithColonsAreKept) {
  TempRoot root("edge-extra-columns");
  root.write("proc/net/dev",
             "Inter-|   Receive                                                |  Transmit\n"
             " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed\n"
             "    lo:     100       1    0    0    0     0          0         0      100       1    0    0    0     0       0          0\n"
             "bond0:1:     200       2    0    0    0     0          0         0      300       3    0    0    0     0       0          0\n"
             "eth0:backup:400       4    0    0    0     0          0         0      500       5    0    0    0     0       0          0\n");
  ProcNetDevProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  ASSERT_EQ(p.channels().size(), 3u * 16);
  const auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_bytes.bond0:1"), 200);
  EXPECT_EQ(value(p, v, "proc.net.dev:tx_bytes.bond0:1"), 300);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_bytes.eth0:backup"), 400);
  EXPECT_EQ(value(p, v, "proc.net.dev:tx_packets.eth0:backup"), 5);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_bytes.lo"), 100);
}

TEST(ProcNetDevProbe, InterfaceGoneIsNanOthersKeepValues) {
  TempRoot root("edge-extra-columns");
  ProcNetDevProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write("proc/net/dev",
             "Inter-|\n face |\n  veth9: 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1 1\n"
             "  eth0: 5 6 0 0 0 0 0 0 7 8 0 0 0 0 0 0\n");
  auto v = sample(p);
  EXPECT_EQ(v.size(), 32u);
  EXPECT_EQ(value(p, v, "proc.net.dev:rx_bytes.eth0"), 5);
  EXPECT_EQ(value(p, v, "proc.net.dev:tx_packets.eth0"), 8);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.net.dev:rx_bytes.lo")));
  root.remove("proc/net/dev");
  EXPECT_TRUE(all_nan(sample(p)));
}

// A 32-bit kernel's counters wrap at 2^32: their width is declared, so the rate across a wrap
// is right; on a 64-bit kernel the same decrease is a reset (a gap).
TEST(ProcNetDevProbe, ThirtyTwoBitKernelsCountersWrapAndTheirRateIsCorrected) {
  const auto rate_across = [](const ChannelInfo& c) {
    Recording rec;
    rec.channels = {c};
    rec.t_unix_ns = {0, 1'000'000'000};
    rec.values = Matrix(2, 1);
    rec.values(0, 0) = 4294967000.0;
    rec.values(1, 0) = 200.0;
    return to_rates(rec).values(1, 0);
  };
  for (const char* arch : {"armv7l", "i686", "mips"}) {
    TempRoot root("edge-extra-columns");
    root.write("proc/sys/kernel/arch", std::string(arch) + "\n");
    ProcNetDevProbe p;
    ASSERT_TRUE(p.open(root.path()).available);
    EXPECT_EQ(info(p, "proc.net.dev:rx_bytes.eth0").counter_bits, 32) << arch;
    EXPECT_EQ(rate_across(info(p, "proc.net.dev:rx_bytes.eth0")), 496.0) << arch;
  }
  for (const char* arch : {"x86_64", "aarch64", "armv8l", "ppc64le", "riscv64"}) {
    TempRoot root("edge-extra-columns");
    root.write("proc/sys/kernel/arch", std::string(arch) + "\n");
    ProcNetDevProbe p;
    ASSERT_TRUE(p.open(root.path()).available);
    EXPECT_EQ(info(p, "proc.net.dev:rx_bytes.eth0").counter_bits, 64) << arch;
    EXPECT_TRUE(std::isnan(rate_across(info(p, "proc.net.dev:rx_bytes.eth0")))) << arch;
  }
}

TEST(ProcNetDevProbe, NoInterfacesIsUnavailable) {
  ProcNetDevProbe p;
  auto st = p.open(fixture("edge-missing"));
  EXPECT_FALSE(st.available);
  EXPECT_FALSE(st.reason.empty());
}

}  // namespace
}  // namespace reveal::telemetry
