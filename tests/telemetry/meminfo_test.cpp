#include "telemetry/procfs/meminfo.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcMeminfoProbe, AllKeysFromVmFixture) {
  ProcMeminfoProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(p.channels().size(), 54u);  // every line of the captured file
  EXPECT_EQ(p.channels()[0].name, "proc.meminfo:MemTotal");
  expect_names_follow_rule(p, "proc.meminfo");
  const auto& avail = info(p, "proc.meminfo:MemAvailable");
  EXPECT_EQ(avail.unit, "kB");
  EXPECT_EQ(avail.kind, Kind::gauge);
  EXPECT_EQ(avail.subsystem, Subsystem::memory);
  EXPECT_EQ(info(p, "proc.meminfo:HugePages_Total").unit, "count");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.meminfo:MemTotal"), 24683656);
  EXPECT_EQ(value(p, v, "proc.meminfo:MemAvailable"), 23691236);
  EXPECT_EQ(value(p, v, "proc.meminfo:Active(anon)"), 1548);
  EXPECT_EQ(value(p, v, "proc.meminfo:HugePages_Total"), 0);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcMeminfoProbe, UnknownKeyAtOpenBecomesAChannel) {
  ProcMeminfoProbe p;
  ASSERT_TRUE(p.open(fixture("edge-extra-columns")).available);
  EXPECT_EQ(p.channels().size(), 7u);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.meminfo:FutureKey"), 77);
  EXPECT_EQ(value(p, v, "proc.meminfo:Hugepagesize"), 2048);
  EXPECT_EQ(value(p, v, "proc.meminfo:HugePages_Total"), 4);
}

TEST(ProcMeminfoProbe, KeysRefoundByNameEachSample) {
  TempRoot root("edge-extra-columns");
  ProcMeminfoProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  // Reordered, one key gone, one new key: values follow their keys, the new key is ignored.
  root.write("proc/meminfo",
             "MemAvailable: 3 kB\nBrandNew: 9 kB\nMemTotal: 1 kB\nFutureKey: 5 kB\n");
  auto v = sample(p);
  EXPECT_EQ(v.size(), 7u);
  EXPECT_EQ(value(p, v, "proc.meminfo:MemTotal"), 1);
  EXPECT_EQ(value(p, v, "proc.meminfo:MemAvailable"), 3);
  EXPECT_EQ(value(p, v, "proc.meminfo:FutureKey"), 5);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.meminfo:MemFree")));
  EXPECT_TRUE(std::isnan(value(p, v, "proc.meminfo:Hugepagesize")));
}

TEST(ProcMeminfoProbe, VanishedFileGivesNanThenRecovers) {
  TempRoot root("vm-2cpu");
  ProcMeminfoProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("proc/meminfo");
  EXPECT_TRUE(all_nan(sample(p)));
  root.write("proc/meminfo", "MemTotal: 11 kB\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.meminfo:MemTotal"), 11);
}

TEST(ProcMeminfoProbe, MissingFileIsUnavailable) {
  ProcMeminfoProbe p;
  auto st = p.open(fixture("edge-missing"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("meminfo"), std::string::npos);
}

}  // namespace
}  // namespace reveal::telemetry
