// Host configuration snapshot: the settings that change how a workload performs without
// showing up as a time series (kernel, governor, THP, MTU, link width, driver versions...).
//
// read_config(root) reads them as plain text files under `root` ("/" or a fixture tree) and
// returns dotted key -> value strings. Each item is independent: a missing or unreadable file
// omits its key, never fails the snapshot; empty values are omitted too (so "" can mean
// "removed" in a ConfigChange). Values are the file content with surrounding whitespace
// trimmed (THP files: the bracketed choice). Keys:
//   kernel.osrelease        proc/sys/kernel/osrelease
//   kernel.cmdline          proc/cmdline
//   kernel.boot_id          proc/sys/kernel/random/boot_id (a new one: the host rebooted)
//   kernel.numa_balancing   proc/sys/kernel/numa_balancing
//   vm.swappiness           proc/sys/vm/swappiness
//   vm.nr_hugepages         proc/sys/vm/nr_hugepages
//   sysctls, named as sysctl(8) prints them (blank runs as one space), from proc/sys/<dots as />:
//     net.core.{rmem_max,wmem_max,netdev_max_backlog,somaxconn},
//     net.ipv4.{tcp_rmem,tcp_wmem,tcp_congestion_control,tcp_mtu_probing},
//     vm.{zone_reclaim_mode,max_map_count,overcommit_memory,dirty_ratio,dirty_background_ratio},
//     kernel.{perf_event_paranoid,nmi_watchdog}
//                           (no interface is named "core" or "ipv4" with such fields: the net.<if>
//                           keys below end in mtu, speed, duplex, operstate or pcie.*)
//   hugepages.<size>.nr_hugepages   sys/kernel/mm/hugepages/hugepages-<size>/nr_hugepages
//   thp.enabled, thp.defrag sys/kernel/mm/transparent_hugepage/{enabled,defrag}: "[madvise]" choice
//   cpu.model, cpu.microcode       first "model name" / "microcode" of proc/cpuinfo
//   cpu.governor            sys/devices/system/cpu/cpu<N>/cpufreq/scaling_governor when all CPUs
//                           agree; otherwise one key per CPU, cpu.cpu<N>.governor
//   cpu.online, cpu.offline sys/devices/system/cpu/{online,offline}: CPU lists ("0-3,5"); an
//                           empty list (no CPU offline) is no key
//   smt.control, smt.active sys/devices/system/cpu/smt/{control,active}
//   net.<if>.{mtu,speed,duplex,operstate}          sys/class/net/<if>/ (not "lo")
//   net.<if>.pcie.{current,max}_link_{speed,width} sys/class/net/<if>/device/ (PCI NICs only)
//   rdma.<dev>.fw_ver, rdma.<dev>.port<P>.{rate,state,phys_state,link_layer}
//                                                  sys/class/infiniband/<dev>/...
//   driver.<module>.version sys/module/<module>/version (modules that declare one)
//   driver.nvidia.proc_version     first line of proc/driver/nvidia/version
// plus whatever registered config sources add (see register_config_source).
//
// Cost: a few hundred small file reads (one directory walk of sys/module); meant to be re-read
// every minute or so by ConfigWatcher (`reveal record --config-interval`, the agent's
// `config_interval`: 60 s by default), never on the per-sample hot path. It allocates.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "reveal/recording.h"

namespace reveal {

ConfigSnapshot read_config(const std::filesystem::path& root);

// Extension point for settings only another probe can read (e.g. NVML: persistence mode,
// compute mode, ECC mode, application clocks, power limit): a source adds its own keys to the
// snapshot, prefixed by its area ("gpu.0.persistence_mode"). Register once, e.g. from the
// source folder's add_*_probes() in src/telemetry/<folder>/register.cpp (read_config builds
// the probe registry first, so sources registered there are always present). Registering the
// same name again replaces the source. A source must not throw for host conditions; if it
// does, its keys are skipped for that read. Thread-safe.
using ConfigSource = std::function<void(const std::filesystem::path& root, ConfigSnapshot& out)>;
void register_config_source(const std::string& name, ConfigSource source);

// Keys whose value differs between `before` and `after` (added: old_value ""; removed:
// value ""), in key order, stamped `t_unix_ns`.
std::vector<ConfigChange> diff_config(const ConfigSnapshot& before, const ConfigSnapshot& after,
                                      std::int64_t t_unix_ns);

// The configuration at the end of a recording: its start snapshot with every change applied.
ConfigSnapshot config_at_end(const Recording& rec);

// The event recorded with a change: source "config", kind "config_change",
// detail "net.eth0.mtu: 1500 → 9000" ("(none)" stands for an absent value).
Event config_event(const ConfigChange& c);

// Re-reads the configuration every `every_n_ticks` calls to tick() and reports what changed.
// Usage in a recorder: snapshot() once at start, then tick(t) after every sample.
class ConfigWatcher {
 public:
  explicit ConfigWatcher(std::filesystem::path root, std::size_t every_n_ticks = 10);
  const ConfigSnapshot& snapshot() const { return current_; }
  // Counts one tick; on every n-th re-reads and returns the changes since the last read
  // (usually none). Updates snapshot().
  std::vector<ConfigChange> tick(std::int64_t t_unix_ns);

 private:
  std::filesystem::path root_;
  std::size_t every_n_, ticks_ = 0;
  ConfigSnapshot current_;
};

}  // namespace reveal
