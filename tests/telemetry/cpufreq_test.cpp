#include "telemetry/sysfs/cpufreq.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(SysCpufreqProbe, PerCpuFrequencies) {
  SysCpufreqProbe p;
  auto st = p.open(fixture("host-cpufreq-4cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p),
            (std::vector<std::string>{
                "sys.cpufreq:scaling_cur_freq.cpu0", "sys.cpufreq:scaling_cur_freq.cpu1",
                "sys.cpufreq:scaling_cur_freq.cpu2", "sys.cpufreq:scaling_cur_freq.cpu3"}));
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.unit, "kHz");
    EXPECT_EQ(c.kind, Kind::gauge);
    EXPECT_EQ(c.subsystem, Subsystem::power_thermal);
  }
  EXPECT_EQ(sample(p), (std::vector<double>{2400000, 3500000, 800000, 1200000}));
}

TEST(SysCpufreqProbe, PolicyMinMaxFollowCurrent) {
  SysCpufreqProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  const auto n = names(p);
  ASSERT_EQ(n.size(), 12u);
  EXPECT_EQ(n[0], "sys.cpufreq:scaling_cur_freq.cpu0");
  EXPECT_EQ(n[3], "sys.cpufreq:scaling_cur_freq.cpu3");
  EXPECT_EQ(n[4], "sys.cpufreq:scaling_min_freq.cpu0");
  EXPECT_EQ(n[8], "sys.cpufreq:scaling_max_freq.cpu0");
  EXPECT_EQ(n[11], "sys.cpufreq:scaling_max_freq.cpu3");
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.unit, "kHz");
    EXPECT_EQ(c.kind, Kind::gauge);
    EXPECT_EQ(c.subsystem, Subsystem::power_thermal);
  }
  EXPECT_EQ(sample(p), (std::vector<double>{2400000, 3500000, 800000, 1200000,   // cur
                                            800000, 800000, 800000, 1000000,     // min
                                            3500000, 3500000, 2000000, 3500000}));  // max
}

TEST(SysCpufreqProbe, CpuNumbersSortNumerically) {
  TempRoot root("host-cpufreq-4cpu");
  root.write("sys/devices/system/cpu/cpu10/cpufreq/scaling_cur_freq", "1000\n");
  SysCpufreqProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  ASSERT_EQ(p.channels().size(), 5u);
  EXPECT_EQ(p.channels()[4].name, "sys.cpufreq:scaling_cur_freq.cpu10");
}

TEST(SysCpufreqProbe, OfflineCpuReadsNanThenBack) {
  TempRoot root("host-cpufreq-4cpu");
  SysCpufreqProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("sys/devices/system/cpu/cpu2/cpufreq");
  auto v = sample(p);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], 1200000);
  root.write("sys/devices/system/cpu/cpu2/cpufreq/scaling_cur_freq", "900000\n");
  EXPECT_EQ(sample(p)[2], 900000);
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
