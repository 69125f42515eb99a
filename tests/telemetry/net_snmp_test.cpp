#include "telemetry/procfs/net_snmp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

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

// Between samples a header line may stop being the one seen at open (a module loaded, a kernel
// upgrade under a long recording): values must still land in their own channels, and once the
// header is back to what it was the by-column path must be right again.
TEST(ProcNetSnmpProbe, LayoutChangesBetweenSamples) {
  TempRoot root("edge-extra-columns");
  ProcNetSnmpProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const std::string ip = "Ip: Forwarding DefaultTTL InReceives InHdrErrors\nIp: 1 64 1000 2\n";
  const std::string udp = "Udp: InDatagrams NoPorts InErrors OutDatagrams\nUdp: 26 0 4 27\n";
  const std::string tcp = "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens CurrEstab RetransSegs NewField\n";
  const std::string netstat_at_open = "TcpExt: SyncookiesSent ListenOverflows ListenDrops\nTcpExt: 0 8 9\n"
                                      "IpExt: InOctets OutOctets\nIpExt: 71050792 63549\n";
  const double nan = std::nan("");
  struct Step {
    std::string what, snmp, netstat;
    std::map<std::string, double> want;  // channel (without "proc.net.snmp:") -> value
  };
  const std::vector<Step> steps{
      {"a field inserted in the middle",
       ip + "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens Inserted CurrEstab RetransSegs NewField\n"
            "Tcp: 1 200 120000 -1 13 99 7 555 3\n" + udp,
       netstat_at_open,
       {{"Tcp_ActiveOpens", 13}, {"Tcp_CurrEstab", 7}, {"Tcp_RetransSegs", 555}, {"Tcp_NewField", 3},
        {"Ip_InReceives", 1000}, {"Udp_InErrors", 4}, {"TcpExt_ListenDrops", 9}}},
      {"a field removed",
       ip + "Tcp: RtoAlgorithm RtoMin RtoMax MaxConn ActiveOpens RetransSegs NewField\n"
            "Tcp: 1 200 120000 -1 14 556 4\n" + udp,
       netstat_at_open,
       {{"Tcp_CurrEstab", nan}, {"Tcp_ActiveOpens", 14}, {"Tcp_RetransSegs", 556}, {"Tcp_NewField", 4}}},
      {"the same fields in another order",
       ip + "Tcp: NewField RetransSegs CurrEstab ActiveOpens MaxConn RtoMax RtoMin RtoAlgorithm\n"
            "Tcp: 5 557 8 15 -1 120000 200 1\n" + udp,
       netstat_at_open,
       {{"Tcp_NewField", 5}, {"Tcp_RetransSegs", 557}, {"Tcp_CurrEstab", 8}, {"Tcp_ActiveOpens", 15},
        {"Tcp_RtoMax", 120000}, {"Tcp_RtoAlgorithm", 1}}},
      {"blocks reordered, an unknown protocol in front, the Ip header changed",
       "Sctp: CurrEstab\nSctp: 3\n" + udp + tcp + "Tcp: 1 200 120000 -1 16 9 558 6\n" +
           "Ip: DefaultTTL Forwarding\nIp: 63 2\n",
       netstat_at_open,
       {{"Tcp_CurrEstab", 9}, {"Tcp_RetransSegs", 558}, {"Udp_OutDatagrams", 27}, {"Ip_Forwarding", 2},
        {"Ip_DefaultTTL", 63}, {"Ip_InReceives", nan}}},
      {"back to the layout seen at open", ip + tcp + "Tcp: 1 200 120000 -1 17 10 559 7\n" + udp,
       netstat_at_open,
       {{"Tcp_ActiveOpens", 17}, {"Tcp_CurrEstab", 10}, {"Tcp_NewField", 7}, {"Ip_InReceives", 1000}}},
      {"the same header, its value line cut short", ip + tcp + "Tcp: 1 200 120000 -1 18\n" + udp,
       netstat_at_open,
       {{"Tcp_ActiveOpens", 18}, {"Tcp_MaxConn", -1}, {"Tcp_CurrEstab", nan}, {"Tcp_NewField", nan},
        {"Udp_InErrors", 4}}},
      {"the same header, one malformed value", ip + tcp + "Tcp: 1 200 120000 -1 19 x 560 8\n" + udp,
       netstat_at_open,
       {{"Tcp_CurrEstab", nan}, {"Tcp_ActiveOpens", 19}, {"Tcp_RetransSegs", 560}, {"Tcp_NewField", 8}}},
      {"a field inserted in netstat", ip + tcp + "Tcp: 1 200 120000 -1 20 11 561 9\n" + udp,
       "TcpExt: SyncookiesSent TCPNew ListenOverflows ListenDrops\nTcpExt: 0 5 8 10\n"
       "IpExt: InOctets OutOctets\nIpExt: 71050792 63549\n",
       {{"TcpExt_ListenOverflows", 8}, {"TcpExt_ListenDrops", 10}, {"IpExt_OutOctets", 63549},
        {"Tcp_CurrEstab", 11}}},
  };
  for (const auto& step : steps) {
    root.write("proc/net/snmp", step.snmp);
    root.write("proc/net/netstat", step.netstat);
    expect_values(p, sample(p), "proc.net.snmp:", step.want, step.what);
  }
}

