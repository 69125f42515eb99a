// `reveal agent`: the per-host daemon. It samples continuously into a rolling store, scores
// every new window with the streaming detector (reveal/streaming.h, the same fit and scoring
// code as `reveal detect`) and serves HTTP:
//   GET /metrics    Prometheus text exposition 0.0.4 (render_metrics below)
//   GET /incidents  JSON, schema reveal.incidents/1 (render_incidents_json below)
//   GET /healthz    "ok\n" (200) while sampling keeps up; 503 with one line of reason otherwise
//
// Metric names (Prometheus conventions: base units, `_total` for counters, `_seconds`, `_bytes`):
//   Raw channels (the selected ones; all by default):
//     reveal_<source>_<field>[_total]{channel="<name>",subsystem="<s>",unit="<unit>"[,entity="<label>"]}
//     <source>/<field> with every character outside [a-zA-Z0-9_] replaced by '_' and repeated
//     '_' collapsed; `_total` when the channel is a counter (its raw running total, as stored).
//     Channels in ms, us or ns are exported in seconds (Prometheus base unit; the value times
//     prometheus_unit_scale()) and named with "seconds" (the abbreviated token replaced, or
//     "_seconds" appended); their `unit` label keeps the channel's own unit, so a reader divides
//     by prometheus_unit_scale() to get the stored value back.
//     The `channel` label carries the exact channel name, so a reader (`reveal detect
//     --prometheus`) rebuilds the channel list without guessing; `entity` is channel_label().
//     A cgroup channel of a Kubernetes pod adds pod_uid[,namespace,pod][,container] after
//     entity (AgentSnapshot::channel_labels; telemetry/cgroup/kubernetes.h).
//   Detection:
//     reveal_anomaly_score                 gauge  fused score of the last window; anomalous ≥ 1
//     reveal_subsystem_anomaly_score{subsystem}  gauge  per subsystem: its channels' robust-z
//                                          stream, calibrated on the reference; ≥ 1 anomalous
//     reveal_model_ready                   gauge  1 once a reference model is fitted (warm-up done)
//     reveal_model_reference_windows       gauge  windows the current model was fitted on
//     reveal_model_fit_timestamp_seconds   gauge  Unix time of the last fit
//     reveal_windows_scored_total          counter
//     reveal_symptom_led_windows_total     counter windows a symptom's material step made anomalous
//                                          below the fused threshold (streaming.h)
//     reveal_incidents_total{subsystem}    counter incidents opened, by attributed subsystem:
//                                          counted once an incident's span reached
//                                          detect.min_duration (10 s; IncidentRule::min_duration_s)
//                                          where workload changes are told apart, at once otherwise
//     reveal_incident_active{subsystem,focus,top_channel}  gauge 1 while an incident is open
//                                          (absent otherwise); top_channel = its strongest channel
//                                          (not `channel`: that label marks raw channels only)
//     reveal_incident_active_start_timestamp_seconds   gauge (present while open)
//     reveal_incident_active_confidence    gauge share of the evidence for its subsystem (0..1)
//     reveal_incident_active_slowdown_ratio   gauge its estimated cost: the share of its speed the
//                                          largest running tenant lost (0..1; Incident::impact,
//                                          from CPU time; absent when unknown)
//     reveal_incident_active_lost_job_seconds gauge job-seconds of work the running tenants lost so
//                                          far (absent when unknown)
//     reveal_incident_pending{subsystem,focus,top_channel}  gauge 1 while an incident is open but
//                                          not reported yet (StreamingDetector::pending(); absent
//                                          otherwise): it becomes the active one, a transient, or
//                                          is withdrawn as a new workload
//     reveal_incident_pending_start_timestamp_seconds  gauge (present while pending)
//     reveal_workload_changes_total        counter workload changes (runs of anomalous windows in
//                                          which no symptom rose: a job started, stopped or
//                                          changed phase; streaming.h), not incidents
//     reveal_incidents_withdrawn_total     counter incidents withdrawn as a new workload starting
//                                          (new cgroups alone, nobody hurt; reveal/tenants.h,
//                                          judge_workload_start()), 5-10 s after they opened;
//                                          each then counts in reveal_workload_changes_total
//                                          (and in reveal_incidents_total only when it had
//                                          been reported: it spanned min_duration before)
//     reveal_incidents_transient_total     counter incidents that ended shorter than
//                                          detect.min_duration: never reported as incidents
//                                          (kind "transient" among the workload changes)
//     reveal_workload_change_active{subsystem,top_channel}  gauge 1 while a workload change is
//                                          open (absent otherwise)
//     reveal_regimes_remembered            gauge past regimes' models the detector remembers
//     reveal_absence_incidents_total{source}  counter absence incidents opened (channels of the
//                                          source stopped producing data: absence_tracker.h)
//     reveal_absence_active{source,subsystem,focus,top_channel}  gauge 1 while an absence
//                                          incident of the source is open (absent otherwise);
//                                          top_channel = its first absent channel
//     reveal_absence_active_channels{source}   gauge channels in the open absence incident
//     reveal_absence_active_start_timestamp_seconds{source}  gauge its first missing sample
//   The agent itself:
//     reveal_build_info{version,mode}      gauge 1 (mode "live" or "replay")
//     reveal_host_config_info{key,value}   gauge 1 per key of the host's configuration snapshot
//                                          (reveal/host_config.h: kernel, governor, THP, MTU, PCIe
//                                          link, drivers, GPU settings...; re-read every
//                                          config_interval; a replay shows its store's snapshot at
//                                          start). A changed value is a new series. Values over
//                                          1024 bytes are cut there, ending "...". Read back by
//                                          `reveal config drift --prometheus` (reveal/config_drift.h)
//     reveal_samples_total                 counter samples taken
//     reveal_samples_skipped_total         counter ticks missed because the host stalled
//     reveal_sampler_realtime              gauge 1 while the sampling thread runs at real-time
//                                          priority (sampling_priority; reveal/sampler.h)
//     reveal_last_sample_timestamp_seconds gauge
//     reveal_probe_up{probe}               gauge 1 when the probe's last read gave at least one value
//     reveal_probe_duration_seconds{probe} gauge duration of the probe's last read
//     reveal_probe_channels{probe}         gauge channels the probe opened
//     reveal_probe_channels_missing{probe} gauge channels without a value (NaN) at the last read
//     reveal_probe_errors_total{probe}     counter ticks the probe threw, gave no value at all, or
//                                          failed to read a file that is still there
//     reveal_store_bytes                   gauge size of the rolling store (with -wal/-head)
//     reveal_store_write_failed            gauge 1 once a write to the store failed (disk full,
//                                          I/O error): samples are no longer stored, and /healthz
//                                          answers 503 naming the error
//     reveal_store_max_bytes               gauge the store's configured size bound
//     reveal_detect_duration_seconds       gauge streaming detector time for the last sample
//     reveal_gpus                          gauge GPUs NVML reported when the agent started (a GPU
//                                          gone since the last start lowers it: alert on a drop)
//     reveal_gpu_up{gpu}                   gauge 1 while the GPU answers; 0 once NVML reported it
//                                          lost or it fell off the bus (XID 79), until a restart
//     reveal_gpu_xid_errors_total{gpu,xid} counter XID errors by code, counted from the NVML
//                                          event stream; kept in <store>.xid-counts so that a
//                                          restart of the agent does not reset them
//     reveal_gpu_pod_info{gpu,uuid,namespace,pod,container,resource}  gauge 1 per container
//                                          holding the GPU, from the kubelet's pod-resources API
//                                          (src/agent/gpu_pod_watcher.h; reveal/gpu_pods.h); a GPU
//                                          held by one container also labels its nvml series
//                                          with namespace, pod and container
//     reveal_kubelet_pod_resources_up      gauge 1 when the kubelet's last pod-resources answer
//                                          came, 0 when the call failed (absent: never asked: no
//                                          GPU, no socket, or pod_resources_interval "0s")
//     reveal_kubelet_pod_resources_errors_total  counter calls that failed (absent with _up)
//     process_cpu_seconds_total, process_resident_memory_bytes, process_start_time_seconds
//                                          (the standard process metrics, from /proc/self)
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "reveal/channel.h"
#include "reveal/gpu_pods.h"
#include "reveal/incident.h"
#include "reveal/version.h"

