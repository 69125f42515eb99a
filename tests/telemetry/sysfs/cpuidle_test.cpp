#include "telemetry/sysfs/cpuidle.h"

#include <gtest/gtest.h>

#include <string>

#include "../probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

std::int64_t g_now_ns = 0;
std::int64_t fake_now() { return g_now_ns; }

std::string state_dir(int cpu, int state) {
  return "sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/cpuidle/state" + std::to_string(state);
}

TEST(SysCpuidleProbe, TimeAndUsageSummedOverCpusPerState) {
  SysCpuidleProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{"sys.cpuidle:time.POLL", "sys.cpuidle:usage.POLL",
                                                "sys.cpuidle:time.C1", "sys.cpuidle:usage.C1",
                                                "sys.cpuidle:time.C6", "sys.cpuidle:usage.C6"}));
  EXPECT_EQ(info(p, "sys.cpuidle:time.C1").unit, "us");
  EXPECT_EQ(info(p, "sys.cpuidle:usage.C1").unit, "count");
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.kind, Kind::counter);
    // Idle residency is the complement of CPU busy time: a CPU fault, not a power/thermal one.
    EXPECT_EQ(c.subsystem, Subsystem::cpu) << c.name;
  }
  const auto v = sample(p);
  // Fixture, 4 CPUs: time = 1000·(cpu+1) + 10^(state+3) us, usage = 100·(cpu+1) + state.
  EXPECT_EQ(value(p, v, "sys.cpuidle:time.POLL"), 10000 + 4 * 1000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:time.C1"), 10000 + 4 * 10000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:time.C6"), 10000 + 4 * 100000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:usage.POLL"), 1000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:usage.C6"), 1000 + 4 * 2);
  expect_names_follow_rule(p, "sys.cpuidle");
}

// A CPU taken offline stops adding; one that comes back (with its counters reset) starts a new
// base: the sums stay monotonic and never jump by a CPU's whole total.
TEST(SysCpuidleProbe, OfflineCpuStopsAddingAndItsReturnIsNoJump) {
  TempRoot root("host-2socket");
  SysCpuidleProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const std::size_t poll = index_of(p, "sys.cpuidle:time.POLL");
  EXPECT_EQ(sample(p)[poll], 14000);
  root.remove("sys/devices/system/cpu/cpu2/cpuidle");
  root.write(state_dir(0, 0) + "/time", "2500\n");  // cpu0 POLL: 2000 -> 2500
  EXPECT_EQ(sample(p)[poll], 14500);
  root.write(state_dir(2, 0) + "/time", "7\n");  // cpu2 back, counters reset
  root.write(state_dir(2, 0) + "/usage", "1\n");
  EXPECT_EQ(sample(p)[poll], 14500);
  root.write(state_dir(2, 0) + "/time", "107\n");
  EXPECT_EQ(sample(p)[poll], 14600);
}

// A big host re-reads each CPU about once per kRefreshPeriodS, in stripes, whatever the rate.
TEST(SysCpuidleProbe, BigHostReadsCpusInStripes) {
  TempRoot root("host-2socket");
  constexpr int kCpus = 40;
  for (int c = 0; c < kCpus; ++c) {
    root.write(state_dir(c, 0) + "/name", "POLL\n");
    root.write(state_dir(c, 0) + "/time", "1000\n");
    root.write(state_dir(c, 0) + "/usage", "10\n");
    root.remove(state_dir(c, 1));
    root.remove(state_dir(c, 2));
  }
  g_now_ns = 0;
  SysCpuidleProbe p(&fake_now);
  ASSERT_TRUE(p.open(root.path()).available);
  ASSERT_EQ(p.channels().size(), 2u);
  EXPECT_EQ(sample(p)[0], kCpus * 1000);  // the first tick reads every CPU
  for (int c = 0; c < kCpus; ++c) root.write(state_dir(c, 0) + "/time", "1010\n");
  // 1 Hz: ceil(40 CPUs × 1 s / 10 s) = 4 CPUs per tick.
  g_now_ns += 1'000'000'000;
  EXPECT_EQ(sample(p)[0], kCpus * 1000 + 4 * 10);
  for (int t = 2; t <= 10; ++t) {
    g_now_ns += 1'000'000'000;
    EXPECT_EQ(sample(p)[0], kCpus * 1000 + std::min(kCpus, 4 * t) * 10) << "tick " << t;
  }
  // 10 Hz: one CPU per tick; a clock standing still still reads one.
  for (int c = 0; c < kCpus; ++c) root.write(state_dir(c, 0) + "/time", "1020\n");
  g_now_ns += 100'000'000;
  EXPECT_EQ(sample(p)[0], kCpus * 1010 + 10);
  EXPECT_EQ(sample(p)[0], kCpus * 1010 + 20);
  // A long pause (a suspended agent) re-reads every CPU, once.
  g_now_ns += 60'000'000'000;
  EXPECT_EQ(sample(p)[0], kCpus * 1020);
}

TEST(SysCpuidleProbe, SmallHostReadsEveryCpuEveryTick) {
  TempRoot root("host-2socket");
  g_now_ns = 0;
  SysCpuidleProbe p(&fake_now);  // the clock never moves
  ASSERT_TRUE(p.open(root.path()).available);
  const std::size_t c6 = index_of(p, "sys.cpuidle:usage.C6");
  EXPECT_EQ(sample(p)[c6], 1008);
  for (int c = 0; c < 4; ++c) root.write(state_dir(c, 2) + "/usage", std::to_string(100 * (c + 1) + 3) + "\n");
  EXPECT_EQ(sample(p)[c6], 1008 + 4);
}

TEST(SysCpuidleProbe, UnavailableWithoutDriver) {
  SysCpuidleProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "no cpuidle states (cpuidle current_driver: none)");
  st = p.open(fixture("edge-missing"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("cpu0/cpuidle missing"), std::string::npos) << st.reason;
}

TEST(SysCpuidleProbe, LiveHostNeverThrows) {
  SysCpuidleProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  if (!st.available) {
    EXPECT_FALSE(st.reason.empty());
    return;
  }
  EXPECT_EQ(sample(p).size(), p.channels().size());
}

}  // namespace
}  // namespace reveal::telemetry
