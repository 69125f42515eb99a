// The small part of the NVML C API that the nvml probe uses, declared here so that Reveal
// builds without any NVIDIA package installed; the library itself is loaded at run time
// (see nvml_library.h).
//
// Every type, constant and signature below mirrors the public NVML API as documented in the
// NVML API Reference (and declared in NVIDIA's nvml.h); these are our own declarations of
// that ABI, not a copy of the header. Layouts that matter (structs passed by pointer) follow
// the documented field order exactly. Only the subset we call is declared; enum types are
// plain ints/unsigned of the same size as the C enums.
//
// Units as NVML documents them: clocks MHz, power mW, temperature °C, PCIe throughput KB/s,
// memory bytes, utilisation and fan speed %.
#pragma once

#include <cstdint>

namespace reveal::telemetry::nvml {

// --- Basic types ------------------------------------------------------------------------
using nvmlReturn_t = int;  // enum nvmlReturn_enum
struct nvmlDevice_st;
using nvmlDevice_t = nvmlDevice_st*;  // opaque handle
struct nvmlEventSet_st;
using nvmlEventSet_t = nvmlEventSet_st*;  // opaque handle
struct nvmlGpmSample_st;
using nvmlGpmSample_t = nvmlGpmSample_st*;  // opaque handle

// nvmlReturn_t values used here.
inline constexpr nvmlReturn_t NVML_SUCCESS = 0;
inline constexpr nvmlReturn_t NVML_ERROR_UNINITIALIZED = 1;
inline constexpr nvmlReturn_t NVML_ERROR_INVALID_ARGUMENT = 2;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_SUPPORTED = 3;
inline constexpr nvmlReturn_t NVML_ERROR_NO_PERMISSION = 4;
inline constexpr nvmlReturn_t NVML_ERROR_NOT_FOUND = 6;
inline constexpr nvmlReturn_t NVML_ERROR_INSUFFICIENT_SIZE = 7;
inline constexpr nvmlReturn_t NVML_ERROR_DRIVER_NOT_LOADED = 9;
inline constexpr nvmlReturn_t NVML_ERROR_TIMEOUT = 10;
inline constexpr nvmlReturn_t NVML_ERROR_FUNCTION_NOT_FOUND = 13;
inline constexpr nvmlReturn_t NVML_ERROR_GPU_IS_LOST = 15;
inline constexpr nvmlReturn_t NVML_ERROR_NO_DATA = 21;
inline constexpr nvmlReturn_t NVML_ERROR_UNKNOWN = 999;

// nvmlEnableState_t
inline constexpr int NVML_FEATURE_DISABLED = 0;
inline constexpr int NVML_FEATURE_ENABLED = 1;

// nvmlClockType_t
inline constexpr int NVML_CLOCK_SM = 1;
inline constexpr int NVML_CLOCK_MEM = 2;

// nvmlTemperatureSensors_t
inline constexpr int NVML_TEMPERATURE_GPU = 0;

// nvmlPcieUtilCounter_t
inline constexpr int NVML_PCIE_UTIL_TX_BYTES = 0;
inline constexpr int NVML_PCIE_UTIL_RX_BYTES = 1;

// nvmlNvLinkErrorCounter_t
inline constexpr int NVML_NVLINK_ERROR_DL_REPLAY = 0;
inline constexpr int NVML_NVLINK_ERROR_DL_RECOVERY = 1;
inline constexpr int NVML_NVLINK_ERROR_DL_CRC_FLIT = 2;
inline constexpr int NVML_NVLINK_ERROR_DL_CRC_DATA = 3;
inline constexpr unsigned NVML_NVLINK_MAX_LINKS = 18;

// nvmlMemoryErrorType_t and nvmlEccCounterType_t
inline constexpr int NVML_MEMORY_ERROR_TYPE_CORRECTED = 0;    // single-bit
inline constexpr int NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1;  // double-bit
inline constexpr int NVML_VOLATILE_ECC = 0;                   // since the last driver load
inline constexpr int NVML_AGGREGATE_ECC = 1;                  // over the board's life

// nvmlPageRetirementCause_t
inline constexpr int NVML_PAGE_RETIREMENT_CAUSE_MULTIPLE_SINGLE_BIT_ECC_ERRORS = 0;
inline constexpr int NVML_PAGE_RETIREMENT_CAUSE_DOUBLE_BIT_ECC_ERROR = 1;

// nvmlPstates_t: 0 (P0, maximum performance) .. 15; 32 = unknown.
inline constexpr int NVML_PSTATE_UNKNOWN = 32;

// Clock throttle (since R535 also called "clocks event") reason bits.
inline constexpr std::uint64_t nvmlClocksThrottleReasonGpuIdle = 0x1;
inline constexpr std::uint64_t nvmlClocksThrottleReasonApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t nvmlClocksThrottleReasonSwPowerCap = 0x4;
inline constexpr std::uint64_t nvmlClocksThrottleReasonHwSlowdown = 0x8;
inline constexpr std::uint64_t nvmlClocksThrottleReasonSyncBoost = 0x10;
inline constexpr std::uint64_t nvmlClocksThrottleReasonSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t nvmlClocksThrottleReasonHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t nvmlClocksThrottleReasonHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t nvmlClocksThrottleReasonDisplayClockSetting = 0x100;

// Event types (bitmask).
inline constexpr std::uint64_t nvmlEventTypeXidCriticalError = 0x8;

// GPM metric ids (nvmlGpmMetricId_t) and struct versions.
inline constexpr unsigned NVML_GPM_METRIC_SM_UTIL = 2;
inline constexpr unsigned NVML_GPM_METRIC_SM_OCCUPANCY = 3;
inline constexpr unsigned NVML_GPM_METRIC_ANY_TENSOR_UTIL = 5;
inline constexpr unsigned NVML_GPM_METRIC_DRAM_BW_UTIL = 10;
inline constexpr unsigned NVML_GPM_METRICS_GET_VERSION = 1;
inline constexpr unsigned NVML_GPM_SUPPORT_VERSION = 1;
// Capacity of nvmlGpmMetricsGet_t::metrics. NVML grew its NVML_GPM_METRIC_MAX across releases
// (98, then more; 333 in recent headers) without changing the v1 layout before the array; the
// library reads and writes only the first numMetrics entries, so any capacity >= numMetrics
// is valid. We use the largest value seen so far.
inline constexpr unsigned kGpmMetricCapacity = 333;

// nvmlComputeMode_t
inline constexpr int NVML_COMPUTEMODE_DEFAULT = 0;
inline constexpr int NVML_COMPUTEMODE_EXCLUSIVE_THREAD = 1;  // deprecated by NVIDIA
inline constexpr int NVML_COMPUTEMODE_PROHIBITED = 2;
inline constexpr int NVML_COMPUTEMODE_EXCLUSIVE_PROCESS = 3;

// Field ids for nvmlDeviceGetFieldValues (scopeId = NVLink link): cumulative NVLink data
// (payload, no protocol overhead) traffic of one link, in KiB.
inline constexpr unsigned NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX = 138;
inline constexpr unsigned NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX = 139;

// Field ids (scopeId unused): cumulative PCIe bytes moved by the GPU (NVML R535+, Hopper
// and later boards), a cheap alternative to nvmlDeviceGetPcieThroughput, which samples for
// ~20 ms inside the call (measured on an H200: ~0.85 ms of CPU per call, docs/BENCHMARKS.md).
inline constexpr unsigned NVML_FI_DEV_PCIE_COUNT_TX_BYTES = 197;
inline constexpr unsigned NVML_FI_DEV_PCIE_COUNT_RX_BYTES = 198;

// nvmlValueType_t
inline constexpr int NVML_VALUE_TYPE_DOUBLE = 0;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_INT = 1;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG = 2;
inline constexpr int NVML_VALUE_TYPE_UNSIGNED_LONG_LONG = 3;
inline constexpr int NVML_VALUE_TYPE_SIGNED_LONG_LONG = 4;
inline constexpr int NVML_VALUE_TYPE_SIGNED_INT = 5;

inline constexpr unsigned NVML_DEVICE_UUID_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE = 80;
inline constexpr unsigned NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE = 32;
inline constexpr unsigned NVML_DEVICE_NAME_V2_BUFFER_SIZE = 96;

// --- Structs ----------------------------------------------------------------------------
struct nvmlUtilization_t {
  unsigned int gpu;     // % of time a kernel was executing over the last sample period
  unsigned int memory;  // % of time device memory was read or written
};

struct nvmlMemory_t {  // v1 layout (nvmlDeviceGetMemoryInfo)
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

struct nvmlEventData_t {
  nvmlDevice_t device;
  unsigned long long eventType;
  unsigned long long eventData;  // the XID code for nvmlEventTypeXidCriticalError
  unsigned int gpuInstanceId;
  unsigned int computeInstanceId;
};

union nvmlValue_t {
  double dVal;
  unsigned int uiVal;
  unsigned long ulVal;
  unsigned long long ullVal;
  long long sllVal;
  int siVal;
};

struct nvmlFieldValue_t {
  unsigned int fieldId;     // in: NVML_FI_*
  unsigned int scopeId;     // in: e.g. the NVLink link
  long long timestamp;      // out: CPU time of the value, us since 1970
  long long latencyUsec;    // out
  int valueType;            // out: nvmlValueType_t
  nvmlReturn_t nvmlReturn;  // out: value valid iff NVML_SUCCESS
  nvmlValue_t value;        // out
};

struct nvmlGpmSupport_t {
  unsigned int version;  // in: NVML_GPM_SUPPORT_VERSION
  unsigned int isSupportedDevice;
};

struct nvmlGpmMetric_t {
  unsigned int metricId;    // in
  nvmlReturn_t nvmlReturn;  // out: value valid iff NVML_SUCCESS
  double value;             // out
  struct {
    char* shortName;
    char* longName;
    char* unit;
  } metricInfo;  // out, may be null
};

struct nvmlGpmMetricsGet_t {
  unsigned int version;     // in: NVML_GPM_METRICS_GET_VERSION
  unsigned int numMetrics;  // in
  nvmlGpmSample_t sample1;  // in: the earlier sample
  nvmlGpmSample_t sample2;  // in: the later sample
  nvmlGpmMetric_t metrics[kGpmMetricCapacity];
};

// --- Function signatures (all extern "C" in the library) ---------------------------------
extern "C" {
using nvmlInit_v2_fn = nvmlReturn_t (*)();
using nvmlShutdown_fn = nvmlReturn_t (*)();
using nvmlErrorString_fn = const char* (*)(nvmlReturn_t);
using nvmlDeviceGetCount_v2_fn = nvmlReturn_t (*)(unsigned int*);
using nvmlDeviceGetHandleByIndex_v2_fn = nvmlReturn_t (*)(unsigned int, nvmlDevice_t*);
using nvmlDeviceGetName_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetUUID_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);
using nvmlDeviceGetUtilizationRates_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlUtilization_t*);
using nvmlDeviceGetMemoryInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
using nvmlDeviceGetClockInfo_fn = nvmlReturn_t (*)(nvmlDevice_t, int /*clockType*/, unsigned int*);
using nvmlDeviceGetPowerUsage_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetEnforcedPowerLimit_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetTemperature_fn = nvmlReturn_t (*)(nvmlDevice_t, int /*sensor*/, unsigned int*);
using nvmlDeviceGetFanSpeed_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);
using nvmlDeviceGetPcieThroughput_fn = nvmlReturn_t (*)(nvmlDevice_t, int /*counter*/, unsigned int*);
using nvmlDeviceGetPcieLink_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int*);  // gen / width
using nvmlDeviceGetNvLinkState_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int, int* /*enable*/);
using nvmlDeviceGetNvLinkErrorCounter_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int /*link*/,
                                                            int /*counter*/, unsigned long long*);
