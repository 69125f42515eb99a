// The NVML reads behind the nvml probe's channels (see nvml_probe.h for the channel list).
//
// A Read is one NVML call for one GPU that yields `width(op)` consecutive channel values. It is
// described once at open (describe(): names, units, kinds, help; allocates) and executed at
// every tick (execute(): no allocation). execute() returns the NVML status: on NVML_SUCCESS it
// has written all values (a GPM metric that NVML marks invalid is NaN); on any other status it
// has written nothing useful and the caller writes NaN. An entry point missing from the loaded
// library answers NVML_ERROR_FUNCTION_NOT_FOUND.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "reveal/channel.h"
#include "telemetry/nvml/nvml_library.h"

namespace reveal::telemetry::nvml {

enum class Op : std::uint8_t {
  utilization,      // gpu, memory (%)
  memory,           // used, free, total (bytes)
  clock,            // arg: NVML_CLOCK_SM or NVML_CLOCK_MEM (MHz)
  power_usage,      // W
  power_limit,      // W
  temperature,      // C
  fan_speed,        // %
  pcie_throughput,  // arg: NVML_PCIE_UTIL_TX_BYTES / RX_BYTES (bytes/s)
  pcie_bytes,       // arg: NVML_FI_DEV_PCIE_COUNT_TX_BYTES / _RX_BYTES, arg2: counter bits (bytes)
  pcie_gen_current,
  pcie_gen_max,
  pcie_width_current,
  pcie_width_max,
  nvlink_error,   // arg: nvmlNvLinkErrorCounter_t, link: the link
  nvlink_throughput,  // arg: NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX / _RX, link: the link (bytes)
  ecc,            // arg: memory error type, arg2: ECC counter type
  retired_pages,  // arg: retirement cause
  remapped_rows,  // corrected, uncorrected, pending, failure
  throttle,       // one 0/1 value per reason in kThrottleReasons
  pstate,
  xid_total,  // no NVML call: XID events counted by poll_events()
  gpm,        // the four metrics in kGpmMetrics
};

struct Read {
  Op op;
  int arg = 0;
  int arg2 = 0;
  unsigned link = 0;
  std::size_t slot = 0;  // first channel of this read in the probe's output
};

// Number of values a read of `op` yields.
std::size_t width(Op op);

// A slow read: a value that changes rarely (limits, link generation and width, ECC and NVLink
// error counters, retired pages, remapped rows). The probe performs slow reads at open and then
// once per slow interval (NvmlProbe::kSlowReadIntervalS), and repeats their last values at the
// ticks between; everything else is read at every tick.
bool slow(Op op);

// GPM state of one GPU: two sample buffers used alternately (the latest valid one is the
// "before" of the next tick) and the metrics request, allocated at open.
struct GpmState {
  nvmlGpmSample_t samples[2] = {nullptr, nullptr};
  int latest = -1;  // index into samples of the latest valid sample, -1 when none
  std::unique_ptr<nvmlGpmMetricsGet_t> request;
};

struct GpuState {
  unsigned index = 0;
  nvmlDevice_t device = nullptr;
  std::string label;     // "gpu0"
  std::string identity;  // "gpu0 = <product name> <UUID>", for channel help
  std::vector<Read> reads;       // performed at every tick
  std::vector<Read> slow_reads;  // performed once per slow interval (slow(op))
  bool lost_seen = false;           // GPU_IS_LOST has been reported once
  bool lost_event_pending = false;  // ... and poll_events has not told yet
  bool xid_registered = false;
  double xid_total = 0;
  GpmState gpm;
};

// Appends the channel(s) of `r` for `gpu` to `out`.
void describe(const Read& r, const GpuState& gpu, std::vector<ChannelInfo>& out);

// One field of nvmlDeviceGetFieldValues as a double; `bits` gets the width of its integer type
// (64 for doubles). Returns the call's status, else the field's own.
nvmlReturn_t read_field(const NvmlFunctions& lib, nvmlDevice_t dev, unsigned field, unsigned scope,
                        double& value, int& bits);

// Performs `r` on `gpu` and writes width(r.op) values to `out` (see contract above).
nvmlReturn_t execute(const NvmlFunctions& lib, GpuState& gpu, const Read& r, double* out);

}  // namespace reveal::telemetry::nvml
