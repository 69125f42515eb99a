// Pods and containers behind cgroup paths: see kubernetes.h.
#include "telemetry/cgroup/kubernetes.h"

#include <system_error>
#include <vector>

namespace reveal::telemetry::cgroup {
namespace {

namespace fs = std::filesystem;

bool hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); }

// At least 16 hex digits and dashes (a UUID, or a static pod's 32-digit hash).
bool uid_like(std::string_view s) {
  if (s.size() < 16) return false;
  for (char c : s)
    if (!hex(c) && c != '-') return false;
  return true;
}

bool container_id_like(std::string_view s) {
  if (s.size() != 64) return false;
  for (char c : s)
    if (!hex(c)) return false;
  return true;
}

// "kubepods-burstable-pod0f6b_1c2e.slice" or "pod0f6b-1c2e" -> the UID, "" when not a pod.
std::string pod_uid_of(std::string_view component) {
  std::string_view uid;
  if (component.ends_with(".slice")) {
    const auto at = component.rfind("-pod");
    if (at == std::string_view::npos || !component.starts_with("kubepods")) return {};
    uid = component.substr(at + 4, component.size() - at - 4 - 6);
  } else if (component.starts_with("pod")) {
    uid = component.substr(3);
  } else {
    return {};
  }
  std::string out(uid);
  for (char& c : out)
    if (c == '_') c = '-';
  return uid_like(out) ? out : std::string{};
}

// "cri-containerd-<id>.scope", "crio-<id>.scope", "docker-<id>.scope" or a bare "<id>" -> the
// ID; "" otherwise (crio-conmon-<id>.scope included).
std::string container_id_of(std::string_view component) {
  if (component.ends_with(".scope")) {
    component.remove_suffix(6);
    for (std::string_view prefix : {"cri-containerd-", "crio-", "docker-"})
      if (component.starts_with(prefix)) {
        const std::string_view id = component.substr(prefix.size());
        return container_id_like(id) ? std::string(id) : std::string{};
      }
    return {};
  }
  return container_id_like(component) ? std::string(component) : std::string{};
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    const auto at = s.find(sep);
    out.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return out;
    s.remove_prefix(at + 1);
  }
}

}  // namespace

std::optional<PodRef> parse_kubepods_path(std::string_view path) {
  const std::vector<std::string_view> parts = split(path, '/');
  bool under_kubepods = false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    if (parts[i].starts_with("kubepods")) under_kubepods = true;
    if (!under_kubepods) continue;
    std::string uid = pod_uid_of(parts[i]);
    if (uid.empty()) continue;
    PodRef ref;
    ref.pod_uid = std::move(uid);
    if (i + 1 < parts.size()) ref.container_id = container_id_of(parts[i + 1]);
    return ref;
  }
  return std::nullopt;
}

std::size_t PodNames::load(const fs::path& root) {
  pods_.clear();
  containers_.clear();
  std::error_code ec;
  // <namespace>_<pod>_<uid>
  for (fs::directory_iterator it(root / "var/log/pods", ec), end; !ec && it != end && pods_.size() < kMaxEntries;
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    const auto p = split(name, '_');
    if (p.size() != 3 || p[0].empty() || p[1].empty() || !uid_like(p[2])) continue;
    pods_[std::string(p[2])] = {std::string(p[0]), std::string(p[1])};
  }
  // <pod>_<namespace>_<container>-<id>.log
  ec.clear();
  for (fs::directory_iterator it(root / "var/log/containers", ec), end;
       !ec && it != end && containers_.size() < kMaxEntries; it.increment(ec)) {
    const std::string file = it->path().filename().string();
    std::string_view name = file;
    if (!name.ends_with(".log")) continue;
    name.remove_suffix(4);
    const auto dash = name.rfind('-');
    if (dash == std::string_view::npos || !container_id_like(name.substr(dash + 1))) continue;
    const auto p = split(name.substr(0, dash), '_');
    if (p.size() != 3 || p[2].empty()) continue;
    containers_[std::string(name.substr(dash + 1))] = std::string(p[2]);
  }
  return pods_.size();
}

std::optional<PodName> PodNames::pod(std::string_view uid) const {
  const auto it = pods_.find(std::string(uid));
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

std::string PodNames::container(std::string_view id) const {
  const auto it = containers_.find(std::string(id));
  return it == containers_.end() ? std::string{} : it->second;
}

std::vector<std::pair<std::string, std::string>> pod_labels(std::string_view cgroup_path, const PodNames& names) {
  std::vector<std::pair<std::string, std::string>> out;
  const auto ref = parse_kubepods_path(cgroup_path);
  if (!ref) return out;
  const auto add = [&out](const char* name, std::string value) {
    if (!value.empty()) out.emplace_back(name, std::move(value));
  };
  add("pod_uid", ref->pod_uid);
  if (const auto n = names.pod(ref->pod_uid)) {
    add("namespace", n->ns);
    add("pod", n->pod);
  }
  if (!ref->container_id.empty()) add("container", names.container(ref->container_id));
  return out;
}

}  // namespace reveal::telemetry::cgroup
