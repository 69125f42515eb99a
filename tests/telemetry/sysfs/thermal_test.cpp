#include "telemetry/sysfs/thermal.h"

#include <gtest/gtest.h>

#include <cmath>

#include "../probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(SysThermalProbe, ZonesByTypeAndNumber) {
  SysThermalProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{"sys.thermal:temp.x86_pkg_temp.zone0",
                                                "sys.thermal:temp.acpitz.zone1"}));
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.unit, "celsius");
    EXPECT_EQ(c.kind, Kind::gauge);
    EXPECT_EQ(c.subsystem, Subsystem::power_thermal);
  }
  const auto v = sample(p);
  EXPECT_DOUBLE_EQ(v[0], 46.0);
  EXPECT_DOUBLE_EQ(v[1], 27.8);
  expect_names_follow_rule(p, "sys.thermal");
}

TEST(SysThermalProbe, SameTypeTwiceStaysUnique) {
  TempRoot root("host-2socket");
  root.write("sys/class/thermal/thermal_zone2/type", "x86_pkg_temp\n");
  root.write("sys/class/thermal/thermal_zone2/temp", "51000\n");
  SysThermalProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(p.channels()[2].name, "sys.thermal:temp.x86_pkg_temp.zone2");
  EXPECT_DOUBLE_EQ(sample(p)[2], 51.0);
}

// Firmware garbage below absolute zero (raspberrypi/firmware#133: thermal_zone0 read
// -650788984) is a gap, not an outlier; a cold but real reading is kept.
TEST(SysThermalProbe, BelowAbsoluteZeroIsAGap) {
  TempRoot root("host-2socket");
  SysThermalProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write("sys/class/thermal/thermal_zone0/temp", "-650788984\n");
  root.write("sys/class/thermal/thermal_zone1/temp", "-40000\n");
  const auto v = sample(p);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_DOUBLE_EQ(v[1], -40.0);
}

TEST(SysThermalProbe, RemovedZoneIsNanSiblingsKeepValues) {
  TempRoot root("host-2socket");
  SysThermalProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("sys/class/thermal/thermal_zone0");
  const auto v = sample(p);
  EXPECT_TRUE(std::isnan(v[0]));
  EXPECT_DOUBLE_EQ(v[1], 27.8);
}

TEST(SysThermalProbe, UnavailableWithoutZones) {
  SysThermalProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("no thermal zones"), std::string::npos) << st.reason;
}

TEST(SysThermalProbe, LiveHostNeverThrows) {
  SysThermalProbe p;
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
