// Which pod's container holds which device, from the kubelet's pod-resources API (issue #20:
// "map GPUs to the pods using them"). The kubelet serves it on every node, without
// authentication, as gRPC over the unix socket /var/lib/kubelet/pod-resources/kubelet.sock
// (v1.PodResourcesLister/List, stable since Kubernetes 1.20; podresources_v1.proto here holds
// the fields read). dcgm-exporter reads the same socket for its pod labels; a DaemonSet mounts
// the socket's directory (deploy/kubernetes/components/nvidia).
//
// Only devices assigned through a device plugin are listed (nvidia.com/gpu, MIG profiles, RDMA
// and SR-IOV resources); the kubelet lists running pods only, so a pod that ended is simply
// gone from the next answer.
//
// Cost and bounds: one unary call per poll, a few hundred bytes per pod; an answer larger than
// kMaxMessageBytes is refused by gRPC itself (RESOURCE_EXHAUSTED). Only the assignments the
// caller's `keep` accepts are copied (the agent keeps the IDs of its GPUs: a node's thousands
// of other devices cost nothing), at most kMaxDevices (the rest counted in
// PodDevices::left_out). Strings are kept as the kubelet sent them (bytes, not checked for
// UTF-8), each cut to kMaxNameBytes (Kubernetes names are at most 253 bytes); the exposition
// escapes them.
//
// Built only where gRPC is (the agent's library, reveal_net); reveal/gpu_pods.h holds what it
// answers (PodDevices) and joins that to the GPUs NVML names.
#pragma once

#include <chrono>
#include <cstddef>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "reveal/gpu_pods.h"

namespace reveal::telemetry::kubelet {

inline constexpr std::size_t kMaxDevices = 65536;
inline constexpr int kMaxMessageBytes = 16 << 20;
inline constexpr std::size_t kMaxNameBytes = 253;

// <root>/var/lib/kubelet/pod-resources/kubelet.sock: where the kubelet serves the API on a node
// whose root is mounted at `root` ("/" on the node itself, "/host" in the DaemonSet).
std::filesystem::path default_pod_resources_socket(const std::filesystem::path& root);

// A client of one socket. The gRPC channel is made once and reconnects by itself when the
// kubelet restarts. Not thread-safe: one caller at a time.
class PodResourcesClient {
 public:
  explicit PodResourcesClient(const std::filesystem::path& socket);
  ~PodResourcesClient();
  PodResourcesClient(const PodResourcesClient&) = delete;
  PodResourcesClient& operator=(const PodResourcesClient&) = delete;

  // Which device IDs to keep (the whole ID as the kubelet sent it); null keeps every one.
  using Keep = std::function<bool(std::string_view device_id)>;
  // One List call, waiting at most `deadline`. Throws std::runtime_error with one line,
  // "kubelet pod-resources <socket>: <gRPC status> <message>" (printable ASCII), when the
  // socket is missing, nobody answers in time, the answer is too large or not the API's.
  PodDevices list(std::chrono::milliseconds deadline, const Keep& keep = nullptr);

  const std::filesystem::path& socket() const { return socket_; }

 private:
  struct Impl;
  std::filesystem::path socket_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace reveal::telemetry::kubelet
