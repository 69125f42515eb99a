#include "reveal/registry.h"

#include <gtest/gtest.h>

#include <set>

#include "probe_test_util.h"

namespace reveal {
namespace {
using namespace reveal::testing;

TEST(ProbeRegistry, ListsAllProbesInOrder) {
  std::vector<std::string> got;
  for (const auto& f : probe_registry()) {
    got.push_back(f.name);
    EXPECT_TRUE(f.enabled_by_default) << f.name;
    auto p = f.make();
    ASSERT_TRUE(p) << f.name;
    EXPECT_EQ(p->name(), f.name);
    EXPECT_FALSE(p->description().empty()) << f.name;
  }
  EXPECT_EQ(got, (std::vector<std::string>{
                     "proc.stat", "proc.meminfo", "proc.vmstat", "proc.pressure", "proc.loadavg",
                     "proc.net.dev", "proc.net.snmp", "proc.diskstats", "proc.schedstat", "sys.cpufreq", "sys.net",
                     "sys.rapl", "sys.hwmon", "sys.thermal", "sys.cpuidle", "ethtool", "tc.qdisc", "rdma", "cgroup",
                     "cgroup.throttling",
                     "nvml", "perf.software", "perf.hardware", "perf.uncore", "reveal.sampler"}));
}

// Every probe opens on every fixture without throwing; available probes have channels,
// unique names, and sample exactly channels().size() values; unavailable ones say why.
TEST(ProbeRegistry, EveryProbeOnEveryFixture) {
  for (const char* machine :
       {"vm-2cpu", "edge-extra-columns", "edge-missing", "host-cpufreq-4cpu", "host-2socket",
        "host-2hca", "host-cgroup2", "host-intel-pmu", "host-amd-pmu", "host-ethtool-nics"}) {
    for (const auto& f : probe_registry()) {
      SCOPED_TRACE(std::string(machine) + " " + f.name);
      auto p = f.make();
      ProbeStatus st;
      ASSERT_NO_THROW(st = p->open(fixture(machine)));
      if (!st.available) {
        EXPECT_FALSE(st.reason.empty());
        continue;
      }
      EXPECT_TRUE(st.reason.empty());
      ASSERT_FALSE(p->channels().empty());
      std::set<std::string> unique;
      for (const auto& c : p->channels()) unique.insert(c.name);
      EXPECT_EQ(unique.size(), p->channels().size());
      const std::string source = f.name.starts_with("perf.") ? "perf" : f.name;
      expect_names_follow_rule(*p, source);
      std::vector<double> out(p->channels().size() + 1, 7.0);
      p->sample(std::span<double>(out).first(p->channels().size()));
      EXPECT_EQ(out.back(), 7.0);  // wrote nothing past its span
    }
  }
}

TEST(ProbeRegistry, LiveHostAvailability) {
  std::set<std::string> available;
  for (const auto& f : probe_registry()) {
    auto p = f.make();
    auto st = p->open("/");
    if (st.available) {
      available.insert(f.name);
      auto v = sample(*p);
      EXPECT_EQ(v.size(), p->channels().size());
    } else {
      EXPECT_FALSE(st.reason.empty()) << f.name;
    }
  }
  for (const char* always : {"proc.stat", "proc.meminfo", "proc.vmstat", "proc.loadavg",
                             "proc.net.dev", "proc.diskstats"})
    EXPECT_TRUE(available.count(always)) << always;
}

}  // namespace
}  // namespace reveal
