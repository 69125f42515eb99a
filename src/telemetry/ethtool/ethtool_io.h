// Internal: the ethtool ioctls the ethtool probe makes (SIOCETHTOOL, linux/ethtool.h), behind an
// interface so that statistic selection, failure isolation and driver changes are tested with a
// scripted double (tests/telemetry/ethtool/ethtool_fake.h) on hosts without a physical NIC.
//
// Contract (what make_system_ethtool_io() does, and what a double must imitate):
//  * open(): acquires the control socket the ioctls go through (one SOCK_DGRAM socket, AF_INET,
//    else AF_UNIX; close-on-exec). 0, or -errno. close() releases it; both are idempotent.
//    Every other call fails with -EBADF while closed.
//  * ifindex(ifname): SIOCGIFINDEX, the interface's index in the network namespace of the
//    calling process (the ioctls always talk to the live kernel, whatever root the probe was
//    opened on). >= 1, or -errno (ENODEV: no such interface here).
//  * gstrings(ifname, names): the names of the driver's ETH_SS_STATS string set, in the
//    driver's order (the order of ETHTOOL_GSTATS values): ETHTOOL_GSSET_INFO for the count,
//    then ETHTOOL_GSTRINGS. 0, or -errno; -EOPNOTSUPP also when the driver has no ETH_SS_STATS
//    set (lo answers GSSET_INFO with the set's bit cleared), -EAGAIN when the count kept
//    changing between the two calls. Allocates: open() time only.
//  * gstats(ifname, buf): one reading of all buf.size() values into buf.values(): first
//    ETHTOOL_GSSET_INFO (the kernel writes as many values as the driver has *now*, whatever
//    the caller asked for), then ETHTOOL_GSTATS only if that count equals buf.size(). Returns
//    the driver's current count (values were written iff it equals buf.size()), or -errno.
//    Never allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace reveal::telemetry {

// The argument of one ETHTOOL_GSTATS call for an interface, allocated once at open():
// struct ethtool_stats {u32 cmd; u32 n_stats;} in the first 8-byte word, then the values.
// Room is kept for `slack` values more than size(), so that a driver growing its set in the
// microseconds between gstats()'s GSSET_INFO and GSTATS cannot make the kernel write past it.
class EthtoolStatsBuffer {
 public:
  EthtoolStatsBuffer() = default;
  explicit EthtoolStatsBuffer(std::size_t n_stats, std::size_t slack = 64)
      : n_(n_stats), words_(1 + n_stats + slack, 0) {}
  std::size_t size() const { return n_; }
  std::span<std::uint64_t> values() { return {words_.data() + 1, n_}; }
  std::span<const std::uint64_t> values() const { return {words_.data() + 1, n_}; }
  // The whole ioctl argument (header word + size() + slack values).
  std::span<std::uint64_t> raw() { return words_; }

 private:
  std::size_t n_ = 0;
  std::vector<std::uint64_t> words_;
};

class EthtoolIo {
 public:
  virtual ~EthtoolIo() = default;
  virtual int open() = 0;
  virtual void close() = 0;
  virtual int ifindex(const char* ifname) = 0;
  virtual int gstrings(const char* ifname, std::vector<std::string>& names) = 0;
  virtual int gstats(const char* ifname, EthtoolStatsBuffer& buf) = 0;
};

// The live kernel: a new instance with its own socket (opened by open()).
std::unique_ptr<EthtoolIo> make_system_ethtool_io();

}  // namespace reveal::telemetry
