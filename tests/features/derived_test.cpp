#include <cmath>

#include <gtest/gtest.h>

#include "reveal/features.h"

namespace reveal {
namespace {

// Builds a rate-domain Series directly (as to_rates would produce).
Series series(std::vector<std::pair<std::string, std::vector<double>>> cols) {
  Series s;
  const std::size_t n = cols.front().second.size();
  for (std::size_t i = 0; i < n; ++i) s.t_s.push_back(double(i));
  s.values = Matrix(n, cols.size());
  for (std::size_t c = 0; c < cols.size(); ++c) {
    s.channels.push_back({cols[c].first, "x", Kind::gauge, Subsystem::system});
    for (std::size_t i = 0; i < n; ++i) s.values(i, c) = cols[c].second[i];
  }
  return s;
}

double at(const Series& s, const std::string& name, std::size_t row) {
  const int c = s.find(name);
  EXPECT_GE(c, 0) << name;
  return c < 0 ? std::nan("") : s.values(row, c);
}

TEST(Derived, CpuBreakdownReplacesTickRates) {
  Series s = series({{"proc.stat:user", {60}}, {"proc.stat:system", {20}}, {"proc.stat:idle", {10}},
                     {"proc.stat:iowait", {10}}, {"proc.stat:user.cpu0", {50}}, {"proc.stat:idle.cpu0", {50}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:cpu_user_pct", 0), 60.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:cpu_busy_pct", 0), 80.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:cpu_busy_pct.cpu0", 0), 50.0);
  EXPECT_EQ(s.find("proc.stat:user"), -1);
  EXPECT_EQ(s.find("proc.stat:idle.cpu0"), -1);
}

TEST(Derived, MemoryNetworkDiskPsi) {
  Series s = series({{"proc.meminfo:MemTotal", {1000}}, {"proc.meminfo:MemAvailable", {250}},
                     {"proc.net.dev:rx_bytes.eth0", {100}}, {"proc.net.dev:rx_bytes.lo", {50}},
                     {"proc.net.snmp:Tcp_RetransSegs", {2}}, {"proc.net.snmp:Tcp_OutSegs", {200}},
                     {"proc.diskstats:reads_completed.vda", {3}}, {"proc.diskstats:writes_completed.vda", {7}},
                     {"proc.diskstats:sectors_read.vda", {2}}, {"proc.diskstats:sectors_written.vda", {4}},
                     {"proc.diskstats:io_time_ms.vda", {250}}, {"proc.pressure:cpu_some_total", {300000}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:mem_used_pct", 0), 75.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:net_rx_bytes_per_s", 0), 150.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:tcp_retrans_pct", 0), 1.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:disk_iops.vda", 0), 10.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:disk_read_bytes_per_s.vda", 0), 1024.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:disk_util_pct.vda", 0), 25.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:psi_cpu_some_pct", 0), 30.0);
  EXPECT_EQ(s.find("derived:swap_used_pct"), -1);  // inputs absent: no channel
  EXPECT_EQ(s.find("derived:ipc"), -1);
}

TEST(Derived, PerfRatiosAndZeroDenominators) {
  Series s = series({{"perf:instructions", {200, 5}}, {"perf:cycles", {100, 0}},
                     {"perf:branches", {50, 1}}, {"perf:branch-misses", {5, 1}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:ipc", 0), 2.0);
  EXPECT_TRUE(std::isnan(at(s, "derived:ipc", 1)));
  EXPECT_DOUBLE_EQ(at(s, "derived:branch_miss_pct", 0), 10.0);
}

}  // namespace
}  // namespace reveal
