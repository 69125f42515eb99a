// Kernel, VM and huge page settings: kernel.*, vm.*, hugepages.*, thp.* (see reveal/host_config.h).
#include "telemetry/host_config/config_files.h"

namespace reveal::telemetry::config {
namespace {

constexpr const char* kSysctls[] = {
    "net.core.rmem_max",          "net.core.wmem_max",       "net.core.netdev_max_backlog",
    "net.core.somaxconn",         "net.ipv4.tcp_rmem",       "net.ipv4.tcp_wmem",
    "net.ipv4.tcp_congestion_control", "net.ipv4.tcp_mtu_probing", "vm.zone_reclaim_mode",
    "vm.max_map_count",           "vm.overcommit_memory",    "vm.dirty_ratio",
    "vm.dirty_background_ratio",  "kernel.perf_event_paranoid", "kernel.nmi_watchdog",
};

}  // namespace


void read_kernel_config(const std::filesystem::path& root, ConfigSnapshot& out) {
  put_value(out, "kernel.osrelease", root / "proc/sys/kernel/osrelease");
  put_value(out, "kernel.cmdline", root / "proc/cmdline");
  // A new value is a reboot (an agent continuing its store after one stores it as a change).
  put_value(out, "kernel.boot_id", root / "proc/sys/kernel/random/boot_id");
  put_value(out, "kernel.numa_balancing", root / "proc/sys/kernel/numa_balancing");
  put_value(out, "vm.swappiness", root / "proc/sys/vm/swappiness");
  put_value(out, "vm.nr_hugepages", root / "proc/sys/vm/nr_hugepages");
  // Sysctls that change how a job runs (socket buffers and congestion control for its traffic,
  // NUMA reclaim, memory maps, writeback) or how it is observed (perf access, the NMI watchdog
  // holding a PMU counter), named as sysctl(8) prints them; runs of blanks ("4096\t131072\t6291456")
  // as one space.
  for (const char* name : kSysctls) {
    std::string rel = "proc/sys/";
    for (const char* c = name; *c; ++c) rel += *c == '.' ? '/' : *c;
    auto v = read_value(root / rel);
    if (!v) continue;
    std::string one;
    for (char c : *v) {
      const bool blank = c == ' ' || c == '\t' || c == '\n';
      if (blank && (one.empty() || one.back() == ' ')) continue;
      one += blank ? ' ' : c;
    }
    if (!one.empty()) out[name] = std::move(one);
  }
  // One directory per supported page size, e.g. hugepages-2048kB, hugepages-1048576kB.
  const auto hp = root / "sys/kernel/mm/hugepages";
  for (const auto& d : list_dir(hp)) {
    constexpr std::string_view prefix = "hugepages-";
    if (d.rfind(prefix, 0) != 0) continue;
    put_value(out, "hugepages." + d.substr(prefix.size()) + ".nr_hugepages", hp / d / "nr_hugepages");
  }
  const auto thp = root / "sys/kernel/mm/transparent_hugepage";
  for (const char* f : {"enabled", "defrag"}) {
    auto text = read_file(thp / f, 4096);
    if (!text) continue;
    std::string v = bracketed_choice(*text);
    if (!v.empty()) out[std::string("thp.") + f] = std::move(v);
  }
}

}  // namespace reveal::telemetry::config
