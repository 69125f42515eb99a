#include "telemetry/rdma/rdma.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"
#include "telemetry/rdma/port_files.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

const std::string kIb = "sys/class/infiniband/";

// Channels of one "<dev>.<port>" index, in order.
std::vector<std::string> names_for(const Probe& p, const std::string& index) {
  std::vector<std::string> out;
  for (const auto& n : names(p))
    if (n.ends_with("." + index)) out.push_back(n);
  return out;
}

TEST(RdmaPortFiles, Parsers) {
  EXPECT_EQ(rdma::parse_enum_prefix("4: ACTIVE\n"), 4);
  EXPECT_EQ(rdma::parse_enum_prefix("5: LinkUp\n"), 5);
  EXPECT_EQ(rdma::parse_enum_prefix("1: DOWN"), 1);
  EXPECT_FALSE(rdma::parse_enum_prefix("ACTIVE\n"));
  EXPECT_FALSE(rdma::parse_enum_prefix("x: ACTIVE\n"));
  EXPECT_FALSE(rdma::parse_enum_prefix(""));
  EXPECT_EQ(rdma::parse_rate_gbps("100 Gb/sec (4X EDR)\n"), 100);
  EXPECT_EQ(rdma::parse_rate_gbps("2.5 Gb/sec (1X SDR)\n"), 2.5);
  EXPECT_EQ(rdma::parse_rate_gbps("400 Gb/sec (4X NDR)"), 400);
  EXPECT_FALSE(rdma::parse_rate_gbps("100 Mb/sec\n"));
  EXPECT_FALSE(rdma::parse_rate_gbps("N/A\n"));
  EXPECT_EQ(rdma::parse_counter("12345\n"), 12345);
  EXPECT_EQ(rdma::parse_counter("18446744073709551615\n"), 18446744073709551615.0);
  EXPECT_FALSE(rdma::parse_counter("N/A\n"));
  EXPECT_FALSE(rdma::parse_counter("\n"));
  EXPECT_FALSE(rdma::parse_counter("-1\n"));
  EXPECT_EQ(rdma::counter_meta("port_xmit_data", false).scale, 4);
  EXPECT_EQ(rdma::counter_meta("port_xmit_data", false).unit, "bytes");
  EXPECT_EQ(rdma::counter_meta("port_xmit_data", true).scale, 1);  // not a PMA data counter
  EXPECT_EQ(rdma::counter_meta("sent_pkts", true).unit, "packets");
  EXPECT_EQ(rdma::counter_meta("some_new_err", true).unit, "count");
  EXPECT_TRUE(rdma::counter_meta("some_new_err", true).help.empty());
}

