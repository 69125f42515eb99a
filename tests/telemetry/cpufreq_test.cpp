#include "telemetry/sysfs/cpufreq.h"

#include <gtest/gtest.h>

#include <string>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

std::int64_t g_now_ns = 0;
std::int64_t fake_now() { return g_now_ns; }

std::string cur_file(int cpu) {
  return "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpufreq/scaling_cur_freq";
}

TEST(SysCpufreqProbe, CurrentFrequencyMeanMinMax) {
  SysCpufreqProbe p;
  auto st = p.open(fixture("host-cpufreq-4cpu"));  // scaling_cur_freq only
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{"sys.cpufreq:scaling_cur_freq_mean", "sys.cpufreq:scaling_cur_freq_min",
                                                "sys.cpufreq:scaling_cur_freq_max"}));
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.unit, "kHz");
    EXPECT_EQ(c.kind, Kind::gauge);
    EXPECT_EQ(c.subsystem, Subsystem::power_thermal);
  }
  EXPECT_EQ(sample(p), (std::vector<double>{1975000, 800000, 3500000}));  // 2.4, 3.5, 0.8, 1.2 GHz
  expect_names_follow_rule(p, "sys.cpufreq");
}

TEST(SysCpufreqProbe, PolicyLimitsTightestOverCpus) {
  SysCpufreqProbe p;
  ASSERT_TRUE(p.open(fixture("host-2socket")).available);
  EXPECT_EQ(names(p), (std::vector<std::string>{"sys.cpufreq:scaling_cur_freq_mean", "sys.cpufreq:scaling_cur_freq_min",
                                                "sys.cpufreq:scaling_cur_freq_max", "sys.cpufreq:scaling_min_freq_max",
                                                "sys.cpufreq:scaling_max_freq_min"}));
  // min: 0.8, 0.8, 0.8, 1.0 GHz; max: 3.5, 3.5, 2.0, 3.5 GHz.
  EXPECT_EQ(sample(p), (std::vector<double>{1975000, 800000, 3500000, 1000000, 2000000}));
}

TEST(SysCpufreqProbe, OfflineCpuCountsForNothingThenBack) {
  TempRoot root("host-cpufreq-4cpu");
  SysCpufreqProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("sys/devices/system/cpu/cpu2/cpufreq");
  EXPECT_EQ(sample(p), (std::vector<double>{(2400000 + 3500000 + 1200000) / 3.0, 1200000, 3500000}));
  root.write(cur_file(2), "900000\n");
  EXPECT_EQ(sample(p), (std::vector<double>{(2400000 + 3500000 + 900000 + 1200000) / 4.0, 900000, 3500000}));
  for (int c = 0; c < 4; ++c) root.remove("sys/devices/system/cpu/cpu" + std::to_string(c) + "/cpufreq");
  EXPECT_TRUE(all_nan(sample(p)));
}

// cppc_cpufreq reads 0 kHz for an idle CPU whose feedback counters did not move: a gap, not a
// CPU throttled to nothing.
TEST(SysCpufreqProbe, ZeroKilohertzIsNoReading) {
  TempRoot root("host-cpufreq-4cpu");
  SysCpufreqProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write(cur_file(2), "0\n");
  EXPECT_EQ(sample(p), (std::vector<double>{(2400000 + 3500000 + 1200000) / 3.0, 1200000, 3500000}));
  for (int c = 0; c < 4; ++c) root.write(cur_file(c), "0\n");
  EXPECT_TRUE(all_nan(sample(p)));
}

// A big host re-reads each CPU about once per kRefreshPeriodS; the statistics use every CPU's
// latest reading.
TEST(SysCpufreqProbe, BigHostReadsCpusInStripes) {
  TempRoot root("host-cpufreq-4cpu");
  constexpr int kCpus = 50;
  for (int c = 0; c < kCpus; ++c) root.write(cur_file(c), "3000000\n");
  g_now_ns = 0;
  SysCpufreqProbe p(&fake_now);
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(sample(p)[0], 3000000);
  for (int c = 0; c < kCpus; ++c) root.write(cur_file(c), "2000000\n");  // the whole host throttled
  g_now_ns += 1'000'000'000;  // 1 Hz: ceil(50 × 1 s / 5 s) = 10 CPUs per tick
  auto v = sample(p);
  EXPECT_EQ(v[0], (40 * 3000000.0 + 10 * 2000000.0) / 50);
  EXPECT_EQ(v[1], 2000000);  // the lowest shows at once
  for (int t = 2; t <= 5; ++t) {
    g_now_ns += 1'000'000'000;
    v = sample(p);
  }
  EXPECT_EQ(v, (std::vector<double>{2000000, 2000000, 2000000}));
}

TEST(SysCpufreqProbe, SparseCpuNumbersAreIncluded) {
  TempRoot root("host-cpufreq-4cpu");
  root.write(cur_file(10), "1000\n");
  SysCpufreqProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(sample(p)[1], 1000);
}

TEST(SysCpufreqProbe, UnavailableWithoutDriver) {
  SysCpufreqProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "no cpufreq driver (/sys/devices/system/cpu/cpu0/cpufreq missing)");
  EXPECT_TRUE(p.channels().empty());
}

}  // namespace
}  // namespace reveal::telemetry
