// `reveal detect --streaming`: a recording pushed through the agent's detectors as fast as they
// go; contract in include/reveal/streaming.h (detect_streaming).
#include <algorithm>
#include <cmath>
#include <limits>

#include "reveal/absence_tracker.h"
#include "reveal/baseline_model.h"
#include "reveal/recording_feed.h"
#include "reveal/streaming.h"
#include "reveal/tenants.h"
#include "window_model.h"
#include "workload_change.h"

namespace reveal {
namespace {

constexpr std::int64_t kTenantAheadNs = 120'000'000'000;
constexpr std::int64_t kTenantKeepNs = 300'000'000'000;

std::string too_short(std::size_t n) {
  return "the recording holds " + std::to_string(n) + " sample" + (n == 1 ? "" : "s") +
         "; streaming detection needs at least 2";
}

// t + d without overflow (an untrusted store's stamps may lie anywhere).
std::int64_t plus(std::int64_t t, std::int64_t d) {
  std::int64_t r = 0;
  if (__builtin_add_overflow(t, d, &r)) return d > 0 ? INT64_MAX : INT64_MIN;
  return r;
}

// Drops the scans stamped before `t` from the front of `scans` (in time order) but the last
// kScansBefore of them (the judgement looks at the scan before its spans' first one, which a
// gap in the scans may put far back), a batch at a time so the vector is not shifted at every
// sample.
void drop_scans_before(std::vector<TenantScan>& scans, std::int64_t t) {
  constexpr std::size_t kBatch = 64, kScansBefore = 2;
  if (scans.size() < kBatch + kScansBefore || scans[kBatch + kScansBefore - 1].t_unix_ns >= t) return;
  auto first_kept = std::lower_bound(scans.begin(), scans.end(), t,
                                     [](const TenantScan& s, std::int64_t v) { return s.t_unix_ns < v; });
  first_kept -= std::min<std::ptrdiff_t>(first_kept - scans.begin(), kScansBefore);
  scans.erase(scans.begin(), first_kept);
}

// Seconds since `origin` for an incident the detector timed from its own first row.
void retime(Incident& inc, std::int64_t origin_ns) {
  inc.start_s = double(inc.start_unix_ns - origin_ns) * 1e-9;
  inc.end_s = double(inc.end_unix_ns - origin_ns) * 1e-9;
}

}  // namespace

DetectResult detect_streaming(const Recording& run, const StreamingOptions& opts, Progress* progress) {
  const std::size_t n = run.t_unix_ns.size();
  if (n < 2) throw DetectError(too_short(n));
  MemoryFeed feed(run);
  return detect_streaming(feed, opts, progress);
}

DetectResult detect_streaming(RecordingFeed& feed, const StreamingOptions& opts, Progress* progress) {
  const RunMetadata& meta = feed.meta();
  StreamingDetector det(meta, feed.channels(), opts);
  const std::size_t window = opts.detect.window.length;
  AbsenceTracker absences(feed.channels(), window, meta.interval_s, opts.detect.top_channels);

  DetectResult r;
  r.mode = opts.baseline ? "baseline" : "streaming";
  r.n_channels_recorded = feed.channels().size();
  r.n_channels_used = det.n_derived_channels();
  r.settle_s = double(opts.settle_samples) * meta.interval_s;
  r.false_per_day = opts.detect.false_per_day;
  std::size_t fits = 0;
  std::vector<Incident> anomalies, absent;
  TenantFeed tenants;  // as the agent: names tenants and withdraws new workloads' incidents as they go
  // The tenant scans near the samples pushed (from kTenantKeepNs before the history ring's span,
  // to kTenantAheadNs after the sample): all that naming an incident's tenants looks at
  // (reveal/tenants.h), in memory that does not grow with the run.
  TenantTimeline scans;
  scans.paths = feed.tenant_paths();
  const bool has_scans = feed.has_tenant_scans();
  const std::int64_t history_ns = std::int64_t(std::min(
      double(std::max(opts.history_samples, opts.warmup_samples)) * std::max(meta.interval_s, 1e-3) * 1e9, 1e18));
  // An episode is named once more as it is taken (closed, or open at the end), from the same
  // scans: what attach_tenants(DetectResult&) does over the whole run at the end.
  const auto name_tenants = [&](Incident& inc) {
    if (has_scans && inc.kind != "absence") attach_tenants(inc, scans);
  };
  // What a push (or the end of a segment) closed: taken as it closes, named from the scans.
  const auto take = [&](const StreamUpdate& u) {
    // The detectors keep only their last 100 closed episodes: take each as it closes.
    if (u.closed && !det.closed().empty()) {
      anomalies.push_back(det.closed().back());
      name_tenants(anomalies.back());
    }
    if (u.change_closed && !det.workload_changes().empty()) {
      r.workload_changes.push_back(det.workload_changes().back());
      name_tenants(r.workload_changes.back());
    }
  };
  // The agent restarted where the store says so (agent_restart events): as the agent did, what
  // was open ends where the stopped agent's last sample is (StreamingDetector::end_segment), and
  // the detector starts again as the restarted agent did (StreamingDetector::restart): a
  // reference fitted on the history before the restart — none after a gap longer than the
  // history, as prime_from_store() — no rate across the gap, a new start-up settle.
  std::vector<std::int64_t> restarts;
  for (const Event& e : feed.events())
    if (is_recorder_restart(e)) restarts.push_back(e.t_unix_ns);
  std::sort(restarts.begin(), restarts.end());
  auto next_restart = restarts.begin();
  SampleBlock block;
  std::size_t i = 0;
  std::int64_t prev_t = 0;
  while (feed.next_samples(block)) {
    for (std::size_t b = 0; b < block.t_unix_ns.size(); ++b, ++i) {
      const std::int64_t t = block.t_unix_ns[b];
      const auto row = block.values.row(b);
      if (i == 0) r.origin_unix_ns = t;
      bool restarted = false;
      std::int64_t restart_t = 0;
      for (; next_restart != restarts.end() && *next_restart <= t; ++next_restart) {
        restarted = i > 0;
        restart_t = *next_restart;
      }
      if (restarted) {
        const StreamUpdate& e = det.end_segment();
        tenants.after_push(det, e, scans, prev_t);
        take(e);
        det.restart(restart_t - prev_t <= history_ns ? prev_t - history_ns : std::numeric_limits<std::int64_t>::max());
      }
      prev_t = t;
      if (has_scans) {
        feed.tenant_scans_until(plus(t, kTenantAheadNs), scans.scans);
        // Every episode, open or opening at this sample, starts at a row still in the history
        // ring (StreamingDetector::describe): keeping the scans from kTenantKeepNs before the
        // ring's span covers the 60 s before any onset.
        drop_scans_before(scans.scans, plus(t, -plus(history_ns, kTenantKeepNs)));
      }
      const StreamUpdate& u = det.push(t, row);
      tenants.after_push(det, u, scans, t);
      const AbsenceUpdate& au = absences.push(t, row);
      fits += u.refitted;
      if (u.scored) {
        const double end_s = double(t - r.origin_unix_ns) * 1e-9;
        r.window_end_s.push_back(end_s);
        r.window_start_s.push_back(end_s - double(window - 1) * meta.interval_s);
        r.fused.push_back(u.fused);
        r.window_top_channel.emplace_back(u.top_channel);
        r.window_top_z.push_back(u.top_z);
        r.window_symptom.emplace_back(u.symptom_led);
      }
      take(u);
      for (std::size_t k = absences.closed().size() - au.closed; k < absences.closed().size(); ++k)
        absent.push_back(absences.closed()[k]);
      report_progress(progress, "score", i + 1, std::max(feed.samples_hint(), i + 1), 1024);
    }
  }
  if (i < 2) throw DetectError(too_short(i));
  r.meta = feed.meta();
  r.n_samples = i;
  // What is still open at the end of the recording, as it stood at the last sample.
  if (det.active()) {
    anomalies.push_back(*det.active());
    name_tenants(anomalies.back());
    r.notes.push_back("the last incident was still open at the end of the recording");
  } else if (const Incident* pending = det.active_for_evidence()) {
    // Open but not reported yet (shorter than min_duration so far): a transient as it stands,
    // as detect() calls the same cut-off tail (retire_transients()).
    Incident t = *pending;
    pipeline::make_transient(t, opts.detect.incident, t.end_unix_ns, meta.interval_s);
    t.withdrawn += "; the recording ended";
    r.workload_changes.push_back(std::move(t));
    name_tenants(r.workload_changes.back());
  }
  if (det.active_change()) {
    r.workload_changes.push_back(*det.active_change());
    name_tenants(r.workload_changes.back());
  }
  for (const auto& a : absences.active()) absent.push_back(a);

  r.incidents = std::move(anomalies);
  r.incidents.insert(r.incidents.end(), absent.begin(), absent.end());
  std::stable_sort(r.incidents.begin(), r.incidents.end(),
                   [](const Incident& a, const Incident& b) { return a.start_unix_ns < b.start_unix_ns; });
  for (auto& inc : r.incidents) retime(inc, r.origin_unix_ns);
  for (auto& c : r.workload_changes) retime(c, r.origin_unix_ns);
  attach_gpu_pods(r, feed.events());  // as detect() does; the agent attached the same (src/agent)
  r.reference_windows = det.reference_windows();
  // Self mode fuses robust_z and the Isolation Forest (the stream fits no PCA model); a
  // baseline model fuses its PCA residual too when it was trained to.
  r.fused_detectors = opts.baseline && opts.baseline->options().pca == PcaUse::fuse ? 3 : 2;
  r.window_false_rate = opts.detect.false_per_day * double(opts.detect.window.stride) * meta.interval_s / 86400.0;
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
