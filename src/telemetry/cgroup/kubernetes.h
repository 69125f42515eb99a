// Kubernetes pods and containers behind cgroup paths (issue #20 item 1): which pod UID and
// container ID a cgroup path names, and their namespace, pod and container names as the node's
// log directories give them. No API server and no container runtime socket are needed.
//
// Paths (relative to the cgroup root, as the cgroup probe indexes its channels), as the kubelet
// and the container runtimes create them:
//   systemd driver   kubepods.slice/kubepods-<qos>.slice/kubepods-<qos>-pod<uid>.slice/<rt>-<id>.scope
//                    kubepods.slice/kubepods-pod<uid>.slice/<rt>-<id>.scope      (Guaranteed pods)
//                    where <uid> has '_' for '-', <rt> is cri-containerd, crio or docker
//   cgroupfs driver  kubepods/<qos>/pod<uid>/<id>,  kubepods/pod<uid>/<id>
// <id> is the container ID (64 hex digits); a path that stops at the pod has no container; the
// crio-conmon-<id>.scope of CRI-O (its monitor process) names no container. Static pods' UIDs
// are 32 hex digits without dashes: a UID is any run of at least 16 hex digits and dashes.
//
// Names (PodNames): the kubelet writes each pod's logs under /var/log/pods/<namespace>_<pod>_<uid>/
// and links each container's log as /var/log/containers/<pod>_<namespace>_<container>-<id>.log;
// Kubernetes names hold no '_' (DNS-1123), so both split unambiguously. Fluent Bit and other
// node agents read the same names. A DaemonSet mounts /var/log read-only for it
// (deploy/kubernetes/base/daemonset.yaml).
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace reveal::telemetry::cgroup {

struct PodRef {
  std::string pod_uid;       // "0f6b1c2e-8c4a-4b2a-9a55-1d2f3e4a5b6c"
  std::string container_id;  // 64 hex digits, "" when the path stops at the pod
};

// The pod (and container) a cgroup path names, nullopt when it names none.
std::optional<PodRef> parse_kubepods_path(std::string_view path);

struct PodName {
  std::string ns, pod;  // namespace and pod name
};

class PodNames {
 public:
  // Reads <root>/var/log/pods and <root>/var/log/containers (missing directories: no names).
  // At most kMaxEntries of each are kept. Returns how many pods it found.
  std::size_t load(const std::filesystem::path& root);
  std::optional<PodName> pod(std::string_view uid) const;
  // The container's name, "" when unknown.
  std::string container(std::string_view id) const;

  static constexpr std::size_t kMaxEntries = 100000;

 private:
  std::unordered_map<std::string, PodName> pods_;          // uid -> names
  std::unordered_map<std::string, std::string> containers_;  // container id -> name
};

// Labels for a cgroup channel's path, as (name, value) pairs in this order: pod_uid, namespace,
// pod, container (each present when known, values raw: the exposition escapes them); none when
// the path names no pod.
std::vector<std::pair<std::string, std::string>> pod_labels(std::string_view cgroup_path, const PodNames& names);

}  // namespace reveal::telemetry::cgroup
