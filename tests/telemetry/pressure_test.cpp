#include "telemetry/procfs/pressure.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcPressureProbe, ChannelsAndValuesFromVmFixture) {
  ProcPressureProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  ASSERT_EQ(p.channels().size(), 3u * 2 * 4);
  auto n = names(p);
  EXPECT_EQ(n[0], "proc.pressure:cpu_some_avg10");
  EXPECT_EQ(n[3], "proc.pressure:cpu_some_total");
  EXPECT_EQ(n[4], "proc.pressure:cpu_full_avg10");
  EXPECT_EQ(n[8], "proc.pressure:memory_some_avg10");
  EXPECT_EQ(n[23], "proc.pressure:io_full_total");
  expect_names_follow_rule(p, "proc.pressure");
  EXPECT_EQ(info(p, "proc.pressure:cpu_some_avg60").unit, "%");
  EXPECT_EQ(info(p, "proc.pressure:cpu_some_avg60").kind, Kind::gauge);
  EXPECT_EQ(info(p, "proc.pressure:cpu_some_total").unit, "us");
  EXPECT_EQ(info(p, "proc.pressure:cpu_some_total").kind, Kind::counter);
  EXPECT_EQ(info(p, "proc.pressure:cpu_some_total").subsystem, Subsystem::cpu);
  EXPECT_EQ(info(p, "proc.pressure:memory_full_avg10").subsystem, Subsystem::memory);
  EXPECT_EQ(info(p, "proc.pressure:io_some_avg300").subsystem, Subsystem::storage);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.pressure:cpu_some_avg10"), 62.88);
  EXPECT_EQ(value(p, v, "proc.pressure:cpu_some_total"), 171727550);
  EXPECT_EQ(value(p, v, "proc.pressure:cpu_full_total"), 0);
  EXPECT_EQ(value(p, v, "proc.pressure:io_full_avg300"), 0.36);
  EXPECT_EQ(value(p, v, "proc.pressure:io_full_total"), 5141919);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcPressureProbe, ExtraStatIgnored) {
  ProcPressureProbe p;
  ASSERT_TRUE(p.open(fixture("edge-extra-columns")).available);
  EXPECT_EQ(p.channels().size(), 24u);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.pressure:cpu_some_avg60"), 2.25);
  EXPECT_EQ(value(p, v, "proc.pressure:cpu_some_total"), 123456);
  EXPECT_EQ(value(p, v, "proc.pressure:memory_some_total"), 987654321);
}

TEST(ProcPressureProbe, CpuFullLineMayBeAbsent) {
  ProcPressureProbe p;
  ASSERT_TRUE(p.open(fixture("host-cpufreq-4cpu")).available);
  auto n = names(p);
  ASSERT_EQ(n.size(), 4u + 8 + 8);
  EXPECT_EQ(n[3], "proc.pressure:cpu_some_total");
  EXPECT_EQ(n[4], "proc.pressure:memory_some_avg10");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.pressure:cpu_some_total"), 1000);
  EXPECT_EQ(value(p, v, "proc.pressure:io_full_total"), 3);
}

TEST(ProcPressureProbe, UnavailableWithoutPsi) {
  ProcPressureProbe p;
  auto st = p.open(fixture("edge-missing"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "PSI not enabled in this kernel (/proc/pressure missing)");
}

TEST(ProcPressureProbe, OneFileVanishingOnlyGapsItsChannels) {
  TempRoot root("vm-2cpu");
  ProcPressureProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("proc/pressure/io");
  auto v = sample(p);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.pressure:io_some_total")));
  EXPECT_TRUE(std::isnan(value(p, v, "proc.pressure:io_full_avg10")));
  EXPECT_EQ(value(p, v, "proc.pressure:cpu_some_total"), 171727550);
  root.write("proc/pressure/io", "some avg10=1.00 avg60=2.00 avg300=3.00 total=77\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "proc.pressure:io_some_total"), 77);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.pressure:io_full_total")));
}

}  // namespace
}  // namespace reveal::telemetry
