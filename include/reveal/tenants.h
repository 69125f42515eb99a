// Tenants: per-cgroup CPU use and pressure stalls over time, to name in an incident the
// containers that suffer (victims) and those whose own use rose at the same time (the likely
// noisy neighbours). Issue #20 item 2; issue #17's co-tenant job starts.
//
// Source: the cgroup v2 hierarchy (Documentation/admin-guide/cgroup-v2.rst), which every
// systemd host has — unified at /sys/fs/cgroup, or on a hybrid host the controller-less tree
// at /sys/fs/cgroup/unified, where cpu.stat's usage and the PSI files (cpu.pressure,
// memory.pressure, io.pressure; Documentation/accounting/psi.rst) still exist per cgroup.
// A tenant is a leaf cgroup (no child cgroups): a container, a pod's container, a service, a
// session scope. The tree is walked again at every scan, so tenants are followed as they come
// and go (src/telemetry/cgroup/tenants.h). Unlike the cgroup probe's channels (fixed at open),
// scans are kept beside the samples (store tables tenant_paths and tenant_scans, reveal/store.h),
// a few seconds apart, and read only to explain incidents.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "reveal/incident.h"
#include "reveal/recording.h"

namespace reveal {

// TenantCounters, TenantScan and TenantTimeline (the recorded scans) are in reveal/recording.h.

// Who is hurt and who is the neighbour around an incident's onset (src/explain/tenants.cpp).
//   Before: each tenant's rates from its first to its last scan among the scans stamped in
//     [onset − kTenantBeforeS, onset − kTenantGuardS]; after: the same over the scans that follow
//     (the first one after the before span) up to min(end, onset + kTenantAfterS). The scan
//     interval that holds the onset belongs to neither span, so neither mixes the two states.
//     A tenant with no two scans in the before span, or whose counters went down across the
//     onset (removed and created again under its path), "appeared" (its before rates are 0). A
//     tenant whose counters went down within the after span has no rates there and is named
//     for nothing.
//   Victims: tenants that were running before (CPU use ≥ kTenantActiveCores; an idle cgroup's
//     stall share means nothing) whose pressure stall share (cpu, memory or io "some", % of
//     wall time) rose by at least kTenantVictimStep points; the resource with the largest rise
//     is named. Sorted by rise, at most kTenantMax.
//   Aggressors: tenants whose CPU use rose by at least kTenantCpuStep cores and by at least
//     half again its level before (or that appeared using that much). Sorted by rise, at most
//     kTenantMax. A tenant can be both (a new job starved by the one it starves).
//   Outside every tenant: the pseudo-tenant "/" (kOutsideTenants, reveal/recording.h: CPU time
//     of processes in no leaf cgroup — a build in an admin's shell, a daemon outside any
//     service, kernel threads) is judged as an aggressor like any tenant and named "processes
//     outside every cgroup scanned (/: ...)"; it is never young, never a victim (no pressure
//     totals), and names nothing without scans of it before the onset. For
//     judge_workload_start(), a host where it used kTenantCpuStep cores or more before the onset
//     ran another job, and it is an older aggressor only when it rose by at least what the
//     young tenants use after the onset (less is the kernel's work for them: reclaim, kworkers).
// Empty (and not `measured`) when the timeline has fewer than two scans before the onset, or fewer
// than two after it.
// How often `reveal record` and `reveal agent` walk the tree (when the cgroup probe is selected).
inline constexpr std::chrono::seconds kTenantScanPeriod{5};
inline constexpr double kTenantBeforeS = 60.0;
// The incident's start is its first anomalous window's start: the change began within about a
// window (3 s) of it.
inline constexpr double kTenantGuardS = 2.0;
inline constexpr double kTenantAfterS = 30.0;
inline constexpr double kTenantVictimStep = 10.0;  // points of a stall share, as SymptomGate's step
inline constexpr double kTenantCpuStep = 0.25;     // cores
inline constexpr double kTenantActiveCores = 0.05;
inline constexpr std::size_t kTenantMax = 3;

struct TenantFinding {
  std::vector<TenantEvidence> victims, aggressors;
  // Impact (issue #22): whether both spans had scans, and the tenants whose speed is judged —
  // running before (kTenantCpuStep cores or more), not young (as judge_workload_start() has it),
  // not an aggressor, not "/" — with their CPU use in both spans, largest before first, at most
  // kTenantMax.
  bool measured = false;
  std::vector<TenantImpact> impacts;
};
TenantFinding judge_tenants(const TenantTimeline& timeline, std::int64_t onset_unix_ns, std::int64_t end_unix_ns);

// Copies a finding into an incident (Incident::victims, Incident::aggressors, Incident::impact),
// judged over [incident.start_unix_ns, incident.end_unix_ns].
void attach_tenants(Incident& incident, const TenantTimeline& timeline);

// The incident's cost from a finding (Incident::impact): not measured without scans; unknown
// ("basis" says why) when no tenant ran kTenantCpuStep cores before the onset, or when the
// incident is named gpu or power_thermal (CPU time is no measure of progress there); otherwise
// slowdown = 1 − the first tenant's throughput, the range over all judged tenants, and
// job_seconds_lost = Σ (1 − throughput) × (end − start). Both drivers call it on the same
// finding (attach_tenants, TenantFeed), so they report the same cost.
IncidentImpact incident_impact(const TenantFinding& finding, const Incident& incident);
// One line for the reports: "jobs/a ran at 56 % of its speed (slowdown 44 %), about 26
// job-seconds lost" (with "; 2 tenants: slowdown 30-44 %" for several), or the basis when unknown
// ("unknown: ..."); "" when not measured.
std::string impact_text(const IncidentImpact& impact);
// job_seconds_lost for `impact`'s tenants over the incident's current duration (the agent
// updates an open incident's every sample; allocates nothing).
double job_seconds_lost(const IncidentImpact& impact, const Incident& incident);
// The same for a whole `reveal detect` result: attach_tenants(DetectResult&, ...) in
// reveal/offline.h.

// The pods on an incident's GPUs (issue #20): Incident::gpu_pods = the holders of the GPUs that
// are the incident's focus or the entity of one of its strongest channels ("gpu0" of
// "nvml:utilization_gpu.gpu0"), sorted: from the holders' history at the incident's start. The
// agent and `reveal detect` both attach from the history of the same events (the agent's as it
// writes them; the store's: attach_gpu_pods(DetectResult&, ...) in reveal/offline.h).
void attach_gpu_pods(Incident& incident, const GpuPodsHistory& history);

// A new workload starting, not a fault (issue #17: "new cgroups" as a workload-change signal).
// An incident whose onset is explained by new cgroups alone, on a host where they could hurt
// nobody, is a job (container, pod) starting: the agent withdraws it as a workload change
// (StreamingDetector::withdraw_incident) and `reveal detect` lists it with the changes.
//   Judged once, over the after span's first scan interval: the scans are those of
//   judge_tenants() with the after span ending at the second scan after the interval that
//   holds the onset, so the agent decides 5–10 s after the onset (kTenantScanPeriod) and
//   `reveal detect` decides the same from the store. Scans stamped after `now` are not looked
//   at (the agent has none; a replay passes the sample time).
//   A start when all of these hold: some young tenant — absent from the last scan at or before
//   onset − kTenantYoungS or idle (under kTenantActiveCores) over the scan interval that ends
//   there (an empty cgroup made ahead of its job), or created again across the onset — uses kTenantCpuStep cores or
//   more after the onset (a new job runs); every aggressor is young; every victim is young (a
//   new job's own contention while it ramps up is its own); no older tenant that still runs
//   after the onset used kTenantCpuStep cores or more before it (the host ran no other job the
//   newcomer could slow down); and some scan lies kTenantYoungS or more before the onset.
//   A job's start transient may open several incidents (loading, then training): each is a
//   start while the job is younger than kTenantYoungS at its onset; a fault inside a job in
//   its first kTenantYoungS is taken for part of its start.
//   Deliberately narrow: a new container beside a running job stays an incident even when no
//   stall shows (a cache or memory-bandwidth thief hurts without PSI), and so does a job's own
//   phase change (the detector's other workload-change rules judge those).
// `pending` until the decisive scan is taken; `not_start` after that, or once `now` is more
// than kTenantAfterS past the onset without it (scans stopped), or with no scan before the onset.
inline constexpr double kTenantYoungS = 30.0;
struct WorkloadStartVerdict {
  enum State { pending, start, not_start } state = pending;
  std::string text;  // a start: "a new workload started (j03 CPU 0.00 -> 1.90 cores (new)) ..."
  std::int64_t decided_unix_ns = 0;  // the decisive scan's stamp (start and not_start by it)
};
WorkloadStartVerdict judge_workload_start(const TenantTimeline& timeline, std::int64_t onset_unix_ns,
                                          std::int64_t now_unix_ns);

}  // namespace reveal
