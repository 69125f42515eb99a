// Channel model: one time series sampled from one probe.
//
// Naming rule (used everywhere, stored verbatim): "<source>:<field>[.<index>]"
//   source  dotted probe name, e.g. "proc.stat", "proc.net.dev", "sys.cpufreq", "perf"
//   field   the kernel's own field name where one exists (/proc key, perf event name)
//   index   the label that distinguishes instances: cpu ("cpu3"), interface ("eth0"),
//           block device ("nvme0n1"). Host-wide totals have no index.
// Examples: "proc.stat:user", "proc.stat:user.cpu3", "proc.meminfo:MemAvailable",
//           "proc.net.dev:rx_bytes.eth0", "perf:context-switches".
// Derived channels (computed by features/derived) use source "derived".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace reveal {

// How a raw value evolves. Counters are monotonically increasing totals whose
// per-second rate is the signal; a decrease is a reset or a wrap (see counter_bits).
enum class Kind : std::uint8_t { counter, gauge, state };

// The part of the machine a channel describes; attribution reports one of these.
enum class Subsystem : std::uint8_t {
  cpu,
  memory,
  network,
  storage,
  gpu,
  interconnect,
  power_thermal,
  system,  // host-wide signals that belong to no single subsystem
};
inline constexpr std::size_t kNumSubsystems = 8;  // Subsystem::cpu .. Subsystem::system

std::string_view to_string(Kind k);
std::string_view to_string(Subsystem s);
std::optional<Kind> parse_kind(std::string_view s);
std::optional<Subsystem> parse_subsystem(std::string_view s);

struct ChannelInfo {
  std::string name;  // see naming rule above
  std::string unit;  // unit of the raw value: "ticks", "kB", "bytes", "pages", "count", "us", "kHz", "%", ...
  Kind kind = Kind::gauge;
  Subsystem subsystem = Subsystem::system;
  std::uint8_t counter_bits = 64;  // width of a counter; a 32-bit counter may wrap
  std::string help;                // one-line meaning, for `reveal probes` and docs
  double wrap_range = 0;           // > 0: the counter wraps modulo this value instead of 2^bits
                                   // (e.g. RAPL energy_uj wraps at max_energy_range_uj)
};

// What a channel's movement means when the host changes (issue #17: telling a new workload from
// an infrastructure fault).
//   symptom: the host is short of something or something failed — pressure stall time (PSI),
//            steal and I/O wait, direct reclaim, major faults, swapping, OOM kills, CPU
//            throttling (cgroup quota, thermal), TCP retransmissions for loss
//            (derived:tcp_loss_retrans_per_s, tcp_retrans_pct: those the receiver did not report
//            spurious by D-SACK; the raw Tcp_RetransSegs and TCPFastRetrans, which count the
//            spurious ones a busy CPU causes too, are load) and timeouts, drops, errors,
//            overruns, I/O latency per request (derived:disk_await_ms, not derived yet),
//            memory being used up fast enough to run out within minutes
//            (derived:mem_fill_pct_per_min),
//            GPU/RDMA error and throttle counters, the sampler running late (every channel of source
//            "reveal.sampler"). A symptom moving is evidence of a fault.
//   load:    how much work runs — utilisation, throughput, activity counts (bytes, packets,
//            ticks, context switches, page allocations, minor faults, disk time totals),
//            memory levels. These move whenever a job starts, stops or changes phase. Also load:
//            the kernel's smoothed PSI averages (*_avg10/60/300), lagging copies of the stall
//            time whose rate (derived:psi_*) is the symptom, which keep rising for minutes
//            after a job start on a busy host; and page-cache refaults (workingset_refault*),
//            which follow file access patterns (a data loader dropping the pages it read) —
//            the stalls of refaults that hurt are in PSI memory.
//   saturation: work queued beyond a resource's capacity (the USE method's saturation, B. Gregg):
//            runnable tasks (proc.stat:procs_running) and run-queue wait per CPU
//            (derived:runqueue_wait_per_cpu). Once PSI cpu "some" sits at 100 % (one task always
//            waits), only these still rise with contention. Also memory in use
//            (derived:mem_used_pct), whose part beyond 90 % (MemAvailable under 10 % of
//            MemTotal: the host close to out of memory) the gate counts. The workload-change gate counts a
//            material rise of them as a symptom (more tasks waiting per CPU than before,
//            src/pipeline/workload_change.h); attribution weighs them as load, because every
//            busy subsystem's workers (network, I/O) are runnable tasks too: as full symptoms
//            they named the labelled suite's network and disk faults cpu (docs/BENCHMARKS.md).
// From the channel name alone (source and field, case-insensitive; the index is ignored), so it
// applies to stored and imported recordings alike. Unknown channels are load.
enum class ChannelRole : std::uint8_t { load, symptom, saturation };
ChannelRole channel_role(std::string_view name);

// A failure counter's rate (channel `name` of unit "<x>/s" after rates): errors, drops,
// discards, retransmits, timeouts, throttle events (tc.qdisc overlimits, cgroup throttling),
// whose healthy level is a flat 0. A symptom by channel_role(), except the stall times (PSI),
// steal, I/O wait, task counts, paging and the sampler's lateness, which a healthy busy host
// does show. The streaming detector scores such a channel even when it stayed at 0 through the
// whole history it is fitted on (pipeline::scored_columns): a link that starts dropping is
// news exactly because it never did.
bool failure_counter(std::string_view name, std::string_view unit);

// Symptom channels whose healthy level is a flat 0, scored even when they never moved in the
// history a detector is fitted on: the failure counters above, the pace at which memory is
// being used up (derived:mem_fill_pct_per_min, 0 unless the host would run out of memory within
// 5 minutes at the pace of the last 15 s; reveal/features.h), TCP retransmissions for loss
// (derived:tcp_loss_retrans_per_s), the page-cache drops below, and
// rdma:saturated_counters.<dev>.<port> (InfiniBand counters stuck at their maximum).
bool flat_when_healthy(std::string_view name, std::string_view unit);

// Drops of the kernel's caches through /proc/sys/vm/drop_caches: derived:drop_caches_per_min,
// the drops per minute counted over the last 20 s from /proc/vmstat drop_pagecache (1 or 3 written: clean
// page cache thrown away) and drop_slab (2 or 3: reclaimable slab, dentries and inodes),
// counters since boot (Linux 4.14+, mm/vmstat.c; reveal/features.h). The kernel never drops its
// caches by itself, so a healthy host keeps the channel at 0; a rise is someone's command, cron
// job or tuning script, and every job's data set, libraries and checkpoints must then be read
// from disk again. A symptom (a shortage imposed on the host), scored while flat; an incident it
// opens says so in its action (explain::attribute, cache_drop_action in reveal/incident.h).
bool page_cache_dropped(std::string_view name);

// Hypervisor steal: derived:cpu_steal_pct, host-wide or of one CPU ("derived:cpu_steal_pct.cpu3"),
// the share of time the hypervisor ran another guest while this guest's vCPU was ready to run
// (/proc/stat "steal"). Its cause lies outside the guest: no job, fault or setting inside it
// raises it, only its physical host's other tenants do. The workload-change gate judges it as
// an ambient symptom (pipeline::ambient_symptom), and an incident opened by it names the
// hypervisor in its action (explain::attribute).
bool hypervisor_steal(std::string_view name);
std::string_view to_string(ChannelRole r);

}  // namespace reveal
