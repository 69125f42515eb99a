// perf.hardware — core PMU counters counted system-wide via perf_event_open(2).
//
// Events, host totals (counters; channel "perf:<perf(1) event name>"):
//   generic hardware  cycles [cycles], instructions, branches, branch-misses (Subsystem::cpu);
//                     cache-references, cache-misses (memory: last-level cache traffic);
//                     stalled-cycles-frontend, stalled-cycles-backend [cycles] (cpu; the
//                     kernel defines them for AMD and some older Intel parts only)
//   generic cache     L1-dcache-loads, L1-dcache-load-misses, LLC-loads, LLC-load-misses,
//                     dTLB-loads, dTLB-load-misses (memory; PERF_TYPE_HW_CACHE, op READ)
//   vendor (libpfm4)  Intel family 6: cycle_activity.stalls_l3_miss [cycles] (memory),
//                     cycle_activity.stalls_total [cycles] (cpu)   (Intel SDM vol. 3B /
//                     perfmon event A3H, Skylake and later);
//                     AMD family 17h/19h/1Ah: ls_dispatch.ld_dispatch,
//                     ls_dispatch.store_dispatch (PMCx029), and on Zen 1–3 ls_dc_accesses
//                     (PMCx040; libpfm4 "LS_DC_ACCESSES", else perf_raw::r40) (memory)
//                     (AMD PPR for family 17h/19h, "Core Performance Monitor Counters").
// Per CPU (counters): perf:cycles.cpu<N>, perf:instructions.cpu<N>, for per-core IPC.
// Gauge perf:counters_running_pct [%]: 100 × Σ time_running / Σ time_enabled of all groups
// over the interval; 100 = never multiplexed, < 100 = time-shared (values are scaled
// estimates), 0 = the PMU is held by someone else.
// Derived (src/features/derived.cpp): IPC host and per core, branch-miss, cache-miss,
// L1D/LLC load-miss, dTLB load-miss, L3-stall and frontend/backend stall ratios.
//
// Open: vendor and model from <root>/proc/cpuinfo select the vendor table; each event is
// first opened alone on the first online CPU and skipped, with the reason, when the PMU
// rejects it (ENOENT, EOPNOTSUPP, EINVAL: "not defined here") or libpfm4 cannot encode it;
// cycles is required (its failure makes the probe unavailable: "no PMU exposed (...)" on
// most VMs, or the perf_event_paranoid / CAP_PERFMON hint). The kept events are packed into
// groups that fit the counter budget (telemetry/perf/pmu.h: generic counters from libpfm4,
// minus one while the NMI watchdog runs), ratio partners together, and every group is opened
// on every online CPU (a CPU the live kernel lacks is skipped). Skipped events are reported
// once as Events (kind "event_skipped") and by skipped().
// Sample: see telemetry/perf/perf_group.h: per-interval TOTAL_TIME_ENABLED/RUNNING scaling;
// a group not scheduled in an interval reads NaN. When no group was scheduled for two ticks
// running (another profiler holds the PMU) or cycles counted zero everywhere while scheduled,
// every channel reads NaN and an Event kind "pmu_contention" says so ("PMU counters not
// scheduled: another profiler or the NMI watchdog holds them"); "pmu_restored" follows
// when counting resumes. Never a silent zero.
#pragma once

#include <string>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/perf/perf_group.h"
#include "telemetry/perf/pmu.h"

namespace reveal::telemetry {

class PerfHardwareProbe final : public Probe {
 public:
  PerfHardwareProbe() : PerfHardwareProbe(PerfEnv{}) {}
  explicit PerfHardwareProbe(PerfEnv env);

  std::string_view name() const override { return "perf.hardware"; }
  std::string_view description() const override {
    return "CPU PMU: cycles, instructions, branches, caches, TLB, stalls, vendor events; host and per CPU "
           "(perf_event, libpfm4)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override { groups_.read(out); }
  void poll_events(std::int64_t now_unix_ns, std::vector<Event>& out) override;

  // After open(): "<event>: <reason>" for every event left out; the budget in use.
  const std::vector<std::string>& skipped() const { return skipped_; }
  const PmuCounters& counters() const { return counters_; }
  int budget() const { return budget_; }
  std::size_t groups_per_cpu() const { return groups_per_cpu_; }
  PmuState state() const { return groups_.state(); }

 private:
  PerfEnv env_;
  std::vector<ChannelInfo> channels_;
  PerfGroups groups_;
  std::vector<std::string> skipped_;
  PmuCounters counters_;
  int budget_ = 0;
  std::size_t groups_per_cpu_ = 0;
  bool skips_reported_ = false;
  PmuState reported_ = PmuState::ok;
};

}  // namespace reveal::telemetry
