// Incidents: runs of anomalous windows, with attribution to a subsystem and channels.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "reveal/channel.h"
#include "reveal/gpu_pods.h"

namespace reveal {

// k = 2 by default, when the k-th window is *sustained*: the robust-z detector flags it, which
// needs a deviation lasting the whole window (3 samples), so the incident opens one stride
// after the first window lying wholly inside the fault closes (3–4 s after the onset at 1 Hz).
// A window flagged by the Isolation Forest alone (e.g. a window that only partly overlaps the
// fault, seen through its std) needs one more window: the incident then opens with the
// sustained evidence that names its subsystem. A 3-sample blip (one window) opens none.
struct IncidentRule {
  int min_windows = 2;  // k: consecutive anomalous windows that open an incident (k+1 unsustained)
  int end_after = 3;    // m: consecutive normal windows that close it
  // Windows at the start of a run that cannot open an incident: an anomalous run that ends
  // within them (the start-up of the recorder and of the job) opens none; one that lasts
  // beyond them opens as soon as they are over, starting at its own first window. The offline
  // pipeline sets this from DetectOptions::settle_s; the streaming detector skips its start-up
  // samples instead (StreamingOptions::settle_samples) and leaves it 0.
  std::size_t settle_windows = 0;
  // Seconds an incident must span to be one (issue #17): from its start to its last
  // symptomatic window (to its last anomalous window when it had no symptom). A shorter one is
  // a transient — a few seconds of stalls while a neighbour's build forks its compilers, a
  // burst of page reclaim — reported with the workload changes (Incident::kind "transient",
  // `withdrawn` says why), never as an incident. The agent reports an incident once its span
  // reaches this (its start stays dated at the onset), so a transient raises no alert.
  // Applied where workload changes are told apart (DetectOptions::workload_changes, the
  // streaming detector alike); 0 keeps every incident. 10 s: the time an incident's symptoms
  // must be gone before it ends (kSymptomGoneWindows at 1 Hz), so an incident lasts at least as
  // long as the quiet that ends it; shorter than a Prometheus scrape interval (15 s by default),
  // the granularity at which operators see any alert. Chosen while looking at host days 42 and
  // 43, whose false incidents include 2–7 s ones (docs/BENCHMARKS.md).
  double min_duration_s = 10.0;
};

struct Incident;
// Whether `inc` spans less than `rule.min_duration_s`: from its start to the end of its last
// symptomatic window (Incident::symptom_end_unix_ns), or to its end when it had none, plus
// one sample interval `interval_s` (seconds; ≤ 0 or NaN counts as 0): both ends are sample
// times and each sample covers the interval before it, so N symptomatic samples span N
// intervals, and a stall of the 10 s of quiet that ends an incident is not a transient.
bool is_transient(const IncidentRule& rule, const Incident& inc, double interval_s);
// The `withdrawn` text of a transient (that span, in seconds).
std::string transient_text(const IncidentRule& rule, const Incident& inc, double interval_s);

// The incident rule applied one window at a time (the streaming detector; find_incidents()
// runs the same machine over a whole run). An incident opens at the first of k consecutive
// anomalous windows when the last of them is sustained, else of k+1 (never before
// settle_windows), and ends at the last anomalous window before m consecutive normal ones;
// shorter normal gaps are merged in.
class IncidentTracker {
 public:
  enum class Change { none, opened, extended, closed };
  explicit IncidentTracker(IncidentRule rule);
  // Feeds window `w` (indices must increase by one per call). `opened`: an incident now spans
  // [first(), last()]; `extended`: the open one's last() moved to w; `closed`: the incident
  // [first(), last()] ended (m normal windows after last()). `sustained`: the robust-z
  // detector flags window w (only read when `anomalous`).
  Change push(std::size_t w, bool anomalous, bool sustained = true);
  bool open() const { return open_; }
  // Forgets the open incident (if any) and the current run, without a `closed` change: the
  // streaming detector re-labels the windows (a workload change, a re-learned regime).
  void reset() { open_ = false; run_ = quiet_ = 0; }
  // Declares [first, last] an open incident, as if it had just opened (the streaming detector
  // turning a workload change into an incident). Needs first ≤ last.
  void restart(std::size_t first, std::size_t last) {
    open_ = true;
    first_ = first;
    last_ = last;
    run_ = last - first + 1;
    quiet_ = 0;
  }
  std::size_t first() const { return first_; }
  std::size_t last() const { return last_; }
  void set_rule(IncidentRule rule);

