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
// are re-found by name whenever a header line differs from the one seen at open (a field added,
// removed or moved); fields that appear only later (IcmpMsg types) are ignored. A missing netstat
// file (old kernels, some containers) only drops its channels.
#pragma once

#include <cstdint>

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
  // A protocol's header line as seen at open. While the header of a sample is byte for byte
  // the same, the n-th value belongs to the n-th column, so one memcmp of the line replaces a
  // lookup per field (313 of them on a current kernel).
  struct Header {
    std::uint32_t text_offset = 0, text_size = 0;  // into MibFile::headers: the names after "Tcp:"
    std::uint32_t columns_offset = 0, columns = 0;  // into MibFile::column_slots
  };
  static constexpr std::uint32_t kNoSlot = UINT32_MAX;  // a column that was not numeric at open
  struct MibFile {
    FileReader file;
    KeyIndex protos;               // "Tcp" -> index into fields and header_at_open (slot)
    std::vector<KeyIndex> fields;  // per protocol: "RetransSegs" -> channel slot
    std::vector<Header> header_at_open;   // per protocol
    std::string headers;                  // the header lines, back to back
    std::vector<std::uint32_t> column_slots;  // per column: channel slot or kNoSlot
  };
  bool load(MibFile& mib, std::string_view text);
  static void parse(MibFile& mib, std::string_view text, std::span<double> out);

  std::vector<ChannelInfo> channels_;
  std::vector<MibFile> files_;
};

}  // namespace reveal::telemetry
