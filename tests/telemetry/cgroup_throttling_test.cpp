// cgroup.throttling (src/telemetry/cgroup/throttling.h) on hand-built v1, hybrid and v2 trees,
// and on this host's kernel when a cgroup can be made.
#include "telemetry/cgroup/throttling.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <thread>

#include "probe_test_util.h"

namespace reveal::telemetry {
namespace {
using namespace reveal::testing;
using namespace std::chrono_literals;

// An empty private root to build cgroup trees in.
class Tree {
 public:
  Tree() {
    path_ = std::filesystem::temp_directory_path() / ("reveal-throttle-" + std::to_string(::getpid()) + "-" +
                                                      std::to_string(counter_++));
    std::filesystem::create_directories(path_);
  }
  ~Tree() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  void write(const std::string& rel, const std::string& text) const {
    std::filesystem::create_directories((path_ / rel).parent_path());
    std::ofstream(path_ / rel, std::ios::trunc) << text;
  }
  void remove(const std::string& rel) const { std::filesystem::remove_all(path_ / rel); }
  const std::filesystem::path& path() const { return path_; }

 private:
  static inline int counter_ = 0;
  std::filesystem::path path_;
};

const std::string kV1 = "sys/fs/cgroup/cpu,cpuacct/";
const std::string kV2 = "sys/fs/cgroup/";

std::string v1_stat(int periods, int throttled, long long ns) {
  return "nr_periods " + std::to_string(periods) + "\nnr_throttled " + std::to_string(throttled) +
         "\nthrottled_time " + std::to_string(ns) + "\nnr_bursts 0\nburst_time 0\n";
}
std::string v2_stat(int periods, int throttled, long long us) {
  return "usage_usec 100\nuser_usec 60\nsystem_usec 40\nnr_periods " + std::to_string(periods) + "\nnr_throttled " +
         std::to_string(throttled) + "\nthrottled_usec " + std::to_string(us) + "\nnr_bursts 0\nburst_usec 0\n";
}

// A hybrid host as this VM is: v1 controllers, an empty v2 tree at unified/.
void hybrid_host(const Tree& t) {
  t.write("sys/fs/cgroup/unified/cgroup.controllers", "");
  t.write(kV1 + "cpu.cfs_quota_us", "-1\n");
  t.write(kV1 + "cpu.stat", v1_stat(0, 0, 0));
  t.write(kV1 + "job/cpu.cfs_quota_us", "25000\n");
  t.write(kV1 + "job/cpu.stat", v1_stat(100, 40, 3000000000));
  t.write(kV1 + "free/cpu.cfs_quota_us", "-1\n");
  t.write(kV1 + "free/cpu.stat", v1_stat(0, 0, 0));
}

TEST(CpuThrottling, ChannelsOnAHybridHostAreReadThroughV1) {
  Tree t;
  hybrid_host(t);
  CpuThrottlingProbe p(0s);
  const auto st = p.open(t.path());
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_FALSE(p.v2());
  ASSERT_EQ(names(p), (std::vector<std::string>{"cgroup.throttling:nr_throttled", "cgroup.throttling:throttled_usec",
                                                 "cgroup.throttling:nr_periods", "cgroup.throttling:limited_cgroups"}));
  EXPECT_EQ(p.channels()[1].unit, "us");
  EXPECT_EQ(p.channels()[0].kind, Kind::counter);
  EXPECT_EQ(p.channels()[3].kind, Kind::gauge);
  for (const auto& c : p.channels()) EXPECT_EQ(c.subsystem, Subsystem::cpu) << c.name;
  // The totals start at 0 at open, whatever the cgroups counted before.
  auto v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{0, 0, 0, 1}));
  // 10 more throttled periods, 0.5 s more throttled (v1 counts ns).
  t.write(kV1 + "job/cpu.stat", v1_stat(120, 50, 3500000000));
  v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{10, 500000, 20, 1}));
}

