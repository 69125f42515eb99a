#include "telemetry/nvml/nvml_library.h"

#include <dlfcn.h>

#include <cstdlib>
#include <cstring>

namespace reveal::telemetry::nvml {
namespace {
template <class Fn>
void resolve(void* handle, const char* name, Fn& fn) {
  fn = reinterpret_cast<Fn>(::dlsym(handle, name));
}
}  // namespace

std::string default_library_path() {
  const char* env = std::getenv("REVEAL_NVML_LIBRARY");
  return env && *env ? env : kDefaultLibrary;
}

bool NvmlLibrary::load(const std::string& path, std::string* error) {
  unload();
  ::dlerror();
  handle_ = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle_) {
    const char* why = ::dlerror();
    const std::string msg = why ? why : "";
    if (error) {
      if (msg.empty() || msg.find("No such file") != std::string::npos)
        *error = "NVML: library not found (" + path + ")";
      else
        *error = "NVML: cannot load " + path + ": " + msg;
    }
    return false;
  }

  resolve(handle_, "nvmlInit_v2", Init);
  resolve(handle_, "nvmlShutdown", Shutdown);
  resolve(handle_, "nvmlErrorString", ErrorString);
  resolve(handle_, "nvmlDeviceGetCount_v2", DeviceGetCount);
  resolve(handle_, "nvmlDeviceGetHandleByIndex_v2", DeviceGetHandleByIndex);
  const char* missing = !Init                     ? "nvmlInit_v2"
                        : !Shutdown               ? "nvmlShutdown"
                        : !ErrorString            ? "nvmlErrorString"
                        : !DeviceGetCount         ? "nvmlDeviceGetCount_v2"
                        : !DeviceGetHandleByIndex ? "nvmlDeviceGetHandleByIndex_v2"
                                                  : nullptr;
  if (missing) {
    if (error) *error = std::string("NVML: symbol ") + missing + " not found in " + path;
    unload();
    return false;
  }

  resolve(handle_, "nvmlDeviceGetName", DeviceGetName);
  resolve(handle_, "nvmlDeviceGetUUID", DeviceGetUUID);
  resolve(handle_, "nvmlDeviceGetUtilizationRates", DeviceGetUtilizationRates);
  resolve(handle_, "nvmlDeviceGetMemoryInfo", DeviceGetMemoryInfo);
  resolve(handle_, "nvmlDeviceGetClockInfo", DeviceGetClockInfo);
  resolve(handle_, "nvmlDeviceGetPowerUsage", DeviceGetPowerUsage);
  resolve(handle_, "nvmlDeviceGetEnforcedPowerLimit", DeviceGetEnforcedPowerLimit);
  resolve(handle_, "nvmlDeviceGetTemperature", DeviceGetTemperature);
  resolve(handle_, "nvmlDeviceGetFanSpeed", DeviceGetFanSpeed);
  resolve(handle_, "nvmlDeviceGetPcieThroughput", DeviceGetPcieThroughput);
  resolve(handle_, "nvmlDeviceGetCurrPcieLinkGeneration", DeviceGetCurrPcieLinkGeneration);
  resolve(handle_, "nvmlDeviceGetMaxPcieLinkGeneration", DeviceGetMaxPcieLinkGeneration);
  resolve(handle_, "nvmlDeviceGetCurrPcieLinkWidth", DeviceGetCurrPcieLinkWidth);
  resolve(handle_, "nvmlDeviceGetMaxPcieLinkWidth", DeviceGetMaxPcieLinkWidth);
  resolve(handle_, "nvmlDeviceGetNvLinkState", DeviceGetNvLinkState);
  resolve(handle_, "nvmlDeviceGetNvLinkErrorCounter", DeviceGetNvLinkErrorCounter);
  resolve(handle_, "nvmlDeviceGetTotalEccErrors", DeviceGetTotalEccErrors);
  resolve(handle_, "nvmlDeviceGetRetiredPages", DeviceGetRetiredPages);
  resolve(handle_, "nvmlDeviceGetRemappedRows", DeviceGetRemappedRows);
  resolve(handle_, "nvmlDeviceGetCurrentClocksThrottleReasons",
          DeviceGetCurrentClocksThrottleReasons);
  if (!DeviceGetCurrentClocksThrottleReasons)
    resolve(handle_, "nvmlDeviceGetCurrentClocksEventReasons",
            DeviceGetCurrentClocksThrottleReasons);
  resolve(handle_, "nvmlDeviceGetPerformanceState", DeviceGetPerformanceState);
  resolve(handle_, "nvmlEventSetCreate", EventSetCreate);
  resolve(handle_, "nvmlEventSetFree", EventSetFree);
  resolve(handle_, "nvmlDeviceRegisterEvents", DeviceRegisterEvents);
  resolve(handle_, "nvmlEventSetWait_v2", EventSetWait);
  resolve(handle_, "nvmlGpmQueryDeviceSupport", GpmQueryDeviceSupport);
  resolve(handle_, "nvmlGpmSampleAlloc", GpmSampleAlloc);
  resolve(handle_, "nvmlGpmSampleFree", GpmSampleFree);
  resolve(handle_, "nvmlGpmSampleGet", GpmSampleGet);
  resolve(handle_, "nvmlGpmMetricsGet", GpmMetricsGet);
  resolve(handle_, "nvmlDeviceGetFieldValues", DeviceGetFieldValues);
  resolve(handle_, "nvmlSystemGetDriverVersion", SystemGetDriverVersion);
  resolve(handle_, "nvmlSystemGetNVMLVersion", SystemGetNVMLVersion);
  resolve(handle_, "nvmlSystemGetCudaDriverVersion_v2", SystemGetCudaDriverVersion);
  resolve(handle_, "nvmlDeviceGetVbiosVersion", DeviceGetVbiosVersion);
  resolve(handle_, "nvmlDeviceGetPersistenceMode", DeviceGetPersistenceMode);
  resolve(handle_, "nvmlDeviceGetEccMode", DeviceGetEccMode);
  resolve(handle_, "nvmlDeviceGetMigMode", DeviceGetMigMode);
  resolve(handle_, "nvmlDeviceGetComputeMode", DeviceGetComputeMode);
  resolve(handle_, "nvmlDeviceGetPowerManagementLimit", DeviceGetPowerManagementLimit);
  resolve(handle_, "nvmlDeviceGetPowerManagementDefaultLimit", DeviceGetPowerManagementDefaultLimit);
  resolve(handle_, "nvmlDeviceGetApplicationsClock", DeviceGetApplicationsClock);
  resolve(handle_, "nvmlDeviceGetDefaultApplicationsClock", DeviceGetDefaultApplicationsClock);
  return true;
}

void NvmlLibrary::unload() {
  if (handle_) ::dlclose(handle_);
  handle_ = nullptr;
  static_cast<NvmlFunctions&>(*this) = NvmlFunctions{};
}

std::string NvmlLibrary::error_string(nvmlReturn_t r) const {
  const char* s = ErrorString ? ErrorString(r) : nullptr;
  if (s && *s) return s;
  return "NVML error " + std::to_string(r);
}

}  // namespace reveal::telemetry::nvml
