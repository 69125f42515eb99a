#include "telemetry/procfs/vmstat.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcVmstatProbe, AllFieldsFromVmFixture) {
  ProcVmstatProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(p.channels().size(), 192u);
  expect_names_follow_rule(p, "proc.vmstat");
  const auto& free = info(p, "proc.vmstat:nr_free_pages");
  EXPECT_EQ(free.kind, Kind::gauge);
  EXPECT_EQ(free.unit, "pages");
  EXPECT_EQ(free.subsystem, Subsystem::memory);
  const auto& fault = info(p, "proc.vmstat:pgfault");
  EXPECT_EQ(fault.kind, Kind::counter);
  EXPECT_EQ(fault.unit, "count");
  EXPECT_EQ(fault.subsystem, Subsystem::memory);
  const auto& pgpgin = info(p, "proc.vmstat:pgpgin");
  EXPECT_EQ(pgpgin.kind, Kind::counter);
  EXPECT_EQ(pgpgin.unit, "kB");
  EXPECT_EQ(pgpgin.subsystem, Subsystem::storage);
  EXPECT_EQ(info(p, "proc.vmstat:pgpgout").subsystem, Subsystem::storage);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.vmstat:nr_free_pages"), 898527);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgfault"), 7703523);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgmajfault"), 1233);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgpgin"), 1750025);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcVmstatProbe, LargeCountersExact) {
  ProcVmstatProbe p;
  ASSERT_TRUE(p.open(fixture("edge-extra-columns")).available);
  EXPECT_EQ(p.channels().size(), 9u);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgfault"), 99999999999.0);
  EXPECT_EQ(value(p, v, "proc.vmstat:pswpout"), 5);
  EXPECT_EQ(value(p, v, "proc.vmstat:future_counter"), 1);  // extra token ignored
}

TEST(ProcVmstatProbe, VanishedFileGivesNanThenRecovers) {
  TempRoot root("edge-extra-columns");
  ProcVmstatProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("proc/vmstat");
  EXPECT_TRUE(all_nan(sample(p)));
  root.write("proc/vmstat", "pgfault 100\nnr_dirty 3\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.vmstat:pgfault"), 100);
  EXPECT_EQ(value(p, v, "proc.vmstat:nr_dirty"), 3);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.vmstat:nr_free_pages")));
}

}  // namespace
}  // namespace reveal::telemetry
