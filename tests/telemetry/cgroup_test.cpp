#include "telemetry/cgroup/cgroup.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include "probe_test_util.h"
#include "telemetry/cgroup/hierarchy.h"
#include "telemetry/cgroup/psi.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

const std::string kCg = "sys/fs/cgroup/";
const std::string kDocker = "system.slice/docker-abc.scope";

// Cgroup indices in channel order, each once ("" for a channel without index).
std::vector<std::string> cgroups_of(const Probe& p) {
  std::vector<std::string> out;
  for (const auto& n : names(p)) {
    const auto colon = n.find(':');
    const auto dot = n.find('.', colon);
    const std::string idx = dot == std::string::npos ? "" : n.substr(dot + 1);
    if (out.empty() || out.back() != idx) out.push_back(idx);
  }
  return out;
}

std::size_t count_for(const Probe& p, const std::string& index) {
  std::size_t n = 0;
  for (const auto& name : names(p)) n += name.ends_with("." + index);
  return n;
}

// The tests below rely on the default cgroup set unless they say otherwise.
class CgroupProbeTest : public ::testing::Test {
 protected:
  void SetUp() override { ::unsetenv("REVEAL_CGROUP_PARENT"); }
  void TearDown() override { ::unsetenv("REVEAL_CGROUP_PARENT"); }
};

TEST(CgroupPsi, ParseAvg10Total) {
  auto s = psi::parse_avg10_total(" avg10=12.50 avg60=8.20 avg300=3.10 total=45678901");
  EXPECT_EQ(s.avg10, 12.5);
  EXPECT_EQ(s.total, 45678901);
  s = psi::parse_avg10_total(" avg60=1.00 total=x");
  EXPECT_TRUE(std::isnan(s.avg10));
  EXPECT_TRUE(std::isnan(s.total));
  EXPECT_EQ(psi::line_kind("some"), 0);
  EXPECT_EQ(psi::line_kind("full"), 1);
  EXPECT_EQ(psi::line_kind("avg10=1"), -1);
}

TEST(CgroupHierarchy, NormalizeParent) {
  EXPECT_EQ(cgroup::normalize_parent("/system.slice/"), "system.slice");
  EXPECT_EQ(cgroup::normalize_parent("kubepods.slice//pod1"), "kubepods.slice/pod1");
  EXPECT_EQ(cgroup::normalize_parent("/"), "");
  EXPECT_EQ(cgroup::normalize_parent(""), "");
  EXPECT_FALSE(cgroup::normalize_parent("../etc"));
  EXPECT_FALSE(cgroup::normalize_parent("system.slice/./x"));
}

TEST_F(CgroupProbeTest, DefaultRuleWatchesTopLevelAndKnownParentsChildren) {
  CgroupProbe p;
  auto st = p.open(fixture("host-cgroup2"));
  ASSERT_TRUE(st.available) << st.reason;
  expect_names_follow_rule(p, "cgroup");
  // user.slice/user-1000.slice is not watched: only system.slice, docker, machine.slice and
  // kubepods* are expanded one level.
  EXPECT_EQ(cgroups_of(p), (std::vector<std::string>{"kubepods.slice", "kubepods.slice/pod1",
                                                     "system.slice", kDocker,
                                                     "system.slice/ssh.service", "user.slice"}));
  // 6 cpu.stat + cpu.max + 2 memory.current/max + 5 memory.events + 11 memory.stat + 6 io.stat
  // + 3 × 4 pressure = 43 per full cgroup; ssh.service has no cpu "full" line (41), pod1 no
  // io.stat (37).
  EXPECT_EQ(count_for(p, kDocker), 43u);
  EXPECT_EQ(count_for(p, "system.slice/ssh.service"), 41u);
  EXPECT_EQ(count_for(p, "kubepods.slice/pod1"), 37u);
  EXPECT_EQ(p.channels().size(), 4 * 43u + 41 + 37);
}