TEST(RdmaProbe, ChannelsPerDeviceAndPort) {
  RdmaProbe p;
  auto st = p.open(fixture("host-2hca"));
  ASSERT_TRUE(st.available) << st.reason;
  expect_names_follow_rule(p, "rdma");
  // iwp0 (iWARP): the five "N/A" counters are skipped, no hw_counters.
  EXPECT_EQ(names_for(p, "iwp0.1"),
            (std::vector<std::string>{
                "rdma:state.iwp0.1", "rdma:phys_state.iwp0.1", "rdma:rate.iwp0.1",
                "rdma:port_rcv_data.iwp0.1", "rdma:port_rcv_packets.iwp0.1",
                "rdma:port_xmit_data.iwp0.1", "rdma:port_xmit_discards.iwp0.1",
                "rdma:port_xmit_packets.iwp0.1", "rdma:saturated_counters.iwp0.1"}));
  // mlx5_0: 21 PMA counters + 28 hw_counters (lifespan is a setting, not a counter), and the
  // saturation count after every port's files.
  const auto mlx = names_for(p, "mlx5_0.1");
  ASSERT_EQ(mlx.size(), 3u + 21 + 28 + 1);
  EXPECT_EQ(mlx[0], "rdma:state.mlx5_0.1");
  EXPECT_EQ(mlx[3], "rdma:VL15_dropped.mlx5_0.1");  // counters/ by name
  EXPECT_EQ(mlx[23], "rdma:unicast_xmit_packets.mlx5_0.1");
  EXPECT_EQ(mlx[24], "rdma:duplicate_request.mlx5_0.1");  // then hw_counters/
  EXPECT_EQ(mlx[51], "rdma:rx_write_requests.mlx5_0.1");
  EXPECT_EQ(mlx.back(), "rdma:saturated_counters.mlx5_0.1");
  for (const auto& n : names(p)) EXPECT_EQ(n.find("lifespan"), std::string::npos) << n;
  // rxe0 (soft-RoCE, no PMA): no counters/ directory, 15 hw_counters, no saturation count.
  const auto rxe = names_for(p, "rxe0.1");
  ASSERT_EQ(rxe.size(), 3u + 15);
  EXPECT_EQ(rxe[3], "rdma:ack_deferred.rxe0.1");
  EXPECT_EQ(p.channels().size(), 9u + mlx.size() + rxe.size());
  // Devices in natural order, ports grouped; the saturation counts last.
  EXPECT_EQ(p.channels().front().name, "rdma:state.iwp0.1");
  EXPECT_EQ(p.channels()[p.channels().size() - 3].name, "rdma:sent_pkts.rxe0.1");
  EXPECT_EQ(p.channels().back().name, "rdma:saturated_counters.mlx5_0.1");
  EXPECT_EQ(info(p, "rdma:saturated_counters.mlx5_0.1").kind, Kind::gauge);
  EXPECT_EQ(info(p, "rdma:saturated_counters.mlx5_0.1").unit, "count");
  EXPECT_EQ(channel_role("rdma:saturated_counters.mlx5_0.1"), ChannelRole::symptom);
  EXPECT_TRUE(flat_when_healthy("rdma:saturated_counters.mlx5_0.1", "count"));

  for (const auto& c : p.channels()) EXPECT_EQ(c.subsystem, Subsystem::interconnect) << c.name;
  EXPECT_EQ(info(p, "rdma:state.mlx5_0.1").kind, Kind::state);
  EXPECT_EQ(info(p, "rdma:state.mlx5_0.1").unit, "enum");
  EXPECT_EQ(info(p, "rdma:phys_state.mlx5_0.1").kind, Kind::state);
  EXPECT_EQ(info(p, "rdma:rate.mlx5_0.1").kind, Kind::gauge);
  EXPECT_EQ(info(p, "rdma:rate.mlx5_0.1").unit, "Gb/s");
  const auto& xd = info(p, "rdma:port_xmit_data.mlx5_0.1");
  EXPECT_EQ(xd.kind, Kind::counter);
  EXPECT_EQ(xd.unit, "bytes");
  EXPECT_NE(xd.help.find("4-octet"), std::string::npos) << xd.help;
  EXPECT_EQ(info(p, "rdma:port_rcv_data.mlx5_0.1").unit, "bytes");
  EXPECT_EQ(info(p, "rdma:port_xmit_packets.mlx5_0.1").unit, "packets");
  EXPECT_EQ(info(p, "rdma:port_xmit_wait.mlx5_0.1").unit, "ticks");
  EXPECT_EQ(info(p, "rdma:symbol_error.mlx5_0.1").unit, "count");
  EXPECT_EQ(info(p, "rdma:symbol_error.mlx5_0.1").kind, Kind::counter);
  EXPECT_EQ(info(p, "rdma:np_cnp_sent.mlx5_0.1").unit, "packets");
  EXPECT_EQ(info(p, "rdma:out_of_sequence.mlx5_0.1").unit, "count");
  EXPECT_EQ(info(p, "rdma:sent_pkts.rxe0.1").unit, "packets");
  for (const auto& c : p.channels()) EXPECT_FALSE(c.help.empty()) << c.name;
}

