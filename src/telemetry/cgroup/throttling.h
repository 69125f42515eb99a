// cgroup.throttling — host totals of CFS bandwidth throttling over every cgroup with a CPU
// limit, on cgroup v2, v1 and hybrid hosts, following cgroups as they come and go.
//
// Why: a container or job held to a CPU quota (Kubernetes CPU limits, `docker --cpus`,
// systemd CPUQuota=) runs out of it every enforcement period and waits for the next one; its
// step time grows several-fold while the host looks idle (CPU use falls, nothing else moves).
// The kernel counts it per cgroup in cpu.stat (Documentation/scheduler/sched-bwc.rst; cAdvisor
// exports it as container_cpu_cfs_throttled_periods_total). A host-wide sum is the symptom an
// agent needs without knowing which cgroup a job runs in, including cgroups made after start.
//
// Hierarchy (under the injectable root): cgroup v2 at <root>/sys/fs/cgroup when its
// cgroup.controllers lists "cpu"; else cgroup v1's cpu controller at <root>/sys/fs/cgroup/
// cpu,cpuacct, cpu or cpuacct,cpu (the first holding cpu.cfs_quota_us). A hybrid host (v1
// controllers plus an empty v2 tree) is read through v1.
//
// Limited cgroup: v2 cpu.max not starting with "max"; v1 cpu.cfs_quota_us not "-1".
//
// Channels (Subsystem::cpu), sums over the limited cgroups:
//   cgroup.throttling:nr_throttled     counter "count"  enforcement periods in which a
//                                                       cgroup used up its quota
//   cgroup.throttling:throttled_usec   counter "us"     time cgroups spent throttled
//                                                       (v1 throttled_time is ns: /1000)
//   cgroup.throttling:nr_periods       counter "count"  enforcement periods with runnable tasks
//   cgroup.throttling:limited_cgroups  gauge   "count"  cgroups with a CPU limit, tracked now
// Nested limited cgroups each count (a throttled child and its throttled parent: twice).
//
// The counters are running totals kept monotonic while cgroups come and go: per cgroup
// (identified by its directory's inode), each tick adds the growth of its cpu.stat since the
// last read; a cgroup found since then adds all it counted since its creation (the kernel's
// counters start at 0 then); a cgroup removed takes nothing away. A cgroup stays tracked from
// the walk that found it limited until it is removed (a lifted limit stops its counters).
// A counter that went backwards (cannot happen to one cgroup) restarts from 0. The cgroups of
// the walk at open() are the starting point: the totals are 0 at open().
//
// Discovery: the tree is walked at open() and then at most every `rescan` (default 5 s; the
// walk reads cpu.max/cpu.cfs_quota_us of cgroups not tracked yet), so throttling in a cgroup
// made after the last walk is counted from the next one on, including what it did before.
// Bounds: at most kMaxCgroups tracked (preallocated; untracked_cgroups(): limited cgroups the
// last walk left out), kMaxDepth levels and kMaxScanDirs directories per walk (scan_truncated():
// walks cut short since open; a cut walk removes nothing from the table). One cpu.stat descriptor per tracked cgroup stays open.
//
// sample() allocates nothing, walks included (getdents64 into buffers made at open).
// Unavailable: "no cgroup CPU controller (...)" when neither hierarchy has one.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class CpuThrottlingProbe final : public Probe {
 public:
  static constexpr std::size_t kMaxCgroups = 4096;
  static constexpr std::size_t kMaxDepth = 16;
  static constexpr std::size_t kMaxScanDirs = 16384;

  explicit CpuThrottlingProbe(std::chrono::steady_clock::duration rescan = std::chrono::seconds(5))
      : rescan_(rescan) {}
  ~CpuThrottlingProbe() override;

  std::string_view name() const override { return "cgroup.throttling"; }
  std::string_view description() const override {
    return "CPU quota throttling summed over every CPU-limited cgroup, v2 or v1 (cpu.stat)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

  bool v2() const { return v2_; }
  std::uint64_t untracked_cgroups() const { return untracked_; }
  std::uint64_t scan_truncated() const { return truncated_; }

 private:
  struct Stat {  // the kernel's cpu.stat values of one cgroup
    std::uint64_t periods = 0, throttled = 0, throttled_us = 0;
  };
  struct Tracked {
    std::uint64_t ino = 0;  // the cgroup directory's inode
    int stat_fd = -1;       // its cpu.stat
    Stat last;
    bool seen = false;      // found limited by the walk in progress
  };
  void rescan();
  void visit(int dir_fd, std::uint64_t ino);  // one directory met by the walk
  bool read_stat(int fd, Stat& s);
  void retire(std::size_t k);                  // table_[k] leaves; its counts stay in the totals
  void add(const Stat& grown);

  std::chrono::steady_clock::duration rescan_;
  std::chrono::steady_clock::time_point last_scan_{};
  UniqueFd root_fd_;
  bool v2_ = false;
  std::vector<ChannelInfo> channels_;
  std::vector<Tracked> table_;  // sorted by ino; capacity kMaxCgroups
  std::vector<char> dents_;     // kMaxDepth getdents64 buffers
  std::vector<char> text_;      // one cpu.stat / quota read
  Stat total_;                  // running totals
  std::uint64_t untracked_ = 0, truncated_ = 0;
};

}  // namespace reveal::telemetry