TEST(CpuThrottling, CgroupsThatComeAndGoKeepTheTotalsMonotonic) {
  Tree t;
  hybrid_host(t);
  CpuThrottlingProbe p(0s);
  ASSERT_TRUE(p.open(t.path()).available);
  sample(p);
  // A job moved into a new limited cgroup (nested, as kubepods are): all it counted since its
  // creation is added when it is found.
  t.write(kV1 + "kubepods/pod1/ctr/cpu.cfs_quota_us", "50000\n");
  t.write(kV1 + "kubepods/pod1/ctr/cpu.stat", v1_stat(30, 7, 700000000));
  t.write(kV1 + "kubepods/cpu.cfs_quota_us", "-1\n");
  auto v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{7, 700000, 30, 2}));
  // The first job's cgroup is removed: what it counted stays.
  t.remove(kV1 + "job");
  v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{7, 700000, 30, 1}));
  // A counter that goes backwards (a cgroup replaced between two walks under the same inode)
  // starts again from 0: its new value is all growth.
  t.write(kV1 + "kubepods/pod1/ctr/cpu.stat", v1_stat(5, 2, 100000000));
  v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{9, 800000, 35, 1}));
  // A limit set on an existing cgroup: tracked from the next walk.
  t.write(kV1 + "free/cpu.cfs_quota_us", "100000\n");
  t.write(kV1 + "free/cpu.stat", v1_stat(4, 1, 1000));
  v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{10, 800001, 39, 2}));
}

TEST(CpuThrottling, CgroupV2LimitsAreCpuMax) {
  Tree t;
  t.write(kV2 + "cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
  t.write(kV2 + "cpu.stat", "usage_usec 5\nuser_usec 3\nsystem_usec 2\n");  // the root: no cpu.max
  t.write(kV2 + "system.slice/cpu.max", "max 100000\n");
  t.write(kV2 + "system.slice/cpu.stat", v2_stat(0, 0, 0));
  t.write(kV2 + "kubepods.slice/kubepods-burstable.slice/pod-a.slice/cri-containerd-1.scope/cpu.max", "20000 100000\n");
  t.write(kV2 + "kubepods.slice/kubepods-burstable.slice/pod-a.slice/cri-containerd-1.scope/cpu.stat",
          v2_stat(10, 4, 250000));
  t.write(kV2 + "kubepods.slice/kubepods-burstable.slice/pod-a.slice/cpu.max", "40000 100000\n");
  t.write(kV2 + "kubepods.slice/kubepods-burstable.slice/pod-a.slice/cpu.stat", v2_stat(10, 1, 1000));
  CpuThrottlingProbe p(0s);
  const auto st = p.open(t.path());
  ASSERT_TRUE(st.available) << st.reason;
  EXPECT_TRUE(p.v2());
  auto v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{0, 0, 0, 2}));  // the pod and its container, each limited
  const std::string ctr = kV2 + "kubepods.slice/kubepods-burstable.slice/pod-a.slice/cri-containerd-1.scope/cpu.stat";
  t.write(ctr, v2_stat(20, 9, 750000));
  v = sample(p);
  EXPECT_EQ(v, (std::vector<double>{5, 500000, 10, 2}));
}

TEST(CpuThrottling, MalformedStatIsNotTrackedUntilItReads) {
  Tree t;
  hybrid_host(t);
  t.write(kV1 + "job/cpu.stat", "nr_periods x\nnr_throttled\n");
  CpuThrottlingProbe p(0s);
  ASSERT_TRUE(p.open(t.path()).available);
  EXPECT_EQ(sample(p), (std::vector<double>{0, 0, 0, 0}));
  t.write(kV1 + "job/cpu.stat", v1_stat(3, 2, 1000000));
  EXPECT_EQ(sample(p), (std::vector<double>{2, 1000, 3, 1}));
  // A tracked cgroup whose stat turns unreadable leaves; its counts stay.
  t.write(kV1 + "job/cpu.stat", "garbage\n");
  EXPECT_EQ(sample(p), (std::vector<double>{2, 1000, 3, 0}));
  // Quota files that are not a positive number are no limit.
  for (const char* q : {"", "-1", "0\n", "abc", "max 100000"}) {
    t.write(kV1 + "free/cpu.cfs_quota_us", q);
    EXPECT_EQ(sample(p)[3], 0) << q;
  }
}

