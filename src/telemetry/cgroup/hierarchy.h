// Locating the cgroup v2 hierarchy under a root and choosing the cgroups to watch
// (Documentation/admin-guide/cgroup-v2.rst).
//
// Hierarchy: <root>/sys/fs/cgroup when it holds cgroup.controllers (unified mode); otherwise
// <root>/sys/fs/cgroup/unified when that does (systemd "hybrid" mode: v1 controllers plus a
// v2 tree that carries no controllers, so only cpu.stat usage and PSI files exist there).
//
// Default cgroups (relative paths, '/'-separated, in this order):
//   * ""  the hierarchy root itself, only when it is not the host's root cgroup, i.e. when it
//         has cgroup.type (a file the kernel omits on the real root): inside a container with
//         its own cgroup namespace this is the container's own cgroup;
//   * every direct child of the root, by name; right after a child named system.slice,
//     docker or machine.slice, or starting with "kubepods", its own direct children.
// With a parent P (relative path; "" is the root): the direct children of P, by name.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace reveal::telemetry::cgroup {

struct Hierarchy {
  std::filesystem::path dir;  // the cgroup root directory
  bool hybrid = false;        // found at sys/fs/cgroup/unified
};

// The v2 hierarchy under `root`, or nullopt with `reason` set.
std::optional<Hierarchy> find_hierarchy(const std::filesystem::path& root, std::string& reason);

std::vector<std::string> default_cgroups(const std::filesystem::path& dir);
std::vector<std::string> child_cgroups(const std::filesystem::path& dir, const std::string& parent);

// "/system.slice/" -> "system.slice"; "" and "/" -> "". nullopt when a component is "." or
// ".." (the parent must stay inside the hierarchy).
std::optional<std::string> normalize_parent(std::string_view parent);

}  // namespace reveal::telemetry::cgroup
