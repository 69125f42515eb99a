// The pods on an incident's GPUs: see attach_gpu_pods() in reveal/tenants.h.
#include <algorithm>
#include <string_view>

#include "reveal/tenants.h"

namespace reveal {
namespace {

// The GPUs ("gpu0") among the incident's focus and strongest channels' entities, in order, once.
std::vector<std::string> incident_gpus(const Incident& incident) {
  std::vector<std::string> gpus;
  const auto add = [&gpus](std::string_view e) {
    if (e.size() > 3 && e.substr(0, 3) == "gpu" && std::find(gpus.begin(), gpus.end(), e) == gpus.end())
      gpus.emplace_back(e);
  };
  add(incident.focus);
  for (const auto& c : incident.top) add(channel_label(c.name));
  return gpus;
}

}  // namespace

void attach_gpu_pods(Incident& incident, const GpuPodsHistory& history) {
  incident.gpu_pods.clear();
  if (history.empty()) return;
  for (const std::string& gpu : incident_gpus(incident))
    for (GpuPod& p : history.of(gpu, incident.start_unix_ns)) incident.gpu_pods.push_back(std::move(p));
  std::sort(incident.gpu_pods.begin(), incident.gpu_pods.end());
}

}  // namespace reveal
