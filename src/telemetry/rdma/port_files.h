// Parsers and metadata for the per-port files of /sys/class/infiniband/<dev>/ports/<n>/
// (drivers/infiniband/core/sysfs.c; Documentation/ABI/stable/sysfs-class-infiniband).
//
//   state       "4: ACTIVE"            IB PortState: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 ACTIVE_DEFER
//   phys_state  "5: LinkUp"            IB PortPhysicalState: 1 Sleep, 2 Polling, 3 Disabled,
//                                      4 PortConfigurationTraining, 5 LinkUp, 6 LinkErrorRecovery,
//                                      7 Phy Test
//   rate        "100 Gb/sec (4X EDR)"  active lanes × lane speed, in Gb/s
//   counters/<name>     one unsigned decimal per file (PMA PortCounters / PortCountersExtended);
//                       "N/A" on devices without that counter (iWARP)
//   hw_counters/<name>  one unsigned decimal per file (driver-specific, e.g. mlx5)
//
// All parsers are allocation-free and take the whole file content.
#pragma once

#include <optional>
#include <string_view>

#include "reveal/channel.h"

namespace reveal::telemetry::rdma {

// Leading "<N>:" of state / phys_state; nullopt if the content does not start with a number
// followed by ':'.
std::optional<double> parse_enum_prefix(std::string_view text);

// Leading "<number> Gb/sec" of rate, in Gb/s; nullopt otherwise.
std::optional<double> parse_rate_gbps(std::string_view text);

// A counter file: one unsigned integer (surrounding whitespace allowed); nullopt for "N/A",
// empty or malformed content.
std::optional<double> parse_counter(std::string_view text);

// How a counter file becomes a channel.
struct CounterMeta {
  std::string_view unit;  // "bytes", "packets", "ticks" or "count"
  double scale = 1;       // applied to the raw value (4 for the 4-octet data counters)
  std::string_view help;  // empty when the name is not known: the caller writes a generic one
};
// `hw` selects the hw_counters table (driver counters) instead of the PMA counters table.
CounterMeta counter_meta(std::string_view name, bool hw);

// Width in bits of a counters/ file as the legacy PMA PortCounters attribute defines it (IBTA
// spec vol. 1, 16.1.3.5): 32 for the data, packet and xmit_wait counters, 16, 8 or 4 for the
// error counters; 0 for a name without a legacy width (the 64-bit PortCountersExtended-only
// unicast/multicast counters, unknown names). A legacy counter *saturates* at 2^bits − 1: it
// stops counting there until cleared (perfquery -R), so its rate reads 0 — a port that logged
// 65535 symbol errors looks healthy. The kernel shows the 64-bit extended value for the data
// and packet counters when the HCA supports it; an error counter keeps its legacy width.
int pma_counter_bits(std::string_view name);

}  // namespace reveal::telemetry::rdma
