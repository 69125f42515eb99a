// Which pod holds which GPU (issue #20: "map GPUs to the pods using them through the kubelet
// pod-resources API"). The kubelet's device manager assigns devices of device plugins to
// containers; its pod-resources API lists the assignments (the client:
// src/telemetry/kubelet/pod_resources.h, built with the agent). gpu_pods() joins them to the
// GPUs NVML reports, by UUID.
//
// Matching: the NVIDIA device plugin names a GPU by the UUID nvmlDeviceGetUUID gives ("GPU-…"),
// and the N-th replica of a time-sliced GPU "GPU-…::N", so several pods may hold one GPU. The
// UUIDs come from the host configuration the agent reads anyway (gpu.N.uuid,
// src/telemetry/nvml/nvml_config.h); N is the index of the nvml channels' entity "gpuN".
// Not matched, so left out: MIG instances ("MIG-…": the configuration keys hold no MIG UUIDs),
// device plugins that name GPUs otherwise (GKE's names them "nvidia0"), and every other
// resource (RDMA, SR-IOV).
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reveal/recording.h"

namespace reveal {

// One device a container holds, as the kubelet's device manager assigned it.
struct DeviceAssignment {
  std::string ns, pod, container;  // namespace, pod and container names
  std::string resource;            // extended resource name: "nvidia.com/gpu", "nvidia.com/mig-1g.10gb"
  // The device plugin's ID: an NVIDIA GPU's UUID "GPU-…", "GPU-…::N" for the N-th replica of a
  // time-sliced GPU, "MIG-…" for a MIG instance.
  std::string device_id;
  auto operator<=>(const DeviceAssignment&) const = default;
};

// Every device assignment of the node's running pods, sorted, without repeats; those beyond
// the client's bound are counted in left_out.
struct PodDevices {
  std::vector<DeviceAssignment> devices;
  std::size_t left_out = 0;
};

// A GPU and a container holding it.
struct GpuPod {
  std::size_t index = 0;           // NVML device index N
  std::string gpu;                 // "gpuN", the nvml channels' entity
  std::string uuid;                // NVML's UUID
  std::string ns, pod, container;  // who holds it
  std::string resource;            // the extended resource it was requested as
  auto operator<=>(const GpuPod&) const = default;
};

// The GPUs of `config` (gpu.N.uuid keys) held by containers of `devices`: sorted by index, then
// namespace, pod and container; a container holding several replicas of one GPU is listed once.
std::vector<GpuPod> gpu_pods(const PodDevices& devices, const ConfigSnapshot& config);
// The GPUs of `config`: (N, UUID) of each "gpu.N.uuid" key with a value, by N.
std::vector<std::pair<std::size_t, std::string>> gpu_uuids(const ConfigSnapshot& config);

// Who held each GPU, kept in the store as events (source "kubelet", kind "gpu_pods"), so that
// `reveal detect` of an agent's store names the pods on an incident's GPUs as the agent did.
// One event per GPU: value = its NVML index, detail = "gpuN <uuid>" and then each holder as
// " <namespace>/<pod>/<container>=<resource>" (names are DNS labels and hold neither ' ', '/'
// nor '='; a byte of those — in the resource ' ' and '=' only — or any byte outside printable
// ASCII is written '_'; each name cut to kGpuPodNameBytes); "gpuN <uuid>" alone: nobody holds
// it. gpu_pods_events() gives the events of the GPUs whose holders changed from `before` to
// `after` (gpu_pods() answers, sorted), in GPU order; with `gpus` (the index and UUID of every
// GPU of the host) it gives one for every GPU, changed or not: the whole state, which the agent
// writes at its first answer after a start, once an hour (a store's retention drops old events,
// not the state) and after it lost a change.
std::vector<Event> gpu_pods_events(std::int64_t t_unix_ns, const std::vector<GpuPod>& before,
                                   const std::vector<GpuPod>& after);
std::vector<Event> gpu_pods_state_events(std::int64_t t_unix_ns, const std::vector<GpuPod>& holders,
                                         const std::vector<std::pair<std::size_t, std::string>>& gpus);

inline constexpr std::size_t kGpuPodNameBytes = 253;   // a Kubernetes name's bound
inline constexpr std::size_t kGpuPodsPerGpu = 256;     // holders read per GPU and time
inline constexpr std::size_t kGpuPodsChangesKept = 4096;  // per GPU (GpuPodsHistory::add)

// The holders' history, read from events (the store's, or those the agent wrote): per GPU the
// times its holders changed. An agent restart (source "agent", kind "agent_restart") forgets
// every holder until the next event: the restarted agent knew none until its first answer.
// Crafted events cost bounded work: names are cut to kGpuPodNameBytes, at most kGpuPodsPerGpu
// holders are read per GPU, at most kGpuPodsChangesKept changes kept per GPU (the oldest go),
// and a lookup parses one event.
class GpuPodsHistory {
 public:
  GpuPodsHistory() = default;
  explicit GpuPodsHistory(const std::vector<Event>& events);  // any order
  // Keeps `e` when it is a kubelet gpu_pods event or an agent restart (others: ignored).
  void add(const Event& e);
  bool empty() const { return changes_.empty(); }
  // The holders of GPU `gpu` ("gpu0") at time t, sorted as gpu_pods() sorts them; none before
  // its first event or after a restart that no later event of it followed.
  std::vector<GpuPod> of(std::string_view gpu, std::int64_t t_unix_ns) const;

 private:
  struct Change {
    std::int64_t t_unix_ns = 0;
    std::string detail;
  };
  std::map<std::size_t, std::vector<Change>> changes_;  // by NVML index, in time order
  std::vector<std::int64_t> restarts_;                  // in time order
};
}  // namespace reveal
