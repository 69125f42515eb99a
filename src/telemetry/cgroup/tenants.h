// TenantScanner — walks the cgroup v2 hierarchy and reads each leaf cgroup's CPU use and
// pressure stall totals (TenantScan, reveal/recording.h; what they are for: reveal/tenants.h).
//
// Hierarchy: hierarchy.h's find_hierarchy() (unified, or the hybrid host's controller-less tree
// at sys/fs/cgroup/unified). A tenant is a cgroup directory (it has cgroup.procs) with no child
// cgroups, at most kMaxDepth levels below the root; the root itself never is. The tree is
// walked again at every scan() — directories only, sorted by name — so cgroups created or
// removed between scans are followed; a cgroup removed during a walk is simply not in it.
//
// Files per tenant, opened, read and closed at each scan (no descriptor is held between
// scans, so thousands of containers cost no file descriptors): cpu.stat (usage_usec),
// cpu.pressure, memory.pressure, io.pressure ("some" total). A file missing or malformed
// leaves its counter NaN. Cost: one opendir per cgroup directory and 4 open/read/close per
// tenant; measured in bench/ (docs/BENCHMARKS.md).
//
// Bounds: at most kMaxTenants tenants per scan and kMaxDirs directories visited (the rest are
// counted in skipped(); a cgroup whose child cgroups are all left out is read as a tenant: its
// counters include its descendants'), and at most kMaxPaths distinct paths over the scanner's life (ids are
// never reused, so stored scans stay readable; cgroups first seen beyond that are counted in
// skipped() and not scanned). Allocates (paths, the walk); not for a per-sample hot path —
// the recorder scans every few seconds.
//
// Paths: relative to the hierarchy root, '/'-separated; whitespace and control characters
// become '_' (as the cgroup probe's channel labels).
//
// Outside every tenant (kOutsideTenants, reveal/recording.h): when <root>/proc/stat is
// readable, each scan also carries the pseudo-tenant "/" — the CPU time of processes no tenant
// was charged for: processes in the root or in inner cgroups (a shell, a build, a daemon outside
// any service or container) and kernel threads (kswapd, kworkers). The host's process time is
// /proc/stat's user + nice + system (guest time is inside user), read before and after the walk
// and taken at the middle, when the leaves were read on average; interrupts, softirqs and steal
// are not process time (the root's cpu.stat usage_usec would count them, and steal on many
// kernels: a busy neighbour VM is not a process here). From one scan to the next, the host's
// rise less every tenant's rise (a tenant new since the previous scan counts with all its
// usage, one whose counter went down with its usage now), clamped to ± the host's rise, is
// added to a signed running total kept at most one rise below its peak; "/" is that peak (so
// it never goes down, and a scan whose leaves were read late gives back what the one before
// gave too much; a former parent that became a leaf, counted with its whole usage, costs at
// most one interval). 0 at the first scan. A tenant that left between two scans has its last
// use counted outside. A scan that skipped tenants or directories (the bounds below) adds
// nothing and carries no "/" (their use would look like outsiders'), and the next scan only
// takes its baseline; once kMaxPaths paths are taken no new tenant is scanned, so "/" stops
// there. No "/" inside a cgroup namespace (the hierarchy's root has a cgroup.type: it is a
// container's cgroup, and /proc/stat would count the rest of the host as its outsiders). No
// pressure totals (NaN): the root's PSI is the host's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <limits>
#include <string>
#include <unordered_map>
#include <vector>

#include "reveal/recording.h"

namespace reveal::telemetry {

class TenantScanner {
 public:
  static constexpr int kMaxDepth = 8;
  static constexpr std::size_t kMaxTenants = 2048;
  static constexpr std::size_t kMaxDirs = 8192;
  static constexpr std::size_t kMaxPaths = 65536;

  // Finds the v2 hierarchy under `root` ("/" or a fixture tree). False, with `reason` set,
  // when there is none; scan() then returns empty scans.
  bool open(const std::filesystem::path& root, std::string& reason);
  bool available() const { return !dir_.empty(); }
  const std::filesystem::path& hierarchy() const { return dir_; }

  // One walk, stamped `t_unix_ns`: `out` is overwritten (its vectors keep their capacity).
  void scan(std::int64_t t_unix_ns, TenantScan& out);

  // id -> path of every tenant seen so far (grows as tenants appear; never shrinks).
  const std::vector<std::string>& paths() const { return paths_; }
  // Tenants and directories left out by the bounds, over the scanner's life.
  std::uint64_t skipped() const { return skipped_; }

 private:
  void walk(const std::filesystem::path& dir, const std::string& rel, int depth, TenantScan& out);
  void read_tenant(const std::filesystem::path& dir, const std::string& rel, TenantScan& out);
  static constexpr std::uint32_t kNoId = std::numeric_limits<std::uint32_t>::max();
  std::uint32_t id_of(const std::string& rel);  // kNoId when kMaxPaths are taken
  void add_outside(TenantScan& out, double host_us, bool skipped);
  double host_process_us() const;  // /proc/stat's user + nice + system, in us; NaN: unreadable

  std::filesystem::path dir_;
  std::vector<std::string> paths_;
  std::unordered_map<std::string, std::uint32_t> ids_;
  std::size_t dirs_seen_ = 0;
  std::uint64_t skipped_ = 0;
  // The "/" pseudo-tenant's running totals and what the previous scan saw: the host's usage
  // (NaN: none yet) and each tenant's usage by id (NaN: not in it).
  std::filesystem::path proc_stat_;
  long clock_ticks_ = 100;  // USER_HZ
  double outside_us_ = 0.0, signed_us_ = 0.0;
  double last_host_us_ = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> last_usage_;
  std::vector<std::uint32_t> last_ids_;
};

}  // namespace reveal::telemetry
