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
#include <string>
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

// Who held each GPU, kept in the store as events (source "kubelet", kind "gpu_pods"), so that
// `reveal detect` of an agent's store names the pods on an incident's GPUs as the agent did.
// One event per GPU whose holders changed: value = its NVML index, detail = "gpuN <uuid>" and
// then each holder as " <namespace>/<pod>/<container>=<resource>" (names are DNS labels and
// hold neither ' ', '/' nor '='; a byte of those — in the resource ' ' and '=' only — or any
// byte outside printable ASCII is written '_'; each name cut to 253 bytes); "gpuN <uuid>"
// alone: nobody holds it any more.
// `before` and `after` are gpu_pods() answers (sorted); the events come in GPU order.
std::vector<Event> gpu_pods_events(std::int64_t t_unix_ns, const std::vector<GpuPod>& before,
                                   const std::vector<GpuPod>& after);
// The holders at time t (the last such event at or before t per GPU; events in time order),
// sorted as gpu_pods() sorts them. Malformed events are skipped.
std::vector<GpuPod> gpu_pods_at(const std::vector<Event>& events, std::int64_t t_unix_ns);

}  // namespace reveal
