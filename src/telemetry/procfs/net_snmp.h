// proc.net.snmp — IP/ICMP/TCP/UDP MIB counters from /proc/net/snmp and the Linux extensions
// in /proc/net/netstat. Both files are pairs of lines per protocol:
//   "Tcp: RtoAlgorithm RtoMin ... RetransSegs ..."   (header)
//   "Tcp: 1 200 ... 0 ..."                           (values, signed: MaxConn is -1)
//
// Channels: proc.net.snmp:<Proto>_<Field> for every numeric field present at open, e.g.
// "proc.net.snmp:Tcp_RetransSegs", "proc.net.snmp:TcpExt_ListenDrops",
// "proc.net.snmp:Udp_InErrors". Counters (unit "count"; "bytes" for *Octets) except: gauges
// Tcp_CurrEstab, Tcp_RtoAlgorithm, Tcp_RtoMin, Tcp_RtoMax (unit "ms" for the Rto bounds),
// Tcp_MaxConn, MPTcpExt_MPCurrEstab; state Ip_Forwarding, Ip_DefaultTTL. Subsystem::network. Fields
// are re-found by name each sample; fields that appear only later (IcmpMsg types) are ignored. A
// missing netstat file (old kernels, some containers) only drops its channels.
#pragma once

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class ProcNetSnmpProbe final : public Probe {
 public:
  std::string_view name() const override { return "proc.net.snmp"; }
  std::string_view description() const override {
    return "IP, ICMP, TCP, UDP and TcpExt counters (/proc/net/snmp, /proc/net/netstat)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  struct MibFile {
    FileReader file;
    KeyIndex protos;               // "Tcp" -> index into fields (slot)
    std::vector<KeyIndex> fields;  // per protocol: "RetransSegs" -> channel slot
  };
  bool load(MibFile& mib, std::string_view text);
  static void parse(MibFile& mib, std::string_view text, std::span<double> out);

  std::vector<ChannelInfo> channels_;
  std::vector<MibFile> files_;
};

}  // namespace reveal::telemetry
