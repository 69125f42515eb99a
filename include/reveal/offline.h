// The offline detection pipeline: recording → rates → derived → windows → detectors →
// calibrated fusion → incidents → attribution. `reveal detect` is a thin shell around detect().
//
// Reference modes:
//   self      (no baselines) the run's own robust statistics; finds transient faults.
//   baseline  a model trained on known-good recordings (a model file, or the stores given, trained
//             in memory; baseline_model.h); finds persistent faults too.
// Detectors over the window features (docs/DESIGN.md §4):
//   robust_z  per-channel robust z of the window mean; window score = RMS of the 3 largest |z|.
//   iforest   Isolation Forest (Liu et al. 2008) on window mean and std of a pruned channel set
//             (channels dropped when Pearson |r| ≥ prune_r with one already kept, paper §4, or
//             constant in the reference: nothing to split on).
//   pca_spe, pca_t2  PCA residual (pca_residual.h) on every channel's robust z of its window
//             mean; the streams are calibrated on held-out reference windows, on ln(1 + score).
//             Fused only with PcaUse::fuse (see PcaUse).
// Calibrated fusion (SPOT, Siffer et al. KDD 2017; spot.h): each fused detector's reference
//   score stream gets an EVT tail (peaks over its 90–98 % quantile fitted by a GPD, shape
//   γ ≥ 0, scale at least the stream's floor), which maps a window's score to p_d = P(a
//   reference window scores at least this much). The user's knob F = false_per_day (expected
//   false incidents per host-day, default 1) sets the per-window false-alarm rate
//   q = F·T_w / 86400 s (T_w: seconds between window starts). With D fused detectors
//   (robust_z at both time scales — the window, and the trailing mean of WindowOptions::trail
//   samples when longer, src/pipeline/window_model.h — and iforest; pca_spe too with
//   PcaUse::fuse), a window is anomalous when some
//   p_d ≤ q / D (Bonferroni); fused = max_d ln(D·p_d) / ln q, so fused ≥ 1 exactly then and
//   0.5 means p_d ≈ √q / D. An incident needs ≥ 2 anomalous windows in a row and neighbouring
//   windows share samples, so q per window bounds the rate of false incidents from above.
//   A detector whose reference is too short for a tail (< 20 windows) falls back to its
//   robust-SD level c_d / cut_d, c = (s − median) / max(1.4826·MAD, floor) of the reference.
// Attribution: among channels with mean |z| ≥ 3 over the incident, each weighs its effect size
//   |ln((|v|+ε)/(|ref|+ε))| (ε = unit resolution, 5 points for % and 0/1 states; cap ln 100;
//   falls ×0.25; load channels ×0.5 against symptom channels, channel_role in reveal/channel.h;
//   per-CPU channels ÷ number of CPUs); a subsystem's evidence is the sum of its 3 strongest;
//   confidence = its share of all evidence. An incident whose symptom is of a subsystem other
//   than cpu and system (a qdisc's throttling, losses, memory used up, I/O stalls) is named by
//   it when that subsystem's share is at least half the largest (src/explain/attribution.h).
//   The forest's and the PCA's per-channel contributions also weigh min(1, max(0.05, mean |z| / 3)).
//   An incident whose symptom is hypervisor steal
//   names the hypervisor in its action (its cause is outside the host; reveal/channel.h).
// Incidents: k = 2 anomalous windows in a row open one, not before the start-up settle is over
//   (incident.h). One in which no symptom channel rose materially and that did not keep drifting
//   is a workload change instead (DetectOptions::workload_changes).
// Self mode reweights: windows whose robust-SD level max_d c_d / cut_d is ≥ 0.5 (± one window
//   length) leave the reference and the run is scored again, up to 3 passes; the most
//   suspicious leave first, and at least half the windows remain. (The robust level, not the
//   EVT one: median and MAD tolerate a fault in up to half the reference, a tail fitted on it
//   does not.) The kernel's smoothed averages (PSI avg10/60/300, loadavg) are not scored in
//   self mode (pipeline::smoothed_average): their decay after a job's start inflated the run's
//   spread.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "reveal/features.h"
#include "reveal/incident.h"
#include "reveal/progress.h"
#include "reveal/recording.h"

