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

// Retransmissions for loss: retransmitted segments less those reported spurious by D-SACK
// (TCPDSACKRecvSegs, else TCPDSACKRecv blocks), never below 0; all of them without D-SACK
// counters; tcp_retrans_pct is their share of the segments sent.
TEST(Derived, RetransmissionsForLossLeaveOutTheSpuriousOnes) {
  Series s = series({{"proc.net.snmp:Tcp_RetransSegs", {50, 10, 0, NAN}},
                     {"proc.net.snmp:TcpExt_TCPDSACKRecvSegs", {48, 30, 0, 1}},
                     {"proc.net.snmp:TcpExt_TCPDSACKRecv", {1, 1, 1, 1}},
                     {"proc.net.snmp:Tcp_OutSegs", {1000, 1000, 0, 1000}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:tcp_loss_retrans_per_s", 0), 2.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:tcp_loss_retrans_per_s", 1), 0.0);  // a D-SACK of an earlier second
  EXPECT_DOUBLE_EQ(at(s, "derived:tcp_loss_retrans_per_s", 2), 0.0);
  EXPECT_TRUE(std::isnan(at(s, "derived:tcp_loss_retrans_per_s", 3)));
  EXPECT_DOUBLE_EQ(at(s, "derived:tcp_retrans_pct", 0), 0.2);
  EXPECT_TRUE(std::isnan(at(s, "derived:tcp_retrans_pct", 2)));  // nothing sent
  Series blocks = series({{"proc.net.snmp:Tcp_RetransSegs", {50}}, {"proc.net.snmp:TcpExt_TCPDSACKRecv", {20}}});
  add_derived(blocks);
  EXPECT_DOUBLE_EQ(at(blocks, "derived:tcp_loss_retrans_per_s", 0), 30.0);
  Series none = series({{"proc.net.snmp:Tcp_RetransSegs", {50}}});
  add_derived(none);
  EXPECT_DOUBLE_EQ(at(none, "derived:tcp_loss_retrans_per_s", 0), 50.0);
}

// The memory fill pace reads the rows in time order (t_s): MemAvailable falling 50 kB/s from
// 10000 kB steadily for 20 s reads 100 · 60 · 50 / MemAvailable % per minute from t = 15 s,
// 0 before; without MemAvailable there is no such channel.
TEST(Derived, MemoryFillPaceFollowsTheRows) {
  std::vector<double> total(21, 20000.0), avail;
  for (int t = 0; t <= 20; ++t) avail.push_back(10000.0 - 50.0 * t);
  Series s = series({{"proc.meminfo:MemTotal", total}, {"proc.meminfo:MemAvailable", avail}});
  add_derived(s);
  EXPECT_EQ(at(s, "derived:mem_fill_pct_per_min", 14), 0.0);
  EXPECT_NEAR(at(s, "derived:mem_fill_pct_per_min", 20), 300000.0 / 9000.0, 1e-9);
  EXPECT_EQ(s.channels[std::size_t(s.find("derived:mem_fill_pct_per_min"))].unit, "%/min");
  Series none = series({{"proc.meminfo:MemTotal", total}});
  add_derived(none);
  EXPECT_EQ(none.find("derived:mem_fill_pct_per_min"), -1);
}

// Drops through drop_caches counted over the last 20 s from the vmstat rates (count/s), page
// cache and slab added, per minute (× 3); no such counters on the host: no channel.
TEST(Derived, DropCachesCountedOverTheLast20sPerMinute) {
  std::vector<double> pagecache(100, 0.0), slab(100, 0.0);
  for (int t = 10; t < 20; t += 2) pagecache[std::size_t(t)] = 1.0;  // 5 drops (echo 1)
  slab[30] = 1.0;                                                     // one echo 2
  Series s = series({{"proc.vmstat:drop_pagecache", pagecache}, {"proc.vmstat:drop_slab", slab}});
  add_derived(s);
  EXPECT_EQ(at(s, "derived:drop_caches_per_min", 9), 0.0);
  EXPECT_NEAR(at(s, "derived:drop_caches_per_min", 19), 15.0, 1e-9);
  EXPECT_NEAR(at(s, "derived:drop_caches_per_min", 30), 15.0, 1e-9) << "the drop at 10 s left; the slab's came";
  EXPECT_NEAR(at(s, "derived:drop_caches_per_min", 35), 9.0, 1e-9) << "the drops at 10..14 s left the window";
  EXPECT_NEAR(at(s, "derived:drop_caches_per_min", 38), 3.0, 1e-9) << "all the page-cache drops left";
  EXPECT_EQ(at(s, "derived:drop_caches_per_min", 50), 0.0);
  EXPECT_EQ(s.channels[std::size_t(s.find("derived:drop_caches_per_min"))].unit, "count/min");
  Series none = series({{"proc.meminfo:MemTotal", std::vector<double>(3, 1.0)}});
  add_derived(none);
  EXPECT_EQ(none.find("derived:drop_caches_per_min"), -1);
}

// Run-queue wait per CPU from /proc/schedstat's run_delay rates (ns/s): 3 s of waiting per
// second on 2 CPUs is 1.5 tasks waiting per CPU. The host sum is replaced, per-CPU ones stay.
TEST(Derived, RunqueueWaitPerCpu) {
  Series s = series({{"proc.schedstat:run_delay", {3e9, 0}}, {"proc.schedstat:run_delay.cpu0", {1e9, 0}},
                     {"proc.schedstat:run_delay.cpu1", {2e9, 0}}, {"proc.schedstat:run_time", {2e9, 1e8}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:runqueue_wait_per_cpu", 0), 1.5);
  EXPECT_DOUBLE_EQ(at(s, "derived:runqueue_wait_per_cpu", 1), 0.0);
  EXPECT_EQ(s.find("proc.schedstat:run_delay"), -1);
  EXPECT_GE(s.find("proc.schedstat:run_delay.cpu1"), 0);
  EXPECT_GE(s.find("proc.schedstat:run_time"), 0);

  Series none = series({{"proc.schedstat:run_delay", {3e9}}});  // no per-CPU lines: CPUs unknown
  add_derived(none);
  EXPECT_EQ(none.find("derived:runqueue_wait_per_cpu"), -1);
}

TEST(Derived, PerfRatiosAndZeroDenominators) {
  Series s = series({{"perf:instructions", {200, 5}}, {"perf:cycles", {100, 0}},
                     {"perf:branches", {50, 1}}, {"perf:branch-misses", {5, 1}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:ipc", 0), 2.0);
  EXPECT_TRUE(std::isnan(at(s, "derived:ipc", 1)));
  EXPECT_DOUBLE_EQ(at(s, "derived:branch_miss_pct", 0), 10.0);
}

// Derived PMU ratios (derive_perf) from perf.hardware / perf.uncore rates.
TEST(DerivedPerf, HostRatiosFromEveryEventPair) {
  Series s = series({{"perf:cycles", {1000, 0}},
                          {"perf:instructions", {1500, 10}},
                          {"perf:cache-references", {200, 1}},
                          {"perf:cache-misses", {50, 1}},
                          {"perf:L1-dcache-loads", {400, 1}},
                          {"perf:L1-dcache-load-misses", {40, 1}},
                          {"perf:LLC-loads", {80, 1}},
                          {"perf:LLC-load-misses", {20, 1}},
                          {"perf:dTLB-loads", {500, 1}},
                          {"perf:dTLB-load-misses", {5, 1}},
                          {"perf:cycle_activity.stalls_l3_miss", {250, 1}},
                          {"perf:stalled-cycles-frontend", {100, 1}},
                          {"perf:stalled-cycles-backend", {300, 1}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:ipc", 0), 1.5);
  EXPECT_DOUBLE_EQ(at(s, "derived:cache_miss_pct", 0), 25.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:l1d_load_miss_pct", 0), 10.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:llc_load_miss_pct", 0), 25.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:dtlb_load_miss_pct", 0), 1.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:l3_stall_pct", 0), 25.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:frontend_stall_pct", 0), 10.0);
  EXPECT_DOUBLE_EQ(at(s, "derived:backend_stall_pct", 0), 30.0);
  EXPECT_EQ(s.channels[s.find("derived:l3_stall_pct")].subsystem, Subsystem::memory);
  EXPECT_EQ(s.channels[s.find("derived:ipc")].unit, "instructions/cycle");
  // cycles rate 0 (a gap in counting): every cycles-based ratio is NaN, not infinite.
  for (const char* n : {"derived:ipc", "derived:l3_stall_pct", "derived:frontend_stall_pct"})
    EXPECT_TRUE(std::isnan(at(s, n, 1))) << n;
  EXPECT_EQ(s.find("derived:branch_miss_pct"), -1);  // inputs absent: no channel
}

TEST(DerivedPerf, PerCoreIpcAndMemoryBandwidth) {
  Series s = series({{"perf:cycles.cpu0", {100}},
                          {"perf:instructions.cpu0", {250}},
                          {"perf:cycles.cpu1", {200}},
                          {"perf:instructions.cpu1", {100}},
                          {"perf:cycles.cpu2", {300}},  // no instructions on cpu2: no IPC there
                          {"perf:uncore_imc_read_bytes", {6e9}},
                          {"perf:uncore_imc_write_bytes", {2e9}}});
  add_derived(s);
  EXPECT_DOUBLE_EQ(at(s, "derived:ipc.cpu0", 0), 2.5);
  EXPECT_DOUBLE_EQ(at(s, "derived:ipc.cpu1", 0), 0.5);
  EXPECT_EQ(s.find("derived:ipc.cpu2"), -1);
  EXPECT_EQ(s.find("derived:ipc"), -1);  // no host totals in this series
  EXPECT_DOUBLE_EQ(at(s, "derived:mem_bandwidth_bytes_per_s", 0), 8e9);
  Series amd = series({{"perf:amd_df_dram_bytes", {3e9}}});
  add_derived(amd);
  EXPECT_DOUBLE_EQ(at(amd, "derived:mem_bandwidth_bytes_per_s", 0), 3e9);
}

}  // namespace
}  // namespace reveal

#include "reveal/store.h"

namespace reveal {
namespace {

// The streaming path (rates_row + DerivedRow, one row at a time) gives exactly the offline
// path's values (to_rates + add_derived(keep_empty)) on a real recording.
TEST(DerivedRow, MatchesTheOfflineDerivationRowByRow) {
  for (const char* name : {"h200-gpu-contention.db", "fleet-b.db"}) {
    const Recording rec = load_recording(std::string(REVEAL_FIXTURES_DIR) + "/recordings/" + name);
    Series offline = to_rates(rec);
    add_derived(offline, /*keep_empty=*/true);
    DerivedRow d(rate_channels(rec.channels));
    ASSERT_EQ(d.channels().size(), offline.channels.size()) << name;
    for (std::size_t c = 0; c < offline.channels.size(); ++c) {
      ASSERT_EQ(d.channels()[c].name, offline.channels[c].name) << name;
      ASSERT_EQ(d.channels()[c].unit, offline.channels[c].unit) << name;
    }
    std::vector<double> rates(rec.channels.size()), out(d.channels().size());
    const std::vector<double> none(rec.channels.size(), std::nan(""));
    std::size_t compared = 0;
    // From row 0, as the streaming detector (its first row has no previous sample): the memory
    // fill pace remembers the rows before.
    for (std::size_t i = 0; i < rec.t_unix_ns.size(); ++i) {
      rates_row(rec.channels, i == 0 ? std::span<const double>(none) : rec.values.row(i - 1), rec.values.row(i),
                i == 0 ? 0.0 : double(rec.t_unix_ns[i] - rec.t_unix_ns[i - 1]) * 1e-9, rates);
      d.compute(double(rec.t_unix_ns[i] - rec.t_unix_ns[0]) * 1e-9, rates, out);
      for (std::size_t c = 0; c < out.size(); ++c) {
        const double want = offline.values(i, c);
        if (std::isnan(want)) {
          EXPECT_TRUE(std::isnan(out[c])) << name << " row " << i << " " << offline.channels[c].name;
        } else {
          EXPECT_EQ(out[c], want) << name << " row " << i << " " << offline.channels[c].name;
          ++compared;
        }
      }
    }
    EXPECT_GT(compared, 10000u) << name;
  }
}

}  // namespace
}  // namespace reveal