// Random layouts of a real kernel's files against the plain reading of them: every channel
// holds the value its name has in the text, NaN when the name is absent or the value malformed.
TEST(ProcNetSnmpProbe, RandomLayoutsMatchLookupByName) {
  struct Block {
    std::string proto;
    std::vector<std::pair<std::string, std::string>> columns;  // name, value text
  };
  const auto blocks_of = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    std::vector<Block> blocks;
    std::string names, values;
    while (std::getline(in, names) && std::getline(in, values)) {
      std::istringstream n(names), v(values);
      Block b;
      n >> b.proto;
      v >> b.proto;
      b.proto.pop_back();  // "Tcp:"
      for (std::string name, value; n >> name && v >> value;) b.columns.emplace_back(name, value);
      blocks.push_back(std::move(b));
    }
    return blocks;
  };
  const auto text_of = [](const std::vector<Block>& blocks) {
    std::string text;
    for (const auto& b : blocks) {
      std::string names = b.proto + ":", values = b.proto + ":";
      for (const auto& [n, v] : b.columns) names += " " + n, values += " " + v;
      text += names + "\n" + values + "\n";
    }
    return text;
  };

  TempRoot root("vm-2cpu");
  const auto snmp_at_open = blocks_of(root.path() / "proc/net/snmp");
  const auto netstat_at_open = blocks_of(root.path() / "proc/net/netstat");
  ASSERT_FALSE(snmp_at_open.empty());
  ASSERT_FALSE(netstat_at_open.empty());
  ProcNetSnmpProbe p;
  ASSERT_TRUE(p.open(root.path()).available);

  std::mt19937 rng(20240611);
  const auto pick = [&](std::size_t n) { return static_cast<std::size_t>(rng() % n); };
  for (int round = 0; round < 200; ++round) {
    auto snmp = snmp_at_open, netstat = netstat_at_open;
    for (auto* file : {&snmp, &netstat}) {
      for (auto& b : *file)
        for (auto& c : b.columns) c.second = std::to_string(static_cast<long long>(rng() % 100000) - 10);
      if (round % 2 == 0) continue;  // every other round: the layout seen at open, new values
      for (auto& b : *file) {
        auto& cols = b.columns;
        switch (pick(6)) {
          case 0: std::shuffle(cols.begin(), cols.end(), rng); break;
          case 1: if (!cols.empty()) cols.erase(cols.begin() + pick(cols.size())); break;
          case 2: cols.insert(cols.begin() + pick(cols.size() + 1), {"Added" + std::to_string(round), "77"}); break;
          case 3: if (!cols.empty()) cols[pick(cols.size())].second = pick(2) ? "x1" : "99999999999999999999"; break;
          case 4: if (!cols.empty()) cols.pop_back(); break;
          default: break;  // this block as at open
        }
      }
      if (pick(3) == 0 && file->size() > 1) std::swap((*file)[pick(file->size())], (*file)[pick(file->size())]);
      if (pick(4) == 0 && file->size() > 1) file->erase(file->begin() + pick(file->size()));
    }
    root.write("proc/net/snmp", text_of(snmp));
    root.write("proc/net/netstat", text_of(netstat));

    std::map<std::string, double> in_text, want;
    for (const auto* file : {&snmp, &netstat})
      for (const auto& b : *file)
        for (const auto& [n, text] : b.columns) {
          const auto x = parse_i64(text);
          in_text[b.proto + "_" + n] = x ? static_cast<double>(*x) : std::nan("");
        }
    for (const auto& c : p.channels()) {  // every channel: absent from the text means NaN
      const std::string field = c.name.substr(std::string("proc.net.snmp:").size());
      const auto it = in_text.find(field);
      want[field] = it == in_text.end() ? std::nan("") : it->second;
    }
    expect_values(p, sample(p), "proc.net.snmp:", want, "round " + std::to_string(round));
  }
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
