// The kubelet pod-resources watcher: see gpu_pod_watcher.h.
#include "agent/gpu_pod_watcher.h"

#include <algorithm>
#include <exception>
#include <map>
#include <system_error>
#include <utility>

#include "reveal/channel.h"
#include "telemetry/kubelet/pod_resources.h"

namespace reveal::agent {

bool apply_gpu_pods(AgentSnapshot& s, std::vector<GpuPod> pods) {
  if (pods == s.gpu_pods) return false;
  s.gpu_pods = std::move(pods);
  // GPU -> the one container holding it (nullptr: several).
  std::map<std::string, const GpuPod*, std::less<>> holder;
  for (const GpuPod& p : s.gpu_pods) {
    auto [it, fresh] = holder.try_emplace(p.gpu, &p);
    if (!fresh && it->second &&
        (it->second->ns != p.ns || it->second->pod != p.pod || it->second->container != p.container))
      it->second = nullptr;
  }
  if (s.channel_labels.size() < s.channels.size()) s.channel_labels.resize(s.channels.size());
  for (std::size_t i = 0; i < s.channels.size(); ++i) {
    if (s.channels[i].name.rfind("nvml:", 0) != 0) continue;
    auto& labels = s.channel_labels[i];
    labels.clear();
    const auto it = holder.find(channel_label(s.channels[i].name));
    if (it == holder.end() || !it->second) continue;
    labels = {{"namespace", it->second->ns}, {"pod", it->second->pod}, {"container", it->second->container}};
  }
  return true;
}

GpuPodWatcher::GpuPodWatcher(SharedState& shared, std::filesystem::path socket, std::chrono::nanoseconds interval,
                             Log log)
    : shared_(shared), socket_(std::move(socket)), interval_(interval), log_(std::move(log)) {
  thread_ = std::thread([this] { run(); });
}

GpuPodWatcher::~GpuPodWatcher() {
  {
    std::lock_guard<std::mutex> l(m_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void GpuPodWatcher::run() {
  telemetry::kubelet::PodResourcesClient client(socket_);
  std::unique_lock<std::mutex> l(m_);
  while (!stop_) {
    l.unlock();
    // Until the socket first appears there is no kubelet to ask; once it was there, a socket
    // that went away is a failed call like any other.
    std::error_code ec;
    if (last_state_ != -1 || std::filesystem::exists(socket_, ec)) {
      ConfigSnapshot uuids;  // the gpu.N.uuid keys (the configuration is re-read every config_interval)
      {
        std::lock_guard<PiMutex> lock(shared_.mu);
        for (const auto& [k, v] : shared_.snap.config)
          if (k.rfind("gpu.", 0) == 0 && k.size() > 5 && k.compare(k.size() - 5, 5, ".uuid") == 0) uuids.emplace(k, v);
      }
      try {
        const PodDevices devices = client.list(kCallDeadline);
        std::vector<GpuPod> pods = gpu_pods(devices, uuids);
        const std::size_t n = pods.size();
        {
          std::lock_guard<PiMutex> lock(shared_.mu);
          const bool changed = apply_gpu_pods(shared_.snap, std::move(pods));
          if (changed || shared_.snap.pod_resources_up != 1) shared_.rendered_seq = ~0ull;
          shared_.snap.pod_resources_up = 1;
        }
        if (last_state_ != 1)
          log_("kubelet pod-resources " + socket_.string() + ": " + std::to_string(n) + " GPU holder(s) among " +
               std::to_string(devices.devices.size()) + " device assignment(s)");
        last_state_ = 1;
      } catch (const std::exception& e) {
        {
          std::lock_guard<PiMutex> lock(shared_.mu);
          shared_.snap.pod_resources_up = 0;
          ++shared_.snap.pod_resources_errors_total;
          shared_.rendered_seq = ~0ull;
        }
        if (last_state_ != 0) log_(std::string(e.what()) + " (GPU pod labels kept as last answered; asking again every period)");
        last_state_ = 0;
      }
    }
    l.lock();
    cv_.wait_for(l, interval_, [this] { return stop_; });
  }
}

}  // namespace reveal::agent