TEST_F(CgroupProbeTest, NamesUnitsKindsSubsystems) {
  CgroupProbe p;
  ASSERT_TRUE(p.open(fixture("host-cgroup2")).available);
  const std::string d = "." + kDocker;
  std::vector<std::string> docker;
  for (const auto& n : names(p))
    if (n.ends_with(d)) docker.push_back(n.substr(0, n.size() - d.size()));
  EXPECT_EQ(docker,
            (std::vector<std::string>{
                "cgroup:cpu_stat_usage_usec", "cgroup:cpu_stat_user_usec",
                "cgroup:cpu_stat_system_usec", "cgroup:cpu_stat_nr_periods",
                "cgroup:cpu_stat_nr_throttled", "cgroup:cpu_stat_throttled_usec", "cgroup:cpu_max",
                "cgroup:memory_current", "cgroup:memory_max", "cgroup:memory_events_low",
                "cgroup:memory_events_high", "cgroup:memory_events_max", "cgroup:memory_events_oom",
                "cgroup:memory_events_oom_kill", "cgroup:memory_stat_anon",
                "cgroup:memory_stat_file", "cgroup:memory_stat_kernel_stack",
                "cgroup:memory_stat_sock", "cgroup:memory_stat_shmem",
                "cgroup:memory_stat_file_dirty", "cgroup:memory_stat_file_writeback",
                "cgroup:memory_stat_workingset_refault_anon",
                "cgroup:memory_stat_workingset_refault_file", "cgroup:memory_stat_pgfault",
                "cgroup:memory_stat_pgmajfault", "cgroup:io_stat_rbytes", "cgroup:io_stat_wbytes",
                "cgroup:io_stat_rios", "cgroup:io_stat_wios", "cgroup:io_stat_dbytes",
                "cgroup:io_stat_dios", "cgroup:cpu_pressure_some_avg10",
                "cgroup:cpu_pressure_some_total", "cgroup:cpu_pressure_full_avg10",
                "cgroup:cpu_pressure_full_total", "cgroup:memory_pressure_some_avg10",
                "cgroup:memory_pressure_some_total", "cgroup:memory_pressure_full_avg10",
                "cgroup:memory_pressure_full_total", "cgroup:io_pressure_some_avg10",
                "cgroup:io_pressure_some_total", "cgroup:io_pressure_full_avg10",
                "cgroup:io_pressure_full_total"}));
  auto check = [&](const std::string& field, const char* unit, Kind kind, Subsystem sub) {
    const auto& c = info(p, "cgroup:" + field + d);
    EXPECT_EQ(c.unit, unit) << field;
    EXPECT_EQ(c.kind, kind) << field;
    EXPECT_EQ(c.subsystem, sub) << field;
    EXPECT_FALSE(c.help.empty()) << field;
  };
  check("cpu_stat_throttled_usec", "us", Kind::counter, Subsystem::cpu);
  check("cpu_stat_nr_throttled", "count", Kind::counter, Subsystem::cpu);
  check("cpu_max", "cores", Kind::gauge, Subsystem::cpu);
  check("memory_current", "bytes", Kind::gauge, Subsystem::memory);
  check("memory_max", "bytes", Kind::gauge, Subsystem::memory);
  check("memory_events_oom_kill", "count", Kind::counter, Subsystem::memory);
  check("memory_stat_anon", "bytes", Kind::gauge, Subsystem::memory);
  check("memory_stat_pgmajfault", "count", Kind::counter, Subsystem::memory);
  check("memory_stat_workingset_refault_file", "count", Kind::counter, Subsystem::memory);
  check("io_stat_wbytes", "bytes", Kind::counter, Subsystem::storage);
  check("io_stat_wios", "count", Kind::counter, Subsystem::storage);
  check("cpu_pressure_some_avg10", "%", Kind::gauge, Subsystem::cpu);
  check("memory_pressure_full_total", "us", Kind::counter, Subsystem::memory);
  check("io_pressure_some_total", "us", Kind::counter, Subsystem::storage);
}

