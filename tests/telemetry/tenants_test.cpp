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

TEST(TenantScanner, CpuTimeNoTenantWasChargedIsTheOutsidePseudoTenant) {
  Tree t(/*hybrid=*/true);
  const auto root_usage = [&](long us) { t.put("cpu.stat", "usage_usec " + std::to_string(us) + "\nuser_usec 1\n"); };
  const auto outside = [](const TenantScanner& s, const TenantScan& scan) {
    for (std::size_t k = 0; k < scan.ids.size(); ++k)
      if (s.paths().at(scan.ids[k]) == "/") return scan.counters[k];
    ADD_FAILURE() << "no outside pseudo-tenant";
    return TenantCounters{};
  };
  t.cgroup("jobs/a", 1000);
  t.cgroup("jobs/b", 2000);
  root_usage(10'000);
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

  // +10000 us on the host: a +3000, b +0, c new with 1500 of its own: 5500 outside.
  root_usage(20'000);
  t.cgroup("jobs/a", 4000);
  t.cgroup("jobs/c", 1500);
  s.scan(2, scan);
  EXPECT_EQ(outside(s, scan).cpu_usage_us, 5500);
  // +1000: b gone (its last use is outside's), a +500, c removed and created again at 100 (a
  // counter that went down counts with its whole use): 400 more.
  root_usage(21'000);
  t.remove("jobs/b");
  t.cgroup("jobs/a", 4500);
  t.cgroup("jobs/c", 100);
  s.scan(3, scan);
  EXPECT_EQ(outside(s, scan).cpu_usage_us, 5900);
  // The tenants rose more than the host (read at slightly different times): nothing, never less.
  root_usage(21'500);
  t.cgroup("jobs/a", 6000);
  s.scan(4, scan);
  EXPECT_EQ(outside(s, scan).cpu_usage_us, 5900);
  // A root counter that went back (cannot happen; a crafted tree) adds nothing and restarts.
  root_usage(100);
  s.scan(5, scan);
  EXPECT_EQ(outside(s, scan).cpu_usage_us, 5900);
  root_usage(1100);
  s.scan(6, scan);
  EXPECT_EQ(outside(s, scan).cpu_usage_us, 6900);  // a and c did not move
  // No usage_usec at the root (kernels before 5.8): no pseudo-tenant.
  t.put("cpu.stat", "user_usec 1\n");
  s.scan(7, scan);
  EXPECT_EQ(scanned(s, scan), (std::vector<std::string>{"jobs/a", "jobs/c"}));
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
