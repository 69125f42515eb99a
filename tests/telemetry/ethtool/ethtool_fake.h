// A scripted SIOCETHTOOL for the ethtool probe tests: no NIC needed.
//
// nics[name] is what the "kernel" knows of an interface: its ifindex, its ETH_SS_STATS names
// and current values (values.size() is the driver's current count: resize it to imitate a
// driver reload), and errnos to fail gstrings()/gstats() with. An interface not in nics
// answers ENODEV. gstats() follows the real contract (ethtool_io.h): it writes only when the
// count equals the buffer's size, returns the count, and allocates nothing.
#pragma once

#include <cerrno>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "telemetry/ethtool/ethtool_io.h"

namespace reveal::testing {

class FakeEthtool final : public telemetry::EthtoolIo {
 public:
  struct Nic {
    int ifindex = 0;
    int strings_errno = 0;
    int stats_errno = 0;
    std::vector<std::string> names;
    std::vector<std::uint64_t> values;
  };
  std::map<std::string, Nic, std::less<>> nics;
  int open_errno = 0;
  bool is_open = false;
  int opens = 0;
  std::vector<std::string> asked;  // interfaces gstrings() was asked about, in order

  int open() override {
    if (open_errno) return -open_errno;
    is_open = true;
    ++opens;
    return 0;
  }
  void close() override { is_open = false; }

  int ifindex(const char* ifname) override {
    if (!is_open) return -EBADF;
    const Nic* n = find(ifname);
    return n ? n->ifindex : -ENODEV;
  }
  int gstrings(const char* ifname, std::vector<std::string>& names) override {
    names.clear();
    asked.emplace_back(ifname);
    if (!is_open) return -EBADF;
    const Nic* n = find(ifname);
    if (!n) return -ENODEV;
    if (n->strings_errno) return -n->strings_errno;
    names = n->names;
    return 0;
  }
  int gstats(const char* ifname, telemetry::EthtoolStatsBuffer& buf) override {
    if (!is_open) return -EBADF;
    const Nic* n = find(ifname);
    if (!n) return -ENODEV;
    if (n->stats_errno) return -n->stats_errno;
    if (n->values.size() != buf.size()) return static_cast<int>(n->values.size());
    auto out = buf.values();
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = n->values[i];
    return static_cast<int>(out.size());
  }

 private:
  const Nic* find(std::string_view ifname) const {
    auto it = nics.find(ifname);  // heterogeneous: no std::string built
    return it == nics.end() ? nullptr : &it->second;
  }
};

// An mlx5-like port: NIC-level software and phy counters, 4 channels of per-queue counters
// (rx<N>_/tx<N>_/ch<N>_), 8 priorities of PFC counters. Values 1000 + 7 * index.
inline FakeEthtool::Nic mlx5_like_nic(int ifindex) {
  FakeEthtool::Nic n;
  n.ifindex = ifindex;
  n.names = {"rx_packets", "rx_bytes", "tx_packets", "tx_bytes", "rx_csum_complete",
             "tx_queue_dropped", "rx_wqe_err", "rx_out_of_buffer"};
  for (int ch = 0; ch < 4; ++ch)
    for (const char* f : {"rx%d_packets", "rx%d_bytes", "rx%d_xdp_drop", "tx%d_packets", "tx%d_dropped",
                          "ch%d_events"}) {
      std::string s(f);
      s.replace(s.find("%d"), 2, std::to_string(ch));
      n.names.push_back(s);
    }
  for (const char* f : {"rx_packets_phy", "rx_bytes_phy", "rx_discards_phy", "rx_crc_errors_phy",
                        "rx_pause_ctrl_phy", "tx_pause_ctrl_phy", "rx_64_bytes_phy",
                        "rx_65_to_127_bytes_phy"})
    n.names.push_back(f);
  for (int p = 0; p < 8; ++p)
    for (const char* f : {"rx_prio%d_bytes", "rx_prio%d_packets", "rx_prio%d_pause", "tx_prio%d_pause"}) {
      std::string s(f);
      s.replace(s.find("%d"), 2, std::to_string(p));
      n.names.push_back(s);
    }
  for (std::size_t i = 0; i < n.names.size(); ++i) n.values.push_back(1000 + 7 * i);
  return n;
}

// An i40e-like port: dotted names, per-queue "tx-0." stats, a name that repeats once
// sanitized. Values 5000 + index.
inline FakeEthtool::Nic i40e_like_nic(int ifindex) {
  FakeEthtool::Nic n;
  n.ifindex = ifindex;
  n.names = {"rx_unicast",           "tx-0.tx_packets",   "rx-0.rx_bytes",
             "port.rx_dropped",      "port.link_xoff_rx", "port.rx_priority_3_xoff",
             "port.rx_errors",       "port rx_errors",    "port.rx_size_64"};
  for (std::size_t i = 0; i < n.names.size(); ++i) n.values.push_back(5000 + i);
  return n;
}

// The host-ethtool-nics fixture's NICs: eth0 mlx5-like, eno1 i40e-like, eth1 without
// driver statistics (EOPNOTSUPP); lo, veth0 and br0 known to the kernel too.
inline void script_fixture_host(FakeEthtool& f) {
  f.nics["eth0"] = mlx5_like_nic(424201);
  f.nics["eth1"].ifindex = 424202;
  f.nics["eth1"].strings_errno = EOPNOTSUPP;
  f.nics["eno1"] = i40e_like_nic(424203);
  f.nics["lo"].ifindex = 1;
  f.nics["veth0"] = i40e_like_nic(424204);
  f.nics["br0"] = i40e_like_nic(424205);
}

}  // namespace reveal::testing