TEST_F(CgroupProbeTest, ValuesOfADockerScope) {
  CgroupProbe p;
  ASSERT_TRUE(p.open(fixture("host-cgroup2")).available);
  auto v = sample(p);
  auto at = [&](const std::string& field) { return value(p, v, "cgroup:" + field + "." + kDocker); };
  EXPECT_EQ(at("cpu_stat_usage_usec"), 982341556);
  EXPECT_EQ(at("cpu_stat_user_usec"), 901234567);
  EXPECT_EQ(at("cpu_stat_system_usec"), 81106989);
  EXPECT_EQ(at("cpu_stat_nr_periods"), 41234);
  EXPECT_EQ(at("cpu_stat_nr_throttled"), 8123);
  EXPECT_EQ(at("cpu_stat_throttled_usec"), 301234567);
  EXPECT_EQ(at("memory_current"), 1610612736);
  EXPECT_EQ(at("memory_max"), 2147483648);
  EXPECT_EQ(at("memory_events_low"), 0);
  EXPECT_EQ(at("memory_events_high"), 0);
  EXPECT_EQ(at("memory_events_max"), 37);
  EXPECT_EQ(at("memory_events_oom"), 2);
  EXPECT_EQ(at("memory_events_oom_kill"), 1);
  EXPECT_EQ(at("memory_stat_anon"), 1288490188);
  EXPECT_EQ(at("memory_stat_file"), 268435456);
  EXPECT_EQ(at("memory_stat_kernel_stack"), 1048576);
  EXPECT_EQ(at("memory_stat_sock"), 65536);
  EXPECT_EQ(at("memory_stat_shmem"), 4194304);
  EXPECT_EQ(at("memory_stat_file_dirty"), 2097152);
  EXPECT_EQ(at("memory_stat_file_writeback"), 131072);
  EXPECT_EQ(at("memory_stat_workingset_refault_anon"), 120);
  EXPECT_EQ(at("memory_stat_workingset_refault_file"), 5531);
  EXPECT_EQ(at("memory_stat_pgfault"), 9123456);
  EXPECT_EQ(at("memory_stat_pgmajfault"), 812);
  // io.stat: 8:0 + 259:0
  EXPECT_EQ(at("io_stat_rbytes"), 104857600 + 4194304);
  EXPECT_EQ(at("io_stat_wbytes"), 52428800 + 1048576);
  EXPECT_EQ(at("io_stat_rios"), 2500 + 100);
  EXPECT_EQ(at("io_stat_wios"), 1200 + 50);
  EXPECT_EQ(at("io_stat_dbytes"), 8192);
  EXPECT_EQ(at("io_stat_dios"), 2);
  EXPECT_EQ(at("cpu_pressure_some_avg10"), 12.5);
  EXPECT_EQ(at("cpu_pressure_some_total"), 45678901);
  EXPECT_EQ(at("cpu_pressure_full_avg10"), 10.25);
  EXPECT_EQ(at("cpu_pressure_full_total"), 40123456);
  EXPECT_EQ(at("memory_pressure_some_avg10"), 1.2);
  EXPECT_EQ(at("memory_pressure_full_total"), 1234567);
  EXPECT_EQ(at("io_pressure_some_total"), 345678);
  EXPECT_EQ(at("io_pressure_full_avg10"), 0.3);
}

