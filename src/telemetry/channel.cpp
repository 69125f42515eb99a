#include "reveal/channel.h"

#include <array>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>

namespace reveal {
namespace {
constexpr std::array<std::pair<Kind, std::string_view>, 3> kKinds{{
    {Kind::counter, "counter"}, {Kind::gauge, "gauge"}, {Kind::state, "state"}}};
constexpr std::array<std::pair<Subsystem, std::string_view>, 8> kSubsystems{{
    {Subsystem::cpu, "cpu"},
    {Subsystem::memory, "memory"},
    {Subsystem::network, "network"},
    {Subsystem::storage, "storage"},
    {Subsystem::gpu, "gpu"},
    {Subsystem::interconnect, "interconnect"},
    {Subsystem::power_thermal, "power/thermal"},
    {Subsystem::system, "system"}}};
}  // namespace

std::string_view to_string(Kind k) {
  for (auto& [v, s] : kKinds) if (v == k) return s;
  return "unknown";
}
std::string_view to_string(Subsystem x) {
  for (auto& [v, s] : kSubsystems) if (v == x) return s;
  return "unknown";
}
std::optional<Kind> parse_kind(std::string_view s) {
  for (auto& [v, n] : kKinds) if (n == s) return v;
  return std::nullopt;
}
std::optional<Subsystem> parse_subsystem(std::string_view s) {
  for (auto& [v, n] : kSubsystems) if (n == s) return v;
  return std::nullopt;
}

}  // namespace reveal

namespace reveal {
namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = (c >= 'A' && c <= 'Z') ? char(c - 'A' + 'a') : c;
  return out;
}

bool contains(std::string_view hay, std::string_view needle) { return hay.find(needle) != std::string_view::npos; }

// Field fragments that name a shortage or a failure, wherever they appear (network, storage,
// GPU, RDMA, cgroup files). Matched against the lower-cased field.
constexpr std::array<std::string_view, 29> kSymptomFragments{
    "retrans", "timeout", "drop", "discard", "err", "overrun", "overflow", "lost", "loss",
    "fifo", "frame", "carrier", "colls", "collapse", "prune", "throttl", "stall", "pressure",
    "violation", "xid", "ecc", "retired", "replay", "link_downed", "xmit_wait", "oom",
    "slowdown", "remap", "saturated"};

// /proc/vmstat fields of memory shortage (reclaim, swapping, major faults, compaction).
constexpr std::array<std::string_view, 9> kVmstatSymptoms{
    "pgmajfault", "allocstall", "pgscan_direct", "pgsteal_direct", "pgscan_kswapd", "pswpin",
    "pswpout", "compact_fail", "thp_fault_fallback"};

}  // namespace

namespace {
ChannelRole classify_role(std::string_view name);

// channel_role() is asked for the same few hundred names at every attribution (each window of
// an open incident): the answers are kept per thread, by name, up to kMaxRolesKept names (then
// forgotten all at once: a host's channel names are far fewer).
struct NameHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
};
constexpr std::size_t kMaxRolesKept = 1 << 16;
}  // namespace

ChannelRole channel_role(std::string_view name) {
  thread_local std::unordered_map<std::string, ChannelRole, NameHash, std::equal_to<>> kept;
  if (const auto it = kept.find(name); it != kept.end()) return it->second;
  if (kept.size() >= kMaxRolesKept) kept.clear();
  const ChannelRole role = classify_role(name);
  kept.emplace(std::string(name), role);
  return role;
}