TEST(RdmaProbe, ValuesIncludingDataWordsTimesFour) {
  RdmaProbe p;
  ASSERT_TRUE(p.open(fixture("host-2hca")).available);
  auto v = sample(p);
  EXPECT_TRUE(all_finite(v));
  // mlx5_0: ACTIVE / LinkUp / 100 Gb/sec (4X EDR)
  EXPECT_EQ(value(p, v, "rdma:state.mlx5_0.1"), 4);
  EXPECT_EQ(value(p, v, "rdma:phys_state.mlx5_0.1"), 5);
  EXPECT_EQ(value(p, v, "rdma:rate.mlx5_0.1"), 100);
  EXPECT_EQ(value(p, v, "rdma:port_xmit_data.mlx5_0.1"), 91544172210.0 * 4);
  EXPECT_EQ(value(p, v, "rdma:port_rcv_data.mlx5_0.1"), 87412583921.0 * 4);
  EXPECT_EQ(value(p, v, "rdma:port_xmit_packets.mlx5_0.1"), 1261130448);
  EXPECT_EQ(value(p, v, "rdma:port_rcv_packets.mlx5_0.1"), 1204337211);
  EXPECT_EQ(value(p, v, "rdma:unicast_rcv_packets.mlx5_0.1"), 1204335679);
  EXPECT_EQ(value(p, v, "rdma:multicast_rcv_packets.mlx5_0.1"), 1532);
  EXPECT_EQ(value(p, v, "rdma:symbol_error.mlx5_0.1"), 7);
  EXPECT_EQ(value(p, v, "rdma:link_downed.mlx5_0.1"), 1);
  EXPECT_EQ(value(p, v, "rdma:link_error_recovery.mlx5_0.1"), 0);
  EXPECT_EQ(value(p, v, "rdma:port_rcv_errors.mlx5_0.1"), 3);
  EXPECT_EQ(value(p, v, "rdma:port_xmit_discards.mlx5_0.1"), 12);
  EXPECT_EQ(value(p, v, "rdma:port_xmit_wait.mlx5_0.1"), 448213);
  EXPECT_EQ(value(p, v, "rdma:excessive_buffer_overrun_errors.mlx5_0.1"), 0);
  EXPECT_EQ(value(p, v, "rdma:VL15_dropped.mlx5_0.1"), 0);
  EXPECT_EQ(value(p, v, "rdma:out_of_sequence.mlx5_0.1"), 17);
  EXPECT_EQ(value(p, v, "rdma:packet_seq_err.mlx5_0.1"), 5);
  EXPECT_EQ(value(p, v, "rdma:local_ack_timeout_err.mlx5_0.1"), 2);
  EXPECT_EQ(value(p, v, "rdma:duplicate_request.mlx5_0.1"), 4);
  EXPECT_EQ(value(p, v, "rdma:req_cqe_error.mlx5_0.1"), 1);
  EXPECT_EQ(value(p, v, "rdma:np_cnp_sent.mlx5_0.1"), 1893);
  EXPECT_EQ(value(p, v, "rdma:np_ecn_marked_roce_packets.mlx5_0.1"), 2011);
  EXPECT_EQ(value(p, v, "rdma:rp_cnp_handled.mlx5_0.1"), 1750);
  EXPECT_EQ(value(p, v, "rdma:rx_write_requests.mlx5_0.1"), 9981230);
  // iwp0: 25 Gb/sec, data words ×4, N/A fields absent
  EXPECT_EQ(value(p, v, "rdma:state.iwp0.1"), 4);
  EXPECT_EQ(value(p, v, "rdma:rate.iwp0.1"), 25);
  EXPECT_EQ(value(p, v, "rdma:port_xmit_data.iwp0.1"), 1000000);
  EXPECT_EQ(value(p, v, "rdma:port_rcv_data.iwp0.1"), 2000000);
  EXPECT_EQ(value(p, v, "rdma:port_rcv_packets.iwp0.1"), 4000);
  // rxe0: DOWN / Disabled / 10 Gb/sec, hw counters not scaled
  EXPECT_EQ(value(p, v, "rdma:state.rxe0.1"), 1);
  EXPECT_EQ(value(p, v, "rdma:phys_state.rxe0.1"), 3);
  EXPECT_EQ(value(p, v, "rdma:rate.rxe0.1"), 10);
  EXPECT_EQ(value(p, v, "rdma:sent_pkts.rxe0.1"), 6000);
  EXPECT_EQ(value(p, v, "rdma:rcvd_pkts.rxe0.1"), 5000);
  EXPECT_EQ(value(p, v, "rdma:link_downed.rxe0.1"), 0);
  EXPECT_EQ(value(p, v, "rdma:rdma_sends.rxe0.1"), 20);
}

