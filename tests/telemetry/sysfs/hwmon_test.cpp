#include "telemetry/sysfs/hwmon.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "../probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(SysHwmonProbe, SensorsConvertedToSiUnits) {
  SysHwmonProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{
                          "sys.hwmon:temp.coretemp.Package_id_0", "sys.hwmon:temp.coretemp.temp2",
                          "sys.hwmon:power.power_meter.power1", "sys.hwmon:fan.nct6775.fan1",
                          "sys.hwmon:in.nct6775.Vcore", "sys.hwmon:curr.nct6775.curr1"}));
  EXPECT_EQ(info(p, "sys.hwmon:temp.coretemp.Package_id_0").unit, "celsius");
  EXPECT_EQ(info(p, "sys.hwmon:power.power_meter.power1").unit, "W");
  EXPECT_EQ(info(p, "sys.hwmon:fan.nct6775.fan1").unit, "rpm");
  EXPECT_EQ(info(p, "sys.hwmon:in.nct6775.Vcore").unit, "V");
  EXPECT_EQ(info(p, "sys.hwmon:curr.nct6775.curr1").unit, "A");
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.kind, Kind::gauge);
    EXPECT_EQ(c.subsystem, Subsystem::power_thermal);
  }
  const auto v = sample(p);
  EXPECT_DOUBLE_EQ(v[0], 45.0);    // 45000 m°C
  EXPECT_DOUBLE_EQ(v[1], 43.5);    // 43500 m°C
  EXPECT_DOUBLE_EQ(v[2], 215.5);   // 215500000 uW
  EXPECT_DOUBLE_EQ(v[3], 1200);    // rpm
  EXPECT_DOUBLE_EQ(v[4], 1.032);   // 1032 mV
  EXPECT_DOUBLE_EQ(v[5], 2.5);     // 2500 mA
  expect_names_follow_rule(p, "sys.hwmon");
}

TEST(SysHwmonProbe, DuplicateChipNamesGetSuffixesInHwmonOrder) {
  TempRoot root("host-2socket");
  root.write("sys/class/hwmon/hwmon10/name", "coretemp\n");
  root.write("sys/class/hwmon/hwmon10/temp1_input", "-5000\n");
  root.write("sys/class/hwmon/hwmon10/temp1_label", "Package id 1\n");
  SysHwmonProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const auto n = names(p);
  EXPECT_EQ(n[0], "sys.hwmon:temp.coretemp_0.Package_id_0");
  EXPECT_EQ(n[1], "sys.hwmon:temp.coretemp_0.temp2");
  EXPECT_EQ(n.back(), "sys.hwmon:temp.coretemp_1.Package_id_1");  // hwmon10 after hwmon2
  EXPECT_DOUBLE_EQ(sample(p).back(), -5.0);
}

TEST(SysHwmonProbe, RepeatedLabelFallsBackToStem) {
  TempRoot root("host-2socket");
  root.write("sys/class/hwmon/hwmon0/temp2_label", "Package id 0\n");
  SysHwmonProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(p.channels()[0].name, "sys.hwmon:temp.coretemp.Package_id_0");
  EXPECT_EQ(p.channels()[1].name, "sys.hwmon:temp.coretemp.temp2");
}

TEST(SysHwmonProbe, PowerAverageWhenNoInput) {
  TempRoot root("host-2socket");
  root.remove("sys/class/hwmon/hwmon1/power1_input");
  root.write("sys/class/hwmon/hwmon1/power1_average", "180250000\n");  // ACPI power_meter
  SysHwmonProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_DOUBLE_EQ(value(p, sample(p), "sys.hwmon:power.power_meter.power1"), 180.25);
}

