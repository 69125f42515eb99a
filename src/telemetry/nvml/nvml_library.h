// NvmlLibrary: libnvidia-ml loaded with dlopen and its entry points resolved with dlsym, so
// that Reveal links and runs on hosts without the NVIDIA driver (the probe then reports
// itself unavailable).
//
// Contract:
//  * load(path) dlopens `path` (RTLD_NOW | RTLD_LOCAL) and resolves every symbol below. The
//    required ones (nvmlInit_v2, nvmlShutdown, nvmlErrorString, nvmlDeviceGetCount_v2,
//    nvmlDeviceGetHandleByIndex_v2) must all be present, otherwise load() fails naming the
//    first missing one. Every other pointer is optional: null when the library lacks it
//    (older drivers), which disables only the channels that need it.
//  * Failure reasons are one line, prefixed "NVML: ":
//      "NVML: library not found (libnvidia-ml.so.1)"
//      "NVML: cannot load <path>: <dlerror>"        (present but not loadable)
//      "NVML: symbol nvmlInit_v2 not found in <path>"
//  * The destructor dlcloses. It does not call nvmlShutdown: initialisation is the caller's
//    (see NvmlProbe), which must shut down before the library goes away.
#pragma once

#include <string>

#include "telemetry/nvml/nvml_api.h"

namespace reveal::telemetry::nvml {

// The library name of the NVIDIA driver's NVML, as installed by every driver package.
inline constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";

// $REVEAL_NVML_LIBRARY when set and non-empty, else kDefaultLibrary.
std::string default_library_path();

// The entry points; null until resolved.
struct NvmlFunctions {
  // Required.
  nvmlInit_v2_fn Init = nullptr;
  nvmlShutdown_fn Shutdown = nullptr;
  nvmlErrorString_fn ErrorString = nullptr;
  nvmlDeviceGetCount_v2_fn DeviceGetCount = nullptr;
  nvmlDeviceGetHandleByIndex_v2_fn DeviceGetHandleByIndex = nullptr;
  // Optional.
  nvmlDeviceGetName_fn DeviceGetName = nullptr;
  nvmlDeviceGetUUID_fn DeviceGetUUID = nullptr;
  nvmlDeviceGetUtilizationRates_fn DeviceGetUtilizationRates = nullptr;
  nvmlDeviceGetMemoryInfo_fn DeviceGetMemoryInfo = nullptr;
  nvmlDeviceGetClockInfo_fn DeviceGetClockInfo = nullptr;
  nvmlDeviceGetPowerUsage_fn DeviceGetPowerUsage = nullptr;
  nvmlDeviceGetEnforcedPowerLimit_fn DeviceGetEnforcedPowerLimit = nullptr;
  nvmlDeviceGetTemperature_fn DeviceGetTemperature = nullptr;
  nvmlDeviceGetFanSpeed_fn DeviceGetFanSpeed = nullptr;
  nvmlDeviceGetPcieThroughput_fn DeviceGetPcieThroughput = nullptr;
  nvmlDeviceGetPcieLink_fn DeviceGetCurrPcieLinkGeneration = nullptr;
  nvmlDeviceGetPcieLink_fn DeviceGetMaxPcieLinkGeneration = nullptr;
  nvmlDeviceGetPcieLink_fn DeviceGetCurrPcieLinkWidth = nullptr;
  nvmlDeviceGetPcieLink_fn DeviceGetMaxPcieLinkWidth = nullptr;
  nvmlDeviceGetNvLinkState_fn DeviceGetNvLinkState = nullptr;
  nvmlDeviceGetNvLinkErrorCounter_fn DeviceGetNvLinkErrorCounter = nullptr;
  nvmlDeviceGetTotalEccErrors_fn DeviceGetTotalEccErrors = nullptr;
  nvmlDeviceGetRetiredPages_fn DeviceGetRetiredPages = nullptr;
  nvmlDeviceGetRemappedRows_fn DeviceGetRemappedRows = nullptr;
  // nvmlDeviceGetCurrentClocksThrottleReasons, or its newer name
  // nvmlDeviceGetCurrentClocksEventReasons (same signature and bits) when only that exists.
  nvmlDeviceGetCurrentClocksThrottleReasons_fn DeviceGetCurrentClocksThrottleReasons = nullptr;
  nvmlDeviceGetPerformanceState_fn DeviceGetPerformanceState = nullptr;
  nvmlEventSetCreate_fn EventSetCreate = nullptr;
  nvmlEventSetFree_fn EventSetFree = nullptr;
  nvmlDeviceRegisterEvents_fn DeviceRegisterEvents = nullptr;
  nvmlEventSetWait_v2_fn EventSetWait = nullptr;
  nvmlGpmQueryDeviceSupport_fn GpmQueryDeviceSupport = nullptr;
  nvmlGpmSampleAlloc_fn GpmSampleAlloc = nullptr;
  nvmlGpmSampleFree_fn GpmSampleFree = nullptr;
  nvmlGpmSampleGet_fn GpmSampleGet = nullptr;
  nvmlGpmMetricsGet_fn GpmMetricsGet = nullptr;
  nvmlDeviceGetFieldValues_fn DeviceGetFieldValues = nullptr;
  // Optional, configuration only (nvml_config.h).
  nvmlSystemGetString_fn SystemGetDriverVersion = nullptr;
  nvmlSystemGetString_fn SystemGetNVMLVersion = nullptr;
  nvmlSystemGetCudaDriverVersion_fn SystemGetCudaDriverVersion = nullptr;  // _v2
  nvmlDeviceGetString_fn DeviceGetVbiosVersion = nullptr;
  nvmlDeviceGetEnableState_fn DeviceGetPersistenceMode = nullptr;
  nvmlDeviceGetModePair_fn DeviceGetEccMode = nullptr;
  nvmlDeviceGetUintPair_fn DeviceGetMigMode = nullptr;
  nvmlDeviceGetComputeMode_fn DeviceGetComputeMode = nullptr;
  nvmlDeviceGetPowerUsage_fn DeviceGetPowerManagementLimit = nullptr;         // mW
  nvmlDeviceGetPowerUsage_fn DeviceGetPowerManagementDefaultLimit = nullptr;  // mW
  nvmlDeviceGetClockInfo_fn DeviceGetApplicationsClock = nullptr;             // MHz
  nvmlDeviceGetClockInfo_fn DeviceGetDefaultApplicationsClock = nullptr;      // MHz
};

class NvmlLibrary : public NvmlFunctions {
 public:
  NvmlLibrary() = default;
  NvmlLibrary(const NvmlLibrary&) = delete;
  NvmlLibrary& operator=(const NvmlLibrary&) = delete;
  ~NvmlLibrary() { unload(); }

  // Returns false and sets `error` (see contract) on failure; the object is then unloaded.
  bool load(const std::string& path, std::string* error);
  void unload();
  bool loaded() const { return handle_ != nullptr; }

  // The text of an error code, via nvmlErrorString; "NVML error <n>" if that gives nothing.
  std::string error_string(nvmlReturn_t r) const;

 private:
  void* handle_ = nullptr;
};

}  // namespace reveal::telemetry::nvml