namespace reveal {

// The PCA residual detector's role. `report`: fitted and scored, its streams in the JSON
// traces (pca_spe, pca_t2), not part of the fused score. Measured on the 8 recordings at hand
// (docs/BENCHMARKS.md, "PCA residual"), fusing its SPE added 3 false incidents on clean runs and
// found nothing the other two missed, so it stays out of fusion until its tail is calibrated
// (SPOT, issue #5). `off`: not fitted (the agent: no cost). `fuse`: SPE joins the fused score.
enum class PcaUse { off, report, fuse };

struct DetectOptions {
  WindowOptions window;
  IncidentRule incident;
  std::uint64_t seed = 42;
  double z_cut = 6.0;       // calibrated robust-z stream threshold, in robust SDs
  double if_cut = 6.0;      // calibrated Isolation Forest stream threshold, in robust SDs
  PcaUse pca = PcaUse::report;
  double pca_cut = 6.0;     // calibrated PCA residual (SPE) stream threshold, in robust SDs of ln(1 + SPE)
  double pca_variance = 0.9;  // share of the reference variance the PCA model plane keeps
  double prune_r = 0.5;     // Pearson |r| pruning for the multivariate model
  int top_channels = 5;
  // Expected false incidents per host-day: the per-window false-alarm rate the fused score is
  // calibrated to (see "Calibrated fusion" above).
  double false_per_day = 1.0;
  // Start-up settle: windows ending within this many seconds of the run's first sample cannot
  // open an incident (IncidentRule::settle_windows); a fault that outlasts them is still reported
  // from its start. Matches the agent's 10 s start-up settle. The same start-up windows of the
  // run (self mode) or of each baseline store leave the reference when they are at most a
  // quarter of its windows, else only the EVT tail fits (pipeline::startup_reference()).
  double settle_s = 10.0;
  // Tell workload changes from incidents, as the agent does (src/pipeline/workload_change.h):
  // an anomalous episode in which no symptom channel rose materially (stall and wait time,
  // errors, drops, throttling, tasks waiting beyond the CPUs) and that did not keep drifting
  // for 90 rows is a workload change (DetectResult::workload_changes), not an incident. Off
  // (`reveal detect --all-anomalies`): every anomalous episode is an incident.
  bool workload_changes = true;
  // Symptom-led windows (src/pipeline/workload_change.h, SymptomGate::stepped): a window in
  // which a symptom channel rose materially — against the reference and, by the same step,
  // beyond the highest level it held in the minute that ended 30 s before — is anomalous on
  // its own, whatever the fused score: the fused threshold is set by the load channels'
  // variation (on a busy host, another tenant's phases), a symptom's material step is not.
  // Hypervisor steal is never led this way (an ambient symptom). Off
  // (`reveal detect --no-symptom-windows`): only the fused score flags windows.
  bool symptom_windows = true;
  // Keep every window's per-channel robust z in DetectResult::window_z (off: it is
  // windows × channels numbers; `reveal detect --window-z` for evaluation).
  bool window_z = false;
  // Receives the stages of the work as it goes (reveal/progress.h); not owned, null for none.
  // Never saved in a model file (BaselineModel::train drops it).
  Progress* progress = nullptr;
};

struct DetectorTrace {
  std::string name;                 // "robust_z", "iforest"
  std::vector<double> raw;          // per window
  std::vector<double> calibrated;   // per window, robust SDs above the reference median
  double cut = 0;                   // robust-SD cut (the fallback, and the reweighting's scale)
  // Per window: P(a reference window scores at least this much), from a peaks-over-threshold
  // GPD fit of the reference stream (SPOT, include/reveal/spot.h); NaN without a tail fit.
  std::vector<double> tail_p;
  // Raw score at which this detector alone makes a window anomalous (its tail's q/D quantile,
  // or median + cut·scale without a tail fit); NaN when not fitted.
  double threshold = 0;
  bool fused = false;  // part of the fused score
  // Per window: this detector's level (≥ 1: it alone makes the window anomalous; the fused
  // score is the largest level of the fused detectors); NaN where not computed (pca_t2).
  std::vector<double> level;
};

struct DetectResult {
  std::string mode;  // "self" or "baseline"
  RunMetadata meta;
  // The first analysed sample's time (Unix ns): window and incident seconds (start_s, end_s,
  // settle) count from it. Not meta.start_unix_ns, which is when the recorder started and, in an
  // agent's rolling store, may lie hours before the oldest sample kept.
  std::int64_t origin_unix_ns = 0;
  std::vector<std::string> baseline_hosts;  // the hosts of the known-good runs (the model's training stores)
  std::string baseline_model;               // the model file scored against; "" otherwise
  std::size_t n_samples = 0, n_channels_recorded = 0, n_channels_used = 0, n_channels_model = 0;
  std::size_t reference_windows = 0;
  double settle_s = 0;  // the start-up settle (DetectOptions::settle_s): no incident opens before it
  double false_per_day = 0;       // the knob (DetectOptions::false_per_day)
  double window_false_rate = 0;   // q: per-window false-alarm rate it implies
  std::size_t fused_detectors = 0;  // D  // windows the reference was fitted on (self mode: after reweighting)
  std::vector<double> window_start_s, window_end_s, fused;  // per window
  std::vector<std::string> window_top_channel;  // per window: channel with the largest |z|
  std::vector<double> window_top_z;             // its robust z
  // Per window: the symptom channel that made it anomalous on its own (symptom-led,
  // DetectOptions::symptom_windows), "" when none did (the fused score decides).
  std::vector<std::string> window_symptom;
  std::vector<std::string> scored_channels;     // the channels scored, in window_z column order
  // Per scored channel: the robust-z reference of its window mean (median, and scale = robust
  // SD: max(1.4826·MAD, floors)), in the channel's unit. |mean − median| < 3·scale is the band
  // the HTML report draws as normal.
  std::vector<double> reference_median, reference_scale;
  // Only with DetectOptions::window_z: rows = windows, columns = scored_channels; the sustained
  // robust z the robust_z detector uses (z of the window's min when above the reference median,
  // of its max when below, else 0; clipped to ±200). Empty otherwise.
  Matrix window_z;
  std::vector<DetectorTrace> detectors;
  std::vector<Incident> incidents;
  // Anomalous episodes told apart from incidents (Incident::kind "workload_change"; see
  // DetectOptions::workload_changes; detect_streaming(): the moving reference's changes), oldest
  // first.
  std::vector<Incident> workload_changes;
  std::vector<std::string> notes;
};

// A recording of more samples × channels than this is not held whole by the offline analyses
// that must stay in bounded memory (issue #19): `reveal detect` on a store, or a host read from
// Prometheus, runs the streaming driver (reveal/streaming.h) unless the whole-run analysis is
// asked for, and peers (reveal/peers.h) scores such a host with it against its reference model.
// 4 Mi values, about 1.4 h at 800 channels, which the whole-run analysis holds in some 400 MB
// (about 95 bytes a value measured: the samples, their rates and derived channels, the windows
// and the detectors' matrices; 550 MB for 2 h of 807 channels, 816 MB for 3 h).
inline constexpr std::uint64_t kWholeRunMaxValues = std::uint64_t{1} << 22;

// Frees a result's per-window traces (window_start_s, window_end_s, fused, window_top_channel,
// window_top_z, window_symptom, window_z, and each detector's raw, calibrated, tail_p and level),
// keeping the incidents, workload changes, notes, metadata and counts: what the text report
// (reveal/report.h render_text) and a peers ranking read. ~150 bytes a window and channel
// names: a day at 15 s is some 1.4 MB a host (issue #19, peers of a fleet).
void drop_window_traces(DetectResult& r);

class DetectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Self mode without baselines. With baselines: detect(run, BaselineModel::train(baselines, opts),
// opts) (baseline_model.h), the model trained in memory. Throws DetectError when the run is too
// short for one window plus rates, every baseline is too short, or the baselines share no channel
// with each other or with the run.
DetectResult detect(const Recording& run, const std::vector<Recording>& baselines,
                    const DetectOptions& opts);

// Names the tenants (reveal/tenants.h: cgroups hurt, and those whose CPU use rose) of every
// anomaly incident and workload change of `result` from the recording's tenant scans; absences
// name none. detect() and detect_streaming() call it last, as the agent does live.
void attach_tenants(DetectResult& result, const TenantTimeline& timeline);
// The pods on each incident's and workload change's GPUs at its start, from the store's kubelet
// events (GpuPodsHistory in reveal/gpu_pods.h, read once; attach_gpu_pods() in
// reveal/tenants.h); nothing without such events.
void attach_gpu_pods(DetectResult& result, const std::vector<Event>& events);
// Moves every anomaly incident whose onset judge_workload_start() (reveal/tenants.h) calls a
// new workload starting into result.workload_changes (kind "workload_change",
// Incident::withdrawn set, its symptom cleared), as the agent withdraws it live. detect() does
// this when it tells workload changes apart (DetectOptions::workload_changes); a store without
// tenant scans changes nothing.
void withdraw_workload_starts(DetectResult& result, const TenantTimeline& timeline);
// Moves every anomaly incident shorter than rule.min_duration_s (is_transient(): its dated
// start to Incident::symptom_end_unix_ns, or to its end without one) into result.workload_changes
// as kind "transient" (Incident::withdrawn says why), as the streaming detector never reports
// such an incident. detect() does this after withdraw_workload_starts(), when it tells
// workload changes apart.
void retire_transients(DetectResult& result, const IncidentRule& rule);
// How many of `changes` (DetectResult::workload_changes) are transients (kind "transient").
inline std::size_t count_transients(const std::vector<Incident>& changes) {
  std::size_t n = 0;
  for (const auto& c : changes) n += c.kind == "transient";
  return n;
}

}  // namespace reveal
