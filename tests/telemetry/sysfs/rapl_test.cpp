#include "telemetry/sysfs/rapl.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../probe_test_util.h"
#include "reveal/features.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(SysRaplProbe, ZonesAndSubzonesWithWrapRange) {
  SysRaplProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{"sys.rapl:energy_uj.package-0",
                                                "sys.rapl:energy_uj.package-0.dram",
                                                "sys.rapl:energy_uj.package-1"}));
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.unit, "uJ");
    EXPECT_EQ(c.kind, Kind::counter);
    EXPECT_EQ(c.subsystem, Subsystem::power_thermal);
  }
  EXPECT_EQ(p.channels()[0].wrap_range, 262143328850.0);
  EXPECT_EQ(p.channels()[1].wrap_range, 65712999613.0);
  EXPECT_EQ(p.channels()[2].wrap_range, 262143328850.0);
  EXPECT_EQ(sample(p), (std::vector<double>{123456789012.0, 9876543210.0, 111111111111.0}));
  expect_names_follow_rule(p, "sys.rapl");
}

// A real host lists every zone in /sys/class/powercap as a symlink, subzones too, while the
// zone directories nest; each zone must be counted once.
TEST(SysRaplProbe, RealHostSymlinkLayoutCountsEachZoneOnce) {
  TempRoot root("host-2socket");
  root.remove("sys/class/powercap");
  const std::string dev = "sys/devices/virtual/powercap/intel-rapl/";
  root.write(dev + "enabled", "1\n");
  root.write(dev + "intel-rapl:0/name", "package-0\n");
  root.write(dev + "intel-rapl:0/energy_uj", "5000\n");
  root.write(dev + "intel-rapl:0/max_energy_range_uj", "262143328850\n");
  root.write(dev + "intel-rapl:0/intel-rapl:0:0/name", "core\n");
  root.write(dev + "intel-rapl:0/intel-rapl:0:0/energy_uj", "700\n");
  root.write(dev + "intel-rapl:0/intel-rapl:0:0/max_energy_range_uj", "262143328850\n");
  std::filesystem::create_directories(root.path() / "sys/class/powercap");
  const auto cls = root.path() / "sys/class/powercap";
  const std::string up = "../../devices/virtual/powercap/intel-rapl";
  std::filesystem::create_directory_symlink(up, cls / "intel-rapl");
  std::filesystem::create_directory_symlink(up + "/intel-rapl:0", cls / "intel-rapl:0");
  std::filesystem::create_directory_symlink(up + "/intel-rapl:0/intel-rapl:0:0",
                                            cls / "intel-rapl:0:0");
  SysRaplProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(names(p), (std::vector<std::string>{"sys.rapl:energy_uj.package-0",
                                                "sys.rapl:energy_uj.package-0.core"}));
  EXPECT_EQ(sample(p), (std::vector<double>{5000, 700}));
}

TEST(SysRaplProbe, RemovedZoneIsNanSiblingsKeepValues) {
  TempRoot root("host-2socket");
  SysRaplProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("sys/class/powercap/intel-rapl:1");
  auto v = sample(p);
  EXPECT_EQ(v[0], 123456789012.0);
  EXPECT_EQ(v[1], 9876543210.0);
  EXPECT_TRUE(std::isnan(v[2]));
}

// The raw counter wraps to 0 past max_energy_range_uj; the rate stage unwraps with wrap_range.
TEST(SysRaplProbe, WrapUnwrappedByRateStage) {
  TempRoot root("host-2socket");
  SysRaplProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  Recording rec;
  rec.channels = p.channels();
  rec.values = Matrix(2, rec.channels.size());
  rec.t_unix_ns = {0, 2'000'000'000};
  root.write("sys/class/powercap/intel-rapl:0/energy_uj", "262143328000\n");
  auto v0 = sample(p);
  root.write("sys/class/powercap/intel-rapl:0/energy_uj", "150\n");
  auto v1 = sample(p);
  EXPECT_EQ(v1[0], 150);  // raw value, as the kernel shows it
  for (std::size_t c = 0; c < rec.channels.size(); ++c) {
    rec.values(0, c) = v0[c];
    rec.values(1, c) = v1[c];
  }
  const Series s = to_rates(rec);
  EXPECT_DOUBLE_EQ(s.values(1, 0), (262143328850.0 - 262143328000.0 + 150) / 2);  // uJ/s
  EXPECT_EQ(s.channels[0].unit, "uJ/s");
}

TEST(SysRaplProbe, MissingRangeAndDuplicateNames) {
  TempRoot root("host-2socket");
  root.remove("sys/class/powercap/intel-rapl:1/max_energy_range_uj");
  root.write("sys/class/powercap/intel-rapl:2/name", "package-1\n");
  root.write("sys/class/powercap/intel-rapl:2/energy_uj", "42\n");
  SysRaplProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(names(p), (std::vector<std::string>{
                          "sys.rapl:energy_uj.package-0", "sys.rapl:energy_uj.package-0.dram",
                          "sys.rapl:energy_uj.package-1_0", "sys.rapl:energy_uj.package-1_1"}));
  EXPECT_EQ(p.channels()[2].wrap_range, 0);  // unknown: the counter's 64 bits apply
  EXPECT_NE(p.channels()[2].help.find("max_energy_range_uj unreadable"), std::string::npos) << "said, not silent";
  EXPECT_EQ(p.channels()[0].help.find("unreadable"), std::string::npos);
  EXPECT_EQ(sample(p)[3], 42);
}

TEST(SysRaplProbe, RootOnlyEnergyIsUnavailableWithReason) {
  if (::geteuid() == 0) GTEST_SKIP() << "root reads files whatever their mode";
  TempRoot root("host-2socket");
  for (const char* z : {"intel-rapl:0", "intel-rapl:0/intel-rapl:0:0", "intel-rapl:1"})
    ASSERT_EQ(::chmod((root.path() / "sys/class/powercap" / z / "energy_uj").c_str(), 0),
              0);
  SysRaplProbe p;
  auto st = p.open(root.path());
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("energy_uj: Permission denied"), std::string::npos) << st.reason;
}

TEST(SysRaplProbe, UnavailableWithoutPowercap) {
  SysRaplProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("no RAPL zones"), std::string::npos) << st.reason;
  EXPECT_TRUE(p.channels().empty());
}

TEST(SysRaplProbe, LiveHostNeverThrows) {
  SysRaplProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  if (!st.available) {
    EXPECT_FALSE(st.reason.empty());
    return;
  }
  EXPECT_EQ(sample(p).size(), p.channels().size());
  for (const auto& c : p.channels()) EXPECT_GE(c.wrap_range, 0) << c.name;
}

}  // namespace
}  // namespace reveal::telemetry