namespace {
ChannelRole classify_role(std::string_view name) {
  const std::size_t colon = name.find(':');
  if (colon == std::string_view::npos) return ChannelRole::load;
  const std::string source = lower(name.substr(0, colon));
  std::string field = lower(name.substr(colon + 1));
  // The index (".cpu3", ".eth0") is not part of the field, except for derived channels whose
  // names may hold dots of their own; the fragments below never contain a dot.
  // The sampler running late (reveal.sampler:delay_seconds, ticks_missed): the host is so short
  // of CPU that even a real-time sampler waited, or it was stalled outright.
  if (source == "reveal.sampler") return ChannelRole::symptom;
  if (source == "proc.pressure" || source.find("pressure") != std::string::npos)
    return contains(field, "_avg") ? ChannelRole::load : ChannelRole::symptom;
  if (source == "derived" && field.rfind("psi_", 0) == 0) return ChannelRole::symptom;
  if (field.rfind("steal", 0) == 0 || field.rfind("iowait", 0) == 0) return ChannelRole::symptom;
  if (field.rfind("cpu_steal_pct", 0) == 0 || field.rfind("cpu_iowait_pct", 0) == 0) return ChannelRole::symptom;
  if (source == "proc.stat" && field.rfind("procs_blocked", 0) == 0) return ChannelRole::symptom;
  if ((source == "proc.stat" && field == "procs_running") || (source == "derived" && field == "runqueue_wait_per_cpu"))
    return ChannelRole::saturation;
  // Memory in use (1 − MemAvailable/MemTotal): a level that moves with every job, until the
  // host nears out of memory (SymptomGate counts only its part beyond 90 %).
  if (source == "derived" && field == "mem_used_pct") return ChannelRole::saturation;
  // The pace memory is being used up at (features/memory_fill.h): non-zero only when the host
  // would run out of memory within 5 minutes at the pace of the last 15 s — heading for a shortage.
  if (source == "derived" && field == "mem_fill_pct_per_min") return ChannelRole::symptom;
  // Someone dropping the kernel's caches (features/recent_count.h): never the kernel's own doing.
  if (page_cache_dropped(name)) return ChannelRole::symptom;
  // Egress qdiscs (tc.qdisc): drops, throttle events at a rate limit (overlimits) and requeues
  // by a busy driver are shortages; the queue's length and backlog are levels.
  if (source == "tc.qdisc") return (field == "backlog" || field == "qlen") ? ChannelRole::load : ChannelRole::symptom;
  // Processes created: a job forks a few dozen at start; thousands a second is a fork or exec
  // storm (a crash loop, a fork bomb, a runaway health check). SymptomGate asks for a material
  // rise of 200/s.
  if (source == "proc.stat" && field == "processes") return ChannelRole::symptom;
  if (source == "proc.vmstat") {
    for (std::string_view f : kVmstatSymptoms)
      if (field.rfind(f, 0) == 0) return ChannelRole::symptom;
    if (contains(field, "oom") || field.rfind("compact_stall", 0) == 0) return ChannelRole::symptom;
    return ChannelRole::load;  // page allocations, frees, minor faults, dirty/writeback levels
  }
  // Disk time totals (read_time, weighted_io_time, ...) grow with the work done as much as with
  // latency (a checkpoint's burst of writes): load. Latency per request is the symptom.
  if (source == "proc.diskstats") return ChannelRole::load;
  if (source == "derived" && field.rfind("disk_await_ms", 0) == 0) return ChannelRole::symptom;
  if (source == "proc.meminfo") return ChannelRole::load;  // levels move with every job
  // Retransmission counts that include the spurious ones (retransmitted on delay, not loss: a
  // busy CPU late to send or acknowledge; the receiver's D-SACKs report them), tail-loss probes
  // (sent on a timer whenever the last segment is not yet acknowledged) and duplicates received
  // (DelayedACKLost: the peer retransmitted what had arrived), and recoveries undone as spurious
  // (TCPLossUndo): load, on a healthy busy host
  // they move every few seconds. The symptom is derived:tcp_loss_retrans_per_s (and
  // tcp_retrans_pct), the retransmissions not reported spurious; loss probes that found a loss
  // (TCPLossProbeRecovery), lost retransmissions and timeouts stay symptoms.
  if (source == "proc.net.snmp" && (field == "tcp_retranssegs" || field == "tcpext_tcpfastretrans" ||
                                    field == "tcpext_tcplossprobes" || field == "tcpext_delayedacklost" ||
                                    field == "tcpext_tcplossundo"))
    return ChannelRole::load;
  // NVML's clock throttle ("event") reasons that are no shortage: the GPU idle, clocks set by an
  // application or the display, boost synchronised across GPUs. A job ending idles its GPU.
  if (source == "nvml" && (contains(field, "throttle_reasons_") || contains(field, "event_reasons_")))
    for (std::string_view f : {"gpu_idle", "applications_clocks_setting", "sync_boost", "display_clock_setting"})
      if (contains(field, f)) return ChannelRole::load;
  for (std::string_view f : kSymptomFragments)
    if (contains(field, f)) return ChannelRole::symptom;
  return ChannelRole::load;
}
}  // namespace

bool failure_counter(std::string_view name, std::string_view unit) {
  if (unit.size() < 2 || unit.substr(unit.size() - 2) != "/s") return false;
  if (channel_role(name) != ChannelRole::symptom) return false;
  const std::size_t colon = name.find(':');
  const std::string source = lower(name.substr(0, colon));
  const std::string field = lower(name.substr(colon + 1));
  if (source == "reveal.sampler" || source == "proc.stat" || source == "proc.vmstat" || source == "derived") return false;
  if (source.find("pressure") != std::string::npos || contains(field, "pressure")) return false;
  if (field.rfind("steal", 0) == 0 || field.rfind("iowait", 0) == 0) return false;
  return true;
}

bool flat_when_healthy(std::string_view name, std::string_view unit) {
  return failure_counter(name, unit) || name == "derived:mem_fill_pct_per_min" || page_cache_dropped(name) ||
         name == "derived:tcp_loss_retrans_per_s" || name.starts_with("rdma:saturated_counters.");
}

bool page_cache_dropped(std::string_view name) { return name == "derived:drop_caches_per_min"; }

bool hypervisor_steal(std::string_view name) {
  static constexpr std::string_view kSteal = "derived:cpu_steal_pct";
  return name.substr(0, kSteal.size()) == kSteal && (name.size() == kSteal.size() || name[kSteal.size()] == '.');
}

std::string_view to_string(ChannelRole r) {
  switch (r) {
    case ChannelRole::symptom: return "symptom";
    case ChannelRole::saturation: return "saturation";
    case ChannelRole::load: break;
  }
  return "load";
}

}  // namespace reveal