TEST_F(CgroupProbeTest, OtherCgroupsMaxEmptyIoStatAndMissingFiles) {
  CgroupProbe p;
  ASSERT_TRUE(p.open(fixture("host-cgroup2")).available);
  auto v = sample(p);
  // "max" (no limit) is NaN, not a number and not a gap of the siblings.
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:memory_max.system.slice/ssh.service")));
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:memory_max.system.slice")));
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:memory_max.user.slice")));
  EXPECT_EQ(value(p, v, "cgroup:memory_max.kubepods.slice"), 64424509440.0);
  EXPECT_EQ(value(p, v, "cgroup:memory_max.kubepods.slice/pod1"), 4294967296.0);
  std::size_t nans = 0;
  for (double x : v) nans += std::isnan(x);
  EXPECT_EQ(nans, 3u + 6);  // and the six cpu.max "max 100000": no CPU limit
  // Empty io.stat (no I/O yet) sums to 0.
  for (const char* f : {"rbytes", "wbytes", "rios", "wios", "dbytes", "dios"})
    EXPECT_EQ(value(p, v, std::string("cgroup:io_stat_") + f + ".system.slice/ssh.service"), 0);
  EXPECT_EQ(value(p, v, "cgroup:io_stat_rbytes.system.slice"), 734003200 + 10485760);
  EXPECT_EQ(value(p, v, "cgroup:io_stat_wios.user.slice"), 2000);
  EXPECT_EQ(value(p, v, "cgroup:cpu_pressure_some_total.system.slice/ssh.service"), 1234);
  EXPECT_EQ(value(p, v, "cgroup:memory_current.system.slice/ssh.service"), 8388608);
  EXPECT_EQ(value(p, v, "cgroup:cpu_stat_usage_usec.user.slice"), 7654321000.0);
  EXPECT_EQ(value(p, v, "cgroup:cpu_stat_nr_throttled.kubepods.slice/pod1"), 9000);
  EXPECT_EQ(value(p, v, "cgroup:memory_events_oom_kill.kubepods.slice/pod1"), 1);
  EXPECT_EQ(value(p, v, "cgroup:memory_events_high.kubepods.slice/pod1"), 12);
  EXPECT_EQ(value(p, v, "cgroup:memory_pressure_full_avg10.kubepods.slice/pod1"), 7.25);
  for (const auto& n : names(p)) {
    EXPECT_NE(n, "cgroup:io_stat_rbytes.kubepods.slice/pod1");  // io not enabled there
    EXPECT_NE(n, "cgroup:cpu_pressure_full_avg10.system.slice/ssh.service");
  }
}

// cpu.max: the CPU limit in cores (quota / period); NaN without a limit or when malformed.
TEST_F(CgroupProbeTest, CpuMaxIsTheLimitInCores) {
  TempRoot root("host-cgroup2");
  const std::string cg = "sys/fs/cgroup/";
  root.write(cg + "kubepods.slice/pod1/cpu.max", "250000 100000\n");
  root.write(cg + "system.slice/cpu.max", "50000 100000\n");
  CgroupProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "cgroup:cpu_max.kubepods.slice/pod1"), 2.5);
  EXPECT_EQ(value(p, v, "cgroup:cpu_max.system.slice"), 0.5);
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:cpu_max." + std::string(kDocker))));
  EXPECT_EQ(info(p, "cgroup:cpu_max.kubepods.slice/pod1").unit, "cores");
  EXPECT_EQ(info(p, "cgroup:cpu_max.kubepods.slice/pod1").subsystem, Subsystem::cpu);
  root.write(cg + "kubepods.slice/pod1/cpu.max", "max 100000\n");  // the limit lifted
  root.write(cg + "system.slice/cpu.max", "50000 0\n");            // malformed
  v = sample(p);
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:cpu_max.kubepods.slice/pod1")));
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:cpu_max.system.slice")));
}

TEST_F(CgroupProbeTest, RemovedCgroupIsNanOnlyForItsChannelsAndNewOnesAreIgnored) {
  TempRoot root("host-cgroup2");
  CgroupProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  const auto before = sample(p);
  const std::size_t n = p.channels().size();
  root.remove(kCg + kDocker);
  root.write(kCg + "system.slice/new.service/cgroup.procs", "");
  root.write(kCg + "system.slice/new.service/cpu.stat", "usage_usec 1\n");
  auto v = sample(p);
  ASSERT_EQ(p.channels().size(), n);
  for (std::size_t i = 0; i < n; ++i) {
    const auto& name = p.channels()[i].name;
    if (name.ends_with("." + kDocker)) {
      EXPECT_TRUE(std::isnan(v[i])) << name;
    } else if (!std::isnan(before[i])) {
      EXPECT_EQ(v[i], before[i]) << name;
    }
  }
  // A cgroup of the same path comes back (a restarted unit): it is read again.
  root.write(kCg + kDocker + "/cpu.stat", "usage_usec 5\nnr_throttled 2\n");
  v = sample(p);
  EXPECT_EQ(value(p, v, "cgroup:cpu_stat_usage_usec." + kDocker), 5);
  EXPECT_EQ(value(p, v, "cgroup:cpu_stat_nr_throttled." + kDocker), 2);
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:cpu_stat_user_usec." + kDocker)));
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:memory_current." + kDocker)));
}

