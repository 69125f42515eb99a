#include "telemetry/nvml/nvml_probe.h"

#include <time.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>

namespace reveal::telemetry {
using namespace nvml;

namespace {
// An answer at open meaning "this GPU will never have this value": the channel is left out.
bool absent(nvmlReturn_t r) {
  return r == NVML_ERROR_NOT_SUPPORTED || r == NVML_ERROR_FUNCTION_NOT_FOUND ||
         r == NVML_ERROR_NO_PERMISSION || r == NVML_ERROR_INVALID_ARGUMENT;
}

// Upper bound on events taken in one poll_events(), in case a driver never answers TIMEOUT.
constexpr int kMaxEventsPerPoll = 100000;
}  // namespace

NvmlProbe::NvmlProbe() : NvmlProbe(default_library_path()) {}
NvmlProbe::NvmlProbe(std::string library_path, double slow_interval_s)
    : library_path_(std::move(library_path)),
      slow_interval_ns_(std::int64_t(std::max(0.0, slow_interval_s) * 1e9)) {}
NvmlProbe::~NvmlProbe() { close(); }

void NvmlProbe::close() {
  for (auto& g : gpus_)
    for (auto& s : g->gpm.samples)
      if (s && lib_.GpmSampleFree) lib_.GpmSampleFree(s);
  gpus_.clear();
  channels_.clear();
  held_.clear();
  last_slow_ns_ = 0;
  if (events_ && lib_.EventSetFree) lib_.EventSetFree(events_);
  events_ = nullptr;
  if (initialized_) lib_.Shutdown();
  initialized_ = false;
  lib_.unload();
}

ProbeStatus NvmlProbe::open(const std::filesystem::path& /*root: NVML reads the live driver*/) {
  close();
  std::string err;
  if (!lib_.load(library_path_, &err)) return {false, err};
  if (const nvmlReturn_t r = lib_.Init(); r != NVML_SUCCESS) {
    err = "NVML: nvmlInit_v2 failed: " + lib_.error_string(r);
    lib_.unload();
    return {false, err};
  }
  initialized_ = true;
  unsigned int count = 0;
  if (const nvmlReturn_t r = lib_.DeviceGetCount(&count); r != NVML_SUCCESS) {
    err = "NVML: nvmlDeviceGetCount_v2 failed: " + lib_.error_string(r);
    close();
    return {false, err};
  }
  if (count == 0) {
    close();
    return {false, "NVML: no GPUs"};
  }
  std::string handle_error;
  for (unsigned i = 0; i < count; ++i) {
    auto gpu = std::make_unique<GpuState>();
    gpu->index = i;
    gpu->label = "gpu" + std::to_string(i);
    if (const nvmlReturn_t r = lib_.DeviceGetHandleByIndex(i, &gpu->device); r != NVML_SUCCESS) {
      handle_error = gpu->label + ": nvmlDeviceGetHandleByIndex_v2 failed: " + lib_.error_string(r);
      continue;  // skipped; its siblings keep their NVML index in their names
    }
    discover(*gpu);
    if (!gpu->reads.empty() || !gpu->slow_reads.empty()) gpus_.push_back(std::move(gpu));
  }
  bool any_xid = false;
  for (auto& g : gpus_) any_xid = any_xid || g->xid_registered;
  if (events_ && !any_xid) {
    lib_.EventSetFree(events_);
    events_ = nullptr;
  }
  if (channels_.empty()) {
    err = "NVML: no readable GPU" + (handle_error.empty() ? "" : " (" + handle_error + ")");
    close();
    return {false, err};
  }
  held_.assign(channels_.size(), std::nan(""));
  return {true, {}};
}

// Tries a read once; keeps it, with its channels, unless the answer says it never will work.
void NvmlProbe::add_read(GpuState& gpu, Read read) {
  std::array<double, 16> scratch{};
  const nvmlReturn_t r = execute(lib_, gpu, read, scratch.data());
  if (absent(r)) return;
  if (r == NVML_ERROR_GPU_IS_LOST && !gpu.lost_seen) gpu.lost_seen = gpu.lost_event_pending = true;
  read.slot = channels_.size();
  (slow(read.op) ? gpu.slow_reads : gpu.reads).push_back(read);
  describe(read, gpu, channels_);
}

void NvmlProbe::discover(GpuState& gpu) {
  std::array<char, NVML_DEVICE_NAME_V2_BUFFER_SIZE> name{};
  std::array<char, NVML_DEVICE_UUID_BUFFER_SIZE> uuid{};
  if (!lib_.DeviceGetName || lib_.DeviceGetName(gpu.device, name.data(), name.size()) != NVML_SUCCESS)
    name[0] = '\0';
  if (!lib_.DeviceGetUUID || lib_.DeviceGetUUID(gpu.device, uuid.data(), uuid.size()) != NVML_SUCCESS)
    uuid[0] = '\0';
  name.back() = uuid.back() = '\0';
  gpu.identity = gpu.label + " = " + (name[0] ? name.data() : "unknown GPU") +
                 (uuid[0] ? " " + std::string(uuid.data()) : std::string());

  // gpu
  add_read(gpu, {Op::utilization});
  add_read(gpu, {Op::memory});
  add_read(gpu, {Op::clock, NVML_CLOCK_SM});
  add_read(gpu, {Op::clock, NVML_CLOCK_MEM});
  add_read(gpu, {Op::pstate});
  // power_thermal
  add_read(gpu, {Op::power_usage});
  add_read(gpu, {Op::power_limit});
  add_read(gpu, {Op::temperature});
  add_read(gpu, {Op::fan_speed});
  add_read(gpu, {Op::throttle});
  // interconnect
  // PCIe traffic: the cumulative byte counters where the driver has them (cheap, and exact over
  // the whole interval); else nvmlDeviceGetPcieThroughput, a ~20 ms sample inside each call.
  double v = 0;
  int bits_tx = 64, bits_rx = 64;
  if (read_field(lib_, gpu.device, NVML_FI_DEV_PCIE_COUNT_TX_BYTES, 0, v, bits_tx) == NVML_SUCCESS &&
      read_field(lib_, gpu.device, NVML_FI_DEV_PCIE_COUNT_RX_BYTES, 0, v, bits_rx) == NVML_SUCCESS) {
    add_read(gpu, {Op::pcie_bytes, int(NVML_FI_DEV_PCIE_COUNT_TX_BYTES), bits_tx});
    add_read(gpu, {Op::pcie_bytes, int(NVML_FI_DEV_PCIE_COUNT_RX_BYTES), bits_rx});
  } else {
    add_read(gpu, {Op::pcie_throughput, NVML_PCIE_UTIL_TX_BYTES});
    add_read(gpu, {Op::pcie_throughput, NVML_PCIE_UTIL_RX_BYTES});
  }
  add_read(gpu, {Op::pcie_gen_current});
  add_read(gpu, {Op::pcie_gen_max});
  add_read(gpu, {Op::pcie_width_current});
  add_read(gpu, {Op::pcie_width_max});
  if (lib_.DeviceGetNvLinkState && lib_.DeviceGetNvLinkErrorCounter) {
    for (unsigned link = 0; link < NVML_NVLINK_MAX_LINKS; ++link) {
      int active = NVML_FEATURE_DISABLED;
      if (lib_.DeviceGetNvLinkState(gpu.device, link, &active) != NVML_SUCCESS ||
          active != NVML_FEATURE_ENABLED)
        continue;
      for (int c : {NVML_NVLINK_ERROR_DL_REPLAY, NVML_NVLINK_ERROR_DL_RECOVERY,
                    NVML_NVLINK_ERROR_DL_CRC_FLIT, NVML_NVLINK_ERROR_DL_CRC_DATA})
        add_read(gpu, {Op::nvlink_error, c, 0, link});
      for (unsigned f : {NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX, NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX})
        add_read(gpu, {Op::nvlink_throughput, int(f), 0, link});
    }
  }
  // gpu: memory errors
  for (int counter : {NVML_VOLATILE_ECC, NVML_AGGREGATE_ECC})
    for (int type : {NVML_MEMORY_ERROR_TYPE_CORRECTED, NVML_MEMORY_ERROR_TYPE_UNCORRECTED})
      add_read(gpu, {Op::ecc, type, counter});
  add_read(gpu, {Op::retired_pages, NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS});
  add_read(gpu, {Op::retired_pages, NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR});
  add_read(gpu, {Op::remapped_rows});

  // XID events: one event set for all GPUs, created with the first registration.
  if (lib_.EventSetCreate && lib_.EventSetFree && lib_.DeviceRegisterEvents && lib_.EventSetWait) {
    if (!events_ && lib_.EventSetCreate(&events_) != NVML_SUCCESS) events_ = nullptr;
    if (events_ &&
        lib_.DeviceRegisterEvents(gpu.device, nvmlEventTypeXidCriticalError, events_) == NVML_SUCCESS) {
      gpu.xid_registered = true;
      add_read(gpu, {Op::xid_total});
    }
  }

  // GPM: two sample buffers, the first sample taken now so that the first tick has an interval.
  if (lib_.GpmQueryDeviceSupport && lib_.GpmSampleAlloc && lib_.GpmSampleFree &&
      lib_.GpmSampleGet && lib_.GpmMetricsGet) {
    nvmlGpmSupport_t support{NVML_GPM_SUPPORT_VERSION, 0};
    GpmState& g = gpu.gpm;
    if (lib_.GpmQueryDeviceSupport(gpu.device, &support) == NVML_SUCCESS && support.isSupportedDevice &&
        lib_.GpmSampleAlloc(&g.samples[0]) == NVML_SUCCESS &&
        lib_.GpmSampleAlloc(&g.samples[1]) == NVML_SUCCESS &&
        lib_.GpmSampleGet(gpu.device, g.samples[0]) == NVML_SUCCESS) {
      g.latest = 0;
      g.request = std::make_unique<nvmlGpmMetricsGet_t>();
      Read read{Op::gpm};
      read.slot = channels_.size();
      gpu.reads.push_back(read);
      describe(read, gpu, channels_);
    } else {
      for (auto& s : g.samples)
        if (s) lib_.GpmSampleFree(s);
      g.samples[0] = g.samples[1] = nullptr;
    }
  }
}

void NvmlProbe::sample(std::span<double> out) {
  const double nan = std::nan("");
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  const std::int64_t now = std::int64_t(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
  const bool slow_tick = last_slow_ns_ == 0 || now - last_slow_ns_ >= slow_interval_ns_;
  if (slow_tick) last_slow_ns_ = now == 0 ? 1 : now;
  for (auto& gp : gpus_) {
    GpuState& gpu = *gp;
    bool lost = false;  // this tick: once lost, skip the GPU's remaining calls
    auto perform = [&](const Read& r) {
      double* dst = out.data() + r.slot;
      const std::size_t n = width(r.op);
      nvmlReturn_t ret = NVML_ERROR_GPU_IS_LOST;
      if (!lost || r.op == Op::xid_total) ret = execute(lib_, gpu, r, dst);
      if (ret == NVML_SUCCESS) return;
      for (std::size_t i = 0; i < n; ++i) dst[i] = nan;
      if (ret == NVML_ERROR_GPU_IS_LOST && !lost) {
        lost = true;
        if (!gpu.lost_seen) gpu.lost_seen = gpu.lost_event_pending = true;
      }
    };
    for (const Read& r : gpu.reads) perform(r);
    for (const Read& r : gpu.slow_reads) {
      const std::size_t n = width(r.op);
      if (slow_tick) {
        perform(r);
        std::copy_n(out.data() + r.slot, n, held_.data() + r.slot);
      } else if (lost) {  // a lost GPU's held values end with it
        std::fill_n(held_.data() + r.slot, n, nan);
        std::fill_n(out.data() + r.slot, n, nan);
      } else {
        std::copy_n(held_.data() + r.slot, n, out.data() + r.slot);
      }
    }
  }
}

void NvmlProbe::poll_events(std::int64_t now_unix_ns, std::vector<Event>& out) {
  for (auto& g : gpus_) {
    if (!g->lost_event_pending) continue;
    g->lost_event_pending = false;
    out.push_back({now_unix_ns, "nvml", "gpu_lost", double(g->index),
                   g->label + " lost: " + lib_.error_string(NVML_ERROR_GPU_IS_LOST)});
  }
  if (!events_) return;
  for (int n = 0; n < kMaxEventsPerPoll; ++n) {
    nvmlEventData_t data{};
    if (lib_.EventSetWait(events_, &data, 0) != NVML_SUCCESS) break;  // TIMEOUT: drained
    if (!(data.eventType & nvmlEventTypeXidCriticalError)) continue;
    std::string who = "gpu?";
    for (auto& g : gpus_)
      if (g->device == data.device) {
        who = g->label;
        g->xid_total += 1;
        break;
      }
    out.push_back({now_unix_ns, "nvml", "xid", double(data.eventData),
                   who + " XID " + std::to_string(data.eventData)});
  }
}

}  // namespace reveal::telemetry
