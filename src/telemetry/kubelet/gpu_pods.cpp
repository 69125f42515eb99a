// GPUs joined to the pods holding them: see reveal/gpu_pods.h.
#include "reveal/gpu_pods.h"

#include <algorithm>
#include <charconv>
#include <string_view>
#include <unordered_map>

namespace reveal {

std::vector<GpuPod> gpu_pods(const PodDevices& devices, const ConfigSnapshot& config) {
  // UUID -> NVML index, from "gpu.<N>.uuid".
  std::unordered_map<std::string, std::size_t> by_uuid;
  for (const auto& [key, value] : config) {
    const std::string_view k = key;
    if (k.size() < 10 || k.substr(0, 4) != "gpu." || k.substr(k.size() - 5) != ".uuid" || value.empty()) continue;
    const std::string_view n = k.substr(4, k.size() - 9);
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
    if (ec != std::errc() || end != n.data() + n.size()) continue;
    by_uuid.emplace(value, index);
  }
  std::vector<GpuPod> out;
  if (by_uuid.empty()) return out;
  for (const DeviceAssignment& d : devices.devices) {
    std::string_view id = d.device_id;
    if (const auto sep = id.find("::"); sep != std::string_view::npos) id = id.substr(0, sep);  // a replica
    const auto it = by_uuid.find(std::string(id));
    if (it == by_uuid.end()) continue;
    out.push_back({it->second, "gpu" + std::to_string(it->second), it->first, d.ns, d.pod, d.container, d.resource});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace reveal
