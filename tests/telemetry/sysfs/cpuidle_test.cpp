#include "telemetry/sysfs/cpuidle.h"

#include <gtest/gtest.h>

#include "../probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(SysCpuidleProbe, TimeAndUsagePerCpuAndState) {
  SysCpuidleProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  ASSERT_EQ(p.channels().size(), 4u * 3u * 2u);
  const auto n = names(p);
  EXPECT_EQ(std::vector<std::string>(n.begin(), n.begin() + 6),
            (std::vector<std::string>{"sys.cpuidle:time.cpu0.POLL", "sys.cpuidle:usage.cpu0.POLL",
                                      "sys.cpuidle:time.cpu0.C1", "sys.cpuidle:usage.cpu0.C1",
                                      "sys.cpuidle:time.cpu0.C6", "sys.cpuidle:usage.cpu0.C6"}));
  EXPECT_EQ(n.back(), "sys.cpuidle:usage.cpu3.C6");
  EXPECT_EQ(info(p, "sys.cpuidle:time.cpu1.C1").unit, "us");
  EXPECT_EQ(info(p, "sys.cpuidle:usage.cpu1.C1").unit, "count");
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.kind, Kind::counter);
    // Idle residency is the complement of CPU busy time: a CPU fault, not a power/thermal one.
    EXPECT_EQ(c.subsystem, Subsystem::cpu) << c.name;
  }
  const auto v = sample(p);
  // Fixture: time = 1000·(cpu+1) + 10^(state+3) us, usage = 100·(cpu+1) + state.
  EXPECT_EQ(value(p, v, "sys.cpuidle:time.cpu0.POLL"), 2000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:time.cpu0.C1"), 11000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:time.cpu0.C6"), 101000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:usage.cpu0.C6"), 102);
  EXPECT_EQ(value(p, v, "sys.cpuidle:time.cpu3.C6"), 104000);
  EXPECT_EQ(value(p, v, "sys.cpuidle:usage.cpu3.POLL"), 400);
  expect_names_follow_rule(p, "sys.cpuidle");
}

TEST(SysCpuidleProbe, OfflineCpuIsNanOthersKeepValues) {
  TempRoot root("host-2socket");
  SysCpuidleProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("sys/devices/system/cpu/cpu2/cpuidle");
  const auto v = sample(p);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const auto& name = p.channels()[i].name;
    if (name.find(".cpu2.") != std::string::npos)
      EXPECT_TRUE(std::isnan(v[i])) << name;
    else
      EXPECT_TRUE(std::isfinite(v[i])) << name;
  }
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
