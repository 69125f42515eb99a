// A test double of libnvidia-ml: a shared library exporting the NVML C entry points the nvml
// probe uses (signatures from src/telemetry/nvml/nvml_api.h), answering scripted values for two
// GPUs. Built twice by tests/CMakeLists.txt: the full double, and with NVML_DOUBLE_MINIMAL a
// library that exports only the required entry points plus utilisation and memory (to check
// that missing optional symbols only remove their channels).
//
// Script (values asserted by tests/telemetry/nvml/nvml_probe_test.cpp):
//   gpu0 "Reveal Double A": NVLink links 0-3 active, no fan (NOT_SUPPORTED), GPM supported.
//   gpu1 "Reveal Double B": no NVLink (NOT_SUPPORTED), GPM not supported.
//   PCIe byte counters (nvmlDeviceGetFieldValues PCIE_COUNT_TX/RX_BYTES): gpu0 only, 32-bit
//   (UNSIGNED_INT) values 4294967000 + 1000*k sent and 3000*k received after its k-th read of
//   that counter (TX wraps at the 2nd read); gpu1 answers NOT_SUPPORTED (the probe then falls
//   back to nvmlDeviceGetPcieThroughput for it).
//   NVLink data counters (nvmlDeviceGetFieldValues): gpu0 link L has sent (L+1)*1000*k KiB and
//   received (L+1)*2000*k KiB after its k-th read of that link and direction.
//   Configuration (nvml_config.h): driver "580.159.03", NVML "13.580.159.03", CUDA 13000;
//   gpu0 persistence Enabled, ECC Enabled/pending Disabled, MIG Disabled/Disabled, compute
//   Default, limits 700 W (default 700 W), application clocks 1980/2619 (default 1755/2619),
//   VBIOS "96.00.89.00.01"; gpu1 persistence Disabled, no ECC/MIG/application clocks
//   (NOT_SUPPORTED), compute Exclusive_Process, limit 312.5 W (default 300 W), no VBIOS entry.
// Control functions (extern "C", looked up by the tests with dlsym on the same library):
//   nvml_double_reset()                      default script, nothing lost, no XIDs queued
//   nvml_double_set_lost_after(gpu, n)       gpu answers the next n utilisation calls (one
//                                            per probe sample), then GPU_IS_LOST to every call
//   nvml_double_add_xid(gpu, xid, at_poll)   deliver XID `xid` on `gpu` during poll number
//                                            at_poll (1-based; a poll ends with the TIMEOUT
//                                            answer of nvmlEventSetWait_v2)
//   nvml_double_set_init_result(r)           what nvmlInit_v2 answers
//   nvml_double_init_refcount()              nvmlInit_v2 successes minus nvmlShutdown calls
//   nvml_double_gpm_samples_in_use()         GPM samples allocated and not freed
//   nvml_double_ecc_calls()                  nvmlDeviceGetTotalEccErrors calls since reset
// A big host (issue #21, bench/bighost): REVEAL_NVML_DOUBLE_GPUS=N (1..8) and
// REVEAL_NVML_DOUBLE_NVLINKS=L (0..18), read at nvmlInit_v2, give N GPUs with L active NVLinks on
// each board-A GPU. gpu1 keeps board B's script; every other GPU follows gpu0's (board A: values,
// NVLink, GPM), with its own UUID "GPU-<N repeated>...". The shared counters (PCIe, NVLink data)
// advance once per read of any GPU. Unset, the script above holds (2 GPUs, 4 links).
// Nothing here allocates (the probe's no-allocation test samples through this library).
#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "telemetry/nvml/nvml_api.h"

using namespace reveal::telemetry::nvml;

struct reveal::telemetry::nvml::nvmlDevice_st {
  int index;
};
struct reveal::telemetry::nvml::nvmlEventSet_st {
  bool used;
  unsigned long long mask[8];  // per GPU index
};
struct reveal::telemetry::nvml::nvmlGpmSample_st {
  bool used;
  int gpu;
  long seq;
};