TEST(CpuThrottling, NewCgroupsWaitForTheNextWalk) {
  Tree t;
  hybrid_host(t);
  CpuThrottlingProbe p(1h);
  ASSERT_TRUE(p.open(t.path()).available);
  t.write(kV1 + "new/cpu.cfs_quota_us", "1000\n");
  t.write(kV1 + "new/cpu.stat", v1_stat(1, 1, 1000));
  EXPECT_EQ(sample(p)[3], 1);  // the walk at open found one; the next is an hour away
}

TEST(CpuThrottling, DeepTreesAreCutAndKeepWhatTheyHave) {
  Tree t;
  hybrid_host(t);
  std::string deep = kV1;
  for (std::size_t d = 0; d < CpuThrottlingProbe::kMaxDepth + 4; ++d) deep += "d/";
  t.write(deep + "cpu.cfs_quota_us", "1000\n");
  t.write(deep + "cpu.stat", v1_stat(1, 1, 1000));
  CpuThrottlingProbe p(0s);
  ASSERT_TRUE(p.open(t.path()).available);
  EXPECT_GE(p.scan_truncated(), 1u);
  const auto v = sample(p);
  EXPECT_EQ(v[3], 1);  // the job; the cgroup below the depth limit is not reached
}

TEST(CpuThrottling, UnavailableWithoutACpuController) {
  Tree t;
  t.write("sys/fs/cgroup/unified/cgroup.controllers", "");
  t.write("sys/fs/cgroup/memory/memory.limit_in_bytes", "1\n");
  CpuThrottlingProbe p;
  const auto st = p.open(t.path());
  EXPECT_FALSE(st.available);
  EXPECT_EQ(st.reason.rfind("no cgroup CPU controller", 0), 0u) << st.reason;
  // v2 without the cpu controller enabled (only cpuset): unavailable too.
  t.write(kV2 + "cgroup.controllers", "cpuset io memory\n");
  EXPECT_FALSE(p.open(t.path()).available);
}

// The real kernel: a busy child in a fresh cgroup limited to 10 % of one CPU is throttled.
// Needs a writable cgroup CPU controller (root); skipped otherwise.
TEST(CpuThrottling, ThisHostsKernelCountsAThrottledChild) {
  CpuThrottlingProbe p(0s);
  const auto st = p.open("/");
  if (!st.available) GTEST_SKIP() << st.reason;
  const std::filesystem::path ctl = p.v2() ? "/sys/fs/cgroup" : [] {
    for (const char* d : {"/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpuacct,cpu"})
      if (std::filesystem::exists(std::string(d) + "/cpu.cfs_quota_us")) return std::filesystem::path(d);
    return std::filesystem::path();
  }();
  const std::filesystem::path cg = ctl / ("reveal-throttle-test-" + std::to_string(::getpid()));
  std::error_code ec;
  if (!std::filesystem::create_directory(cg, ec)) GTEST_SKIP() << "cannot make " << cg << ": " << ec.message();
  struct Cleanup {
    std::filesystem::path cg;
    pid_t child = -1;
    ~Cleanup() {
      if (child > 0) {
        ::kill(child, SIGKILL);
        ::waitpid(child, nullptr, 0);
      }
      ::rmdir(cg.c_str());
    }
  } cleanup{cg};
  if (p.v2()) {
    std::ofstream(cg / "cpu.max") << "10000 100000\n";
  } else {
    std::ofstream(cg / "cpu.cfs_period_us") << "100000\n";
    std::ofstream(cg / "cpu.cfs_quota_us") << "10000\n";
  }
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    volatile unsigned long spins = 0;
    for (;;) spins = spins + 1;
  }
  cleanup.child = child;
  std::ofstream(cg / "cgroup.procs") << child << "\n";
  const auto before = sample(p);
  std::this_thread::sleep_for(600ms);
  const auto after = sample(p);
  EXPECT_GE(after[3], 1);
  EXPECT_GE(after[0] - before[0], 2) << "throttled periods";
  EXPECT_GT(after[1] - before[1], 100000) << "throttled us";
}

}  // namespace
}  // namespace reveal::telemetry
