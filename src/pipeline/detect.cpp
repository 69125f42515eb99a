// Offline detection pipeline; contract in include/reveal/detect.h. The model, the
// self-reference fit and attribution live in window_model.cpp, shared with the streaming
// detector.
#include "reveal/detect.h"

#include <algorithm>
#include <cmath>
#include <memory>

#include "reveal/absence.h"
#include "window_model.h"

namespace reveal {
namespace {

Series prepare(const Recording& r) {
  Series s = to_rates(r);
  add_derived(s);
  return s;
}

}  // namespace

DetectResult detect(const Recording& run, const std::vector<Recording>& baselines,
                    const DetectOptions& opts) {
  const std::size_t L = std::max<std::size_t>(opts.window.length, 1);
  if (run.t_unix_ns.size() < L + 1)
    throw DetectError("recording has " + std::to_string(run.t_unix_ns.size()) +
                      " samples; detection needs at least " + std::to_string(L + 1) +
                      " (one window of rates)");
  DetectResult res;
  res.meta = run.meta;
  res.mode = baselines.empty() ? "self" : "baseline";
  res.n_samples = run.t_unix_ns.size();
  res.n_channels_recorded = run.channels.size();
  if (!run.meta.complete)
    res.notes.push_back("the recording did not finish cleanly (recorder killed or crashed); its end is the last sample stored");

  const Series s = prepare(run);
  std::vector<Series> refs;
  for (const auto& b : baselines) {
    if (b.t_unix_ns.size() < L + 1) continue;
    refs.push_back(prepare(b));
    res.baseline_hosts.push_back(b.meta.hostname);
  }
  if (!baselines.empty() && refs.empty())
    throw DetectError("every baseline is too short for one window");

  // Channel selection: enough data in the run, present in every baseline, not constant in
  // the reference.
  std::vector<int> run_cols;
  std::vector<std::vector<int>> ref_cols(refs.size());
  std::size_t missing_in_baseline = 0;
  for (std::size_t c = 0; c < s.channels.size(); ++c) {
    auto v = pipeline::finite_column(s.values, c);
    if (v.size() * 2 < s.t_s.size()) continue;
    std::vector<int> idx;
    bool everywhere = true;
    std::vector<double> refv;
    for (const auto& r : refs) {
      int j = r.find(s.channels[c].name);
      if (j < 0) { everywhere = false; break; }
      idx.push_back(j);
      auto rv = pipeline::finite_column(r.values, j);
      refv.insert(refv.end(), rv.begin(), rv.end());
    }
    if (!everywhere) { ++missing_in_baseline; continue; }
    const auto& basis = refs.empty() ? v : refv;
    if (basis.empty()) continue;
    auto [lo, hi] = std::minmax_element(basis.begin(), basis.end());
    const bool constant = *lo == *hi;
    if (constant && (refs.empty() || std::all_of(v.begin(), v.end(), [&](double x) { return x == *lo; })))
      continue;
    run_cols.push_back(int(c));
    for (std::size_t k = 0; k < refs.size(); ++k) ref_cols[k].push_back(idx[k]);
  }
  if (missing_in_baseline)
    res.notes.push_back(std::to_string(missing_in_baseline) + " channels of the run are absent from a baseline and were not scored");
  if (run_cols.empty()) throw DetectError("no channel varies in the run; nothing to score");
  res.n_channels_used = run_cols.size();

  const Windows w = make_windows(s, opts.window);
  const std::size_t nw = w.first_row.size();
  const std::size_t nc = run_cols.size();
  if (nw == 0) throw DetectError("no complete window in the run");
  std::vector<Windows> ref_windows;
  for (const auto& r : refs) ref_windows.push_back(make_windows(r, opts.window));
  std::vector<Subsystem> subsystems(nc);
  std::vector<const ChannelInfo*> chans(nc);
  for (std::size_t j = 0; j < nc; ++j) {
    chans[j] = &s.channels[run_cols[j]];
    subsystems[j] = chans[j]->subsystem;
  }
  pipeline::WindowModel model(pipeline::channel_floors(s, run_cols), subsystems, opts);

  // Reference: the baselines' windows, or (self mode) the run's own windows with iterative
  // reweighting (pipeline::fit_self).
  std::vector<char> keep(nw, 1);
  if (refs.empty()) {
    std::vector<double> fused;
    keep = pipeline::fit_self(model, w, run_cols, fused);
  } else {
    std::vector<pipeline::ReferenceWindows> rw;
    for (std::size_t k = 0; k < refs.size(); ++k) rw.push_back({&ref_windows[k], &ref_cols[k], nullptr});
    model.fit(rw);
  }
  res.n_channels_model = model.n_model_channels();
  res.reference_windows = std::count(keep.begin(), keep.end(), 1);

  Matrix z;
  const std::vector<pipeline::WindowScore> scores = model.score_all(w, run_cols, z);
  DetectorTrace tz{"robust_z", std::vector<double>(nw), std::vector<double>(nw), opts.z_cut, std::vector<double>(nw)};
  DetectorTrace tif{"iforest", std::vector<double>(nw), std::vector<double>(nw), opts.if_cut, std::vector<double>(nw)};
  DetectorTrace tspe{"pca_spe", std::vector<double>(nw), std::vector<double>(nw), opts.pca_cut, std::vector<double>(nw)};
  DetectorTrace tt2{"pca_t2", std::vector<double>(nw), std::vector<double>(nw), opts.pca_cut, std::vector<double>(nw)};
  res.fused.assign(nw, 0.0);
  std::unique_ptr<bool[]> sustained(new bool[nw]);  // the robust-z detector flags the window
  for (std::size_t k = 0; k < nw; ++k) {
    const pipeline::WindowScore& sc = scores[k];
    tz.raw[k] = sc.z_raw;
    tz.calibrated[k] = sc.z_cal;
    tif.raw[k] = sc.if_raw;
    tif.calibrated[k] = sc.if_cal;
    tspe.raw[k] = sc.spe_raw;
    tspe.calibrated[k] = sc.spe_cal;
    tt2.raw[k] = sc.t2_raw;
    tt2.calibrated[k] = sc.t2_cal;
    tz.tail_p[k] = sc.tail_p[0];
    tif.tail_p[k] = sc.tail_p[1];
    tspe.tail_p[k] = sc.tail_p[2];
    tt2.tail_p[k] = sc.tail_p[3];
    res.fused[k] = sc.fused;
    sustained[k] = sc.sustained;
  }
  res.window_start_s = w.t_start_s;
  for (std::size_t k = 0; k < nw; ++k) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < nc; ++j)
      if (std::fabs(z(k, j)) > std::fabs(z(k, best))) best = j;
    res.window_top_channel.push_back(s.channels[run_cols[best]].name);
    res.window_top_z.push_back(z(k, best));
  }
  res.window_end_s = w.t_end_s;
  for (std::size_t j = 0; j < nc; ++j) res.scored_channels.push_back(chans[j]->name);

  // Incidents and attribution.
  std::unique_ptr<bool[]> anomalous(new bool[nw]);
  for (std::size_t k = 0; k < nw; ++k) anomalous[k] = res.fused[k] >= 1.0;
  std::vector<double> zbar(nc), mean_value(nc);
  IncidentRule rule = opts.incident;
  rule.settle_windows = std::size_t(std::count_if(w.t_end_s.begin(), w.t_end_s.end(),
                                                  [&](double t) { return t < opts.settle_s; }));
  for (auto [a, b] : find_incidents(std::span<const bool>(anomalous.get(), nw), rule,
                                    std::span<const bool>(sustained.get(), nw))) {
    Incident inc;
    inc.first_window = a;
    inc.last_window = b;
    inc.start_s = w.t_start_s[a];
    inc.end_s = w.t_end_s[b];
    inc.start_unix_ns = run.t_unix_ns[w.first_row[a]];
    inc.end_unix_ns = run.t_unix_ns[w.first_row[b] + w.length - 1];
    for (std::size_t k = a; k <= b; ++k) inc.peak_score = std::max(inc.peak_score, res.fused[k]);
    // Per-channel mean z over the incident's anomalous windows, mean value over its samples.
    std::fill(zbar.begin(), zbar.end(), 0.0);
    std::size_t cnt = 0;
    for (std::size_t k = a; k <= b; ++k) {
      if (!anomalous[k]) continue;
      ++cnt;
      for (std::size_t j = 0; j < nc; ++j) zbar[j] += z(k, j);
    }
    for (double& x : zbar) x /= std::max<std::size_t>(cnt, 1);
    const std::size_t r0 = w.first_row[a], r1 = w.first_row[b] + w.length;
    for (std::size_t j = 0; j < nc; ++j) {
      double sum = 0;
      std::size_t n = 0;
      for (std::size_t r = r0; r < r1; ++r)
        if (const double x = s.values(r, run_cols[j]); std::isfinite(x)) { sum += x; ++n; }
      mean_value[j] = n ? sum / n : __builtin_nan("");
    }
    pipeline::attribute(inc, zbar, mean_value, model, chans, run.meta.cores, opts.top_channels);
    res.incidents.push_back(std::move(inc));
  }
  // Data that stops is an incident too (absence.h): a gap of at least one window.
  for (const auto& span : find_absences(run, L)) res.incidents.push_back(absence_incident(run, span, opts.top_channels));
  std::stable_sort(res.incidents.begin(), res.incidents.end(),
                   [](const Incident& a, const Incident& b) { return a.start_unix_ns < b.start_unix_ns; });
  res.detectors.push_back(std::move(tz));
  res.detectors.push_back(std::move(tif));
  if (opts.pca != PcaUse::off) {
    res.detectors.push_back(std::move(tspe));
    res.detectors.push_back(std::move(tt2));
  }
  if (opts.window_z) res.window_z = std::move(z);
  return res;
}

}  // namespace reveal
