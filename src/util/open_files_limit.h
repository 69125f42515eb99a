// The process's limit on open files (RLIMIT_NOFILE) for a recorder on a big host.
//
// The probes keep one file descriptor per file they read every tick (sysfs attributes within a
// budget of half the soft limit, cgroup and /proc files always): on a host with 224 CPUs
// (cpuidle and cpufreq attributes per CPU) and 200 cgroups that is several thousand. Under the
// soft limit most sessions start with, 1024 (systemd's DefaultLimitNOFILE=1024:524288), the
// probes took every descriptor: `reveal record` could not create its store, and the cgroup,
// cgroup.throttling, nvml and perf probes became unavailable (bench/bighost, issue #21).
//
// raise_open_files_limit() raises the soft limit to the hard limit, at most kOpenFilesCap, as
// the Go runtime and most long-running daemons do at start; the hard limit is never changed.
// It remembers the soft limit it found, which restore_open_files_limit() puts back: in a child
// between fork and exec, so that a command run by `reveal record -- CMD` starts with the limit
// its shell gave it. Errors leave the limit as it was (getrlimit/setrlimit failures are not
// reported: the probes then degrade as before).
#pragma once

#include <sys/resource.h>

namespace reveal {

inline constexpr rlim_t kOpenFilesCap = 1 << 20;

// Raises the soft RLIMIT_NOFILE (see above). Call once, at start, before any thread.
void raise_open_files_limit();

// Puts back the soft limit raise_open_files_limit() found (no-op if it changed nothing).
// Async-signal-safe: usable between fork and exec.
void restore_open_files_limit();

}  // namespace reveal