TEST(RdmaProbe, FieldTurningUnreadableIsNanOnlyForItself) {
  TempRoot root("host-2hca");
  RdmaProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write(kIb + "mlx5_0/ports/1/counters/symbol_error", "N/A\n");
  root.write(kIb + "mlx5_0/ports/1/state", "garbage\n");
  root.remove(kIb + "mlx5_0/ports/1/hw_counters/out_of_sequence");
  auto v = sample(p);
  EXPECT_TRUE(std::isnan(value(p, v, "rdma:symbol_error.mlx5_0.1")));
  EXPECT_TRUE(std::isnan(value(p, v, "rdma:state.mlx5_0.1")));
  EXPECT_TRUE(std::isnan(value(p, v, "rdma:out_of_sequence.mlx5_0.1")));
  EXPECT_EQ(value(p, v, "rdma:link_downed.mlx5_0.1"), 1);
  EXPECT_EQ(value(p, v, "rdma:packet_seq_err.mlx5_0.1"), 5);
  EXPECT_EQ(value(p, v, "rdma:phys_state.mlx5_0.1"), 5);
  std::size_t nans = 0;
  for (double x : v) nans += std::isnan(x);
  EXPECT_EQ(nans, 3u);
  root.write(kIb + "mlx5_0/ports/1/counters/symbol_error", "9\n");
  root.write(kIb + "mlx5_0/ports/1/state", "1: DOWN\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "rdma:symbol_error.mlx5_0.1"), 9);
  EXPECT_EQ(value(p, v, "rdma:state.mlx5_0.1"), 1);
}

// Legacy PMA counters saturate at 2^bits − 1 and then read a flat rate of 0: the port's
// saturation count says how many are stuck there (from public reports: symbol_error 65535,
// link_downed 255, port_xmit_data 4294967295 on HCAs without PortCountersExtended).
TEST(RdmaProbe, CountersStuckAtTheirMaximumAreCounted) {
  TempRoot root("host-2hca");
  RdmaProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "rdma:saturated_counters.mlx5_0.1"), 0);
  EXPECT_EQ(value(p, v, "rdma:saturated_counters.iwp0.1"), 0);
  root.write(kIb + "mlx5_0/ports/1/counters/symbol_error", "65535\n");
  root.write(kIb + "mlx5_0/ports/1/counters/link_downed", "255\n");
  root.write(kIb + "mlx5_0/ports/1/counters/local_link_integrity_errors", "15\n");
  root.write(kIb + "mlx5_0/ports/1/counters/port_xmit_data", "4294967295\n");
  root.write(kIb + "mlx5_0/ports/1/counters/VL15_dropped", "65534\n");                 // one short
  root.write(kIb + "mlx5_0/ports/1/counters/multicast_rcv_packets", "4294967295\n");   // 64-bit only
  root.write(kIb + "mlx5_0/ports/1/counters/port_rcv_data", "4294967296\n");           // extended: past 32 bits
  v = sample(p);
  EXPECT_EQ(value(p, v, "rdma:saturated_counters.mlx5_0.1"), 4);
  EXPECT_EQ(value(p, v, "rdma:port_xmit_data.mlx5_0.1"), 4294967295.0 * 4);  // values are unchanged
  EXPECT_EQ(value(p, v, "rdma:saturated_counters.iwp0.1"), 0);
  EXPECT_EQ(rdma::pma_counter_bits("symbol_error"), 16);
  EXPECT_EQ(rdma::pma_counter_bits("unicast_xmit_packets"), 0);
  // A saturated counter that became unreadable is not counted; none readable: NaN.
  root.write(kIb + "mlx5_0/ports/1/counters/symbol_error", "N/A\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "rdma:saturated_counters.mlx5_0.1"), 3);
}

TEST(RdmaProbe, RemovedDeviceIsNanOnlyForItsChannels) {
  TempRoot root("host-2hca");
  RdmaProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const auto before = sample(p);
  root.remove(kIb + "mlx5_0");
  auto v = sample(p);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (p.channels()[i].name.ends_with(".mlx5_0.1")) {
      EXPECT_TRUE(std::isnan(v[i])) << p.channels()[i].name;
    } else {
      EXPECT_EQ(v[i], before[i]) << p.channels()[i].name;
    }
  }
  // The device comes back (driver reload): its files are reopened.
  root.write(kIb + "mlx5_0/ports/1/counters/port_xmit_data", "10\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "rdma:port_xmit_data.mlx5_0.1"), 40);
  EXPECT_TRUE(std::isnan(value(p, v, "rdma:port_rcv_data.mlx5_0.1")));
}

