#include "telemetry/cgroup/hierarchy.h"

#include <algorithm>
#include <system_error>

namespace reveal::telemetry::cgroup {
namespace fs = std::filesystem;

std::optional<Hierarchy> find_hierarchy(const fs::path& root, std::string& reason) {
  std::error_code ec;
  const auto unified = root / "sys/fs/cgroup";
  if (fs::exists(unified / "cgroup.controllers", ec)) return Hierarchy{unified, false};
  if (fs::exists(unified / "unified/cgroup.controllers", ec))
    return Hierarchy{unified / "unified", true};
  reason = "cgroup v2 not mounted (" + (unified / "cgroup.controllers").string() + " missing)";
  return std::nullopt;
}

std::vector<std::string> child_cgroups(const fs::path& dir, const std::string& parent) {
  std::vector<std::string> names;
  std::error_code ec;
  const fs::path base = parent.empty() ? dir : dir / parent;
  for (fs::directory_iterator it(base, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code ec2;
    // Every cgroup directory has cgroup.procs; anything else is not a cgroup.
    if (it->is_directory(ec2) && fs::exists(it->path() / "cgroup.procs", ec2))
      names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  if (!parent.empty())
    for (auto& n : names) n = parent + "/" + n;
  return names;
}

std::vector<std::string> default_cgroups(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  if (fs::exists(dir / "cgroup.type", ec)) out.emplace_back();
  for (const auto& child : child_cgroups(dir, "")) {
    out.push_back(child);
    if (child == "system.slice" || child == "docker" || child == "machine.slice" ||
        child.starts_with("kubepods")) {
      for (auto& grandchild : child_cgroups(dir, child)) out.push_back(std::move(grandchild));
    }
  }
  return out;
}

std::optional<std::string> normalize_parent(std::string_view parent) {
  std::string out;
  while (!parent.empty()) {
    const auto slash = parent.find('/');
    const std::string_view part = parent.substr(0, slash);
    parent.remove_prefix(slash == std::string_view::npos ? parent.size() : slash + 1);
    if (part.empty()) continue;
    if (part == "." || part == "..") return std::nullopt;
    if (!out.empty()) out += '/';
    out += part;
  }
  return out;
}

}  // namespace reveal::telemetry::cgroup
