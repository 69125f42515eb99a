// `reveal detect --streaming`: a recording pushed through the agent's detectors as fast as they
// go; contract in include/reveal/streaming.h (detect_streaming).
#include <algorithm>
#include <cmath>

#include "reveal/absence_tracker.h"
#include "reveal/baseline_model.h"
#include "reveal/streaming.h"
#include "reveal/tenants.h"
#include "window_model.h"

namespace reveal {
namespace {

// Seconds since `origin` for an incident the detector timed from its own first row.
void retime(Incident& inc, std::int64_t origin_ns) {
  inc.start_s = double(inc.start_unix_ns - origin_ns) * 1e-9;
  inc.end_s = double(inc.end_unix_ns - origin_ns) * 1e-9;
}

}  // namespace

DetectResult detect_streaming(const Recording& run, const StreamingOptions& opts, Progress* progress) {
  const std::size_t n = run.t_unix_ns.size();
  if (n < 2) throw DetectError("the recording holds " + std::to_string(n) + " sample" + (n == 1 ? "" : "s") +
                               "; streaming detection needs at least 2");
  StreamingDetector det(run.meta, run.channels, opts);
  const std::size_t window = opts.detect.window.length;
  AbsenceTracker absences(run.channels, window, run.meta.interval_s, opts.detect.top_channels);

  DetectResult r;
  r.mode = opts.baseline ? "baseline" : "streaming";
  r.meta = run.meta;
  r.origin_unix_ns = run.t_unix_ns.front();
  r.n_samples = n;
  r.n_channels_recorded = run.channels.size();
  r.n_channels_used = det.n_derived_channels();
  r.settle_s = double(opts.settle_samples) * run.meta.interval_s;
  r.false_per_day = opts.detect.false_per_day;
  std::size_t fits = 0;
  std::vector<Incident> anomalies, absent;
  TenantFeed tenants;  // as the agent: names tenants and withdraws new workloads' incidents as they go
  // The agent restarted where the store says so (agent_restart events): as the restarted agent
  // did, the detector starts a new segment there (no rate across it, a new start-up settle).
  std::vector<std::int64_t> restarts;
  for (const Event& e : run.events)
    if (is_recorder_restart(e)) restarts.push_back(e.t_unix_ns);
  std::sort(restarts.begin(), restarts.end());
  auto next_restart = restarts.begin();
  for (std::size_t i = 0; i < n; ++i) {
    const std::int64_t t = run.t_unix_ns[i];
    const auto row = run.values.row(i);
    bool restarted = false;
    for (; next_restart != restarts.end() && *next_restart <= t; ++next_restart) restarted = i > 0;
    if (restarted) det.begin_segment();
    const StreamUpdate& u = det.push(t, row);
    tenants.after_push(det, u, run.tenants, t);
    const AbsenceUpdate& au = absences.push(t, row);
    fits += u.refitted;
    if (u.scored) {
      const double end_s = double(t - r.origin_unix_ns) * 1e-9;
      r.window_end_s.push_back(end_s);
      r.window_start_s.push_back(end_s - double(window - 1) * run.meta.interval_s);
      r.fused.push_back(u.fused);
      r.window_top_channel.emplace_back(u.top_channel);
      r.window_top_z.push_back(u.top_z);
      r.window_symptom.emplace_back(u.symptom_led);
    }
    // The detectors keep only their last 100 closed episodes: take each as it closes.
    if (u.closed && !det.closed().empty()) anomalies.push_back(det.closed().back());
    if (u.change_closed && !det.workload_changes().empty()) r.workload_changes.push_back(det.workload_changes().back());
    for (std::size_t k = absences.closed().size() - au.closed; k < absences.closed().size(); ++k)
      absent.push_back(absences.closed()[k]);
    report_progress(progress, "score", i + 1, n, 1024);
  }
  // What is still open at the end of the recording, as it stood at the last sample.
  if (det.active()) {
    anomalies.push_back(*det.active());
    r.notes.push_back("the last incident was still open at the end of the recording");
  }
  if (det.active_change()) r.workload_changes.push_back(*det.active_change());
  for (const auto& a : absences.active()) absent.push_back(a);

  r.incidents = std::move(anomalies);
  r.incidents.insert(r.incidents.end(), absent.begin(), absent.end());
  std::stable_sort(r.incidents.begin(), r.incidents.end(),
                   [](const Incident& a, const Incident& b) { return a.start_unix_ns < b.start_unix_ns; });
  attach_tenants(r, run.tenants);
  for (auto& inc : r.incidents) retime(inc, r.origin_unix_ns);
  for (auto& c : r.workload_changes) retime(c, r.origin_unix_ns);
  r.reference_windows = det.reference_windows();
  // Self mode fuses robust_z and the Isolation Forest (the stream fits no PCA model); a
  // baseline model fuses its PCA residual too when it was trained to.
  r.fused_detectors = opts.baseline && opts.baseline->options().pca == PcaUse::fuse ? 3 : 2;
  r.window_false_rate = opts.detect.false_per_day * double(opts.detect.window.stride) * run.meta.interval_s / 86400.0;
  if (!det.model_ready())
    r.notes.push_back("no reference model was fitted (" + det.not_ready_reason() + "): nothing was scored");
  else if (opts.workload_changes && !det.tells_workload_changes())
    r.notes.push_back("no symptom channel (stall or wait time, errors, drops, throttling) among the scored channels: "
                      "workload changes are not told apart from incidents");
  if (opts.baseline) {  // what detect() says of the same model
    r.baseline_hosts = opts.baseline->training_hosts();
    r.baseline_model = opts.baseline->source();
    r.n_channels_model = opts.baseline->window_model().n_model_channels();
  }
  if (!opts.baseline)
    r.notes.push_back("streaming: the reference moved with the recording, as in the agent (" + std::to_string(fits) +
                      " fits, " + std::to_string(det.regimes_remembered()) + " past regimes remembered at the end, " +
                      std::to_string(det.workload_changes_total()) + " workload changes)");
  return r;
}

}  // namespace reveal