namespace reveal {


// Per-probe health as the sampler last saw it.
struct ProbeHealth {
  std::string name;
  bool available = false;        // opened with at least one channel
  std::string reason;            // why not available
  bool up = false;               // last read produced at least one finite value
  double last_duration_s = 0;
  std::size_t channels = 0, channels_missing = 0;
  std::uint64_t errors_total = 0;
};

// An open absence incident as the agent shows it.
struct ActiveAbsence {
  std::string source;         // the channel-name prefix (probe) whose channels stopped
  std::size_t channels = 0;   // channels in the incident
  Incident incident;
};

// Everything /metrics and /incidents show, copied out of the sampling thread under a lock.
// XID errors of one code on one GPU (reveal_gpu_xid_errors_total{gpu,xid}).
struct GpuXidCount {
  std::string gpu;  // "gpu0"
  int xid = 0;
  std::uint64_t count = 0;
};

struct AgentSnapshot {
  std::string hostname, version = kVersion, mode = "live";
  std::vector<ChannelInfo> channels;  // raw channels (store order)
  std::vector<char> exported;         // per channel: 1 = shown on /metrics
  // Per channel: extra (name, value) labels rendered after `entity` (pod_uid, namespace, pod,
  // container for a cgroup of a Kubernetes pod: telemetry/cgroup/kubernetes.h; namespace, pod,
  // container on a GPU's nvml channels while one container holds the GPU: gpu_pods), none for
  // most; may be shorter than `channels`.
  std::vector<std::vector<std::pair<std::string, std::string>>> channel_labels;
  std::vector<double> values;         // last raw sample, NaN = gap
  std::int64_t last_sample_unix_ns = 0;
  // CLOCK_MONOTONIC when that sample was taken in: /healthz ages samples by it, so a wall clock
  // that steps (NTP, a paused VM) never makes a sampling agent look stale.
  std::int64_t last_sample_monotonic_ns = 0;
  std::uint64_t samples_total = 0, samples_skipped_total = 0, windows_scored_total = 0;
  std::uint64_t symptom_led_windows_total = 0;
  bool sampler_realtime = false;  // Sampler::realtime() at the last sample
  bool model_ready = false;
  std::size_t reference_windows = 0;
  double model_fit_unix_s = 0;
  double anomaly_score = 0;                                    // fused, NaN before the model
  std::array<double, kNumSubsystems> subsystem_score{};        // NaN before the model
  std::array<std::uint64_t, kNumSubsystems> incidents_total{};
  std::optional<Incident> active;                              // the open incident, if any
  // The open incident not reported yet (StreamingDetector::pending(): shorter than
  // detect.min_duration so far), as a Prometheus alert is pending before it fires.
  std::optional<Incident> pending;
  std::vector<Incident> recent;                                // closed incidents, newest last
  // Workload changes (kind "workload_change"): the open one, the ended ones (newest last).
  std::uint64_t workload_changes_total = 0;
  std::uint64_t incidents_withdrawn_total = 0;
  std::uint64_t incidents_transient_total = 0;
  std::size_t regimes_remembered = 0;
  std::optional<Incident> active_workload_change;
  std::vector<Incident> workload_changes;
  // Absence incidents (AbsenceTracker): per source (channel-name prefix, the probe) the
  // incidents opened, the open ones (at most one per source) and the closed ones, newest last.
  std::vector<std::string> absence_sources;
  std::vector<std::uint64_t> absence_incidents_total;          // per absence_sources entry
  std::vector<ActiveAbsence> active_absences;
  std::vector<Incident> recent_absences;
  double detect_duration_s = 0;
  std::vector<ProbeHealth> probes;
  std::uint64_t store_bytes = 0, store_max_bytes = 0;
  std::string store_error;  // the first failed store write's error; empty while writes succeed
  // GPUs (NVML): their labels ("gpu0", from the nvml channels at start), 1 while each answers
  // (0 after it was reported lost or fell off the bus, XID 79), and XID errors by (GPU, code)
  // since the counts began (kept beside the store across restarts: gpu_xid_counts_path()).
  std::vector<std::string> gpus;
  std::vector<char> gpu_up;
  std::vector<GpuXidCount> xid_errors;
  // The kubelet's pod-resources API (src/agent/gpu_pod_watcher.h; reveal/gpu_pods.h): the
  // containers holding each GPU at its last answer (reveal_gpu_pod_info), whether its last call
  // answered (1), failed (0) or none was made (-1: no GPU, no socket, turned off), and the calls
  // that failed.
  std::vector<GpuPod> gpu_pods;
  int pod_resources_up = -1;
  std::uint64_t pod_resources_errors_total = 0;
  double process_cpu_seconds = 0, process_resident_bytes = 0, process_start_unix_s = 0;
  // The host's configuration snapshot (key -> value), reveal_host_config_info.
  std::map<std::string, std::string> config;
};

// Prometheus metric name of a raw channel (see the header comment), e.g.
// "proc.stat:user.cpu3" (counter) -> "reveal_proc_stat_user_total".
std::string prometheus_metric_name(const ChannelInfo& c);
// Factor from a channel's stored value to its exported value: 1e-3 for unit "ms", 1e-6 for
// "us", 1e-9 for "ns", else 1.
double prometheus_unit_scale(const ChannelInfo& c);

// A raw channel's series as /metrics exposes it: prometheus_metric_name(c), then
// {channel="..",subsystem="..",unit=".."[,entity=".."]} and `labels` after them in the order given
// (label values escaped; names must be valid label names), e.g.
//   reveal_proc_stat_user_total{channel="proc.stat:user.cpu3",subsystem="cpu",unit="ticks",entity="cpu3",instance="a"}
// `reveal export --format openmetrics` writes these, so a recording backfilled into Prometheus
// reads back through `reveal detect --prometheus` as the agent's scrapes would.
std::string prometheus_series(const ChannelInfo& c, std::span<const std::pair<std::string, std::string>> labels = {});

// One key of the host's configuration as a series (AgentSnapshot::config; reveal/host_config.h):
//   reveal_host_config_info{key="net.eth0.mtu",value="9000"[,<labels>]}
// Key and value as prometheus_config_label() makes them, then escaped. /metrics and
// `reveal export --format openmetrics` both write these.
std::string prometheus_config_series(const std::string& key, const std::string& value,
                                     std::span<const std::pair<std::string, std::string>> labels = {});
// A configuration key or value as it is exposed: printable ASCII kept, any other byte as '?' (a
// quirky file must not make the scrape fail as invalid UTF-8), at most 1024 bytes (a longer one
// cut to end "..."). `reveal config drift` compares every source's hosts in this form (config_text, reveal/config_drift.h).
std::string prometheus_config_label(std::string_view v);

// Text exposition format 0.0.4: one # HELP and # TYPE per metric family, families in a fixed
// order, label values escaped (\\, \", \n), bytes that are not UTF-8 in label values and HELP as U+FFFD. NaN values are written as NaN.
std::string render_metrics(const AgentSnapshot& s);

// {"schema":"reveal.incidents/1","host":..,"active":<incident|null>,"pending":<incident|null>,"recent":[..],
//  "active_absences":[..],"recent_absences":[..],"active_workload_change":<..|null>,
//  "workload_changes":[..]} with the incident fields of reveal.detect/1 (docs/DETECT_JSON.md);
// `active`/`recent` are anomaly incidents, the *_absences ones have kind "absence", the
// workload changes kind "workload_change" (not incidents: their `action` says how they ended).
std::string render_incidents_json(const AgentSnapshot& s);

}  // namespace reveal
