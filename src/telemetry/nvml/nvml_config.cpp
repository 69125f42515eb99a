#include "telemetry/nvml/nvml_config.h"

#include <array>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string_view>

#include "telemetry/nvml/nvml_library.h"

namespace reveal::telemetry::nvml {
namespace {

std::string enabled(int state) { return state == NVML_FEATURE_ENABLED ? "Enabled" : "Disabled"; }

std::string compute_mode_name(int m) {
  switch (m) {
    case NVML_COMPUTEMODE_DEFAULT: return "Default";
    case NVML_COMPUTEMODE_EXCLUSIVE_THREAD: return "Exclusive_Thread";
    case NVML_COMPUTEMODE_PROHIBITED: return "Prohibited";
    case NVML_COMPUTEMODE_EXCLUSIVE_PROCESS: return "Exclusive_Process";
    default: return "Unknown(" + std::to_string(m) + ")";
  }
}

std::string watts(unsigned milliwatts) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3f", milliwatts / 1000.0);
  std::string s = buf;
  while (!s.empty() && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

template <std::size_t N>
bool text(nvmlReturn_t r, const std::array<char, N>& buf) {
  return r == NVML_SUCCESS && buf[0] != '\0';
}

void read_device(const NvmlFunctions& lib, nvmlDevice_t dev, const std::string& p,
                 ConfigSnapshot& out) {
  std::array<char, NVML_DEVICE_NAME_V2_BUFFER_SIZE> name{};
  std::array<char, NVML_DEVICE_UUID_BUFFER_SIZE> uuid{};
  std::array<char, NVML_DEVICE_VBIOS_VERSION_BUFFER_SIZE> vbios{};
  if (lib.DeviceGetName && text(lib.DeviceGetName(dev, name.data(), name.size() - 1), name))
    out[p + "name"] = name.data();
  if (lib.DeviceGetUUID && text(lib.DeviceGetUUID(dev, uuid.data(), uuid.size() - 1), uuid))
    out[p + "uuid"] = uuid.data();
  if (lib.DeviceGetVbiosVersion &&
      text(lib.DeviceGetVbiosVersion(dev, vbios.data(), vbios.size() - 1), vbios))
    out[p + "vbios_version"] = vbios.data();

  int a = 0, b = 0;
  if (lib.DeviceGetPersistenceMode && lib.DeviceGetPersistenceMode(dev, &a) == NVML_SUCCESS)
    out[p + "persistence_mode"] = enabled(a);
  if (lib.DeviceGetEccMode && lib.DeviceGetEccMode(dev, &a, &b) == NVML_SUCCESS) {
    out[p + "ecc_mode.current"] = enabled(a);
    out[p + "ecc_mode.pending"] = enabled(b);
  }
  unsigned u = 0, v = 0;
  if (lib.DeviceGetMigMode && lib.DeviceGetMigMode(dev, &u, &v) == NVML_SUCCESS) {
    out[p + "mig_mode.current"] = enabled(int(u));
    out[p + "mig_mode.pending"] = enabled(int(v));
  }
  if (lib.DeviceGetComputeMode && lib.DeviceGetComputeMode(dev, &a) == NVML_SUCCESS)
    out[p + "compute_mode"] = compute_mode_name(a);

  auto milliwatts = [&](auto fn, const char* key) {
    if (fn && fn(dev, &u) == NVML_SUCCESS) out[p + key] = watts(u);
  };
  milliwatts(lib.DeviceGetPowerManagementLimit, "power_limit_w");
  milliwatts(lib.DeviceGetPowerManagementDefaultLimit, "default_power_limit_w");
  milliwatts(lib.DeviceGetEnforcedPowerLimit, "enforced_power_limit_w");

  auto clock = [&](auto fn, const std::string& key) {
    for (auto [type, field] : {std::pair{NVML_CLOCK_SM, "sm_mhz"}, std::pair{NVML_CLOCK_MEM, "mem_mhz"}})
      if (fn && fn(dev, type, &u) == NVML_SUCCESS) out[p + key + "." + field] = std::to_string(u);
  };
  clock(lib.DeviceGetApplicationsClock, "applications_clocks");
  clock(lib.DeviceGetDefaultApplicationsClock, "default_applications_clocks");

  auto number = [&](auto fn, const char* key) {
    if (fn && fn(dev, &u) == NVML_SUCCESS) out[p + key] = std::to_string(u);
  };
  number(lib.DeviceGetMaxPcieLinkGeneration, "pcie.max_link_gen");
  number(lib.DeviceGetMaxPcieLinkWidth, "pcie.max_link_width");
  number(lib.DeviceGetCurrPcieLinkWidth, "pcie.current_link_width");
}

// The keys of an initialised library.
void read_all(const NvmlFunctions& lib, ConfigSnapshot& out) {
  std::array<char, NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE> buf{};
  if (lib.SystemGetDriverVersion && text(lib.SystemGetDriverVersion(buf.data(), buf.size() - 1), buf))
    out["gpu.driver_version"] = buf.data();
  buf.fill('\0');
  if (lib.SystemGetNVMLVersion && text(lib.SystemGetNVMLVersion(buf.data(), buf.size() - 1), buf))
    out["gpu.nvml_version"] = buf.data();
  int cuda = 0;
  if (lib.SystemGetCudaDriverVersion && lib.SystemGetCudaDriverVersion(&cuda) == NVML_SUCCESS && cuda > 0)
    out["gpu.cuda_driver_version"] = std::to_string(cuda / 1000) + "." + std::to_string(cuda % 1000 / 10);

  unsigned count = 0;
  if (lib.DeviceGetCount(&count) == NVML_SUCCESS) {
    out["gpu.count"] = std::to_string(count);
    for (unsigned i = 0; i < count; ++i) {
      nvmlDevice_t dev = nullptr;
      if (lib.DeviceGetHandleByIndex(i, &dev) != NVML_SUCCESS) continue;
      read_device(lib, dev, "gpu." + std::to_string(i) + ".", out);
    }
  }
}

}  // namespace

void read_nvml_config(const std::string& library_path, ConfigSnapshot& out) {
  NvmlLibrary lib;
  if (!lib.load(library_path, nullptr)) return;
  if (lib.Init() != NVML_SUCCESS) return;
  read_all(lib, out);
  lib.Shutdown();
}

void read_nvml_config_cached(const std::string& library_path, ConfigSnapshot& out) {
  static std::mutex mu;
  // Never destroyed: NVML stays initialised until the process exits.
  static auto* sessions = new std::map<std::string, std::unique_ptr<NvmlLibrary>>();
  std::lock_guard lock(mu);
  auto& lib = (*sessions)[library_path];
  if (!lib) {
    auto fresh = std::make_unique<NvmlLibrary>();
    if (!fresh->load(library_path, nullptr) || fresh->Init() != NVML_SUCCESS) return;
    lib = std::move(fresh);
  }
  read_all(*lib, out);
}

}  // namespace reveal::telemetry::nvml