using nvmlDeviceGetTotalEccErrors_fn = nvmlReturn_t (*)(nvmlDevice_t, int /*errorType*/,
                                                        int /*counterType*/, unsigned long long*);
using nvmlDeviceGetRetiredPages_fn = nvmlReturn_t (*)(nvmlDevice_t, int /*cause*/,
                                                      unsigned int* /*pageCount*/,
                                                      unsigned long long* /*addresses*/);
using nvmlDeviceGetRemappedRows_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int* /*corrRows*/,
                                                      unsigned int* /*uncRows*/,
                                                      unsigned int* /*isPending*/,
                                                      unsigned int* /*failureOccurred*/);
using nvmlDeviceGetCurrentClocksThrottleReasons_fn = nvmlReturn_t (*)(nvmlDevice_t,
                                                                      unsigned long long*);
using nvmlDeviceGetPerformanceState_fn = nvmlReturn_t (*)(nvmlDevice_t, int* /*pState*/);
using nvmlDeviceGetFieldValues_fn = nvmlReturn_t (*)(nvmlDevice_t, int /*valuesCount*/,
                                                    nvmlFieldValue_t*);
// Configuration reads (the nvml config source, nvml_config.h).
using nvmlSystemGetString_fn = nvmlReturn_t (*)(char*, unsigned int);  // driver / NVML version
using nvmlSystemGetCudaDriverVersion_fn = nvmlReturn_t (*)(int*);      // e.g. 12040 = 12.4
using nvmlDeviceGetString_fn = nvmlReturn_t (*)(nvmlDevice_t, char*, unsigned int);  // VBIOS
using nvmlDeviceGetEnableState_fn = nvmlReturn_t (*)(nvmlDevice_t, int* /*nvmlEnableState_t*/);
using nvmlDeviceGetModePair_fn = nvmlReturn_t (*)(nvmlDevice_t, int* /*current*/, int* /*pending*/);
using nvmlDeviceGetUintPair_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned int* /*current*/,
                                                  unsigned int* /*pending*/);  // MIG mode
