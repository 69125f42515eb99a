#include "reveal/host_config.h"
#include "telemetry/nvml/nvml_config.h"
#include "telemetry/nvml/nvml_probe.h"
#include "telemetry/registry_parts.h"

namespace reveal::telemetry {

void add_nvml_probes(std::vector<ProbeFactory>& out) {
  out.push_back(registry_entry<NvmlProbe>("nvml"));
  // GPU settings join the configuration snapshot. Like the probe, they come from the live
  // driver whatever --root says (a containerised agent with the host's /proc under --root
  // still sees the host's GPUs through NVML).
  register_config_source("nvml", [](const std::filesystem::path&, ConfigSnapshot& snap) {
    nvml::read_nvml_config_cached(nvml::default_library_path(), snap);
  });
}

}  // namespace reveal::telemetry
