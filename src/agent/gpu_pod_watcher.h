// Who holds each GPU, asked of the kubelet in the background (issue #20): a thread that calls
// the kubelet's pod-resources API (src/telemetry/kubelet/pod_resources.h) every
// [kubernetes] pod_resources_interval, joins the answer to the GPUs' UUIDs (reveal/gpu_pods.h)
// and puts it into the snapshot: reveal_gpu_pod_info and the pod labels of the GPU's nvml series
// on /metrics, the pods on an incident's GPUs on /incidents.
//
// Never on the sampling path: the sampling thread takes no part, and the snapshot's mutex is
// held only to copy the GPUs' UUIDs out and the answer in. Each call waits at most 2 s. Until
// the socket first exists (not a Kubernetes node, or the kubelet not up yet) no call is made and
// nothing is shown; after that, a failed call (the socket gone too) counts in
// reveal_kubelet_pod_resources_errors_total
// and keeps the last answer's labels (a kubelet restart does not strip them); the first failure
// after a success, and the first success after failures, are logged once. Each change of a
// GPU's holders is queued (SharedState::kubelet_events) for the store — the whole state at the
// first answer, every hour and after the queue overflowed — and the sampling side writes it
// with its next sample and names the pods on an incident's GPUs from those events, as
// `reveal detect` of the store does (GpuPodsHistory, reveal/gpu_pods.h; attach_gpu_pods(),
// reveal/tenants.h).
#pragma once

#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/snapshot.h"
#include "reveal/gpu_pods.h"

namespace reveal::agent {

// Puts `pods` into the snapshot (the caller holds the mutex): s.gpu_pods, and the labels of
// every nvml channel of a GPU held by exactly one container (namespace, pod, container, as
// dcgm-exporter labels GPU metrics; a GPU shared by several or none gets none). Returns true when
// anything shown changed.
bool apply_gpu_pods(AgentSnapshot& s, std::vector<GpuPod> pods);

class GpuPodWatcher {
 public:
  using Log = std::function<void(const std::string&)>;
  // Starts the thread; its first call is at once.
  GpuPodWatcher(SharedState& shared, std::filesystem::path socket, std::chrono::nanoseconds interval, Log log);
  ~GpuPodWatcher();  // stops and joins the thread (a call under way ends within its 2 s)
  GpuPodWatcher(const GpuPodWatcher&) = delete;
  GpuPodWatcher& operator=(const GpuPodWatcher&) = delete;

  static constexpr std::chrono::milliseconds kCallDeadline{2000};
  // Events waiting for the sampling side (SharedState::kubelet_events) at most: a sampler that
  // stalled loses the changes past it, not memory.
  static constexpr std::size_t kMaxQueuedEvents = 4096;
  // The whole state is written this often too: a store's retention (store.max_age) drops old
  // events, never who holds a GPU now.
  static constexpr std::chrono::hours kStateEvery{1};

 private:
  void run();

  SharedState& shared_;
  const std::filesystem::path socket_;
  const std::chrono::nanoseconds interval_;
  Log log_;
  int last_state_ = -1;  // -1 not asked yet, 0 failing, 1 answering
  bool left_out_logged_ = false;
  bool resync_ = true;   // the next answer's events give the whole state
  std::chrono::steady_clock::time_point state_written_{};
  std::mutex m_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace reveal::agent