using nvmlDeviceGetComputeMode_fn = nvmlReturn_t (*)(nvmlDevice_t, int* /*nvmlComputeMode_t*/);
using nvmlEventSetCreate_fn = nvmlReturn_t (*)(nvmlEventSet_t*);
using nvmlEventSetFree_fn = nvmlReturn_t (*)(nvmlEventSet_t);
using nvmlDeviceRegisterEvents_fn = nvmlReturn_t (*)(nvmlDevice_t, unsigned long long,
                                                     nvmlEventSet_t);
using nvmlEventSetWait_v2_fn = nvmlReturn_t (*)(nvmlEventSet_t, nvmlEventData_t*,
                                                unsigned int /*timeoutms*/);
using nvmlGpmQueryDeviceSupport_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSupport_t*);
using nvmlGpmSampleAlloc_fn = nvmlReturn_t (*)(nvmlGpmSample_t*);
using nvmlGpmSampleFree_fn = nvmlReturn_t (*)(nvmlGpmSample_t);
using nvmlGpmSampleGet_fn = nvmlReturn_t (*)(nvmlDevice_t, nvmlGpmSample_t);
using nvmlGpmMetricsGet_fn = nvmlReturn_t (*)(nvmlGpmMetricsGet_t*);
}

}  // namespace reveal::telemetry::nvml
