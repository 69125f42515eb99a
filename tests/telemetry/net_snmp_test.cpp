#include "telemetry/procfs/net_snmp.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcNetSnmpProbe, AllFieldsFromVmFixture) {
  ProcNetSnmpProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(p.channels().size(), 312u);  // every field of snmp + netstat
  EXPECT_EQ(p.channels()[0].name, "proc.net.snmp:Ip_Forwarding");
  expect_names_follow_rule(p, "proc.net.snmp");
  EXPECT_EQ(info(p, "proc.net.snmp:Ip_Forwarding").kind, Kind::state);
  EXPECT_EQ(info(p, "proc.net.snmp:Ip_DefaultTTL").kind, Kind::state);
  EXPECT_EQ(info(p, "proc.net.snmp:Tcp_CurrEstab").kind, Kind::gauge);
  EXPECT_EQ(info(p, "proc.net.snmp:Tcp_MaxConn").kind, Kind::gauge);
  EXPECT_EQ(info(p, "proc.net.snmp:Tcp_RtoMin").unit, "ms");
  const auto& retrans = info(p, "proc.net.snmp:Tcp_RetransSegs");
  EXPECT_EQ(retrans.kind, Kind::counter);
  EXPECT_EQ(retrans.subsystem, Subsystem::network);
  EXPECT_EQ(info(p, "proc.net.snmp:IpExt_InOctets").unit, "bytes");
  EXPECT_EQ(info(p, "proc.net.snmp:TcpExt_ListenDrops").kind, Kind::counter);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Ip_Forwarding"), 2);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Ip_InReceives"), 2869);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_MaxConn"), -1);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_CurrEstab"), 10);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_InSegs"), 2842);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Udp_InErrors"), 0);
  EXPECT_EQ(value(p, v, "proc.net.snmp:IcmpMsg_InType3"), 1);
  EXPECT_EQ(value(p, v, "proc.net.snmp:TcpExt_TCPTimeouts"), 2);
  EXPECT_EQ(value(p, v, "proc.net.snmp:TcpExt_DelayedACKs"), 3);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcNetSnmpProbe, NewFieldsAndReorderedColumns) {
  TempRoot root("edge-extra-columns");
  ProcNetSnmpProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(p.channels().size(), 4u + 8 + 4 + 3 + 2);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_NewField"), 3);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_RetransSegs"), 555);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Udp_InErrors"), 4);
  EXPECT_EQ(value(p, v, "proc.net.snmp:TcpExt_ListenDrops"), 9);
  EXPECT_EQ(value(p, v, "proc.net.snmp:IpExt_OutOctets"), 63549);
  // Columns moved, one removed, one added: values follow their names.
  root.write("proc/net/snmp",
             "Tcp: RetransSegs Brand CurrEstab\nTcp: 600 1 8\nUdp: InErrors\nUdp: 5\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_RetransSegs"), 600);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_CurrEstab"), 8);
  EXPECT_EQ(value(p, v, "proc.net.snmp:Udp_InErrors"), 5);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.net.snmp:Tcp_NewField")));
  EXPECT_TRUE(std::isnan(value(p, v, "proc.net.snmp:Ip_InReceives")));
  EXPECT_EQ(value(p, v, "proc.net.snmp:TcpExt_ListenDrops"), 9);  // other file unaffected
}

TEST(ProcNetSnmpProbe, NetstatMissingStillAvailable) {
  ProcNetSnmpProbe p;
  auto st = p.open(fixture("edge-missing"));
  ASSERT_TRUE(st.available) << st.reason;
  // The Udp header has no value line: skipped without misaligning anything.
  EXPECT_EQ(names(p),
            (std::vector<std::string>{"proc.net.snmp:Ip_Forwarding", "proc.net.snmp:Ip_DefaultTTL",
                                      "proc.net.snmp:Tcp_ActiveOpens", "proc.net.snmp:Tcp_MaxConn",
                                      "proc.net.snmp:Tcp_RetransSegs"}));
  EXPECT_EQ(sample(p), (std::vector<double>{2, 64, 5, -1, 3}));
}

TEST(ProcNetSnmpProbe, NetstatVanishingGapsOnlyItsChannels) {
  TempRoot root("edge-extra-columns");
  ProcNetSnmpProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("proc/net/netstat");
  auto v = sample(p);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.net.snmp:TcpExt_ListenDrops")));
  EXPECT_EQ(value(p, v, "proc.net.snmp:Tcp_RetransSegs"), 555);
  root.write("proc/net/netstat", "TcpExt: ListenDrops\nTcpExt: 10\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "proc.net.snmp:TcpExt_ListenDrops"), 10);
}

TEST(ProcNetSnmpProbe, NothingThereIsUnavailable) {
  ProcNetSnmpProbe p;
  auto st = p.open(fixture("host-cpufreq-4cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("snmp"), std::string::npos) << st.reason;
}

}  // namespace
}  // namespace reveal::telemetry
