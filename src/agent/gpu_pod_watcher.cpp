// The kubelet pod-resources watcher: see gpu_pod_watcher.h.
#include "agent/gpu_pod_watcher.h"

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <string_view>
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
    // A socket that cannot be looked at (EACCES on its directory) is there as far as this
    // goes: the call fails and says why.
    std::error_code ec;
    const bool present = std::filesystem::exists(socket_, ec) || (ec && ec != std::errc::no_such_file_or_directory);
    if (last_state_ != -1 || present) {
      ConfigSnapshot uuids;  // the gpu.N.uuid keys (the configuration is re-read every config_interval)
      {
        std::lock_guard<PiMutex> lock(shared_.mu);
        for (const auto& [k, v] : shared_.snap.config)
          if (k.rfind("gpu.", 0) == 0 && k.size() > 5 && k.compare(k.size() - 5, 5, ".uuid") == 0) uuids.emplace(k, v);
      }
      std::set<std::string, std::less<>> known;  // the GPUs' UUIDs: only their assignments are kept
      for (const auto& [k, v] : uuids) known.insert(v);
      const auto keep = [&known](std::string_view id) {
        return known.count(id.substr(0, id.find("::"))) > 0;  // "GPU-…::N": a time-sliced replica
      };
      try {
        const PodDevices devices = client.list(kCallDeadline, keep);
        std::vector<GpuPod> pods = gpu_pods(devices, uuids);
        const std::size_t n = pods.size();
        {
          std::lock_guard<PiMutex> lock(shared_.mu);
          // Changes go to the store with the next sample (stamped there), for `reveal detect`:
          // the whole state at the first answer, every kStateEvery and after a lost change,
          // otherwise the GPUs whose holders changed.
          const auto now = std::chrono::steady_clock::now();
          const bool whole = resync_ || now - state_written_ >= kStateEvery;
          std::vector<Event> changes = whole ? gpu_pods_state_events(0, pods, gpu_uuids(uuids))
                                             : gpu_pods_events(0, shared_.snap.gpu_pods, pods);
          const bool changed = apply_gpu_pods(shared_.snap, std::move(pods));
          if (changed || shared_.snap.pod_resources_up != 1) shared_.rendered_seq = ~0ull;
          shared_.snap.pod_resources_up = 1;
          if (shared_.kubelet_events.size() + changes.size() > kMaxQueuedEvents) {
            resync_ = true;  // the sampler stalled: the whole state once it drains
          } else {
            if (whole) {
              resync_ = false;
              state_written_ = now;
            }
            for (Event& e : changes) shared_.kubelet_events.push_back(std::move(e));
            if (!changes.empty()) shared_.kubelet_events_pending.store(true, std::memory_order_release);
          }
        }
        if (last_state_ != 1)
          log_("kubelet pod-resources " + socket_.string() + ": " + std::to_string(n) + " GPU holder(s)");
        if (devices.left_out > 0 && !left_out_logged_) {
          log_("kubelet pod-resources " + socket_.string() + ": " + std::to_string(devices.left_out) +
               " GPU assignment(s) past the bound of " + std::to_string(telemetry::kubelet::kMaxDevices) + " left out");
          left_out_logged_ = true;
        }
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
