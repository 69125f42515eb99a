#include "telemetry/cgroup/tenants.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

namespace reveal::telemetry {
namespace {
namespace fs = std::filesystem;

// A cgroup v2 tree under a private root: <root>/sys/fs/cgroup (unified) or .../unified (hybrid).
class Tree {
 public:
  explicit Tree(bool hybrid = false) {
    std::random_device rd;
    root_ = fs::temp_directory_path() / ("reveal-tenants-" + std::to_string(::getpid()) + "-" + std::to_string(rd()));
    cg_ = root_ / (hybrid ? "sys/fs/cgroup/unified" : "sys/fs/cgroup");
    fs::create_directories(cg_);
    put("cgroup.controllers", hybrid ? "" : "cpu io memory pids\n");
    put("cgroup.procs", "1\n");
  }
  ~Tree() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  void put(const std::string& rel, const std::string& text) const {
    fs::create_directories((cg_ / rel).parent_path());
    std::ofstream(cg_ / rel, std::ios::trunc) << text;
  }
  // A cgroup with its interface files: usage (us) and the "some" totals of cpu, memory, io.
  // Its ancestors are cgroups too (each has cgroup.procs).
  void cgroup(const std::string& rel, long usage, long cpu_some = 0, long mem_some = 0, long io_some = 0) const {
    for (auto slash = rel.find('/'); slash != std::string::npos; slash = rel.find('/', slash + 1))
      put(rel.substr(0, slash) + "/cgroup.procs", "");
    put(rel + "/cgroup.procs", "");
    put(rel + "/cpu.stat", "usage_usec " + std::to_string(usage) + "\nuser_usec 1\nsystem_usec 2\n");
    const auto psi = [](long some) {
      return "some avg10=0.00 avg60=0.00 avg300=0.00 total=" + std::to_string(some) +
             "\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
    };
    put(rel + "/cpu.pressure", psi(cpu_some));
    put(rel + "/memory.pressure", psi(mem_some));
    put(rel + "/io.pressure", psi(io_some));
  }
  void remove(const std::string& rel) const { fs::remove_all(cg_ / rel); }
  // A file relative to the root (proc/stat).
  void put_root(const std::string& rel, const std::string& text) const {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel, std::ios::trunc) << text;
  }
  const fs::path& root() const { return root_; }