 private:
  std::size_t k_, m_, settle_ = 0, run_ = 0, quiet_ = 0, first_ = 0, last_ = 0;
  bool open_ = false;
};

// [first, last] window indices of each incident. `anomalous[w]` flags window w; `sustained`
// is empty (every window sustained) or flags the windows the robust-z detector flags.
std::vector<std::pair<std::size_t, std::size_t>> find_incidents(std::span<const bool> anomalous,
                                                                IncidentRule rule,
                                                                std::span<const bool> sustained = {});

// One channel's evidence inside an incident.
struct ChannelEvidence {
  std::string name, unit;
  Subsystem subsystem = Subsystem::system;
  double value = 0;      // mean of the channel over the incident
  double reference = 0;  // reference median
  double z = 0;          // mean robust z over the incident windows (signed)
};

// A cgroup named in an incident (reveal/tenants.h, judge_tenants()): a victim, whose pressure
// stall share rose, or a likely aggressor, whose CPU use rose, with the level before and after
// the incident's onset.
struct TenantEvidence {
  std::string cgroup;    // path relative to the cgroup v2 root
  std::string resource;  // "cpu", "memory" or "io" (victims: the pressure that rose; aggressors: "cpu")
  std::string unit;      // "%" (stall share of wall time) or "cores" (CPU use)
  double before = 0, after = 0;
  bool appeared = false;  // first seen after the before span (a new container or job)
  std::string text;       // "j02 cpu pressure 4 % -> 61 %", "j03 CPU 0.0 -> 1.9 cores (new)"
};

// What an incident cost a tenant that was running before it (issue #22), from its CPU time:
// its CPU use over the before and after spans of judge_tenants() (reveal/tenants.h).
struct TenantImpact {
  std::string cgroup;
  double cores_before = 0, cores_after = 0;
  double throughput = 1;  // cores_after / cores_before, at most 1: the share of its speed it kept
};

// The incident's estimated cost (incident_impact() in reveal/tenants.h). Proxy: CPU time measures a job's progress when a fault takes CPU away from
// it or makes it wait (CPU contention, I/O and network stalls, reclaim); it does not when each
// CPU-second does less (cache or memory-bandwidth thieves, frequency or thermal throttling) or
// when the work runs on a GPU, so an incident named gpu or power_thermal is "unknown".
struct IncidentImpact {
  bool measured = false;  // tenant scans covered both spans; otherwise nothing is known or shown
  std::vector<TenantImpact> tenants;  // the tenants judged (largest CPU use before first)
  // 1 − throughput of the first tenant (fraction of its speed lost, 0..1), and the lowest and
  // highest over all of them; NaN: unknown (`basis` says why).
  double slowdown = std::nan(""), slowdown_lo = std::nan(""), slowdown_hi = std::nan("");
  // Σ over the tenants of (1 − throughput) × the incident's duration: job-seconds of work lost,
  // assuming the slowdown measured over the first kTenantAfterS held throughout. NaN: unknown.
  double job_seconds_lost = std::nan("");
  std::string basis;  // what the estimate rests on, or why there is none
  bool known() const { return std::isfinite(slowdown); }
};

struct Incident {
  // "anomaly": anomalous windows (the detectors); "absence": channels that stopped producing
  // data (absence.h; peak_score 0, z 0, value NaN in `top`). Among the workload changes
  // (DetectResult::workload_changes, StreamingDetector::workload_changes()): "workload_change"
  // and "transient" (IncidentRule::min_duration_s).
  std::string kind = "anomaly";
  std::size_t first_window = 0, last_window = 0;
  double start_s = 0, end_s = 0;          // seconds since the run's first sample
  std::int64_t start_unix_ns = 0, end_unix_ns = 0;
  // When its last symptomatic window ended (that window's last sample), where workload changes
  // are told apart and a symptom rose; 0 otherwise. What IncidentRule::min_duration_s is
  // measured to. Not in the reports.
  std::int64_t symptom_end_unix_ns = 0;
  double peak_score = 0;                  // max fused score (threshold = 1)
  Subsystem subsystem = Subsystem::system;
  double confidence = 0;                  // share of the evidence for `subsystem`, 0..1
  std::vector<std::pair<Subsystem, double>> subsystem_shares;  // descending
  // The entity (channel label: "gpu0", "eth0", "nvme0n1", "cpu15", a cgroup...; a CPU's idle
  // states "cpu15.C6" count as "cpu15") whose channels
  // carry the largest share of the evidence, across subsystems, with that share; empty when
  // no label carries at least kFocusMinShare (host-wide channels dominate). A GPU whose power
  // cap, PCIe traffic and tensor activity all move is named here even though those channels
  // belong to three subsystems.
  std::string focus;
  double focus_share = 0;
  std::vector<ChannelEvidence> top;       // strongest channels, descending |z|
  // The symptom channel whose material rise made this an incident rather than a workload
  // change (detect() and the streaming detector alike) — the strongest rise, relative to the
  // material step of its unit (src/pipeline/workload_change.h), in the incident's first
  // symptomatic window — with that rise over its reference median (`value`: the rise, in the
  // channel's unit; `reference`: the median; `z`: its robust z). Empty `name` when no symptom
  // rose (a change that kept drifting, workload changes off, a workload change).
  ChannelEvidence symptom;
  std::string action;                     // suggested next step for an operator
  // Per detector (robust_z, iforest, pca_spe when fitted): its peak level over the incident
  // (≥ 1: it flagged a window on its own; offline.h) and the subsystem shares of its own
  // per-channel contributions. Those with peak level ≥ 1 make up subsystem_shares, weighted
  // by that level (src/explain/attribution.h, attribute()).
  struct DetectorView {
    std::string detector;
    double peak_level = 0;
    std::vector<std::pair<Subsystem, double>> subsystem_shares;  // descending
  };
  std::vector<DetectorView> detectors;
  // Cgroups hurt around the onset, and those whose CPU use rose with it (reveal/tenants.h);
  // empty when the host's cgroups show neither or no tenant scans were recorded.
  std::vector<TenantEvidence> victims, aggressors;
  // What it cost the tenants running before it (see IncidentImpact; measured = false without
  // tenant scans).
  IncidentImpact impact;
  // The containers holding the GPUs among its focus and strongest channels when it began, as
  // the kubelet assigned them (reveal/gpu_pods.h; attach_gpu_pods() in reveal/tenants.h); empty
  // without such GPUs or without the kubelet's pod-resources API.
  std::vector<GpuPod> gpu_pods;
  // A workload change (kind "workload_change") that was first reported as an incident and then
  // withdrawn, once the tenant scans showed a new workload starting on a host where it hurt
  // nobody (reveal/tenants.h, judge_workload_start()), or a transient (kind "transient": an
  // incident shorter than IncidentRule::min_duration_s, never reported as one): why, and when
  // it was withdrawn. Empty text and 0 otherwise.
  std::string withdrawn;
  std::int64_t withdrawn_unix_ns = 0;
  // An incident that was a workload change first and became one because it kept drifting
  // (a leak, a runaway ramp: pipeline/workload_change.h kDriftRelearns), live and in
  // detect() alike. Its onset is a change already judged, so it is never withdrawn as a new
  // workload starting (judge_workload_start()): a leak in a job that just started is an
  // incident. Not serialised.
  bool drifted = false;
};

inline constexpr double kFocusMinShare = 0.3;

// The label of a channel name "<source>:<field>.<label>" (fields hold no '.'), "" if none.
std::string channel_label(const std::string& name);

// Suggested action for a subsystem given the strongest channel (documented table in
// src/explain/actions.cpp).
std::string suggest_action(Subsystem s, const ChannelEvidence& top);

// Suggested action for an incident whose symptom (Incident::symptom: its rise over the
// reference median) is hypervisor steal (hypervisor_steal() in reveal/channel.h): the cause is
// the VM's physical host, so the action is the provider's or the placement's, not the jobs'.
std::string steal_action(const ChannelEvidence& symptom);

// Suggested action for an incident whose symptom is a drop of the page cache or slab through
// /proc/sys/vm/drop_caches (page_cache_dropped() in reveal/channel.h): an administrative write,
// never the kernel's own doing, so the action is to find the writer.
std::string cache_drop_action(const ChannelEvidence& symptom);

}  // namespace reveal
