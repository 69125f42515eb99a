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
// Empty when the timeline has no scan before the onset, or fewer than two after it.
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
};
TenantFinding judge_tenants(const TenantTimeline& timeline, std::int64_t onset_unix_ns, std::int64_t end_unix_ns);

// Copies a finding into an incident (Incident::victims, Incident::aggressors), judged over
// [incident.start_unix_ns, incident.end_unix_ns].
void attach_tenants(Incident& incident, const TenantTimeline& timeline);// The same for a whole `reveal detect` result: attach_tenants(DetectResult&, ...) in
// reveal/offline.h.

}  // namespace reveal
