// Offline detection pipeline; contract in include/reveal/offline.h (self and baseline modes) and
// include/reveal/baseline_model.h (a baseline model; stores given as baselines are trained into
// one in memory first, so both use one path). The model (window_model.h, fusion.h), the choice
// of reference (reference.h) and the incident's evidence and attribution (src/explain) are
// shared with the streaming detector.
#include "reveal/offline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <numeric>

#include "reveal/absence.h"
#include "reveal/baseline_model.h"
#include "reveal/streaming.h"
#include "reveal/tenants.h"
#include "explain/attribution.h"
#include "explain/evidence.h"
#include "reference.h"
#include "workload_change.h"
#include "window_model.h"

namespace reveal {

namespace {

// Windows ending within settle_s of their recording's first sample: its start-up.
std::size_t settle_count(const Windows& w, double settle_s) {
  return std::size_t(std::count_if(w.t_end_s.begin(), w.t_end_s.end(), [&](double t) { return t < settle_s; }));
}

void check_length(const Recording& run, std::size_t L) {
  if (run.t_unix_ns.size() < L + 1)
    throw DetectError("recording has " + std::to_string(run.t_unix_ns.size()) +
                      " samples; detection needs at least " + std::to_string(L + 1) +
                      " (one window of rates)");
}

DetectResult start_result(const Recording& run, const char* mode) {
  DetectResult res;
  res.meta = run.meta;
  res.origin_unix_ns = run.t_unix_ns.empty() ? run.meta.start_unix_ns : run.t_unix_ns.front();
  res.mode = mode;
  res.n_samples = run.t_unix_ns.size();
  res.n_channels_recorded = run.channels.size();
  if (!run.meta.complete)
    res.notes.push_back("the recording did not finish cleanly (recorder killed or crashed); its end is the last sample stored");
  return res;
}

// Every reference mode ends here: scores each window `k` of `w` (windows over `s`, the model's
// channels at its columns `run_cols`, described by `chans`) with the fitted `model`, then finds
// incidents and attributes them. `opts`: the options the model was fitted with, plus the
// incident rule, settle, top_channels and window_z of the call.
void score_run(const Recording& run, const Series& s, const Windows& w, const std::vector<int>& run_cols,
               const std::vector<const ChannelInfo*>& chans, const pipeline::WindowModel& model,
               const DetectOptions& opts, DetectResult& res) {
  const std::size_t L = std::max<std::size_t>(opts.window.length, 1);
  const std::size_t nw = w.first_row.size(), nc = run_cols.size();
  Matrix z;
  const std::vector<pipeline::WindowScore> scores = model.score_all(w, run_cols, z, opts.progress, "score");
  DetectorTrace tz{"robust_z", std::vector<double>(nw), std::vector<double>(nw), opts.z_cut, std::vector<double>(nw)};
  DetectorTrace ttr{"robust_z_trail", std::vector<double>(nw), std::vector<double>(nw), opts.z_cut, std::vector<double>(nw)};
  DetectorTrace tif{"iforest", std::vector<double>(nw), std::vector<double>(nw), opts.if_cut, std::vector<double>(nw)};
  DetectorTrace tspe{"pca_spe", std::vector<double>(nw), std::vector<double>(nw), opts.pca_cut, std::vector<double>(nw)};
  DetectorTrace tt2{"pca_t2", std::vector<double>(nw), std::vector<double>(nw), opts.pca_cut, std::vector<double>(nw)};
  res.fused.assign(nw, 0.0);
  std::unique_ptr<bool[]> sustained(new bool[nw]);  // the robust-z detector flags the window
  Matrix level(nw, 3);  // per window: robust_z, iforest and pca_spe levels (attribution)
  for (std::size_t k = 0; k < nw; ++k) {
    const pipeline::WindowScore& sc = scores[k];
    tz.raw[k] = sc.z_raw;
    tz.calibrated[k] = sc.z_cal;
    ttr.raw[k] = sc.trail_raw;
    ttr.calibrated[k] = sc.trail_cal;
    tif.raw[k] = sc.if_raw;
    tif.calibrated[k] = sc.if_cal;
    tspe.raw[k] = sc.spe_raw;
    tspe.calibrated[k] = sc.spe_cal;
    tt2.raw[k] = sc.t2_raw;
    tt2.calibrated[k] = sc.t2_cal;
    tz.tail_p[k] = sc.tail_p[pipeline::kRobustZStream];
    ttr.tail_p[k] = sc.tail_p[pipeline::kTrailStream];
    tif.tail_p[k] = sc.tail_p[pipeline::kIForestStream];
    tspe.tail_p[k] = sc.tail_p[pipeline::kPcaSpeStream];
    tt2.tail_p[k] = sc.tail_p[pipeline::kPcaT2Stream];
    res.fused[k] = sc.fused;
    sustained[k] = sc.sustained;
    const std::array<double, 3> dl = sc.detector_levels();
    for (std::size_t d = 0; d < 3; ++d) level(k, d) = dl[d];
  }
  for (DetectorTrace* t : {&tz, &ttr, &tif, &tspe, &tt2}) t->level.assign(nw, __builtin_nan(""));
  for (std::size_t k = 0; k < nw; ++k) {
    tz.level[k] = scores[k].level[pipeline::kRobustZStream];
    ttr.level[k] = scores[k].level[pipeline::kTrailStream];
    tif.level[k] = scores[k].level[pipeline::kIForestStream];
    tspe.level[k] = scores[k].level[pipeline::kPcaSpeStream];
  }
  res.window_start_s = w.t_start_s;
  for (std::size_t k = 0; k < nw; ++k) {
    const std::size_t best = pipeline::strongest_channel(z.row(k));
    res.window_top_channel.push_back(s.channels[run_cols[best]].name);
    res.window_top_z.push_back(z(k, best));
  }
  res.window_end_s = w.t_end_s;
  for (std::size_t j = 0; j < nc; ++j) res.scored_channels.push_back(chans[j]->name);
  res.reference_median = model.robust_z().median();
  res.reference_scale = model.robust_z().scale();

  // Incidents and attribution.
  std::unique_ptr<bool[]> anomalous(new bool[nw]);
  for (std::size_t k = 0; k < nw; ++k) anomalous[k] = pipeline::is_anomalous(res.fused[k]);
  std::vector<double> mean_value(nc), ifc(nc), spec(nc);
  explain::IncidentEvidence evidence;
  const explain::ChannelReference reference{model.robust_z().median(), model.floors()};
  IncidentRule rule = opts.incident;
  rule.settle_windows = settle_count(w, opts.settle_s);
  res.settle_s = opts.settle_s;
  // Per anomalous window, the symptom channel whose material rise is strongest (-1: none).
  pipeline::SymptomGate gate;
  gate.reset(chans, run.meta.cores);
  const std::span<const double> median = model.robust_z().median();
  std::vector<std::ptrdiff_t> symptom(nw, -1);
  std::vector<double> symptom_rise(nw, 0.0), symptom_z(nw, 0.0), low(nc), rise_z(nc);
  std::unique_ptr<bool[]> symptomatic(new bool[nw]);
  // Ambient symptoms (hypervisor steal) are judged from the peak they reached over the last
  // hour of windows before this one, as the streaming detector does (workload_change.h).
  std::vector<std::size_t> ambient;  // model channels
  for (std::size_t j = 0; j < nc; ++j)
    if (pipeline::ambient_symptom(chans[j]->name)) ambient.push_back(j);
  pipeline::RecentPeaks peaks;
  const double stride_s = (run.meta.interval_s > 0 ? run.meta.interval_s : 1.0) * double(std::max<std::size_t>(opts.window.stride, 1));
  const std::size_t stride = std::max<std::size_t>(opts.window.stride, 1);
  peaks.reset(ambient.size(), std::size_t(std::ceil(pipeline::kAmbientMemoryS / stride_s)),
              (StreamingOptions{}.relearn_samples + stride - 1) / stride);
  std::vector<double> seen(nc, __builtin_nan("")), ambient_level(ambient.size());
  // Symptom-led windows: each symptom channel's highest level over the minute before the last
  // 30 s (workload_change.h, SymptomGate::stepped).
  const std::vector<std::size_t>& sym_chans = gate.channels();
  pipeline::RecentPeaks step_peaks;
  const auto [step_span, step_lag] = pipeline::step_peaks_span(stride_s);
  step_peaks.reset(sym_chans.size(), step_span, step_lag);
  std::vector<double> recent(nc, __builtin_nan("")), sym_level(sym_chans.size());
  res.window_symptom.assign(nw, std::string());
  for (std::size_t k = 0; k < nw; ++k) {
    if (anomalous[k] || opts.symptom_windows) {  // the window's minimum per channel: what a rise is measured by
      for (std::size_t j = 0; j < nc; ++j) low[j] = w.at(k, std::size_t(run_cols[j]), kMin);
      model.rise_z(w, k, run_cols, z.row(k), rise_z);
    }
    if (!anomalous[k] && opts.symptom_windows) {
      for (std::size_t i = 0; i < sym_chans.size(); ++i) recent[sym_chans[i]] = step_peaks.peak(i);
      const std::ptrdiff_t led = gate.stepped(rise_z, median, low, recent);
      if (led >= 0) {
        anomalous[k] = sustained[k] = true;
        res.window_symptom[k] = chans[std::size_t(led)]->name;
      }
    }
    if (anomalous[k]) {
      for (std::size_t a = 0; a < ambient.size(); ++a) seen[ambient[a]] = peaks.peak(a);
      symptom[k] = gate.strongest(rise_z, median, low, seen);
      if (symptom[k] >= 0) {
        symptom_rise[k] = gate.rise(std::size_t(symptom[k]), median, low);
        symptom_z[k] = rise_z[std::size_t(symptom[k])];
      }
    }
    symptomatic[k] = symptom[k] >= 0;
    for (std::size_t a = 0; a < ambient.size(); ++a) ambient_level[a] = w.at(k, std::size_t(run_cols[ambient[a]]), kMin);
    peaks.push(ambient_level);
    for (std::size_t i = 0; i < sym_chans.size(); ++i) sym_level[i] = w.at(k, std::size_t(run_cols[sym_chans[i]]), kMin);
    step_peaks.push(sym_level);
  }
  const auto rows = [&](std::uint64_t r) { return s.values.row(std::size_t(r)); };
  // A recording without any symptom channel (an imported nvidia-smi log, a dataset of
  // anonymous metrics) cannot tell a workload change from a fault: every anomaly is an incident.
  const bool changes = opts.workload_changes && gate.symptom_channels() > 0;
  if (opts.workload_changes && !changes)
    res.notes.push_back("no symptom channel (stall or wait time, errors, drops, throttling) among the scored channels: "
                        "workload changes are not told apart from incidents");
  // Incidents and workload changes, as the streaming detector walks the same windows against a
  // fixed reference (workload_change.h).
  const std::vector<pipeline::EpisodePart> parts = pipeline::episodes(
      std::span<const bool>(anomalous.get(), nw), std::span<const bool>(sustained.get(), nw),
      std::span<const bool>(symptomatic.get(), nw), rule, changes, L,
      std::max<std::size_t>(opts.window.stride, 1),
      StreamingOptions{}.relearn_samples, pipeline::kDriftRelearns, [&](std::size_t k) { return z.row(k); },
      [&](std::uint64_t r0, std::uint64_t r1, std::span<const double> zbar) {
        return pipeline::settled(r0, r1, rows, run_cols, model.floors(), zbar);
      });
  for (const pipeline::EpisodePart& part : parts) {
    const std::size_t a = part.first, b = part.last;
    report_progress(opts.progress, "attribute", res.incidents.size(), 0, 1);
    Incident inc;
    inc.first_window = a;
    inc.last_window = b;
    inc.start_s = w.t_start_s[a];
    inc.end_s = w.t_end_s[b];
    // A workload change that follows an incident's symptoms is dated from the row after them.
    const std::size_t r0 = part.start_row >= 0 ? std::min(std::size_t(part.start_row), w.first_row[a]) : w.first_row[a];
    inc.start_unix_ns = run.t_unix_ns[r0];
    if (r0 != w.first_row[a]) inc.start_s = double(inc.start_unix_ns - res.origin_unix_ns) * 1e-9;
    inc.end_unix_ns = run.t_unix_ns[w.first_row[b] + w.length - 1];
    // The incident's windows, as the streaming detector feeds them one at a time.
    evidence.start(nc, model.pca_components() > 0);
    for (std::size_t k = a; k <= b; ++k) {
      if (anomalous[k]) model.contributions(w, k, run_cols, ifc, spec);
      evidence.add(anomalous[k], res.fused[k], {level(k, 0), level(k, 1), level(k, 2)}, z.row(k), ifc, spec);
      // The symptom, as the streaming detector notes it: the strongest material rise of a
      // symptom channel in the incident's first window that has one, among its own (a drift's
      // symptoms while it was a change are not: EpisodePart::symptoms_from).
      if (part.incident && k >= part.symptoms_from && symptom[k] >= 0 && inc.symptom.name.empty()) {
        const std::size_t j = std::size_t(symptom[k]);
        inc.symptom = {chans[j]->name, chans[j]->unit, chans[j]->subsystem, symptom_rise[k], median[j], symptom_z[k]};
      }
    }
    inc.peak_score = evidence.peak_score();
    explain::channel_means(r0, w.first_row[b] + w.length, run_cols, rows, mean_value);
    explain::attribute(inc, evidence.zbar(), mean_value, reference, chans, run.meta.cores, opts.top_channels,
                       evidence.detectors());
    if (part.end_row >= 0) {  // a change cut short where symptoms rose; an incident at its last symptom
      inc.end_unix_ns = std::max(inc.start_unix_ns, run.t_unix_ns[std::size_t(part.end_row)]);
      inc.end_s = double(inc.end_unix_ns - res.origin_unix_ns) * 1e-9;
    }
    if (part.incident) {
      inc.drifted = part.symptoms_from > part.first;  // a change that kept drifting (EpisodePart)
      if (changes)  // the end of its last symptomatic window: what min_duration is measured to
        for (std::size_t k = b + 1; k-- > std::max(a, part.symptoms_from);)
          if (anomalous[k] && symptomatic[k]) {
            inc.symptom_end_unix_ns = std::max(inc.start_unix_ns, run.t_unix_ns[w.first_row[k] + w.length - 1]);
            break;
          }
      if (part.ended_quiet) inc.action += std::string(inc.action.empty() ? "" : " ") + pipeline::kEndedQuietFixed;
      res.incidents.push_back(std::move(inc));
      continue;
    }
    // No symptom rose and it did not keep drifting: the load changed (a job started, stopped
    // or changed phase). News, not a fault: no action.
    inc.kind = "workload_change";
    inc.action = pipeline::kWorkloadChangeAction;
    res.workload_changes.push_back(std::move(inc));
  }
  // Data that stops is an incident too (absence.h): a gap of at least one window.
  for (const auto& span : find_absences(run, L)) res.incidents.push_back(absence_incident(run, span, opts.top_channels));
  std::stable_sort(res.incidents.begin(), res.incidents.end(),
                   [](const Incident& a, const Incident& b) { return a.start_unix_ns < b.start_unix_ns; });
  if (changes) withdraw_workload_starts(res, run.tenants);
  if (changes) retire_transients(res, opts.incident);
  // After both (neither reads the tenants): a withdrawn start is named anew, and its cost is
  // judged under the name it ends with, as the streaming detector's is.
  attach_tenants(res, run.tenants);
  attach_gpu_pods(res, run.events);
  std::array<DetectorTrace*, pipeline::kNumStreams> traces{&tz, &ttr, &tif, &tspe, &tt2};  // stream order
  for (std::size_t d = 0; d < traces.size(); ++d) {
    traces[d]->threshold = model.threshold(d);
    traces[d]->fused = model.fused(d);
  }
  res.false_per_day = model.false_per_day();
  res.window_false_rate = model.window_false_rate();
  res.fused_detectors = model.fused_detectors();
  res.detectors.push_back(std::move(tz));
  if (model.robust_z_trail().n_features() > 0) res.detectors.push_back(std::move(ttr));
  res.detectors.push_back(std::move(tif));
  if (opts.pca != PcaUse::off) {
    res.detectors.push_back(std::move(tspe));
    res.detectors.push_back(std::move(tt2));
  }
  if (opts.window_z) res.window_z = std::move(z);
}

}  // namespace

namespace {
// Moves the anomaly incidents that `take(inc)` rewrites (returning true) into the workload
// changes, kept in start order.
template <class Take>
void move_to_changes(DetectResult& result, Take&& take) {
  std::vector<Incident> kept;
  bool moved = false;
  for (auto& inc : result.incidents) {
    if (inc.kind != "anomaly" || !take(inc)) {
      kept.push_back(std::move(inc));
      continue;
    }
    result.workload_changes.push_back(std::move(inc));
    moved = true;
  }
  result.incidents = std::move(kept);
  if (moved)
    std::stable_sort(result.workload_changes.begin(), result.workload_changes.end(),
                     [](const Incident& a, const Incident& b) { return a.start_unix_ns < b.start_unix_ns; });
}
}  // namespace

void withdraw_workload_starts(DetectResult& result, const TenantTimeline& timeline) {
  if (timeline.scans.empty()) return;
  move_to_changes(result, [&](Incident& inc) {
    if (inc.drifted) return false;  // a change already, judged: drifting on is the incident
    const WorkloadStartVerdict v = judge_workload_start(timeline, inc.start_unix_ns, INT64_MAX);
    if (v.state != WorkloadStartVerdict::start) return false;
    inc.kind = "workload_change";
    inc.action = pipeline::kWorkloadChangeAction;
    inc.symptom = ChannelEvidence{};
    // named by the evidence, as the streaming detector describes a withdrawn incident anew (its
    // symptom may have named it: explain::attribute())
    if (!inc.subsystem_shares.empty()) {
      inc.subsystem = inc.subsystem_shares.front().first;
      inc.confidence = inc.subsystem_shares.front().second;
    }
    inc.withdrawn = v.text;
    inc.withdrawn_unix_ns = v.decided_unix_ns;
    return true;
  });
}

void retire_transients(DetectResult& result, const IncidentRule& rule) {
  move_to_changes(result, [&](Incident& inc) {
    if (!is_transient(rule, inc, result.meta.interval_s)) return false;
    pipeline::make_transient(inc, rule, inc.end_unix_ns, result.meta.interval_s);  // decided at its end (the agent: up to 10 s later)
    return true;
  });
}

void drop_window_traces(DetectResult& r) {
  std::vector<double>().swap(r.window_start_s);
  std::vector<double>().swap(r.window_end_s);
  std::vector<double>().swap(r.fused);
  std::vector<std::string>().swap(r.window_top_channel);
  std::vector<double>().swap(r.window_top_z);
  std::vector<std::string>().swap(r.window_symptom);
  r.window_z = Matrix();
  for (auto& d : r.detectors) {
    std::vector<double>().swap(d.raw);
    std::vector<double>().swap(d.calibrated);
    std::vector<double>().swap(d.tail_p);
    std::vector<double>().swap(d.level);
  }
}

void attach_tenants(DetectResult& result, const TenantTimeline& timeline) {
  if (timeline.scans.empty()) return;
  for (auto& inc : result.incidents)
    if (inc.kind != "absence") attach_tenants(inc, timeline);
  for (auto& c : result.workload_changes) attach_tenants(c, timeline);
}

void attach_gpu_pods(DetectResult& result, const std::vector<Event>& events) {
  const bool any = std::any_of(events.begin(), events.end(),
                               [](const Event& e) { return e.source == "kubelet" && e.kind == "gpu_pods"; });
  if (!any) return;
  const GpuPodsHistory history(events);  // read once; each incident looks up its GPUs
  for (auto* list : {&result.incidents, &result.workload_changes})
    for (Incident& inc : *list) attach_gpu_pods(inc, history);
}

DetectResult detect(const Recording& run, const std::vector<Recording>& baselines,
                    const DetectOptions& opts) {
  const std::size_t L = std::max<std::size_t>(opts.window.length, 1);
  check_length(run, L);
  // Baseline stores: train a model on them in memory, then score the run against it.
  if (!baselines.empty()) return detect(run, BaselineModel::train(baselines, opts), opts);

  DetectResult res = start_result(run, "self");
  if (opts.progress) opts.progress->update("rates", 0, 1);
  const Series s = prepare_series(run);
  // Channel selection: enough data in the run, not constant.
  std::vector<int> run_cols = pipeline::varying_columns(s);
  // The kernel's smoothed averages (PSI avg10/60/300, loadavg) repeat a recorded total through
  // 10 s to 15 min filters: after a job's start or stop they decay for minutes, which would
  // inflate the self reference's spread and drag incidents past their cause. Scored by their
  // totals' rates instead, as in the streaming detector (pipeline::smoothed_average).
  std::erase_if(run_cols, [&](int c) { return pipeline::smoothed_average(s.channels[std::size_t(c)].name); });
  if (run_cols.empty()) throw DetectError("no channel varies in the run; nothing to score");
  res.n_channels_used = run_cols.size();

  const Windows w = make_windows(s, opts.window);
  const std::size_t nw = w.first_row.size();
  const std::size_t nc = run_cols.size();
  if (nw == 0) throw DetectError("no complete window in the run");
  std::vector<Subsystem> subsystems(nc);
  std::vector<const ChannelInfo*> chans(nc);
  for (std::size_t j = 0; j < nc; ++j) {
    chans[j] = &s.channels[run_cols[j]];
    subsystems[j] = chans[j]->subsystem;
  }
  pipeline::WindowModel model(pipeline::channel_floors(s, run_cols), subsystems, opts, window_period_s(w, run),
                              pipeline::ambient_mask(chans));

  // Reference: the run's own windows with iterative reweighting (pipeline::fit_self), without
  // its start-up windows (those ending within settle_s of its first sample).
  pipeline::fit_self(model, w, run_cols, settle_count(w, opts.settle_s), opts.progress,
                     /*steps_stand_out=*/true);
  res.n_channels_model = model.n_model_channels();
  res.reference_windows = model.reference_windows();
  score_run(run, s, w, run_cols, chans, model, opts, res);
  return res;
}

DetectResult detect(const Recording& run, const BaselineModel& model, const DetectOptions& call) {
  const DetectOptions opts = model.scoring_options(call);
  const std::size_t L = std::max<std::size_t>(opts.window.length, 1);
  check_length(run, L);
  DetectResult res = start_result(run, "baseline");
  res.baseline_hosts = model.training_hosts();
  res.baseline_model = model.source();
  if (opts.progress) opts.progress->update("rates", 0, 1);
  const Series s = prepare_series(run);

  // The run's columns in the model's channel order (by name); a model channel the run lacks is
  // an all-NaN column: robust z 0, the forest's NaN fill, the PCA mean.
  const std::vector<ChannelInfo>& mc = model.channels();
  const std::size_t nc = mc.size();
  Series ms;
  ms.channels = mc;
  ms.t_s = s.t_s;
  ms.values = Matrix(s.t_s.size(), nc, __builtin_nan(""));
  std::vector<char> in_model(s.channels.size(), 0);
  std::size_t present = 0;
  for (std::size_t j = 0; j < nc; ++j) {
    const int c = s.find(mc[j].name);
    if (c < 0) continue;
    ++present;
    in_model[std::size_t(c)] = 1;
    for (std::size_t r = 0; r < s.t_s.size(); ++r) ms.values(r, j) = s.values(r, std::size_t(c));
  }
  if (present == 0) throw DetectError("the run shares no channel with the baseline model");
  std::size_t not_in_model = 0;  // run channels with data in at least half the samples
  for (std::size_t c = 0; c < s.channels.size(); ++c)
    if (!in_model[c] && pipeline::finite_column(s.values, c).size() * 2 >= s.t_s.size()) ++not_in_model;
  if (not_in_model)
    res.notes.push_back(std::to_string(not_in_model) + " channels of the run are not in the baseline model and were not scored");
  if (present < nc)
    res.notes.push_back(std::to_string(nc - present) + " of the baseline model's " + std::to_string(nc) +
                        " channels are absent from the run and were scored as missing (robust z 0)");
  res.n_channels_used = present;

  const Windows w = make_windows(ms, opts.window);
  if (w.first_row.empty()) throw DetectError("no complete window in the run");
  std::vector<int> cols(nc);
  std::iota(cols.begin(), cols.end(), 0);
  std::vector<const ChannelInfo*> chans(nc);
  for (std::size_t j = 0; j < nc; ++j) chans[j] = &mc[j];
  // The false-alarm knob is the call's: the model keeps its tails, the rate is re-applied.
  pipeline::WindowModel wm = model.window_model();
  wm.set_false_per_day(opts.false_per_day);
  res.n_channels_model = wm.n_model_channels();
  res.reference_windows = wm.reference_windows();
  score_run(run, ms, w, cols, chans, wm, opts, res);
  return res;
}

}  // namespace reveal
