// The pods on an incident's GPUs: see attach_gpu_pods() in reveal/tenants.h.
#include <algorithm>
#include <string_view>

#include "reveal/tenants.h"

namespace reveal {

void attach_gpu_pods(Incident& incident, const std::vector<GpuPod>& holders) {
  incident.gpu_pods.clear();
  if (holders.empty()) return;
  const auto named = [&incident](std::string_view gpu) {
    if (incident.focus == gpu) return true;
    return std::any_of(incident.top.begin(), incident.top.end(),
                       [gpu](const ChannelEvidence& c) { return channel_label(c.name) == gpu; });
  };
  for (const GpuPod& p : holders)
    if (named(p.gpu)) incident.gpu_pods.push_back(p);
}

}  // namespace reveal