 private:
  fs::path root_, cg_;
};

std::vector<std::string> scanned(const TenantScanner& s, const TenantScan& scan) {
  std::vector<std::string> out;
  for (auto id : scan.ids) out.push_back(s.paths().at(id));
  return out;
}

TEST(TenantScanner, LeafCgroupsWithTheirCountersAtAnyDepth) {
  Tree t;
  t.cgroup("system.slice/ssh.service", 1000, 10, 20, 30);
  t.cgroup("kubepods.slice/kubepods-burstable.slice/pod1/ctr-a", 5000, 7);
  t.put("not-a-cgroup/file", "x");        // a directory without cgroup.procs
  t.put("plain/not-a-cgroup-either/x", "");  // nor is what lies below one
  TenantScanner s;
  std::string why;
  ASSERT_TRUE(s.open(t.root(), why)) << why;
  TenantScan scan;
  s.scan(42, scan);
  EXPECT_EQ(scan.t_unix_ns, 42);
  ASSERT_EQ(scanned(s, scan), (std::vector<std::string>{"kubepods.slice/kubepods-burstable.slice/pod1/ctr-a",
                                                         "system.slice/ssh.service"}));
  EXPECT_EQ(scan.counters[0].cpu_usage_us, 5000);
  EXPECT_EQ(scan.counters[0].cpu_some_us, 7);
  EXPECT_EQ(scan.counters[1].cpu_usage_us, 1000);
  EXPECT_EQ(scan.counters[1].cpu_some_us, 10);
  EXPECT_EQ(scan.counters[1].memory_some_us, 20);
  EXPECT_EQ(scan.counters[1].io_some_us, 30);
}

TEST(TenantScanner, ProcessTimeNoTenantWasChargedIsTheOutsidePseudoTenant) {
  Tree t(/*hybrid=*/true);
  const double u = 1e6 / double(sysconf(_SC_CLK_TCK));  // us per USER_HZ tick
  // The host's process time in ticks: user + nice + system; idle, iowait, irq, softirq and steal
  // (here large) are not.
  const auto host = [&](long ticks) {
    t.put_root("proc/stat", "cpu  " + std::to_string(ticks - 3) + " 1 2 900 50 70 80 5000 0 0\n"
                            "cpu0 1 2 3 4 5 6 7 8 0 0\nintr 12345 0 0\n");
  };
  const auto outside = [](const TenantScanner& s, const TenantScan& scan) {
    for (std::size_t k = 0; k < scan.ids.size(); ++k)
      if (s.paths().at(scan.ids[k]) == "/") return scan.counters[k];
    ADD_FAILURE() << "no outside pseudo-tenant";
    return TenantCounters{};
  };
  t.cgroup("jobs/a", long(1 * u));
  t.cgroup("jobs/b", long(2 * u));
  host(10);
  TenantScanner s;
  std::string why;
  ASSERT_TRUE(s.open(t.root(), why)) << why;
  TenantScan scan;
  s.scan(1, scan);
  ASSERT_EQ(scanned(s, scan), (std::vector<std::string>{"jobs/a", "jobs/b", "/"}));
  EXPECT_EQ(outside(s, scan).cpu_usage_us, 0);  // a running total from the first scan
  EXPECT_TRUE(std::isnan(outside(s, scan).cpu_some_us));
  EXPECT_TRUE(std::isnan(outside(s, scan).memory_some_us));
  EXPECT_TRUE(std::isnan(outside(s, scan).io_some_us));

  // +10 ticks on the host: a +3, b +0, c new with 1.5 of its own: 5.5 outside.
  host(20);
  t.cgroup("jobs/a", long(4 * u));
  t.cgroup("jobs/c", long(1.5 * u));
  s.scan(2, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 5.5 * u);
  // +1: b gone (its last use is outside's), a +0.5, c removed and created again at 0.1 (a
  // counter that went down counts with its whole use): 0.4 more.
  host(21);
  t.remove("jobs/b");
  t.cgroup("jobs/a", long(4.5 * u));
  t.cgroup("jobs/c", long(0.1 * u));
  s.scan(3, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 5.9 * u);
  // The host +1, a +2 (read late): -1, at most the host's rise back; "/" never goes down...
  host(22);
  t.cgroup("jobs/a", long(6.5 * u));
  s.scan(4, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 5.9 * u);
  // ... and the next outside use first makes up for it: +2 with nothing in the tenants: +1.
  host(24);
  s.scan(5, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 6.9 * u);
  // A host counter that went back (cannot happen; a crafted tree) adds nothing and restarts.
  host(5);
  s.scan(6, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 6.9 * u);
  host(6);
  s.scan(7, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 7.9 * u);
  // A scan that left a tenant out (deeper than kMaxDepth): its use would look like an
  // outsider's, so that scan carries no "/" and adds nothing.
  std::string deep = "deep";
  for (int d = 0; d < TenantScanner::kMaxDepth; ++d) deep += "/d";
  t.cgroup(deep, long(100 * u));
  host(16);
  s.scan(8, scan);
  for (auto id : scan.ids) EXPECT_NE(s.paths().at(id), "/");
  t.remove("deep");
  host(17);
  s.scan(9, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 7.9 * u);  // the scan after only takes its baseline
  host(18);
  s.scan(10, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 8.9 * u);
  // A leaf with a long past appearing (a parent whose children went): at most one interval's
  // rise below the peak, so the next outside use shows at once.
  t.cgroup("old/parent", long(500 * u));
  host(19);
  s.scan(11, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 8.9 * u);
  host(21);
  s.scan(12, scan);
  EXPECT_DOUBLE_EQ(outside(s, scan).cpu_usage_us, 9.9 * u);
  // No /proc/stat (or not its cpu line): no pseudo-tenant.
  t.put_root("proc/stat", "intr 1\n");
  s.scan(13, scan);
  EXPECT_EQ(scanned(s, scan), (std::vector<std::string>{"jobs/a", "jobs/c", "old/parent"}));
}

TEST(TenantScanner, NoOutsidePseudoTenantInsideACgroupNamespace) {
  // The hierarchy's root is a container's cgroup (it has cgroup.type): /proc/stat is the host's.
  Tree t;
  t.put("cgroup.type", "domain\n");
  t.put_root("proc/stat", "cpu  10 0 0 100 0 0 0 0 0 0\n");
  t.cgroup("app", 1000);
  TenantScanner s;
  std::string why;
  ASSERT_TRUE(s.open(t.root(), why)) << why;
  TenantScan scan;
  s.scan(1, scan);
  s.scan(2, scan);
  EXPECT_EQ(scanned(s, scan), (std::vector<std::string>{"app"}));
}

TEST(TenantScanner, FollowsCgroupsThatComeAndGoAndKeepsTheirIds) {
  Tree t(/*hybrid=*/true);
  t.cgroup("hostday/j01", 100);
  TenantScanner s;
  std::string why;
  ASSERT_TRUE(s.open(t.root(), why)) << why;
  TenantScan scan;
  s.scan(1, scan);
  ASSERT_EQ(scanned(s, scan), std::vector<std::string>{"hostday/j01"});
  t.cgroup("hostday/j02", 0);  // a new job
  s.scan(2, scan);
  ASSERT_EQ(scanned(s, scan), (std::vector<std::string>{"hostday/j01", "hostday/j02"}));
  EXPECT_EQ(scan.ids[0], 0u);
  EXPECT_EQ(scan.ids[1], 1u);
  t.remove("hostday/j01");  // the first one ends
  s.scan(3, scan);
  ASSERT_EQ(scanned(s, scan), std::vector<std::string>{"hostday/j02"});
  EXPECT_EQ(scan.ids[0], 1u);
  t.cgroup("hostday/j01", 5);  // and a job of the same name comes back: same id, counters from 0
  s.scan(4, scan);
  ASSERT_EQ(scan.ids.size(), 2u);
  EXPECT_EQ(scan.ids[0], 0u);
  EXPECT_EQ(scan.counters[0].cpu_usage_us, 5);
  EXPECT_EQ(s.paths().size(), 2u);
}

TEST(TenantScanner, MissingOrMalformedFilesReadNaN) {
  Tree t;
  t.cgroup("a", 100);
  t.put("a/cpu.stat", "user_usec 5\n");                  // no usage_usec
  t.put("a/memory.pressure", "some avg10=x total=oops\n");  // malformed total
  fs::remove(t.root() / "sys/fs/cgroup/a/io.pressure");
  TenantScanner s;
  std::string why;
  ASSERT_TRUE(s.open(t.root(), why));
  TenantScan scan;
  s.scan(1, scan);
  ASSERT_EQ(scan.counters.size(), 1u);
  EXPECT_TRUE(std::isnan(scan.counters[0].cpu_usage_us));
  EXPECT_EQ(scan.counters[0].cpu_some_us, 0);
  EXPECT_TRUE(std::isnan(scan.counters[0].memory_some_us));
  EXPECT_TRUE(std::isnan(scan.counters[0].io_some_us));
}

TEST(TenantScanner, RootIsNoTenantAndNamesAreSanitized) {
  Tree t;
  TenantScanner s;
  std::string why;
  ASSERT_TRUE(s.open(t.root(), why));
  TenantScan scan;
  s.scan(1, scan);
  EXPECT_TRUE(scan.ids.empty());  // only the root: nothing to name
  t.cgroup("odd name\tx", 1);
  s.scan(2, scan);
  ASSERT_EQ(scanned(s, scan), std::vector<std::string>{"odd_name_x"});
}

TEST(TenantScanner, DepthIsBoundedAndCounted) {
  Tree t;
  std::string rel;
  for (int d = 0; d < TenantScanner::kMaxDepth + 2; ++d) {
    rel += (rel.empty() ? "" : "/") + std::string("d") + std::to_string(d);
    t.put(rel + "/cgroup.procs", "");
  }
  TenantScanner s;
  std::string why;
  ASSERT_TRUE(s.open(t.root(), why));
  TenantScan scan;
  s.scan(1, scan);
  // The deepest cgroup within the bound is a leaf as far as the walk goes: named, one skipped.
  ASSERT_EQ(scan.ids.size(), 1u);
  EXPECT_EQ(std::count(s.paths()[scan.ids[0]].begin(), s.paths()[scan.ids[0]].end(), '/'),
            TenantScanner::kMaxDepth - 1);
  EXPECT_EQ(s.skipped(), 1u);
}

TEST(TenantScanner, NoHierarchyIsUnavailableWithAReason) {
  const fs::path empty = fs::temp_directory_path() / ("reveal-tenants-none-" + std::to_string(::getpid()));
  fs::create_directories(empty);
  TenantScanner s;
  std::string why;
  EXPECT_FALSE(s.open(empty, why));
  EXPECT_NE(why.find("cgroup v2 not mounted"), std::string::npos);
  TenantScan scan;
  scan.ids.push_back(7);
  s.scan(1, scan);
  EXPECT_TRUE(scan.ids.empty());
  fs::remove_all(empty);
}

}  // namespace
}  // namespace reveal::telemetry
