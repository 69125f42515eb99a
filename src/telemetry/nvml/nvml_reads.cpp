#include "telemetry/nvml/nvml_reads.h"

#include <array>
#include <cmath>

#include "telemetry/file_reader.h"

namespace reveal::telemetry::nvml {
namespace {
constexpr std::string_view kSource = "nvml";

struct Spec {
  std::string_view field, unit;
  Kind kind;
  Subsystem subsystem;
  std::string_view help;
  std::uint8_t bits = 64;
};

struct ThrottleReason {
  std::uint64_t bit;
  std::string_view name;
};
constexpr std::array<ThrottleReason, 9> kThrottleReasons{{
    {nvmlClocksThrottleReasonGpuIdle, "gpu_idle"},
    {nvmlClocksThrottleReasonApplicationsClocksSetting, "applications_clocks_setting"},
    {nvmlClocksThrottleReasonSwPowerCap, "sw_power_cap"},
    {nvmlClocksThrottleReasonHwSlowdown, "hw_slowdown"},
    {nvmlClocksThrottleReasonSyncBoost, "sync_boost"},
    {nvmlClocksThrottleReasonSwThermalSlowdown, "sw_thermal_slowdown"},
    {nvmlClocksThrottleReasonHwThermalSlowdown, "hw_thermal_slowdown"},
    {nvmlClocksThrottleReasonHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {nvmlClocksThrottleReasonDisplayClockSetting, "display_clock_setting"},
}};

struct GpmMetric {
  unsigned id;
  std::string_view field, help;
};
constexpr std::array<GpmMetric, 4> kGpmMetrics{{
    {NVML_GPM_METRIC_SM_UTIL, "gpm_sm_util", "% of time SMs were busy (GPM SM_UTIL)"},
    {NVML_GPM_METRIC_SM_OCCUPANCY, "gpm_sm_occupancy",
     "resident warps vs the SMs' maximum, % (GPM SM_OCCUPANCY)"},
    {NVML_GPM_METRIC_ANY_TENSOR_UTIL, "gpm_any_tensor_util",
     "% of time SMs ran any tensor operation (GPM ANY_TENSOR_UTIL)"},
    {NVML_GPM_METRIC_DRAM_BW_UTIL, "gpm_dram_bw_util",
     "DRAM bandwidth used vs theoretical maximum, % (GPM DRAM_BW_UTIL)"},
}};

constexpr std::array<std::string_view, 4> kNvlinkCounters{"replay", "recovery", "crc_flit",
                                                          "crc_data"};

constexpr auto G = Subsystem::gpu;
constexpr auto PT = Subsystem::power_thermal;
constexpr auto IC = Subsystem::interconnect;

// The specs of a read with a single channel.
Spec single_spec(const Read& r) {
  switch (r.op) {
    case Op::clock:
      return r.arg == NVML_CLOCK_SM
                 ? Spec{"clocks_sm", "MHz", Kind::gauge, G, "SM clock (nvmlDeviceGetClockInfo SM)"}
                 : Spec{"clocks_mem", "MHz", Kind::gauge, G,
                        "memory clock (nvmlDeviceGetClockInfo MEM)"};
    case Op::power_usage:
      return {"power_usage", "W", Kind::gauge, PT, "board power draw (nvmlDeviceGetPowerUsage)"};
    case Op::power_limit:
      return {"enforced_power_limit", "W", Kind::gauge, PT,
              "enforced power limit (nvmlDeviceGetEnforcedPowerLimit)"};
    case Op::temperature:
      return {"temperature_gpu", "C", Kind::gauge, PT, "GPU die temperature (nvmlDeviceGetTemperature)"};
    case Op::fan_speed:
      return {"fan_speed", "%", Kind::gauge, PT, "intended fan speed (nvmlDeviceGetFanSpeed)"};
    case Op::pcie_throughput:
      return r.arg == NVML_PCIE_UTIL_TX_BYTES
                 ? Spec{"pcie_tx_throughput", "bytes/s", Kind::gauge, IC,
                        "PCIe bytes sent by the GPU per s over ~20 ms (nvmlDeviceGetPcieThroughput TX)"}
                 : Spec{"pcie_rx_throughput", "bytes/s", Kind::gauge, IC,
                        "PCIe bytes received by the GPU per s over ~20 ms (nvmlDeviceGetPcieThroughput RX)"};
    case Op::pcie_bytes:
      return unsigned(r.arg) == NVML_FI_DEV_PCIE_COUNT_TX_BYTES
                 ? Spec{"pcie_tx_bytes", "bytes", Kind::counter, IC,
                        "PCIe bytes sent by the GPU (nvmlDeviceGetFieldValues PCIE_COUNT_TX_BYTES)",
                        std::uint8_t(r.arg2)}
                 : Spec{"pcie_rx_bytes", "bytes", Kind::counter, IC,
                        "PCIe bytes received by the GPU (nvmlDeviceGetFieldValues PCIE_COUNT_RX_BYTES)",
                        std::uint8_t(r.arg2)};
    case Op::pcie_gen_current:
      return {"pcie_link_gen_current", "gen", Kind::gauge, IC,
              "current PCIe link generation (nvmlDeviceGetCurrPcieLinkGeneration)"};
    case Op::pcie_gen_max:
      return {"pcie_link_gen_max", "gen", Kind::gauge, IC,
              "maximum PCIe link generation (nvmlDeviceGetMaxPcieLinkGeneration)"};
    case Op::pcie_width_current:
      return {"pcie_link_width_current", "lanes", Kind::gauge, IC,
              "current PCIe link width (nvmlDeviceGetCurrPcieLinkWidth)"};
    case Op::pcie_width_max:
      return {"pcie_link_width_max", "lanes", Kind::gauge, IC,
              "maximum PCIe link width (nvmlDeviceGetMaxPcieLinkWidth)"};
    case Op::pstate:
      return {"pstate", "pstate", Kind::state, G,
              "performance state P0 (max) .. P15 (nvmlDeviceGetPerformanceState)"};
    case Op::xid_total:
      return {"xid_events_total", "count", Kind::counter, G,
              "XID critical error events seen (nvmlEventTypeXidCriticalError)"};
    case Op::retired_pages:
      return r.arg == NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS
                 ? Spec{"retired_sbe", "pages", Kind::counter, G,
                        "pages retired for multiple single-bit ECC errors (nvmlDeviceGetRetiredPages)", 32}
                 : Spec{"retired_dbe", "pages", Kind::counter, G,
                        "pages retired for a double-bit ECC error (nvmlDeviceGetRetiredPages)", 32};
    default:
      return {};
  }
}

void push(std::vector<ChannelInfo>& out, const GpuState& gpu, std::string_view field,
          std::string_view unit, Kind kind, Subsystem sub, std::string_view help,
          std::uint8_t bits = 64) {
  out.push_back({channel_name(kSource, field, gpu.label), std::string(unit), kind, sub, bits,
                 std::string(help) + "; " + gpu.identity});
}

double nan() { return std::nan(""); }
}  // namespace

bool slow(Op op) {
  switch (op) {
    case Op::power_limit:
    case Op::pcie_gen_current:
    case Op::pcie_gen_max:
    case Op::pcie_width_current:
    case Op::pcie_width_max:
    case Op::nvlink_error:
    case Op::ecc:
    case Op::retired_pages:
    case Op::remapped_rows: return true;
    default: return false;
  }
}

std::size_t width(Op op) {
  switch (op) {
    case Op::utilization: return 2;
    case Op::memory: return 3;
    case Op::remapped_rows: return 4;
    case Op::throttle: return kThrottleReasons.size();
    case Op::gpm: return kGpmMetrics.size();
    default: return 1;
  }
}

void describe(const Read& r, const GpuState& gpu, std::vector<ChannelInfo>& out) {
  switch (r.op) {
    case Op::utilization:
      push(out, gpu, "utilization_gpu", "%", Kind::gauge, G,
           "% of time a kernel was running (nvmlDeviceGetUtilizationRates gpu)");
      push(out, gpu, "utilization_memory", "%", Kind::gauge, G,
           "% of time device memory was read or written (nvmlDeviceGetUtilizationRates memory)");
      return;
    case Op::memory:
      push(out, gpu, "memory_used", "bytes", Kind::gauge, G, "device memory used (nvmlDeviceGetMemoryInfo)");
      push(out, gpu, "memory_free", "bytes", Kind::gauge, G, "device memory free (nvmlDeviceGetMemoryInfo)");
      push(out, gpu, "memory_total", "bytes", Kind::gauge, G, "device memory total (nvmlDeviceGetMemoryInfo)");
      return;
    case Op::nvlink_error: {
      const std::string field = "nvlink_" + std::string(kNvlinkCounters[r.arg]) +
                                "_error_count_l" + std::to_string(r.link);
      push(out, gpu, field, "count", Kind::counter, IC,
           "NVLink " + std::string(kNvlinkCounters[r.arg]) + " errors on link " +
               std::to_string(r.link) + " (nvmlDeviceGetNvLinkErrorCounter)");
      return;
    }
    case Op::nvlink_throughput: {
      const bool tx = unsigned(r.arg) == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
      const std::string l = std::to_string(r.link);
      push(out, gpu, std::string("nvlink_") + (tx ? "tx" : "rx") + "_bytes_l" + l, "bytes",
           Kind::counter, IC,
           std::string("NVLink data bytes ") + (tx ? "sent" : "received") + " on link " + l +
               " (nvmlDeviceGetFieldValues NVLINK_THROUGHPUT_DATA_" + (tx ? "TX" : "RX") +
               ", KiB x 1024)");
      return;
    }
    case Op::ecc: {
      const bool corrected = r.arg == NVML_MEMORY_ERROR_TYPE_CORRECTED;
      const bool vol = r.arg2 == NVML_VOLATILE_ECC;
      const std::string field = std::string("ecc_") + (corrected ? "sbe" : "dbe") + "_" +
                                (vol ? "vol" : "agg") + "_total";
      push(out, gpu, field, "count", Kind::counter, G,
           std::string(corrected ? "corrected (single-bit)" : "uncorrected (double-bit)") +
               " ECC errors " + (vol ? "since driver load" : "over the board's life") +
               " (nvmlDeviceGetTotalEccErrors)");
      return;
    }
    case Op::remapped_rows:
      push(out, gpu, "correctable_remapped_rows", "rows", Kind::counter, G,
           "rows remapped for correctable errors (nvmlDeviceGetRemappedRows)", 32);
      push(out, gpu, "uncorrectable_remapped_rows", "rows", Kind::counter, G,
           "rows remapped for uncorrectable errors (nvmlDeviceGetRemappedRows)", 32);
      push(out, gpu, "row_remap_pending", "bool", Kind::state, G,
           "1 = a row remapping awaits a GPU reset (nvmlDeviceGetRemappedRows)");
      push(out, gpu, "row_remap_failure", "bool", Kind::state, G,
           "1 = a row remapping failed (nvmlDeviceGetRemappedRows)");
      return;
    case Op::throttle:
      for (const auto& t : kThrottleReasons)
        push(out, gpu, "clocks_throttle_reasons_" + std::string(t.name), "bool", Kind::state, PT,
             "1 = clocks held down by " + std::string(t.name) +
                 " (nvmlDeviceGetCurrentClocksThrottleReasons)");
      return;
    case Op::gpm:
      for (const auto& m : kGpmMetrics) push(out, gpu, m.field, "%", Kind::gauge, G, m.help);
      return;
    default: {
      const Spec s = single_spec(r);
      push(out, gpu, s.field, s.unit, s.kind, s.subsystem, s.help, s.bits);
      return;
    }
  }
}

nvmlReturn_t read_field(const NvmlFunctions& lib, nvmlDevice_t dev, unsigned field, unsigned scope,
                        double& value, int& bits) {
  if (!lib.DeviceGetFieldValues) return NVML_ERROR_FUNCTION_NOT_FOUND;
  nvmlFieldValue_t v{};
  v.fieldId = field;
  v.scopeId = scope;
  nvmlReturn_t ret = lib.DeviceGetFieldValues(dev, 1, &v);
  if (ret != NVML_SUCCESS) return ret;
  if (v.nvmlReturn != NVML_SUCCESS) return v.nvmlReturn;
  bits = 64;
  switch (v.valueType) {
    case NVML_VALUE_TYPE_DOUBLE: value = v.value.dVal; break;
    case NVML_VALUE_TYPE_UNSIGNED_INT: value = v.value.uiVal; bits = 32; break;
    case NVML_VALUE_TYPE_UNSIGNED_LONG: value = double(v.value.ulVal); break;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG: value = double(v.value.sllVal); break;
    case NVML_VALUE_TYPE_SIGNED_INT: value = v.value.siVal; bits = 32; break;
    default: value = double(v.value.ullVal); break;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t execute(const NvmlFunctions& lib, GpuState& gpu, const Read& r, double* out) {
  constexpr nvmlReturn_t kMissing = NVML_ERROR_FUNCTION_NOT_FOUND;
  nvmlDevice_t dev = gpu.device;
  unsigned int u = 0;
  unsigned long long ull = 0;
  nvmlReturn_t ret = NVML_SUCCESS;
  // One-value reads through a `unsigned int*` getter.
  auto u32 = [&](auto fn, double scale) {
    if (!fn) return kMissing;
    const nvmlReturn_t rr = fn(dev, &u);
    if (rr == NVML_SUCCESS) out[0] = double(u) * scale;
    return rr;
  };
  switch (r.op) {
    case Op::utilization: {
      if (!lib.DeviceGetUtilizationRates) return kMissing;
      nvmlUtilization_t v{};
      if ((ret = lib.DeviceGetUtilizationRates(dev, &v)) != NVML_SUCCESS) return ret;
      out[0] = v.gpu;
      out[1] = v.memory;
      return ret;
    }
    case Op::memory: {
      if (!lib.DeviceGetMemoryInfo) return kMissing;
      nvmlMemory_t v{};
      if ((ret = lib.DeviceGetMemoryInfo(dev, &v)) != NVML_SUCCESS) return ret;
      out[0] = double(v.used);
      out[1] = double(v.free);
      out[2] = double(v.total);
      return ret;
    }
    case Op::clock:
      if (!lib.DeviceGetClockInfo) return kMissing;
      if ((ret = lib.DeviceGetClockInfo(dev, r.arg, &u)) == NVML_SUCCESS) out[0] = u;
      return ret;
    case Op::power_usage: return u32(lib.DeviceGetPowerUsage, 1e-3);  // mW -> W
    case Op::power_limit: return u32(lib.DeviceGetEnforcedPowerLimit, 1e-3);
    case Op::temperature:
      if (!lib.DeviceGetTemperature) return kMissing;
      if ((ret = lib.DeviceGetTemperature(dev, NVML_TEMPERATURE_GPU, &u)) == NVML_SUCCESS) out[0] = u;
      return ret;
    case Op::fan_speed: return u32(lib.DeviceGetFanSpeed, 1.0);
    case Op::pcie_throughput:
      if (!lib.DeviceGetPcieThroughput) return kMissing;
      if ((ret = lib.DeviceGetPcieThroughput(dev, r.arg, &u)) == NVML_SUCCESS)
        out[0] = double(u) * 1024.0;  // KB/s -> bytes/s
      return ret;
    case Op::pcie_gen_current: return u32(lib.DeviceGetCurrPcieLinkGeneration, 1.0);
    case Op::pcie_gen_max: return u32(lib.DeviceGetMaxPcieLinkGeneration, 1.0);
    case Op::pcie_width_current: return u32(lib.DeviceGetCurrPcieLinkWidth, 1.0);
    case Op::pcie_width_max: return u32(lib.DeviceGetMaxPcieLinkWidth, 1.0);
    case Op::nvlink_error:
      if (!lib.DeviceGetNvLinkErrorCounter) return kMissing;
      if ((ret = lib.DeviceGetNvLinkErrorCounter(dev, r.link, r.arg, &ull)) == NVML_SUCCESS)
        out[0] = double(ull);
      return ret;
    case Op::nvlink_throughput: {
      int bits = 64;
      if ((ret = read_field(lib, dev, unsigned(r.arg), r.link, out[0], bits)) == NVML_SUCCESS)
        out[0] *= 1024.0;  // KiB -> bytes
      return ret;
    }
    case Op::pcie_bytes: {
      int bits = 64;
      return read_field(lib, dev, unsigned(r.arg), 0, out[0], bits);
    }
    case Op::ecc:
      if (!lib.DeviceGetTotalEccErrors) return kMissing;
      if ((ret = lib.DeviceGetTotalEccErrors(dev, r.arg, r.arg2, &ull)) == NVML_SUCCESS)
        out[0] = double(ull);
      return ret;
    case Op::retired_pages:
      // Count only: pageCount 0 and no address buffer; NVML answers the count with SUCCESS or,
      // when there are pages to return, INSUFFICIENT_SIZE.
      if (!lib.DeviceGetRetiredPages) return kMissing;
      ret = lib.DeviceGetRetiredPages(dev, r.arg, &u, nullptr);
      if (ret == NVML_ERROR_INSUFFICIENT_SIZE) ret = NVML_SUCCESS;
      if (ret == NVML_SUCCESS) out[0] = u;
      return ret;
    case Op::remapped_rows: {
      if (!lib.DeviceGetRemappedRows) return kMissing;
      unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
      if ((ret = lib.DeviceGetRemappedRows(dev, &corr, &unc, &pending, &failed)) != NVML_SUCCESS)
        return ret;
      out[0] = corr;
      out[1] = unc;
      out[2] = pending ? 1 : 0;
      out[3] = failed ? 1 : 0;
      return ret;
    }
    case Op::throttle:
      if (!lib.DeviceGetCurrentClocksThrottleReasons) return kMissing;
      if ((ret = lib.DeviceGetCurrentClocksThrottleReasons(dev, &ull)) != NVML_SUCCESS) return ret;
      for (std::size_t i = 0; i < kThrottleReasons.size(); ++i)
        out[i] = (ull & kThrottleReasons[i].bit) ? 1 : 0;
      return ret;
    case Op::pstate: {
      if (!lib.DeviceGetPerformanceState) return kMissing;
      int p = NVML_PSTATE_UNKNOWN;
      if ((ret = lib.DeviceGetPerformanceState(dev, &p)) != NVML_SUCCESS) return ret;
      out[0] = (p >= 0 && p <= 15) ? double(p) : nan();
      return ret;
    }
    case Op::xid_total:
      out[0] = gpu.xid_total;
      return NVML_SUCCESS;
    case Op::gpm: {
      if (!lib.GpmSampleGet || !lib.GpmMetricsGet || !gpu.gpm.request) return kMissing;
      GpmState& g = gpu.gpm;
      const int next = g.latest == 0 ? 1 : 0;
      if ((ret = lib.GpmSampleGet(dev, g.samples[next])) != NVML_SUCCESS) {
        g.latest = -1;
        return ret;
      }
      const int prev = g.latest;
      g.latest = next;
      if (prev < 0) return NVML_ERROR_NO_DATA;  // first sample after a gap: no interval yet
      nvmlGpmMetricsGet_t& q = *g.request;
      q.version = NVML_GPM_METRICS_GET_VERSION;
      q.numMetrics = kGpmMetrics.size();
      q.sample1 = g.samples[prev];
      q.sample2 = g.samples[next];
      for (std::size_t i = 0; i < kGpmMetrics.size(); ++i) {
        q.metrics[i].metricId = kGpmMetrics[i].id;
        q.metrics[i].nvmlReturn = NVML_ERROR_UNKNOWN;
      }
      if ((ret = lib.GpmMetricsGet(&q)) != NVML_SUCCESS) return ret;
      for (std::size_t i = 0; i < kGpmMetrics.size(); ++i)
        out[i] = q.metrics[i].nvmlReturn == NVML_SUCCESS ? q.metrics[i].value : nan();
      return ret;
    }
  }
  return NVML_ERROR_UNKNOWN;
}

}  // namespace reveal::telemetry::nvml
