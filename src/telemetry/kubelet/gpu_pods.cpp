// GPUs joined to the pods holding them: see reveal/gpu_pods.h.
#include "reveal/gpu_pods.h"

#include <algorithm>
#include <charconv>
#include <optional>
#include <string_view>
#include <unordered_map>

namespace reveal {

std::vector<std::pair<std::size_t, std::string>> gpu_uuids(const ConfigSnapshot& config) {
  std::vector<std::pair<std::size_t, std::string>> out;
  for (const auto& [key, value] : config) {
    const std::string_view k = key;
    if (k.size() < 10 || k.substr(0, 4) != "gpu." || k.substr(k.size() - 5) != ".uuid" || value.empty()) continue;
    const std::string_view n = k.substr(4, k.size() - 9);
    std::size_t index = 0;
    const auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), index);
    if (ec != std::errc() || end != n.data() + n.size()) continue;
    out.emplace_back(index, value);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<GpuPod> gpu_pods(const PodDevices& devices, const ConfigSnapshot& config) {
  // UUID -> NVML index (the first key of a UUID given twice).
  std::unordered_map<std::string, std::size_t> by_uuid;
  for (auto& [index, uuid] : gpu_uuids(config)) by_uuid.emplace(std::move(uuid), index);
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

// A name as the event writes it: ' ', '=', '/' (but in the resource, the last field) and bytes
// outside printable ASCII as '_', cut.
std::string event_name(std::string_view v, bool slash_ok = false) {
  std::string out(v.substr(0, kGpuPodNameBytes));
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

Event state_event(std::int64_t t, std::size_t index, std::string_view uuid, const std::vector<const GpuPod*>& holders) {
  Event e;
  e.t_unix_ns = t;
  e.source = "kubelet";
  e.kind = "gpu_pods";
  e.value = double(index);
  e.detail = "gpu" + std::to_string(index) + " " + event_name(uuid);
  for (const GpuPod* p : holders)
    e.detail += " " + event_name(p->ns) + "/" + event_name(p->pod) + "/" + event_name(p->container) + "=" +
                event_name(p->resource, true);
  return e;
}

// "gpuN ..." -> N; nullopt when the detail does not start so.
std::optional<std::size_t> event_gpu(std::string_view d) {
  const auto sp = d.find(' ');
  std::size_t index = 0;
  if (d.rfind("gpu", 0) != 0 || sp == std::string_view::npos || sp == 3) return std::nullopt;
  const auto [end, ec] = std::from_chars(d.data() + 3, d.data() + sp, index);
  if (ec != std::errc() || end != d.data() + sp) return std::nullopt;
  return index;
}

bool is_restart(const Event& e) { return e.source == "agent" && e.kind == "agent_restart"; }

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
    if (!same) out.push_back(state_event(t_unix_ns, g, (now.empty() ? *was.front() : *now.front()).uuid, now));
  }
  return out;
}

std::vector<Event> gpu_pods_state_events(std::int64_t t_unix_ns, const std::vector<GpuPod>& holders,
                                         const std::vector<std::pair<std::size_t, std::string>>& gpus) {
  std::vector<Event> out;
  for (const auto& [index, uuid] : gpus) out.push_back(state_event(t_unix_ns, index, uuid, holders_of(holders, index)));
  return out;
}

GpuPodsHistory::GpuPodsHistory(const std::vector<Event>& events) {
  for (const Event& e : events) add(e);
}

void GpuPodsHistory::add(const Event& e) {
  if (is_restart(e)) {
    restarts_.insert(std::upper_bound(restarts_.begin(), restarts_.end(), e.t_unix_ns), e.t_unix_ns);
    if (restarts_.size() > kGpuPodsChangesKept) restarts_.erase(restarts_.begin());
    return;
  }
  if (e.source != "kubelet" || e.kind != "gpu_pods") return;
  const auto index = event_gpu(e.detail);
  if (!index) return;
  auto& list = changes_[*index];
  // In time order whatever order they come in (a clock stepped back: the store reads by time).
  const auto at = std::upper_bound(list.begin(), list.end(), e.t_unix_ns,
                                   [](std::int64_t t, const Change& c) { return t < c.t_unix_ns; });
  // A crafted detail is cut: a GPU's line of kGpuPodsPerGpu holders of bounded names fits.
  constexpr std::size_t kMaxDetail = (3 * kGpuPodNameBytes + 64) * (kGpuPodsPerGpu + 1);
  list.insert(at, Change{e.t_unix_ns, e.detail.substr(0, kMaxDetail)});
  if (list.size() > kGpuPodsChangesKept) list.erase(list.begin());
}

std::vector<GpuPod> GpuPodsHistory::of(std::string_view gpu, std::int64_t t_unix_ns) const {
  std::vector<GpuPod> out;
  if (gpu.size() < 4 || gpu.substr(0, 3) != "gpu") return out;
  std::size_t index = 0;
  const auto [end, ec] = std::from_chars(gpu.data() + 3, gpu.data() + gpu.size(), index);
  if (ec != std::errc() || end != gpu.data() + gpu.size()) return out;
  const auto it = changes_.find(index);
  if (it == changes_.end()) return out;
  const auto& list = it->second;
  auto c = std::upper_bound(list.begin(), list.end(), t_unix_ns,
                            [](std::int64_t t, const Change& ch) { return t < ch.t_unix_ns; });
  if (c == list.begin()) return out;
  --c;
  // Forgotten at a restart after it.
  const auto r = std::upper_bound(restarts_.begin(), restarts_.end(), t_unix_ns);
  if (r != restarts_.begin() && *std::prev(r) > c->t_unix_ns) return out;
  std::string_view d = c->detail;
  d.remove_prefix(std::min(d.size(), d.find(' ') + 1));  // "gpuN "
  const auto sp = d.find(' ');
  const std::string uuid(d.substr(0, std::min(sp, kGpuPodNameBytes)));
  d = sp == std::string_view::npos ? std::string_view() : d.substr(sp + 1);
  const auto name = [](std::string_view v) { return std::string(v.substr(0, kGpuPodNameBytes)); };
  while (!d.empty() && out.size() < kGpuPodsPerGpu) {
    const auto next = d.find(' ');
    const std::string_view h = d.substr(0, next);
    d = next == std::string_view::npos ? std::string_view() : d.substr(next + 1);
    const auto s1 = h.find('/');
    const auto s2 = s1 == std::string_view::npos ? s1 : h.find('/', s1 + 1);
    const auto eq = h.find('=');
    if (s2 == std::string_view::npos || eq == std::string_view::npos || eq < s2) continue;
    out.push_back({index, std::string(gpu), uuid, name(h.substr(0, s1)), name(h.substr(s1 + 1, s2 - s1 - 1)),
                   name(h.substr(s2 + 1, eq - s2 - 1)), name(h.substr(eq + 1))});
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

}  // namespace reveal
