#include "telemetry/procfs/loadavg.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcLoadavgProbe, ChannelsAndValues) {
  ProcLoadavgProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{"proc.loadavg:load1", "proc.loadavg:load5",
                                                "proc.loadavg:load15", "proc.loadavg:running",
                                                "proc.loadavg:threads"}));
  for (const auto& c : p.channels()) {
    EXPECT_EQ(c.kind, Kind::gauge);
    EXPECT_EQ(c.subsystem, Subsystem::cpu);
  }
  auto v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{4.27, 2.31, 0.98, 4, 103}));
}

TEST(ProcLoadavgProbe, MalformedTickIsNan) {
  TempRoot root("edge-extra-columns");
  ProcLoadavgProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(sample(p), (std::vector<double>{0.5, 1.25, 2.0, 3, 456}));
  root.write("proc/loadavg", "0.1 0.2 0.3 garbage\n");
  auto v = sample(p);
  EXPECT_EQ(v[0], 0.1);
  EXPECT_TRUE(std::isnan(v[3]));
  EXPECT_TRUE(std::isnan(v[4]));
  root.remove("proc/loadavg");
  EXPECT_TRUE(all_nan(sample(p)));
}

TEST(ProcLoadavgProbe, MissingFileIsUnavailable) {
  ProcLoadavgProbe p;
  EXPECT_FALSE(p.open(fixture("edge-missing")).available);
}

}  // namespace
}  // namespace reveal::telemetry
