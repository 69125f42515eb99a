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

namespace {

constexpr std::size_t kMaxEventName = 253;  // a DNS subdomain's length: Kubernetes names fit

// A name as the event writes it: ' ', '=', '/' (but in the resource, the last field) and bytes
// outside printable ASCII as '_', cut.
std::string event_name(std::string_view v, bool slash_ok = false) {
  std::string out(v.substr(0, kMaxEventName));
  for (char& c : out)
    if (c <= ' ' || c > '~' || c == '=' || (c == '/' && !slash_ok)) c = '_';
  return out.empty() ? "_" : out;
}

// The holders of GPU `index` in a sorted gpu_pods() answer.
std::vector<const GpuPod*> holders_of(const std::vector<GpuPod>& pods, std::size_t index) {
  std::vector<const GpuPod*> out;
  for (const GpuPod& p : pods)
    if (p.index == index) out.push_back(&p);
  return out;
}

}  // namespace

std::vector<Event> gpu_pods_events(std::int64_t t_unix_ns, const std::vector<GpuPod>& before,
                                   const std::vector<GpuPod>& after) {
  std::vector<std::size_t> gpus;
  for (const auto* list : {&before, &after})
    for (const GpuPod& p : *list) gpus.push_back(p.index);
  std::sort(gpus.begin(), gpus.end());
  gpus.erase(std::unique(gpus.begin(), gpus.end()), gpus.end());
  std::vector<Event> out;
  for (const std::size_t g : gpus) {
    const auto was = holders_of(before, g), now = holders_of(after, g);
    const bool same = was.size() == now.size() &&
                      std::equal(was.begin(), was.end(), now.begin(), [](const GpuPod* a, const GpuPod* b) { return *a == *b; });
    if (same) continue;
    const GpuPod& any = now.empty() ? *was.front() : *now.front();
    Event e;
    e.t_unix_ns = t_unix_ns;
    e.source = "kubelet";
    e.kind = "gpu_pods";
    e.value = double(g);
    e.detail = "gpu" + std::to_string(g) + " " + event_name(any.uuid);
    for (const GpuPod* p : now)
      e.detail += " " + event_name(p->ns) + "/" + event_name(p->pod) + "/" + event_name(p->container) + "=" +
                  event_name(p->resource, true);
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<GpuPod> gpu_pods_at(const std::vector<Event>& events, std::int64_t t_unix_ns) {
  std::unordered_map<std::size_t, const Event*> last;  // GPU index -> its last event at or before t
  for (const Event& e : events) {
    if (e.t_unix_ns > t_unix_ns) break;
    if (e.source != "kubelet" || e.kind != "gpu_pods") continue;
    const std::string_view d = e.detail;
    const auto sp = d.find(' ');
    std::size_t index = 0;
    if (d.rfind("gpu", 0) != 0 || sp == std::string_view::npos) continue;
    const auto [end, ec] = std::from_chars(d.data() + 3, d.data() + sp, index);
    if (ec != std::errc() || end != d.data() + sp) continue;
    last[index] = &e;
  }
  std::vector<GpuPod> out;
  for (const auto& [index, e] : last) {
    std::string_view d = e->detail;
    d.remove_prefix(d.find(' ') + 1);
    const auto sp = d.find(' ');
    const std::string uuid(d.substr(0, sp));
    d = sp == std::string_view::npos ? std::string_view() : d.substr(sp + 1);
    while (!d.empty()) {
      const auto next = d.find(' ');
      const std::string_view h = d.substr(0, next);
      d = next == std::string_view::npos ? std::string_view() : d.substr(next + 1);
      const auto s1 = h.find('/'), s2 = h.find('/', s1 == std::string_view::npos ? s1 : s1 + 1), eq = h.find('=');
      if (s1 == std::string_view::npos || s2 == std::string_view::npos || eq == std::string_view::npos || eq < s2)
        continue;
      out.push_back({index, "gpu" + std::to_string(index), uuid, std::string(h.substr(0, s1)),
                     std::string(h.substr(s1 + 1, s2 - s1 - 1)), std::string(h.substr(s2 + 1, eq - s2 - 1)),
                     std::string(h.substr(eq + 1))});
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace reveal
