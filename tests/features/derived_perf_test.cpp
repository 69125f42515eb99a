// Derived PMU ratios (src/features/derived.cpp, derive_perf) from perf.hardware / perf.uncore
// rates.
#include <cmath>

#include <gtest/gtest.h>

#include "reveal/features.h"

namespace reveal {
namespace {

Series rate_series(std::vector<std::pair<std::string, std::vector<double>>> cols) {
  Series s;
  const std::size_t n = cols.front().second.size();
  for (std::size_t i = 0; i < n; ++i) s.t_s.push_back(double(i));
  s.values = Matrix(n, cols.size());
  for (std::size_t c = 0; c < cols.size(); ++c) {
    s.channels.push_back({cols[c].first, "count/s", Kind::gauge, Subsystem::cpu});
    for (std::size_t i = 0; i < n; ++i) s.values(i, c) = cols[c].second[i];
  }
  return s;
}

double at(const Series& s, const std::string& name, std::size_t row) {
  const int c = s.find(name);
  EXPECT_GE(c, 0) << name;
  return c < 0 ? std::nan("") : s.values(row, c);
}

TEST(DerivedPerf, HostRatiosFromEveryEventPair) {
  Series s = rate_series({{"perf:cycles", {1000, 0}},
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
  Series s = rate_series({{"perf:cycles.cpu0", {100}},
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
  Series amd = rate_series({{"perf:amd_df_dram_bytes", {3e9}}});
  add_derived(amd);
  EXPECT_DOUBLE_EQ(at(amd, "derived:mem_bandwidth_bytes_per_s", 0), 3e9);
}

}  // namespace
}  // namespace reveal