TEST(RdmaProbe, DevicesSortNaturallyAndPortsNumerically) {
  TempRoot root("host-2hca");
  for (const char* dev : {"mlx5_10", "mlx5_2"})
    for (const char* port : {"10", "2"})
      root.write(kIb + dev + "/ports/" + port + "/state", "4: ACTIVE\n");
  root.write(kIb + "mlx5_2/ports/not_a_port/state", "4: ACTIVE\n");
  RdmaProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  std::vector<std::string> states;
  for (const auto& n : names(p))
    if (n.starts_with("rdma:state.")) states.push_back(n);
  EXPECT_EQ(states, (std::vector<std::string>{
                        "rdma:state.iwp0.1", "rdma:state.mlx5_0.1", "rdma:state.mlx5_2.2",
                        "rdma:state.mlx5_2.10", "rdma:state.mlx5_10.2", "rdma:state.mlx5_10.10",
                        "rdma:state.rxe0.1"}));
}

TEST(RdmaProbe, HwCounterNamedLikeAPmaCounterGetsPrefix) {
  TempRoot root("host-2hca");
  root.write(kIb + "mlx5_0/ports/1/hw_counters/symbol_error", "55\n");
  RdmaProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "rdma:symbol_error.mlx5_0.1"), 7);
  EXPECT_EQ(value(p, v, "rdma:hw_symbol_error.mlx5_0.1"), 55);
}

// Device-level hw_counters are read, one channel per file indexed by the device alone; file
// names with spaces, commas or dots become one token.
TEST(RdmaProbe, DeviceLevelCountersAndOddFileNames) {
  TempRoot root("host-2hca");
  root.write(kIb + "mlx5_0/hw_counters/cq_overflow", "3\n");
  root.write(kIb + "mlx5_0/hw_counters/lifespan", "10\n");
  root.write(kIb + "mlx5_0/ports/1/hw_counters/rx ecn, marked.v2", "8\n");
  RdmaProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "rdma:cq_overflow.mlx5_0"), 3);
  EXPECT_EQ(value(p, v, "rdma:rx_ecn__marked_v2.mlx5_0.1"), 8);
  for (const auto& n : names(p)) EXPECT_EQ(n.find("lifespan"), std::string::npos) << n;
  expect_names_follow_rule(p, "rdma");
}

TEST(RdmaProbe, UnavailableWithoutDevices) {
  RdmaProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "no RDMA devices (/sys/class/infiniband missing or empty)");
  EXPECT_TRUE(p.channels().empty());

  TempRoot root("vm-2cpu");
  std::filesystem::create_directories(root.path() / kIb);
  st = p.open(root.path());
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "no RDMA devices (/sys/class/infiniband missing or empty)");
}

TEST(RdmaProbe, DeviceWithoutReadablePortFilesIsUnavailableWithReason) {
  TempRoot root("vm-2cpu");
  root.write(kIb + "iwp9/ports/1/counters/symbol_error", "N/A\n");
  RdmaProbe p;
  auto st = p.open(root.path());
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("no readable RDMA port files"), std::string::npos) << st.reason;
}

TEST(RdmaProbe, ReopenResetsChannels) {
  RdmaProbe p;
  ASSERT_TRUE(p.open(fixture("host-2hca")).available);
  EXPECT_FALSE(p.open(fixture("vm-2cpu")).available);
  EXPECT_TRUE(p.channels().empty());
  EXPECT_TRUE(sample(p).empty());
}

TEST(RdmaProbe, LiveHostNeverThrows) {
  RdmaProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  std::error_code ec;
  if (!std::filesystem::exists("/sys/class/infiniband", ec) ||
      std::filesystem::is_empty("/sys/class/infiniband", ec)) {
    EXPECT_FALSE(st.available);
    EXPECT_EQ(st.reason, "no RDMA devices (/sys/class/infiniband missing or empty)");
  }
  if (!st.available) {
    EXPECT_FALSE(st.reason.empty());
    return;
  }
  expect_names_follow_rule(p, "rdma");
  EXPECT_EQ(sample(p).size(), p.channels().size());
}

}  // namespace
}  // namespace reveal::telemetry