// A driver's "no reading" values are gaps, not 4.29 MW of power or 4 million degrees; readings
// next to them stay.
TEST(SysHwmonProbe, SentinelValuesAreGaps) {
  TempRoot root("host-2socket");
  root.write("sys/class/hwmon/hwmon1/power1_input", "4294967295000\n");  // acpi power_meter, meter invalid
  root.write("sys/class/hwmon/hwmon0/temp2_input", "4294967295\n");
  root.write("sys/class/hwmon/hwmon2/fan1_input", "2147483647\n");
  root.write("sys/class/hwmon/hwmon2/curr1_input", "4294967294\n");  // one less: a reading
  SysHwmonProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const auto v = sample(p);
  EXPECT_TRUE(std::isnan(value(p, v, "sys.hwmon:power.power_meter.power1")));
  EXPECT_TRUE(std::isnan(value(p, v, "sys.hwmon:temp.coretemp.temp2")));
  EXPECT_TRUE(std::isnan(value(p, v, "sys.hwmon:fan.nct6775.fan1")));
  EXPECT_DOUBLE_EQ(value(p, v, "sys.hwmon:temp.coretemp.Package_id_0"), 45.0);
  EXPECT_DOUBLE_EQ(value(p, v, "sys.hwmon:curr.nct6775.curr1"), 4294967.294);
  // A temperature below absolute zero is no reading; a negative current is one.
  root.write("sys/class/hwmon/hwmon0/temp2_input", "-268800000\n");
  root.write("sys/class/hwmon/hwmon2/curr1_input", "-500\n");
  const auto w = sample(p);
  EXPECT_TRUE(std::isnan(value(p, w, "sys.hwmon:temp.coretemp.temp2")));
  EXPECT_DOUBLE_EQ(value(p, w, "sys.hwmon:curr.nct6775.curr1"), -0.5);
}

TEST(SysHwmonProbe, OldLayoutUnderDevice) {
  TempRoot root("host-2socket");
  root.write("sys/class/hwmon/hwmon3/device/name", "it87\n");
  root.write("sys/class/hwmon/hwmon3/device/fan2_input", "900\n");
  SysHwmonProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(value(p, sample(p), "sys.hwmon:fan.it87.fan2"), 900);
}

TEST(SysHwmonProbe, RemovedChipIsNanSiblingsKeepValues) {
  TempRoot root("host-2socket");
  SysHwmonProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("sys/class/hwmon/hwmon1");
  root.write("sys/class/hwmon/hwmon2/fan1_input", "garbage\n");  // a bad read: that sensor only
  const auto v = sample(p);
  EXPECT_DOUBLE_EQ(v[0], 45.0);
  EXPECT_DOUBLE_EQ(v[1], 43.5);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_DOUBLE_EQ(v[4], 1.032);
  EXPECT_DOUBLE_EQ(v[5], 2.5);
}

// As on a host: /sys/class/hwmon/hwmonN are symlinks to the devices. After the NVMe drive's
// chip went away the kernel gives its number to the next chip that registers (ida_alloc): the
// sensor reads NaN, never the new chip's values.
TEST(SysHwmonProbe, AReusedChipNumberIsNotReadAsTheOldChip) {
  TempRoot root("host-2socket");
  root.write("sys/devices/pci0000:00/nvme0/hwmon/hwmon7/name", "nvme\n");
  root.write("sys/devices/pci0000:00/nvme0/hwmon/hwmon7/temp1_label", "Composite\n");
  root.write("sys/devices/pci0000:00/nvme0/hwmon/hwmon7/temp1_input", "40000\n");
  std::filesystem::create_directory_symlink(root.path() / "sys/devices/pci0000:00/nvme0/hwmon/hwmon7",
                                            root.path() / "sys/class/hwmon/hwmon7");
  SysHwmonProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_DOUBLE_EQ(value(p, sample(p), "sys.hwmon:temp.nvme.Composite"), 40.0);
  // The drive is removed; an amdgpu chip registers as hwmon7.
  root.remove("sys/devices/pci0000:00/nvme0");
  root.remove("sys/class/hwmon/hwmon7");
  root.write("sys/devices/pci0000:00/amdgpu/hwmon/hwmon7/name", "amdgpu\n");
  root.write("sys/devices/pci0000:00/amdgpu/hwmon/hwmon7/temp1_label", "edge\n");
  root.write("sys/devices/pci0000:00/amdgpu/hwmon/hwmon7/temp1_input", "90000\n");
  std::filesystem::create_directory_symlink(root.path() / "sys/devices/pci0000:00/amdgpu/hwmon/hwmon7",
                                            root.path() / "sys/class/hwmon/hwmon7");
  EXPECT_TRUE(std::isnan(value(p, sample(p), "sys.hwmon:temp.nvme.Composite")));
  // The same device back at its own path: read again.
  root.write("sys/devices/pci0000:00/nvme0/hwmon/hwmon7/temp1_input", "41000\n");
  EXPECT_DOUBLE_EQ(value(p, sample(p), "sys.hwmon:temp.nvme.Composite"), 41.0);
}

TEST(SysHwmonProbe, UnavailableWithoutHwmon) {
  SysHwmonProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("no hwmon chips"), std::string::npos) << st.reason;
}

TEST(SysHwmonProbe, LiveHostNeverThrows) {
  SysHwmonProbe p;
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
