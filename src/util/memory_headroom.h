// How much more memory this process may take before a limit stops it: the budget of
// load_recording() (reveal/store.h, default_load_budget()).
//
// Limits looked at: the host's physical memory; the address-space limit (RLIMIT_AS) less the
// process's size now (/proc/self/statm); and the memory limits of the process's cgroup and
// each of its ancestors, less what each holds now — cgroup v2 memory.max − (memory.current −
// memory.stat inactive_file) (unified, or the hybrid host's /sys/fs/cgroup/unified), cgroup v1
// memory.limit_in_bytes − (memory.usage_in_bytes − total_inactive_file) (the memory
// controller's hierarchy): the page cache the kernel reclaims first (an agent writing its store
// fills its cgroup with it) is not counted as held, as kubelet's working set does not. A systemd unit's MemoryMax= and a
// Kubernetes container's or pod's memory limit are such cgroup limits: without them an agent
// under a 512 MiB limit would size its loads by the host's RAM. Files missing or unreadable
// impose nothing; "max" (v2) and v1's "unlimited" (≥ 2^62) neither.
// `root`: the filesystem root the files are under ("/"; a fixture tree in tests) — the
// process's own view, not the --root of a monitored host.
#pragma once

#include <cstdint>
#include <filesystem>

namespace reveal {

// The smallest headroom of the cgroup limits above under `root`, for the cgroups listed in
// <root>/proc/self/cgroup; UINT64_MAX when none applies. 0 when a cgroup is at or over its limit.
std::uint64_t cgroup_memory_headroom(const std::filesystem::path& root);

// min(physical memory, RLIMIT_AS − size now, cgroup_memory_headroom("/")).
std::uint64_t memory_headroom();

}  // namespace reveal