namespace {
constexpr int kMaxGpus = 8;
constexpr int kMaxXids = 64;

struct Xid {
  int gpu;
  unsigned long long code;
  int at_poll;
  bool delivered;
};

struct State {
  nvmlReturn_t init_result = NVML_SUCCESS;
  int refcount = 0;
  int gpus = 2;         // GPUs answered (REVEAL_NVML_DOUBLE_GPUS)
  unsigned links = 4;   // active NVLinks of a board-A GPU (REVEAL_NVML_DOUBLE_NVLINKS)
  int lost_after[kMaxGpus] = {-1, -1, -1, -1, -1, -1, -1, -1};  // remaining good samples, -1 = never lost
  bool lost[kMaxGpus] = {};
  Xid xids[kMaxXids] = {};
  int n_xids = 0;
  int timeouts = 0;  // completed polls
  long gpm_seq = 0;
  unsigned long long nvlink_reads[NVML_NVLINK_MAX_LINKS][2] = {};  // gpu0: per link, tx/rx
  unsigned pcie_reads[2] = {};                                      // gpu0: tx, rx
  long ecc_calls = 0;
};

State g_state;
nvmlDevice_st g_devices[kMaxGpus] = {{0}, {1}, {2}, {3}, {4}, {5}, {6}, {7}};
[[maybe_unused]] nvmlEventSet_st g_sets[4] = {};  // unused in the minimal variant
nvmlGpmSample_st g_samples[2 * kMaxGpus + 4] = {};

// The GPU index of a handle, -1 for an unknown one.
int index_of(nvmlDevice_t d) {
  for (int i = 0; i < g_state.gpus; ++i)
    if (d == &g_devices[i]) return i;
  return -1;
}
// The board script a GPU follows: gpu1 is board B, every other GPU board A (gpu0's).
int script_of(int index) { return index == 1 ? 1 : 0; }

// Resolves a handle; answers INVALID_ARGUMENT for unknown ones and GPU_IS_LOST for lost GPUs.
nvmlReturn_t gpu_of(nvmlDevice_t d, int& gpu) {
  gpu = index_of(d);
  if (gpu < 0) return NVML_ERROR_INVALID_ARGUMENT;
  if (g_state.refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  return g_state.lost[gpu] ? NVML_ERROR_GPU_IS_LOST : NVML_SUCCESS;
}

// Declares `gpu_index` (the device's index) and `gpu` (its board script: 0 = A, 1 = B).
#define GPU_OR_RETURN(dev, out_ptr)                               \
  int gpu_index = 0;                                              \
  if (nvmlReturn_t r_ = gpu_of(dev, gpu_index); r_ != NVML_SUCCESS) \
    return r_;                                                    \
  if (!(out_ptr)) return NVML_ERROR_INVALID_ARGUMENT;             \
  const int gpu = script_of(gpu_index);                           \
  (void)gpu;                                                      \
  (void)gpu_index;

void copy_str(char* dst, unsigned len, const char* src) {
  if (!len) return;
  std::strncpy(dst, src, len - 1);
  dst[len - 1] = '\0';
}
}  // namespace

extern "C" {

// --- control -----------------------------------------------------------------------------
void nvml_double_reset() {
  const int refcount = g_state.refcount;
  g_state = State{};
  g_state.refcount = refcount;
}
void nvml_double_set_lost_after(int gpu, int samples) {
  if (gpu < 0 || gpu >= kMaxGpus) return;
  g_state.lost_after[gpu] = samples;
  g_state.lost[gpu] = samples == 0;
}
void nvml_double_add_xid(int gpu, unsigned long long xid,
                                                                int at_poll) {
  if (g_state.n_xids < kMaxXids) g_state.xids[g_state.n_xids++] = {gpu, xid, at_poll, false};
}
void nvml_double_set_init_result(int r) {
  g_state.init_result = r;
}
int nvml_double_init_refcount() { return g_state.refcount; }
long nvml_double_ecc_calls() { return g_state.ecc_calls; }
int nvml_double_gpm_samples_in_use() {
  int n = 0;
  for (const auto& s : g_samples) n += s.used ? 1 : 0;
  return n;
}

// --- required ----------------------------------------------------------------------------
nvmlReturn_t nvmlInit_v2() {
  if (g_state.init_result != NVML_SUCCESS) return g_state.init_result;
  const char* n = std::getenv("REVEAL_NVML_DOUBLE_GPUS");
  const char* l = std::getenv("REVEAL_NVML_DOUBLE_NVLINKS");
  g_state.gpus = n ? std::clamp(std::atoi(n), 1, kMaxGpus) : 2;
  g_state.links = l ? unsigned(std::clamp(std::atoi(l), 0, int(NVML_NVLINK_MAX_LINKS))) : 4;
  ++g_state.refcount;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlShutdown() {
  if (g_state.refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  --g_state.refcount;
  return NVML_SUCCESS;
}
const char* nvmlErrorString(nvmlReturn_t r) {
  switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NO_PERMISSION: return "Insufficient Permissions";
    case NVML_ERROR_DRIVER_NOT_LOADED: return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT: return "Timeout";
    case NVML_ERROR_GPU_IS_LOST: return "GPU is lost";
    default: return "Unknown Error";
  }
}
nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* count) {
  if (g_state.refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  *count = unsigned(g_state.gpus);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device) {
  if (g_state.refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  if (index >= unsigned(g_state.gpus)) return NVML_ERROR_INVALID_ARGUMENT;
  *device = &g_devices[index];
  return NVML_SUCCESS;
}

// --- identity, utilisation, memory (also in the minimal library) -------------------------
nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t dev, char* name, unsigned int len) {
  GPU_OR_RETURN(dev, name);
  copy_str(name, len, gpu == 0 ? "Reveal Double A" : "Reveal Double B");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t dev, char* uuid, unsigned int len) {
  GPU_OR_RETURN(dev, uuid);
  static const char* const kUuids[kMaxGpus] = {
      "GPU-00000000-0000-0000-0000-000000000000", "GPU-11111111-1111-1111-1111-111111111111",
      "GPU-22222222-2222-2222-2222-222222222222", "GPU-33333333-3333-3333-3333-333333333333",
      "GPU-44444444-4444-4444-4444-444444444444", "GPU-55555555-5555-5555-5555-555555555555",
      "GPU-66666666-6666-6666-6666-666666666666", "GPU-77777777-7777-7777-7777-777777777777"};
  copy_str(uuid, len, kUuids[gpu_index]);
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t dev, nvmlUtilization_t* u) {
  int gpu = index_of(dev);
  // One utilisation call per probe sample drives the "lost after n samples" script.
  if (gpu >= 0 && g_state.lost_after[gpu] >= 0 && !g_state.lost[gpu]) {
    if (g_state.lost_after[gpu] == 0)
      g_state.lost[gpu] = true;
    else
      --g_state.lost_after[gpu];
  }
  if (nvmlReturn_t r = gpu_of(dev, gpu); r != NVML_SUCCESS) return r;
  gpu = script_of(gpu);
  if (!u) return NVML_ERROR_INVALID_ARGUMENT;
  *u = gpu == 0 ? nvmlUtilization_t{87, 42} : nvmlUtilization_t{5, 1};
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMemoryInfo(nvmlDevice_t dev, nvmlMemory_t* m) {
  GPU_OR_RETURN(dev, m);
  const unsigned long long gib = 1ull << 30;
  m->total = gpu == 0 ? 80 * gib : 40 * gib;
  m->used = gpu == 0 ? 10 * gib : 1 * gib;
  m->free = m->total - m->used;
  return NVML_SUCCESS;
}

#ifndef NVML_DOUBLE_MINIMAL
// --- clocks, power, thermals -------------------------------------------------------------
nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t dev, int type, unsigned int* mhz) {
  GPU_OR_RETURN(dev, mhz);
  if (type == NVML_CLOCK_SM) *mhz = gpu == 0 ? 1980 : 210;
  else if (type == NVML_CLOCK_MEM) *mhz = gpu == 0 ? 2619 : 405;
  else return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPerformanceState(nvmlDevice_t dev, int* p) {
  GPU_OR_RETURN(dev, p);
  *p = gpu == 0 ? 0 : 8;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t dev, unsigned int* mw) {
  GPU_OR_RETURN(dev, mw);
  *mw = gpu == 0 ? 312345 : 45678;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t dev, unsigned int* mw) {
  GPU_OR_RETURN(dev, mw);
  *mw = gpu == 0 ? 700000 : 300000;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t dev, int sensor, unsigned int* c) {
  GPU_OR_RETURN(dev, c);
  if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
  *c = gpu == 0 ? 64 : 38;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetFanSpeed(nvmlDevice_t dev, unsigned int* pct) {
  GPU_OR_RETURN(dev, pct);
  if (gpu == 0) return NVML_ERROR_NOT_SUPPORTED;  // passively cooled board
  *pct = 55;
  return NVML_SUCCESS;
}
// gpu0: SW power cap + HW thermal slowdown + display clock setting; gpu1: idle.
nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t dev, unsigned long long* r) {
  GPU_OR_RETURN(dev, r);
  *r = gpu == 0 ? 0x144ull : 0x1ull;
  return NVML_SUCCESS;
}

// --- PCIe, NVLink ------------------------------------------------------------------------
nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t dev, int counter, unsigned int* kbs) {
  GPU_OR_RETURN(dev, kbs);
  if (counter == NVML_PCIE_UTIL_TX_BYTES) *kbs = gpu == 0 ? 1000 : 3;
  else if (counter == NVML_PCIE_UTIL_RX_BYTES) *kbs = gpu == 0 ? 2000 : 7;
  else return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t dev, unsigned int* v) {
  GPU_OR_RETURN(dev, v);
  *v = gpu == 0 ? 4 : 3;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t dev, unsigned int* v) {
  GPU_OR_RETURN(dev, v);
  *v = gpu == 0 ? 5 : 4;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t dev, unsigned int* v) {
  GPU_OR_RETURN(dev, v);
  *v = gpu == 0 ? 8 : 16;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t dev, unsigned int* v) {
  GPU_OR_RETURN(dev, v);
  *v = 16;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetNvLinkState(nvmlDevice_t dev, unsigned int link, int* active) {
  GPU_OR_RETURN(dev, active);
  if (gpu == 1) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  *active = link < g_state.links ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}
// Link L, counter C (replay 0, recovery 1, crc_flit 2, crc_data 3) -> 100 * L + C + 1.
nvmlReturn_t nvmlDeviceGetNvLinkErrorCounter(nvmlDevice_t dev, unsigned int link, int counter,
                                             unsigned long long* v) {
  GPU_OR_RETURN(dev, v);
  if (gpu == 1) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= g_state.links || counter < 0 || counter > 3) return NVML_ERROR_INVALID_ARGUMENT;
  *v = 100ull * link + unsigned(counter) + 1;
  return NVML_SUCCESS;
}

// Per-field answers; the call itself succeeds when the arguments are sane.
nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t dev, int count, nvmlFieldValue_t* values) {
  GPU_OR_RETURN(dev, values);
  if (count < 0) return NVML_ERROR_INVALID_ARGUMENT;
  for (int i = 0; i < count; ++i) {
    nvmlFieldValue_t& v = values[i];
    if (v.fieldId == NVML_FI_DEV_PCIE_COUNT_TX_BYTES || v.fieldId == NVML_FI_DEV_PCIE_COUNT_RX_BYTES) {
      if (gpu == 1) {
        v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
        continue;
      }
      const bool ptx = v.fieldId == NVML_FI_DEV_PCIE_COUNT_TX_BYTES;
      const unsigned k = ++g_state.pcie_reads[ptx ? 0 : 1];
      v.nvmlReturn = NVML_SUCCESS;
      v.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
      v.value.ullVal = 0;
      v.value.uiVal = ptx ? 4294967000u + 1000u * k : 3000u * k;  // unsigned: TX wraps
      continue;
    }
    const bool tx = v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX;
    const bool rx = v.fieldId == NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX;
    if (!tx && !rx) {
      v.nvmlReturn = NVML_ERROR_INVALID_ARGUMENT;
      continue;
    }
    if (gpu == 1 || v.scopeId >= g_state.links) {
      v.nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
      continue;
    }
    const unsigned long long k = ++g_state.nvlink_reads[v.scopeId][tx ? 0 : 1];
    v.nvmlReturn = NVML_SUCCESS;
    v.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
    v.value.ullVal = (v.scopeId + 1ull) * (tx ? 1000ull : 2000ull) * k;
  }
  return NVML_SUCCESS;
}

// --- configuration -----------------------------------------------------------------------
nvmlReturn_t nvmlSystemGetDriverVersion(char* s, unsigned int len) {
  if (g_state.refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!s || len < 11) return NVML_ERROR_INSUFFICIENT_SIZE;
  copy_str(s, len, "580.159.03");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlSystemGetNVMLVersion(char* s, unsigned int len) {
  if (g_state.refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  if (!s || len < 14) return NVML_ERROR_INSUFFICIENT_SIZE;
  copy_str(s, len, "13.580.159.03");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* v) {
  if (!v) return NVML_ERROR_INVALID_ARGUMENT;
  *v = 13000;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetVbiosVersion(nvmlDevice_t dev, char* s, unsigned int len) {
  GPU_OR_RETURN(dev, s);
  if (gpu == 1) return NVML_ERROR_NOT_SUPPORTED;
  copy_str(s, len, "96.00.89.00.01");
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t dev, int* mode) {
  GPU_OR_RETURN(dev, mode);
  *mode = gpu == 0 ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t dev, int* current, int* pending) {
  GPU_OR_RETURN(dev, current);
  if (gpu == 1) return NVML_ERROR_NOT_SUPPORTED;
  *current = NVML_FEATURE_ENABLED;
  if (pending) *pending = NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t dev, unsigned int* current, unsigned int* pending) {
  GPU_OR_RETURN(dev, current);
  if (gpu == 1) return NVML_ERROR_NOT_SUPPORTED;
  *current = 0;
  if (pending) *pending = 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetComputeMode(nvmlDevice_t dev, int* mode) {
  GPU_OR_RETURN(dev, mode);
  *mode = gpu == 0 ? NVML_COMPUTEMODE_DEFAULT : NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t dev, unsigned int* mw) {
  GPU_OR_RETURN(dev, mw);
  *mw = gpu == 0 ? 700000 : 312500;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t dev, unsigned int* mw) {
  GPU_OR_RETURN(dev, mw);
  *mw = gpu == 0 ? 700000 : 300000;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetApplicationsClock(nvmlDevice_t dev, int type, unsigned int* mhz) {
  GPU_OR_RETURN(dev, mhz);
  if (gpu == 1) return NVML_ERROR_NOT_SUPPORTED;
  if (type == NVML_CLOCK_SM) *mhz = 1980;
  else if (type == NVML_CLOCK_MEM) *mhz = 2619;
  else return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(nvmlDevice_t dev, int type, unsigned int* mhz) {
  GPU_OR_RETURN(dev, mhz);
  if (gpu == 1) return NVML_ERROR_NOT_SUPPORTED;
  if (type == NVML_CLOCK_SM) *mhz = 1755;
  else if (type == NVML_CLOCK_MEM) *mhz = 2619;
  else return NVML_ERROR_INVALID_ARGUMENT;
  return NVML_SUCCESS;
}

// --- memory errors -----------------------------------------------------------------------
nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t dev, int type, int counter,
                                         unsigned long long* v) {
  ++g_state.ecc_calls;
  GPU_OR_RETURN(dev, v);
  // [gpu][counter: volatile, aggregate][type: corrected, uncorrected]
  static const unsigned long long kEcc[2][2][2] = {{{3, 0}, {17, 1}}, {{0, 0}, {4, 0}}};
  if (type < 0 || type > 1 || counter < 0 || counter > 1) return NVML_ERROR_INVALID_ARGUMENT;
  *v = kEcc[gpu][counter][type];
  return NVML_SUCCESS;
}
// gpu0: 2 pages retired for single-bit errors, 1 for a double-bit error; gpu1: none. The
// double-bit count is answered NVML-style with INSUFFICIENT_SIZE when the buffer is too small.
nvmlReturn_t nvmlDeviceGetRetiredPages(nvmlDevice_t dev, int cause, unsigned int* count,
                                       unsigned long long* addresses) {
  GPU_OR_RETURN(dev, count);
  const unsigned n = gpu == 1 ? 0 : cause == 0 ? 2 : 1;
  if (cause == 1 && *count < n) {
    *count = n;
    return NVML_ERROR_INSUFFICIENT_SIZE;
  }
  for (unsigned i = 0; addresses && i < n && i < *count; ++i) addresses[i] = 0x1000ull * (i + 1);
  *count = n;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceGetRemappedRows(nvmlDevice_t dev, unsigned int* corr, unsigned int* unc,
                                       unsigned int* pending, unsigned int* failed) {
  GPU_OR_RETURN(dev, corr);
  *corr = gpu == 0 ? 5 : 0;
  *unc = gpu == 0 ? 1 : 0;
  *pending = gpu == 0 ? 0 : 1;
  *failed = 0;
  return NVML_SUCCESS;
}

// --- events ------------------------------------------------------------------------------
nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  if (g_state.refcount <= 0) return NVML_ERROR_UNINITIALIZED;
  for (auto& s : g_sets)
    if (!s.used) {
      s = {true, {0, 0}};
      *set = &s;
      return NVML_SUCCESS;
    }
  return NVML_ERROR_UNKNOWN;
}
nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  if (!set) return NVML_ERROR_INVALID_ARGUMENT;
  set->used = false;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t dev, unsigned long long types, nvmlEventSet_t set) {
  GPU_OR_RETURN(dev, set);
  set->mask[gpu_index] |= types;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set, nvmlEventData_t* data, unsigned int timeoutms) {
  if (!set || !data) return NVML_ERROR_INVALID_ARGUMENT;
  const int poll = g_state.timeouts + 1;
  for (int i = 0; i < g_state.n_xids; ++i) {
    Xid& x = g_state.xids[i];
    if (x.delivered || x.at_poll > poll || !(set->mask[x.gpu] & nvmlEventTypeXidCriticalError))
      continue;
    x.delivered = true;
    *data = {&g_devices[x.gpu], nvmlEventTypeXidCriticalError, x.code, 0xFFFFFFFFu, 0xFFFFFFFFu};
    return NVML_SUCCESS;
  }
  ++g_state.timeouts;  // a real NVML would wait timeoutms first; the probe passes 0
  return NVML_ERROR_TIMEOUT;
}

// --- GPM (gpu0 only) ---------------------------------------------------------------------
nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t dev, nvmlGpmSupport_t* s) {
  GPU_OR_RETURN(dev, s);
  if (s->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_INVALID_ARGUMENT;
  s->isSupportedDevice = gpu == 0 ? 1 : 0;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t* sample) {
  for (auto& s : g_samples)
    if (!s.used) {
      s = {true, -1, 0};
      *sample = &s;
      return NVML_SUCCESS;
    }
  return NVML_ERROR_UNKNOWN;
}
nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
  if (!sample || !sample->used) return NVML_ERROR_INVALID_ARGUMENT;
  sample->used = false;
  return NVML_SUCCESS;
}
nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t dev, nvmlGpmSample_t sample) {
  GPU_OR_RETURN(dev, sample);
  if (gpu != 0) return NVML_ERROR_NOT_SUPPORTED;
  sample->gpu = gpu_index;
  sample->seq = ++g_state.gpm_seq;
  return NVML_SUCCESS;
}
// Values per metric; the two samples must be distinct, of one GPU, and in time order.
nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t* q) {
  if (!q || q->version != NVML_GPM_METRICS_GET_VERSION || q->numMetrics > kGpmMetricCapacity ||
      !q->sample1 || !q->sample2 || q->sample1->gpu != q->sample2->gpu || q->sample1->gpu < 0 ||
      q->sample2->seq <= q->sample1->seq)
    return NVML_ERROR_INVALID_ARGUMENT;
  if (g_state.lost[q->sample1->gpu]) return NVML_ERROR_GPU_IS_LOST;
  for (unsigned i = 0; i < q->numMetrics; ++i) {
    auto& m = q->metrics[i];
    m.nvmlReturn = NVML_SUCCESS;
    switch (m.metricId) {
      case NVML_GPM_METRIC_SM_UTIL: m.value = 71.5; break;
      case NVML_GPM_METRIC_SM_OCCUPANCY: m.value = 33.25; break;
      case NVML_GPM_METRIC_ANY_TENSOR_UTIL: m.value = 12.5; break;
      case NVML_GPM_METRIC_DRAM_BW_UTIL: m.value = 48.0; break;
      default: m.nvmlReturn = NVML_ERROR_NOT_SUPPORTED; m.value = 0;
    }
    m.metricInfo = {nullptr, nullptr, nullptr};
  }
  return NVML_SUCCESS;
}
#endif  // NVML_DOUBLE_MINIMAL

}  // extern "C"
