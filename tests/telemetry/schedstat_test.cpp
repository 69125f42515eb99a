#include "telemetry/procfs/schedstat.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcSchedstatProbe, ChannelsAndValuesFromVersion15) {
  ProcSchedstatProbe p;
  auto st = p.open(fixture("host-2socket"));
  ASSERT_TRUE(st.available) << st.reason;
  // 3 sums + run_delay of each of the 4 CPUs; the domain lines are not channels.
  ASSERT_EQ(p.channels().size(), 3u + 4);
  auto n = names(p);
  EXPECT_EQ(n[0], "proc.schedstat:run_time");
  EXPECT_EQ(n[1], "proc.schedstat:run_delay");
  EXPECT_EQ(n[2], "proc.schedstat:timeslices");
  EXPECT_EQ(n[3], "proc.schedstat:run_delay.cpu0");
  EXPECT_EQ(n[6], "proc.schedstat:run_delay.cpu3");
  expect_names_follow_rule(p, "proc.schedstat");
  EXPECT_EQ(info(p, "proc.schedstat:run_delay").unit, "ns");
  EXPECT_EQ(info(p, "proc.schedstat:run_delay").kind, Kind::counter);
  EXPECT_EQ(info(p, "proc.schedstat:timeslices").unit, "count");
  EXPECT_EQ(info(p, "proc.schedstat:run_delay.cpu2").subsystem, Subsystem::cpu);

  auto v = sample(p);
  EXPECT_TRUE(all_finite(v));
  EXPECT_EQ(value(p, v, "proc.schedstat:run_delay.cpu0"), 28473382118.0);
  EXPECT_EQ(value(p, v, "proc.schedstat:run_delay.cpu3"), 29988776655.0);
  EXPECT_EQ(value(p, v, "proc.schedstat:run_time"), 712365551234.0 + 698123412345 + 701234123456 + 699912341234);
  EXPECT_EQ(value(p, v, "proc.schedstat:run_delay"), 28473382118.0 + 31234412321 + 27123412345 + 29988776655);
  EXPECT_EQ(value(p, v, "proc.schedstat:timeslices"), 9823412.0 + 9712311 + 9800012 + 9751234);
}

// Version 17 (Linux 6.x) names its domains ("domain0 SMT <mask> ..."); CPU lines are unchanged.
TEST(ProcSchedstatProbe, Version17DomainLinesIgnored) {
  ProcSchedstatProbe p;
  ASSERT_TRUE(p.open(fixture("host-cpufreq-4cpu")).available);
  ASSERT_EQ(p.channels().size(), 3u + 4);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.schedstat:run_delay.cpu1"), 4567890123.0 + 7);
  EXPECT_EQ(value(p, v, "proc.schedstat:timeslices"), 4.0 * 3456789 + 0 + 1 + 2 + 3);
}

TEST(ProcSchedstatProbe, UnavailableWithReason) {
  ProcSchedstatProbe p;
  auto st = p.open(fixture("vm-2cpu"));  // no /proc/schedstat (CONFIG_SCHEDSTATS off)
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("CONFIG_SCHEDSTATS"), std::string::npos) << st.reason;

  TempRoot root("vm-2cpu");
  const std::pair<const char*, const char*> cases[] = {
      {"version 14\ncpu0 0 0 0 1 2 3 4 5 6 7 8 9\n", "version 14 not supported"},
      {"cpu0 0 0 1 2 3 4 5 6 7\n", "no 'version N' first line"},
      {"version x\n", "no 'version N' first line"},
      {"version 15\ntimestamp 1\ndomain0 3 1 2 3\n", "no CPU lines"},
      {"version 15\ncpu0 0 0 1 2 3 4 5 6\n", "no CPU lines"},  // a field short
      {"", "no 'version N' first line"},
  };
  for (const auto& [text, why] : cases) {
    root.write("proc/schedstat", text);
    ProcSchedstatProbe q;
    auto s = q.open(root.path());
    EXPECT_FALSE(s.available) << text;
    EXPECT_NE(s.reason.find(why), std::string::npos) << text << " -> " << s.reason;
  }
}

// A CPU going offline leaves a gap in its channel and in the sums (never a counter that steps
// down); a CPU that comes online later, garbage and a torn line change nothing else.
TEST(ProcSchedstatProbe, HotplugAndCorruptLines) {
  TempRoot root("vm-2cpu");
  root.write("proc/schedstat", "version 15\ntimestamp 1\ncpu0 0 0 1 2 3 4 100 10 5\ncpu1 0 0 1 2 3 4 200 20 7\n");
  ProcSchedstatProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  ASSERT_EQ(p.channels().size(), 5u);
  auto v = sample(p);
  expect_values(p, v, "proc.schedstat:", {{"run_time", 300}, {"run_delay", 30}, {"timeslices", 12},
                                          {"run_delay.cpu0", 10}, {"run_delay.cpu1", 20}}, "both online");

  root.write("proc/schedstat", "version 15\ntimestamp 2\ncpu1 0 0 1 2 3 4 250 25 8\n");
  v = sample(p);
  const double nan = __builtin_nan("");
  expect_values(p, v, "proc.schedstat:", {{"run_time", nan}, {"run_delay", nan}, {"timeslices", nan},
                                          {"run_delay.cpu0", nan}, {"run_delay.cpu1", 25}}, "cpu0 offline");

  root.write("proc/schedstat",
             "version 15\ncpu1 0 0 1 2 3 4 260 26 9\ngarbage line\ncpu0 0 0 1 2 3 4 110 11 6\n"
             "cpu2 0 0 1 2 3 4 999 99 9\ncpu0 0 0 1 2 3 4 1 1 1\n");
  v = sample(p);
  expect_values(p, v, "proc.schedstat:", {{"run_time", 370}, {"run_delay", 37}, {"timeslices", 15},
                                          {"run_delay.cpu0", 11}, {"run_delay.cpu1", 26}}, "back, reordered, extras");

  root.write("proc/schedstat", "version 15\ncpu0 0 0 1 2 3 4 120 x 6\ncpu1 0 0 1 2 3 4 270 27 9\n");
  v = sample(p);
  expect_values(p, v, "proc.schedstat:", {{"run_delay", nan}, {"run_delay.cpu0", nan}, {"run_delay.cpu1", 27}},
                "a malformed field");

  root.remove("proc/schedstat");
  v = sample(p);
  EXPECT_TRUE(all_nan(v));
}

}  // namespace
}  // namespace reveal::telemetry
