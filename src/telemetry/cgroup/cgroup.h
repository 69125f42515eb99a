// cgroup — per-cgroup CPU, memory, I/O and pressure from the cgroup v2 hierarchy
// (Documentation/admin-guide/cgroup-v2.rst; hierarchy.h says where it is looked for and which
// cgroups are watched by default).
//
// Which cgroups: the constructor's `parent` when given, else the environment variable
// REVEAL_CGROUP_PARENT when set and non-empty, else the default rule (hierarchy.h). A parent is
// a path relative to the cgroup root ("kubepods.slice/kubepods-burstable.slice"; "/" is the
// root); the probe then watches the parent's direct children. The set is fixed at open:
// cgroups created later are ignored; a cgroup removed later reads NaN for its channels only
// (and reads again if a cgroup of the same path reappears, e.g. a restarted service).
//
// Channel names: "cgroup:<field>.<cgroup path>", e.g.
//   "cgroup:cpu_stat_throttled_usec.system.slice/docker-abc.scope"
//   "cgroup:memory_events_oom_kill.kubepods.slice/pod1"
// <field> is the interface file name with '.' replaced by '_', then '_' and the key inside
// the file; it never contains '.', so the index is everything after the first '.' following
// ':' — the cgroup path relative to the cgroup root, '/'-separated, verbatim except that
// whitespace and control characters become '_'. The cgroup-namespace root (see hierarchy.h)
// has no index: "cgroup:cpu_stat_usage_usec".
//
// Fields, per cgroup, for every file readable at open and (keyed files) every key present:
//   cpu.stat        usage_usec user_usec system_usec throttled_usec (counters, "us"),
//                   nr_periods nr_throttled (counters, "count")              Subsystem::cpu
//   cpu.max         gauge "cores": the CPU limit, quota / period ("200000 100000" -> 2);
//                   NaN when unlimited ("max 100000"). What the cgroup's CPU time is judged
//                   against: 1.9 cores used of 2 is saturation, of 64 it is not.
//   memory.current  gauge, "bytes"                                           Subsystem::memory
//   memory.max      gauge, "bytes"; the string "max" (no limit) reads NaN
//   memory.events   low high max oom oom_kill (counters, "count")
//   memory.stat     anon file kernel_stack shmem sock file_dirty file_writeback (gauges,
//                   "bytes"); pgfault pgmajfault workingset_refault_anon workingset_refault_file
//                   and pre-5.9 workingset_refault (counters, "count")
//   io.stat         rbytes wbytes dbytes ("bytes"), rios wios dios ("count"): counters summed
//                   over the devices listed; a device leaving the file lowers the sum (a reset
//                   for the rate stage); stacked devices (dm, md) count at every layer. An
//                   empty io.stat (no I/O yet) reads 0.                      Subsystem::storage
//   cpu.pressure memory.pressure io.pressure
//                   <file>_some_avg10, <file>_full_avg10 (gauges, "%"), <file>_some_total,
//                   <file>_full_total (counters, "us"), for the lines present at open; the
//                   subsystem of the file's resource. Parsed by psi.h.
// Controllers not enabled for a cgroup have no files there, hence no channels (a hybrid host's
// v2 tree: cpu.stat usage and pressure only).
//
// Unavailable: "cgroup v2 not mounted (<root>/sys/fs/cgroup/cgroup.controllers missing)" on a
// v1-only host; also when no cgroup is left to watch. Open file count: up to 10 per cgroup.
#pragma once

#include <optional>

#include "reveal/probe.h"
#include "telemetry/file_reader.h"

namespace reveal::telemetry {

class CgroupProbe final : public Probe {
 public:
  CgroupProbe() = default;
  explicit CgroupProbe(std::string parent) : parent_(std::move(parent)) {}

  std::string_view name() const override { return "cgroup"; }
  std::string_view description() const override {
    return "Per-cgroup CPU, throttling, memory, OOM, I/O and pressure (cgroup v2)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;

 private:
  enum class Format : std::uint8_t { keyed, single, io_stat, psi, cpu_max };
  struct Reader {  // one interface file of one cgroup
    FileReader file;
    Format format = Format::keyed;
    std::size_t first = 0;  // single: its slot; io_stat: first of its 6 slots
    KeyIndex keys;          // keyed, io_stat: key -> slot; psi: "some"/"full" -> 2 slots
  };
  void add_file(const std::filesystem::path& dir, std::string_view file, Format format,
                const std::string& index);

  std::optional<std::string> parent_;
  std::vector<ChannelInfo> channels_;
  std::vector<Reader> readers_;
};

}  // namespace reveal::telemetry
