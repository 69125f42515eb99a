#include "telemetry/procfs/stat.h"

#include <gtest/gtest.h>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(ProcStatProbe, ChannelsFromVmFixture) {
  ProcStatProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_TRUE(st.reason.empty());
  // 3 cpu lines × 8 states + ctxt, processes, procs_running, procs_blocked.
  ASSERT_EQ(p.channels().size(), 3u * 8 + 4);
  auto n = names(p);
  EXPECT_EQ(n[0], "proc.stat:user");
  EXPECT_EQ(n[7], "proc.stat:steal");
  EXPECT_EQ(n[8], "proc.stat:user.cpu0");
  EXPECT_EQ(n[8 + 8 + 3], "proc.stat:idle.cpu1");
  EXPECT_EQ(n[24], "proc.stat:ctxt");
  EXPECT_EQ(n[27], "proc.stat:procs_blocked");
  expect_names_follow_rule(p, "proc.stat");

  const auto& user = info(p, "proc.stat:user.cpu1");
  EXPECT_EQ(user.unit, "ticks");
  EXPECT_EQ(user.kind, Kind::counter);
  EXPECT_EQ(user.subsystem, Subsystem::cpu);
  EXPECT_EQ(info(p, "proc.stat:procs_running").kind, Kind::gauge);
  EXPECT_EQ(info(p, "proc.stat:processes").kind, Kind::counter);
}

TEST(ProcStatProbe, ExactValues) {
  ProcStatProbe p;
  ASSERT_TRUE(p.open(fixture("vm-2cpu")).available);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.stat:user"), 42261);
  EXPECT_EQ(value(p, v, "proc.stat:system"), 6910);
  EXPECT_EQ(value(p, v, "proc.stat:steal"), 580);
  EXPECT_EQ(value(p, v, "proc.stat:user.cpu0"), 19488);
  EXPECT_EQ(value(p, v, "proc.stat:iowait.cpu1"), 610);
  EXPECT_EQ(value(p, v, "proc.stat:ctxt"), 465143);
  EXPECT_EQ(value(p, v, "proc.stat:processes"), 7367);
  EXPECT_EQ(value(p, v, "proc.stat:procs_running"), 4);
  EXPECT_EQ(value(p, v, "proc.stat:procs_blocked"), 0);
  EXPECT_TRUE(all_finite(v));
}

TEST(ProcStatProbe, ExtraColumnsAndLinesIgnored) {
  ProcStatProbe p;
  ASSERT_TRUE(p.open(fixture("edge-extra-columns")).available);
  EXPECT_EQ(p.channels().size(), 3u * 8 + 4);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.stat:steal"), 4);
  EXPECT_EQ(value(p, v, "proc.stat:nice.cpu0"), 1);
  EXPECT_EQ(value(p, v, "proc.stat:ctxt"), 123456789012.0);
  EXPECT_EQ(value(p, v, "proc.stat:procs_blocked"), 1);
}

TEST(ProcStatProbe, TruncatedFileHasOnlyWhatIsThere) {
  ProcStatProbe p;
  ASSERT_TRUE(p.open(fixture("edge-missing")).available);
  EXPECT_EQ(names(p), (std::vector<std::string>{
                          "proc.stat:user", "proc.stat:nice", "proc.stat:system", "proc.stat:idle",
                          "proc.stat:iowait", "proc.stat:irq", "proc.stat:softirq",
                          "proc.stat:steal", "proc.stat:ctxt", "proc.stat:processes"}));
  auto v = sample(p);
  EXPECT_EQ(v[0], 10);
  EXPECT_EQ(v[3], 100);
  EXPECT_EQ(v[8], 42);
  EXPECT_EQ(v[9], 7);
}

TEST(ProcStatProbe, MissingFileIsUnavailableWithReason) {
  ProcStatProbe p;
  auto st = p.open(fixture("host-cpufreq-4cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("proc/stat"), std::string::npos) << st.reason;
}

TEST(ProcStatProbe, VanishedFileGivesNanThenRecovers) {
  TempRoot root("vm-2cpu");
  ProcStatProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.remove("proc/stat");
  EXPECT_TRUE(all_nan(sample(p)));
  root.write("proc/stat", "cpu  1 2 3 4 5 6 7 8 0 0\ncpu1 9 9 9 9 9 9 9 9\nctxt 5\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.stat:user"), 1);
  EXPECT_EQ(value(p, v, "proc.stat:steal"), 8);
  EXPECT_EQ(value(p, v, "proc.stat:user.cpu1"), 9);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.stat:user.cpu0")));  // line missing this tick
  EXPECT_TRUE(std::isnan(value(p, v, "proc.stat:processes")));
  EXPECT_EQ(value(p, v, "proc.stat:ctxt"), 5);
}

TEST(ProcStatProbe, ShortLineGivesNanForMissingColumns) {
  TempRoot root("vm-2cpu");
  ProcStatProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write("proc/stat", "cpu  1 2 3 4\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "proc.stat:idle"), 4);
  EXPECT_TRUE(std::isnan(value(p, v, "proc.stat:iowait")));
}

TEST(ProcStatProbe, LiveHost) {
  ProcStatProbe p;
  ASSERT_TRUE(p.open("/").available);
  auto a = sample(p);
  auto b = sample(p);
  EXPECT_TRUE(all_finite(b));
  EXPECT_GE(value(p, b, "proc.stat:ctxt"), value(p, a, "proc.stat:ctxt"));
}

}  // namespace
}  // namespace reveal::telemetry
