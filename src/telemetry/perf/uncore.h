// perf.uncore — DRAM bandwidth from the memory-controller PMUs, counted via
// perf_event_open(2) on one CPU per socket/die (the PMU's cpumask).
//
// Discovered under <root>/sys/bus/event_source/devices/ (so a fixture tree drives discovery;
// counting always uses the live kernel):
//   Intel  uncore_imc_<N> (one per memory channel / IMC box): events cas_count_read and
//          cas_count_write as the kernel names them in events/<name> ("event=0x04,umask=0x03"),
//          encoded with the PMU's format/<term> bit ranges, converted to bytes with
//          events/<name>.scale × events/<name>.unit (kernel: 6.103515625e-5 MiB = 64 bytes
//          per CAS). Channels (counters, bytes, Subsystem::memory):
//            perf:uncore_imc_read_bytes, perf:uncore_imc_write_bytes   (all IMCs, all sockets)
//   AMD    amd_df on family 17h (Zen 1/2): DRAM channel controller requests with data,
//          event 0x07 + 0x40·n (n = 0..7), umask 0x38, 64 bytes each (AMD PPR 17h, perf's
//          amdzen1/amdzen2 data-fabric events dram_channel_data_controller_<n>), encoded with
//          amd_df's format/ files. Channel (counter, bytes, memory): perf:amd_df_dram_bytes
//          (reads + writes; the DF has 4 counters, so the 8 events time-share them and are
//          scaled by TOTAL_TIME_ENABLED/RUNNING).
// Every event is its own group; a group not scheduled in an interval reads NaN.
// Unavailable, with the reason, when no such PMU is listed, when its sysfs description is
// incomplete (type, cpumask, event or format missing), or when perf_event_open refuses
// (CAP_PERFMON / perf_event_paranoid, or the live kernel lacks the PMU).
// Not covered: Intel free-running IMC counters (uncore_imc_free_running_<N>), AMD Zen 3/4
// DF events (family 19h), and other vendors.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/perf/perf_group.h"
#include "telemetry/perf/pmu.h"

namespace reveal::telemetry {

// Encodes `terms` ("event=0x04,umask=0x03"; a bare term means 1) into ev.config/config1/
// config2 with the bit ranges of <pmu_dir>/format/<term> ("config:0-7,32-35", "config1:0-7",
// "config:18"). Returns "" or the reason.
std::string encode_sysfs_event(const std::filesystem::path& pmu_dir, std::string_view terms, PerfEvent& ev);

class PerfUncoreProbe final : public Probe {
 public:
  PerfUncoreProbe() : PerfUncoreProbe(PerfEnv{}) {}
  explicit PerfUncoreProbe(PerfEnv env);

  std::string_view name() const override { return "perf.uncore"; }
  std::string_view description() const override {
    return "DRAM read/write bytes from memory-controller PMUs: Intel uncore IMC, AMD data fabric (perf_event)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override { groups_.read(out); }

 private:
  PerfEnv env_;
  std::vector<ChannelInfo> channels_;
  PerfGroups groups_;
};

}  // namespace reveal::telemetry
