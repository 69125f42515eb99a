#include "telemetry/rdma/port_files.h"

#include <array>

#include "telemetry/file_reader.h"

namespace reveal::telemetry::rdma {
namespace {

struct Known {
  std::string_view name;
  std::string_view unit;
  double scale;
  std::string_view help;
};

// IB PMA counters (IBTA spec vol. 1, PortCounters / PortCountersExtended attributes). The
// legacy 32/16/8-bit PMA counters saturate at their maximum instead of wrapping.
constexpr std::array<Known, 21> kPmaCounters{{
    {"port_xmit_data", "bytes", 4,
     "data bytes sent, all VLs (sysfs counts 4-octet words; multiplied by 4 here)"},
    {"port_rcv_data", "bytes", 4,
     "data bytes received, all VLs (sysfs counts 4-octet words; multiplied by 4 here)"},
    {"port_xmit_packets", "packets", 1, "packets sent, all VLs"},
    {"port_rcv_packets", "packets", 1, "packets received, all VLs"},
    {"unicast_xmit_packets", "packets", 1, "unicast packets sent"},
    {"unicast_rcv_packets", "packets", 1, "unicast packets received"},
    {"multicast_xmit_packets", "packets", 1, "multicast packets sent"},
    {"multicast_rcv_packets", "packets", 1, "multicast packets received"},
    {"symbol_error", "count", 1, "minor link errors detected on one or more physical lanes"},
    {"link_error_recovery", "count", 1, "link error recovery processes completed successfully"},
    {"link_downed", "count", 1, "times the link failed error recovery and went down"},
    {"port_rcv_errors", "count", 1, "received packets containing an error"},
    {"port_rcv_remote_physical_errors", "count", 1,
     "received packets marked with the EBP delimiter (error upstream)"},
    {"port_rcv_switch_relay_errors", "count", 1,
     "received packets discarded because they could not be forwarded"},
    {"port_xmit_discards", "count", 1, "outbound packets discarded (port down or congested)"},
    {"port_xmit_constraint_errors", "count", 1,
     "outbound packets not sent because of partition or raw constraints"},
    {"port_rcv_constraint_errors", "count", 1,
     "inbound packets discarded because of partition or raw constraints"},
    {"local_link_integrity_errors", "count", 1,
     "times local physical errors exceeded the LocalPhyErrors threshold"},
    {"excessive_buffer_overrun_errors", "count", 1,
     "times consecutive flow-control update periods saw a receive buffer overrun"},
    {"VL15_dropped", "count", 1, "incoming VL15 (subnet management) packets dropped"},
    {"port_xmit_wait", "ticks", 1,
     "ticks the port had data to send but no flow-control credits (congestion)"},
}};

// Driver hw_counters (mlx5 names, Documentation of the mlx5 RDMA counters).
constexpr std::array<Known, 29> kHwCounters{{
    {"out_of_buffer", "count", 1, "packets dropped: receive queue had no WQE posted"},
    {"out_of_sequence", "count", 1, "out-of-sequence packets received (packet loss upstream)"},
    {"duplicate_request", "count", 1, "duplicate requests received (peer retransmitted)"},
    {"rnr_nak_retry_err", "count", 1, "RNR NAK retries exceeded (receiver not ready)"},
    {"packet_seq_err", "count", 1, "NAK sequence errors received (responder saw a gap)"},
    {"implied_nak_seq_err", "count", 1,
     "implied NAK sequence errors (response with a higher PSN than expected)"},
    {"local_ack_timeout_err", "count", 1, "ACK timeouts on sender QPs (retransmissions)"},
    {"resp_local_length_error", "count", 1, "responder local length errors"},
    {"resp_cqe_error", "count", 1, "responder completions with error"},
    {"req_cqe_error", "count", 1, "requester completions with error"},
    {"req_remote_invalid_request", "count", 1, "requester saw remote invalid request NAKs"},
    {"req_remote_access_errors", "count", 1, "requester saw remote access error NAKs"},
    {"resp_remote_access_errors", "count", 1, "responder remote access errors"},
    {"resp_cqe_flush_error", "count", 1, "responder completions flushed with error"},
    {"req_cqe_flush_error", "count", 1, "requester completions flushed with error"},
    {"rx_write_requests", "count", 1, "RDMA WRITE requests received"},
    {"rx_read_requests", "count", 1, "RDMA READ requests received"},
    {"rx_atomic_requests", "count", 1, "atomic requests received"},
    {"rx_dct_connect", "count", 1, "DCT connect requests received"},
    {"rx_icrc_encapsulated", "packets", 1, "RoCE packets with ICRC errors"},
    {"roce_adp_retrans", "count", 1, "adaptive retransmissions (RoCE)"},
    {"roce_adp_retrans_to", "count", 1, "adaptive retransmission timeouts (RoCE)"},
    {"roce_slow_restart", "count", 1, "slow restarts after retransmission (RoCE)"},
    {"roce_slow_restart_cnps", "count", 1, "CNPs sent during slow restart (RoCE)"},
    {"roce_slow_restart_trans", "count", 1, "transitions to slow restart (RoCE)"},
    {"np_cnp_sent", "packets", 1,
     "CNPs sent as notification point (ECN-marked RoCE packets arrived: congestion)"},
    {"np_ecn_marked_roce_packets", "packets", 1, "ECN-marked RoCE packets received"},
    {"rp_cnp_handled", "packets", 1, "CNPs handled as reaction point (send rate reduced)"},
    {"rp_cnp_ignored", "packets", 1, "CNPs received and ignored as reaction point"},
}};

template <std::size_t N>
const Known* lookup(const std::array<Known, N>& table, std::string_view name) {
  for (const auto& k : table)
    if (k.name == name) return &k;
  return nullptr;
}
}  // namespace

int pma_counter_bits(std::string_view name) {
  struct Width {
    std::string_view name;
    int bits;
  };
  static constexpr std::array<Width, 17> kWidths{{
      {"port_xmit_data", 32}, {"port_rcv_data", 32}, {"port_xmit_packets", 32}, {"port_rcv_packets", 32},
      {"port_xmit_wait", 32}, {"symbol_error", 16}, {"link_error_recovery", 8}, {"link_downed", 8},
      {"port_rcv_errors", 16}, {"port_rcv_remote_physical_errors", 16}, {"port_rcv_switch_relay_errors", 16},
      {"port_xmit_discards", 16}, {"port_xmit_constraint_errors", 8}, {"port_rcv_constraint_errors", 8},
      {"local_link_integrity_errors", 4}, {"excessive_buffer_overrun_errors", 4}, {"VL15_dropped", 16},
  }};
  for (const auto& w : kWidths)
    if (w.name == name) return w.bits;
  return 0;
}

std::optional<double> parse_enum_prefix(std::string_view text) {
  text = skip_spaces(text);
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  auto v = parse_u64(text.substr(0, colon));
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

std::optional<double> parse_rate_gbps(std::string_view text) {
  auto v = parse_double(next_token(text));
  if (!v || !next_token(text).starts_with("Gb/sec")) return std::nullopt;
  return *v;
}

std::optional<double> parse_counter(std::string_view text) {
  auto v = parse_u64(trim(text));
  if (!v) return std::nullopt;
  return static_cast<double>(*v);
}

CounterMeta counter_meta(std::string_view name, bool hw) {
  const Known* k = hw ? lookup(kHwCounters, name) : lookup(kPmaCounters, name);
  if (k) return {k->unit, k->scale, k->help};
  const bool packets = name.ends_with("packets") || name.ends_with("_pkts");
  return {packets ? "packets" : "count", 1, {}};
}

}  // namespace reveal::telemetry::rdma
