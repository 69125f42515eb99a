// nvml — NVIDIA GPUs through NVML (libnvidia-ml.so.1, loaded with dlopen: see nvml_library.h).
//
// Channels "nvml:<field>.gpu<N>", N = NVML device index; each channel's help names the GPU
// (product name and UUID). A channel exists when its NVML entry point exists and the call did
// not answer NOT_SUPPORTED / NO_PERMISSION / INVALID_ARGUMENT at open (e.g. no fan on a
// data-centre board, no NVLink on a PCIe card, no row remapping before Ampere). A call that
// fails at a tick (any error) gives NaN for its channels at that tick; a GPU that answers
// GPU_IS_LOST gives NaN for all its NVML channels from then on (checked again every tick), and
// its siblings are unaffected.
//
//   gpu:           utilization_gpu, utilization_memory (%)   nvmlDeviceGetUtilizationRates
//                  memory_used, memory_free, memory_total (bytes)   nvmlDeviceGetMemoryInfo
//                  clocks_sm, clocks_mem (MHz)               nvmlDeviceGetClockInfo
//                  pstate (state 0..15, "P" number)          nvmlDeviceGetPerformanceState
//                  ecc_{sbe,dbe}_{vol,agg}_total (counter)   nvmlDeviceGetTotalEccErrors
//                    sbe = corrected (single-bit), dbe = uncorrected (double-bit),
//                    vol = volatile (since driver load), agg = aggregate (board lifetime)
//                  retired_sbe, retired_dbe (counter, pages) nvmlDeviceGetRetiredPages, count only
//                  correctable_remapped_rows, uncorrectable_remapped_rows (counter, rows),
//                  row_remap_pending, row_remap_failure (state 0/1)   nvmlDeviceGetRemappedRows
//                  xid_events_total (counter)                XID events drained by poll_events()
//                  gpm_sm_util, gpm_sm_occupancy, gpm_any_tensor_util, gpm_dram_bw_util (%)
//                    GPM (Hopper and later), averaged between the previous tick and this one
//   power_thermal: power_usage, enforced_power_limit (W, from NVML's mW)
//                  temperature_gpu (C), fan_speed (%)
//                  clocks_throttle_reasons_<reason> (state 0/1), one per bit of
//                    nvmlDeviceGetCurrentClocksThrottleReasons: gpu_idle,
//                    applications_clocks_setting, sw_power_cap, hw_slowdown, sync_boost,
//                    sw_thermal_slowdown, hw_thermal_slowdown, hw_power_brake_slowdown,
//                    display_clock_setting
//   interconnect:  pcie_tx_bytes, pcie_rx_bytes (counter, bytes; 32-bit when NVML says so)
//                    from nvmlDeviceGetFieldValues PCIE_COUNT_TX/RX_BYTES where the driver has
//                    them (R535+, Hopper and later); otherwise
//                  pcie_tx_throughput, pcie_rx_throughput (bytes/s gauge, NVML KB/s × 1024;
//                    NVML measures each over ~20 ms inside the call: ~21 ms wall and ~0.85 ms
//                    of CPU per call on an H200, 95 % of the probe's cost, docs/BENCHMARKS.md)
//                  pcie_link_gen_current, pcie_link_gen_max (gen), pcie_link_width_current,
//                  pcie_link_width_max (lanes)
//                  nvlink_{replay,recovery,crc_flit,crc_data}_error_count_l<L> (counter) for
//                    every link L < NVML_NVLINK_MAX_LINKS active at open
//                  nvlink_tx_bytes_l<L>, nvlink_rx_bytes_l<L> (counter, bytes) for the same
//                    links: nvmlDeviceGetFieldValues NVLINK_THROUGHPUT_DATA_TX/RX (KiB × 1024)
//
// Events (poll_events): the XID event set is drained without blocking (nvmlEventSetWait_v2,
// timeout 0, until TIMEOUT); each XID gives Event{source "nvml", kind "xid", value = XID code,
// detail "gpu1 XID 79"} and increments xid_events_total of that GPU. poll_events() runs after
// sample(), so xid_events_total shows events up to the previous tick. The first GPU_IS_LOST a
// GPU reports gives Event{kind "gpu_lost", value = N, detail "gpu1 lost: <NVML error>"}.
//
// Slow reads (nvml_reads.h slow(): power limit, PCIe link generation and width, ECC and NVLink
// error counters, retired pages, remapped rows) are performed at the first tick and then once per
// slow interval (kSlowReadIntervalS by the monotonic clock, whatever the sampling rate); the
// ticks between repeat their last values, so a counter among them moves in steps at most that
// far apart. Their NVML calls are most of the per-tick calls on a host with NVLink (4 error
// counters × 18 links per GPU) and the dearest of the cheap ones (the current link width,
// ~25 µs on an H200; docs/BENCHMARKS.md "NVML probe cost").
//
// NVML reads the live driver: the root passed to open() is not used. The library is
// $REVEAL_NVML_LIBRARY when set, else libnvidia-ml.so.1, unless the constructor is given a
// path (tests). Unavailable, with the reason, when the library is absent or lacks a required
// symbol, when nvmlInit_v2 fails, or when there are no GPUs. The destructor calls
// nvmlShutdown. sample() allocates nothing: reads and GPM buffers are prepared at open().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "reveal/probe.h"
#include "telemetry/nvml/nvml_library.h"
#include "telemetry/nvml/nvml_reads.h"

namespace reveal::telemetry {

class NvmlProbe final : public Probe {
 public:
  // Seconds between two performances of the slow reads (see above).
  static constexpr double kSlowReadIntervalS = 10.0;

  NvmlProbe();  // library from $REVEAL_NVML_LIBRARY, else libnvidia-ml.so.1
  // slow_interval_s: seconds between slow reads (0: every tick).
  explicit NvmlProbe(std::string library_path, double slow_interval_s = kSlowReadIntervalS);
  ~NvmlProbe() override;

  std::string_view name() const override { return "nvml"; }
  std::string_view description() const override {
    return "NVIDIA GPUs: utilisation, memory, clocks, power, thermals, PCIe/NVLink, ECC, XID "
           "(NVML)";
  }
  ProbeStatus open(const std::filesystem::path& root) override;
  const std::vector<ChannelInfo>& channels() const override { return channels_; }
  void sample(std::span<double> out) override;
  void poll_events(std::int64_t now_unix_ns, std::vector<Event>& out) override;

 private:
  void close();
  void discover(nvml::GpuState& gpu);
  void add_read(nvml::GpuState& gpu, nvml::Read read);

  std::string library_path_;
  std::int64_t slow_interval_ns_;
  std::int64_t last_slow_ns_ = 0;  // monotonic time of the last slow tick, 0: none yet
  std::vector<double> held_;       // per channel: the last value of a slow read
  nvml::NvmlLibrary lib_;
  bool initialized_ = false;
  nvml::nvmlEventSet_t events_ = nullptr;
  std::vector<std::unique_ptr<nvml::GpuState>> gpus_;
  std::vector<ChannelInfo> channels_;
};

}  // namespace reveal::telemetry