TEST_F(CgroupProbeTest, MalformedValuesAreNan) {
  TempRoot root("host-cgroup2");
  CgroupProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  root.write(kCg + kDocker + "/io.stat", "8:0 rbytes=10 wbytes=x rios=1\n259:0 rbytes=5\n");
  root.write(kCg + kDocker + "/memory.current", "oops\n");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "cgroup:io_stat_rbytes." + kDocker), 15);
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:io_stat_wbytes." + kDocker)));
  EXPECT_EQ(value(p, v, "cgroup:io_stat_rios." + kDocker), 1);
  EXPECT_EQ(value(p, v, "cgroup:io_stat_dios." + kDocker), 0);
  EXPECT_TRUE(std::isnan(value(p, v, "cgroup:memory_current." + kDocker)));
  EXPECT_EQ(value(p, v, "cgroup:memory_max." + kDocker), 2147483648);
}

TEST_F(CgroupProbeTest, ConfiguredParentWatchesItsChildren) {
  CgroupProbe sys("system.slice");
  ASSERT_TRUE(sys.open(fixture("host-cgroup2")).available);
  EXPECT_EQ(cgroups_of(sys), (std::vector<std::string>{kDocker, "system.slice/ssh.service"}));

  CgroupProbe user("/user.slice/");
  ASSERT_TRUE(user.open(fixture("host-cgroup2")).available);
  EXPECT_EQ(cgroups_of(user), (std::vector<std::string>{"user.slice/user-1000.slice"}));
  EXPECT_EQ(value(user, sample(user), "cgroup:memory_current.user.slice/user-1000.slice"),
            4000000000.0);

  CgroupProbe top("/");  // the root's children only, not expanded
  ASSERT_TRUE(top.open(fixture("host-cgroup2")).available);
  EXPECT_EQ(cgroups_of(top),
            (std::vector<std::string>{"kubepods.slice", "system.slice", "user.slice"}));

  CgroupProbe leaf("system.slice/ssh.service");
  auto st = leaf.open(fixture("host-cgroup2"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason.rfind("no cgroups to watch under ", 0), 0u) << st.reason;

  CgroupProbe missing("nope.slice");
  st = missing.open(fixture("host-cgroup2"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "cgroup parent not found (" +
                           (fixture("host-cgroup2") / "sys/fs/cgroup/nope.slice").string() + ")");

  CgroupProbe escape("../../etc");
  st = escape.open(fixture("host-cgroup2"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "cgroup parent '../../etc' must stay inside the cgroup root");
}

TEST_F(CgroupProbeTest, EnvironmentOverridesDefaultButNotConstructor) {
  ::setenv("REVEAL_CGROUP_PARENT", "kubepods.slice", 1);
  CgroupProbe p;
  ASSERT_TRUE(p.open(fixture("host-cgroup2")).available);
  EXPECT_EQ(cgroups_of(p), (std::vector<std::string>{"kubepods.slice/pod1"}));
  CgroupProbe q("system.slice");
  ASSERT_TRUE(q.open(fixture("host-cgroup2")).available);
  EXPECT_EQ(cgroups_of(q), (std::vector<std::string>{kDocker, "system.slice/ssh.service"}));
  ::setenv("REVEAL_CGROUP_PARENT", "", 1);  // empty: default rule
  ASSERT_TRUE(p.open(fixture("host-cgroup2")).available);
  EXPECT_EQ(cgroups_of(p).size(), 6u);
}

TEST_F(CgroupProbeTest, UnavailableOnV1OnlyHost) {
  CgroupProbe p;
  auto st = p.open(fixture("vm-2cpu"));
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason, "cgroup v2 not mounted (" +
                           (fixture("vm-2cpu") / "sys/fs/cgroup/cgroup.controllers").string() +
                           " missing)");
  EXPECT_TRUE(p.channels().empty());
}

TEST_F(CgroupProbeTest, HybridHostUsesTheUnifiedTree) {
  TempRoot root("vm-2cpu");
  root.write(kCg + "memory/memory.usage_in_bytes", "123\n");  // a v1 controller
  root.write(kCg + "unified/cgroup.controllers", "");
  root.write(kCg + "unified/cpu.stat", "usage_usec 10\nuser_usec 6\nsystem_usec 4\n");
  CgroupProbe p;
  auto st = p.open(root.path());
  EXPECT_FALSE(st.available);
  EXPECT_NE(st.reason.find("hybrid"), std::string::npos) << st.reason;

  root.write(kCg + "unified/system.slice/cgroup.procs", "");
  root.write(kCg + "unified/system.slice/cpu.stat", "usage_usec 10\nuser_usec 6\nsystem_usec 4\n");
  root.write(kCg + "unified/system.slice/cpu.pressure",
             "some avg10=1.50 avg60=0.00 avg300=0.00 total=99\n");
  st = p.open(root.path());
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_EQ(names(p), (std::vector<std::string>{
                          "cgroup:cpu_stat_usage_usec.system.slice",
                          "cgroup:cpu_stat_user_usec.system.slice",
                          "cgroup:cpu_stat_system_usec.system.slice",
                          "cgroup:cpu_pressure_some_avg10.system.slice",
                          "cgroup:cpu_pressure_some_total.system.slice"}));
  EXPECT_EQ(sample(p), (std::vector<double>{10, 6, 4, 1.5, 99}));
}

TEST_F(CgroupProbeTest, NamespaceRootIsWatchedWithoutIndex) {
  TempRoot root("host-cgroup2");
  root.write(kCg + "cgroup.type", "domain\n");  // only non-root cgroups have it
  root.write(kCg + "memory.current", "1000\n");
  CgroupProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(cgroups_of(p).front(), "");
  EXPECT_EQ(p.channels().front().name, "cgroup:cpu_stat_usage_usec");
  auto v = sample(p);
  EXPECT_EQ(value(p, v, "cgroup:cpu_stat_usage_usec"), 99999999999.0);
  EXPECT_EQ(value(p, v, "cgroup:memory_current"), 1000);
  EXPECT_EQ(value(p, v, "cgroup:io_stat_rbytes"), 999999999);
  EXPECT_EQ(value(p, v, "cgroup:cpu_pressure_some_total"), 777777777);
}

TEST_F(CgroupProbeTest, WhitespaceInCgroupNameBecomesUnderscore) {
  TempRoot root("host-cgroup2");
  root.write(kCg + "odd name.slice/cgroup.procs", "");
  root.write(kCg + "odd name.slice/memory.current", "7\n");
  CgroupProbe p;
  ASSERT_TRUE(p.open(root.path()).available);
  EXPECT_EQ(value(p, sample(p), "cgroup:memory_current.odd_name.slice"), 7);
  expect_names_follow_rule(p, "cgroup");
}

TEST_F(CgroupProbeTest, LiveHostNeverThrows) {
  CgroupProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  std::error_code ec;
  if (!std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers", ec) &&
      !std::filesystem::exists("/sys/fs/cgroup/unified/cgroup.controllers", ec)) {
    EXPECT_FALSE(st.available);
    EXPECT_EQ(st.reason,
              "cgroup v2 not mounted (/sys/fs/cgroup/cgroup.controllers missing)");
  }
  if (!st.available) {
    EXPECT_FALSE(st.reason.empty());
    return;
  }
  expect_names_follow_rule(p, "cgroup");
  auto v = sample(p);
  EXPECT_EQ(v.size(), p.channels().size());
  std::size_t finite = 0;
  for (double x : v) finite += std::isfinite(x);
  EXPECT_GT(finite, 0u);
}

}  // namespace
}  // namespace reveal::telemetry
