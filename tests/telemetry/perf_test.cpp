#include <gtest/gtest.h>
#include <sys/mman.h>

#include "probe_test_util.h"
#include "telemetry/perf/hardware.h"
#include "telemetry/perf/software.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;

TEST(PerfSoftwareProbe, CountsContextSwitchesSystemWide) {
  PerfSoftwareProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  if (!st.available) {  // e.g. a container with perf_event_open blocked by seccomp
    EXPECT_FALSE(st.reason.empty());
    GTEST_SKIP() << "perf.software unavailable here: " << st.reason;
  }
  EXPECT_EQ(names(p), (std::vector<std::string>{"perf:context-switches", "perf:cpu-migrations",
                                                "perf:page-faults"}));
  for (const auto& c : p.channels()) EXPECT_EQ(c.kind, Kind::counter);
  EXPECT_EQ(info(p, "perf:context-switches").subsystem, Subsystem::cpu);
  EXPECT_EQ(info(p, "perf:page-faults").subsystem, Subsystem::memory);
  auto a = sample(p);
  // Fault in fresh anonymous pages between the samples (mmap: malloc may reuse warm pages).
  const std::size_t len = 4 << 20;
  void* mem = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  for (std::size_t i = 0; i < len; i += 4096) static_cast<volatile char*>(mem)[i] = 1;
  ::munmap(mem, len);
  auto b = sample(p);
  EXPECT_TRUE(all_finite(a));
  EXPECT_TRUE(all_finite(b));
  for (std::size_t i = 0; i < b.size(); ++i) EXPECT_GE(b[i], a[i]) << p.channels()[i].name;
  EXPECT_GT(value(p, b, "perf:page-faults"), value(p, a, "perf:page-faults"));
}

TEST(PerfSoftwareProbe, OnlineCpusFromRootOrLiveSys) {
  EXPECT_EQ(online_cpus(fixture("host-cpufreq-4cpu")), (std::vector<int>{0, 1, 2, 3}));
  EXPECT_FALSE(online_cpus(fixture("edge-missing")).empty());  // falls back to the live /sys
}

TEST(PerfHardwareProbe, ReportsAvailabilityWithReason) {
  PerfHardwareProbe p;
  ProbeStatus st;
  ASSERT_NO_THROW(st = p.open("/"));
  if (!st.available) {  // VMs without a virtual PMU (this project's CI), or paranoid hosts
    EXPECT_FALSE(st.reason.empty());
    EXPECT_NE(st.reason.find("perf_event_open"), std::string::npos) << st.reason;
    EXPECT_TRUE(p.channels().empty());
    return;
  }
  ASSERT_FALSE(p.channels().empty());
  EXPECT_EQ(p.channels()[0].name, "perf:cycles");
  auto a = sample(p);
  auto b = sample(p);
  EXPECT_EQ(b.size(), p.channels().size());
}

TEST(PerfHardwareProbe, ErrorReasons) {
  EXPECT_EQ(perf_open_error("cycles", ENOENT, true),
            "no PMU exposed (perf_event_open cycles: No such file or directory)");
  const auto denied = perf_open_error("cycles", EACCES, true);
  EXPECT_NE(denied.find("perf_event_paranoid"), std::string::npos) << denied;
  EXPECT_NE(denied.find("CAP_PERFMON"), std::string::npos) << denied;
  EXPECT_NE(perf_open_error("context-switches", EPERM, false).find("CAP_PERFMON"),
            std::string::npos);
}

}  // namespace
}  // namespace reveal::telemetry
