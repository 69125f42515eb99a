// Offline detection pipeline; contract in include/reveal/detect.h.
#include "reveal/detect.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <numeric>

#include "reveal/isolation_forest.h"
#include "reveal/robust_z.h"

namespace reveal {
namespace {

constexpr double kZClip = 200.0;
constexpr double kFallWeight = 0.25;
const double kMaxEffect = std::log(100.0);  // effect-size cap for attribution (100×)
constexpr std::size_t kTopPerSubsystem = 3;
constexpr double kZStreamFloor = 1.0;   // robust SDs: the z stream's scale is at least one z unit
constexpr double kIfStreamFloor = 0.01; // Isolation Forest score units (scores live in (0, 1])
constexpr double kSuspect = 0.5;        // fused score that removes a window from a self reference
constexpr int kSelfPasses = 3;
constexpr double kNaN = __builtin_nan("");

Series prepare(const Recording& r) {
  Series s = to_rates(r);
  add_derived(s);
  return s;
}

// Column `c` of a Series restricted to finite values.
std::vector<double> finite_column(const Matrix& m, std::size_t c) {
  std::vector<double> v;
  v.reserve(m.rows());
  for (std::size_t r = 0; r < m.rows(); ++r)
    if (std::isfinite(m(r, c))) v.push_back(m(r, c));
  return v;
}

// Window means of selected channels, rows = windows.
Matrix window_means(const Windows& w, const std::vector<int>& cols) {
  Matrix m(w.first_row.size(), cols.size(), kNaN);
  for (std::size_t k = 0; k < w.first_row.size(); ++k)
    for (std::size_t j = 0; j < cols.size(); ++j)
      if (cols[j] >= 0) m(k, j) = w.at(k, cols[j], kMean);
  return m;
}

Matrix vstack(const std::vector<Matrix>& parts, std::size_t cols) {
  Matrix out(0, cols);
  for (const auto& p : parts)
    for (std::size_t r = 0; r < p.rows(); ++r) out.append_row(p.row(r));
  return out;
}

double pearson(const Matrix& m, std::size_t a, std::size_t b) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  std::size_t n = 0;
  for (std::size_t r = 0; r < m.rows(); ++r) {
    const double x = m(r, a), y = m(r, b);
    if (!std::isfinite(x) || !std::isfinite(y)) continue;
    ++n; sa += x; sb += y; saa += x * x; sbb += y * y; sab += x * y;
  }
  if (n < 3) return 0;
  const double cov = sab - sa * sb / n, va = saa - sa * sa / n, vb = sbb - sb * sb / n;
  if (va <= 0 || vb <= 0) return 0;
  return cov / std::sqrt(va * vb);
}

// Greedy Pearson pruning in channel order: keep a column unless |r| ≥ cut with a kept one.
std::vector<std::size_t> prune_correlated(const Matrix& ref, double cut) {
  std::vector<std::size_t> kept;
  for (std::size_t c = 0; c < ref.cols(); ++c) {
    bool dup = false;
    for (std::size_t k : kept)
      if (std::fabs(pearson(ref, c, k)) >= cut) { dup = true; break; }
    if (!dup) kept.push_back(c);
  }
  return kept;
}

struct Calibration { double median = 0, scale = 1; };
Calibration calibrate(const std::vector<double>& ref, double floor) {
  Calibration c;
  c.median = median_of(ref);
  const double mad = mad_of(ref, c.median);
  c.scale = std::max({1.4826 * mad, 1e-3 * std::fabs(c.median), floor});
  return c;
}

// The smallest deviation worth a robust SD, by unit: below it a change is noise however
// quiet the reference was (a channel idle at 0 that moves by 1 page is not an incident).
double unit_floor(const std::string& unit) {
  static const std::map<std::string, double> floors = {
      {"%", 1.0},           {"kB", 4096.0},        {"pages", 1024.0},     {"bytes", 4.0e6},
      {"bytes/s", 65536.0}, {"kB/s", 64.0},        {"pages/s", 16.0},     {"sectors/s", 128.0},
      {"ticks/s", 1.0},     {"us/s", 1000.0},      {"ms/s", 5.0},         {"count", 0.5},
      {"count/s", 1.0},     {"packets/s", 10.0},   {"ops/s", 1.0},        {"kHz", 50000.0},
  };
  auto it = floors.find(unit);
  return it == floors.end() ? 1e-9 : it->second;
}

// True for a per-CPU channel: its label (channel_label) is "cpu<N>".
bool is_per_cpu(const std::string& name) {
  const std::string label = channel_label(name);
  return label.size() > 3 && label.compare(0, 3, "cpu") == 0 &&
         std::all_of(label.begin() + 3, label.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The ε of the attribution effect size: the unit's resolution, but 5 points for shares
// (%, and 0/1 states averaged into the fraction of time true).
double attribution_eps(const std::string& unit, double floor) {
  if (unit == "%") return std::max(floor, 5.0);
  if (unit == "bool") return std::max(floor, 0.05);
  return std::max(floor, 1e-9);
}

// Fraction of the host's RAM below which a memory level shift is not scored (see detect()).
constexpr double kRamFloorFraction = 0.005;

// Median of the finite values of channel `name` in `s`, NaN when absent or empty.
double channel_median(const Series& s, const std::string& name) {
  const int c = s.find(name);
  return c < 0 ? kNaN : median_of(finite_column(s.values, std::size_t(c)));
}

// RMS of the three largest |z| in a row.
double top3_rms(std::span<const double> z) {
  double a = 0, b = 0, c = 0;
  for (double v : z) {
    v = std::fabs(v);
    if (v > a) { c = b; b = a; a = v; }
    else if (v > b) { c = b; b = v; }
    else if (v > c) c = v;
  }
  return std::sqrt((a * a + b * b + c * c) / 3.0);
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
    auto v = finite_column(s.values, c);
    if (v.size() * 2 < s.t_s.size()) continue;
    std::vector<int> idx;
    bool everywhere = true;
    std::vector<double> refv;
    for (const auto& r : refs) {
      int j = r.find(s.channels[c].name);
      if (j < 0) { everywhere = false; break; }
      idx.push_back(j);
      auto rv = finite_column(r.values, j);
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
  const Matrix run_means = window_means(w, run_cols);
  if (nw == 0) throw DetectError("no complete window in the run");
  std::vector<Windows> ref_windows;
  std::vector<Matrix> ref_parts;
  for (std::size_t k = 0; k < refs.size(); ++k) {
    ref_windows.push_back(make_windows(refs[k], opts.window));
    ref_parts.push_back(window_means(ref_windows.back(), ref_cols[k]));
  }
  std::vector<double> floors(nc);
  for (std::size_t j = 0; j < nc; ++j) floors[j] = unit_floor(s.channels[run_cols[j]].unit);
  // Memory-sized levels (kB, pages, bytes of the memory subsystem): a shift smaller than
  // kRamFloorFraction of the host's RAM is operationally negligible however flat the channel
  // was (e.g. page cache growing by 300 MB on a 128 GB host), so it cannot score high.
  if (const double mem_total_kb = channel_median(s, "proc.meminfo:MemTotal"); mem_total_kb > 0) {
    const double kb = kRamFloorFraction * mem_total_kb;
    for (std::size_t j = 0; j < nc; ++j) {
      const ChannelInfo& ch = s.channels[run_cols[j]];
      const double scale = ch.unit == "kB" ? 1.0 : ch.unit == "pages" ? 0.25
                           : (ch.unit == "bytes" && ch.subsystem == Subsystem::memory) ? 1024.0 : 0.0;
      floors[j] = std::max(floors[j], kb * scale);
    }
  }

  // Detector 1: per-channel robust z of the deviation sustained over the whole window:
  // z(min) when the window lies entirely above the reference median, z(max) when entirely
  // below, else 0. A spike shorter than the window scores nothing here (Isolation Forest
  // sees it through the window std); a level shift scores its full size.
  RobustZ rz;
  std::vector<double> zlo(nc), zhi(nc), vlo(nc), vhi(nc);
  auto sustained_z = [&](const Windows& win, const std::vector<int>& cols, std::size_t k,
                         std::span<double> out) {
    for (std::size_t j = 0; j < nc; ++j) {
      vlo[j] = win.at(k, cols[j], kMin);
      vhi[j] = win.at(k, cols[j], kMax);
    }
    rz.z(vlo, zlo);
    rz.z(vhi, zhi);
    for (std::size_t j = 0; j < nc; ++j)
      out[j] = std::clamp(zlo[j] > 0 ? zlo[j] : zhi[j] < 0 ? zhi[j] : 0.0, -kZClip, kZClip);
  };
  // Detector 2: Isolation Forest on robust-standardised mean and std of pruned channels.
  std::vector<std::size_t> kept;
  auto if_features = [&](const Windows& win, const std::vector<int>& cols) {
    Matrix f(win.first_row.size(), kept.size() * 2, kNaN);
    for (std::size_t k = 0; k < win.first_row.size(); ++k)
      for (std::size_t j = 0; j < kept.size(); ++j) {
        const int c = cols[kept[j]];
        const double sc = rz.scale()[kept[j]];
        f(k, 2 * j) = (win.at(k, c, kMean) - rz.median()[kept[j]]) / sc;
        f(k, 2 * j + 1) = win.at(k, c, kStd) / sc;
      }
    return f;
  };
  auto rows_where = [](const Matrix& m, const std::vector<char>& keep) {
    Matrix out(0, m.cols());
    for (std::size_t r = 0; r < m.rows(); ++r)
      if (keep[r]) out.append_row(m.row(r));
    return out;
  };

  // One scoring pass against a reference: the baselines, or (self mode) the run's windows
  // flagged in `keep`.
  Matrix z(nw, nc);
  DetectorTrace tz, tif;
  auto score_pass = [&](const std::vector<char>& keep) {
    const Matrix ref_means = refs.empty() ? rows_where(run_means, keep) : vstack(ref_parts, nc);
    rz.fit(ref_means);
    rz.floor_scale(floors);
    tz = {"robust_z", std::vector<double>(nw), {}, opts.z_cut};
    for (std::size_t k = 0; k < nw; ++k) {
      sustained_z(w, run_cols, k, z.row(k));
      tz.raw[k] = top3_rms(z.row(k));
    }
    std::vector<double> tz_ref;
    if (refs.empty()) {
      for (std::size_t k = 0; k < nw; ++k) if (keep[k]) tz_ref.push_back(tz.raw[k]);
    } else {
      std::vector<double> zr(nc);
      for (std::size_t b = 0; b < refs.size(); ++b)
        for (std::size_t k = 0; k < ref_windows[b].first_row.size(); ++k) {
          sustained_z(ref_windows[b], ref_cols[b], k, zr);
          tz_ref.push_back(top3_rms(zr));
        }
    }
    kept = prune_correlated(ref_means, opts.prune_r);
    res.n_channels_model = kept.size();
    const Matrix run_f = if_features(w, run_cols);
    Matrix ref_f;
    if (refs.empty()) {
      ref_f = rows_where(run_f, keep);
    } else {
      std::vector<Matrix> parts;
      for (std::size_t k = 0; k < refs.size(); ++k) parts.push_back(if_features(ref_windows[k], ref_cols[k]));
      ref_f = vstack(parts, kept.size() * 2);
    }
    IsolationForest forest({.n_trees = 100, .max_samples = 256, .seed = opts.seed});
    forest.fit(ref_f);
    tif = {"iforest", std::vector<double>(nw), {}, opts.if_cut};
    for (std::size_t k = 0; k < nw; ++k) tif.raw[k] = forest.score(run_f.row(k));
    std::vector<double> tif_ref(ref_f.rows());
    for (std::size_t k = 0; k < ref_f.rows(); ++k) tif_ref[k] = forest.score(ref_f.row(k));

    // Calibrated fusion. Each stream's scale has a floor in its own units so that a
    // reference of near-identical scores cannot turn a tiny change into a huge one.
    res.fused.assign(nw, 0.0);
    for (auto* t : {&tz, &tif}) {
      const Calibration cal = calibrate(t == &tz ? tz_ref : tif_ref, t == &tz ? kZStreamFloor : kIfStreamFloor);
      t->calibrated.resize(nw);
      for (std::size_t k = 0; k < nw; ++k) {
        t->calibrated[k] = (t->raw[k] - cal.median) / cal.scale;
        res.fused[k] = std::max(res.fused[k], t->calibrated[k] / t->cut);
      }
    }
  };

  // Self reference is contaminated by the faults it should find (a 30 s fault is a quarter of
  // a 2-minute run, which inflates medians and MADs). Iteratively reweighted reference: after
  // each pass, drop the windows that look suspicious (fused ≥ kSuspect, widened by one window
  // length either side) from the reference and score again, while at least half remain.
  std::vector<char> keep(nw, 1);
  score_pass(keep);
  for (int pass = 1; refs.empty() && pass < kSelfPasses; ++pass) {
    std::vector<char> next(nw, 1);
    for (std::size_t k = 0; k < nw; ++k)
      if (res.fused[k] >= kSuspect)
        for (std::size_t j = k >= L ? k - L : 0; j < std::min(nw, k + L + 1); ++j) next[j] = 0;
    const std::size_t n_keep = std::count(next.begin(), next.end(), 1);
    if (next == keep || n_keep * 2 < nw) break;
    keep = std::move(next);
    score_pass(keep);
  }
  res.reference_windows = std::count(keep.begin(), keep.end(), 1);

  res.window_start_s = w.t_start_s;
  for (std::size_t k = 0; k < nw; ++k) {
    std::size_t best = 0;
    for (std::size_t j = 1; j < nc; ++j)
      if (std::fabs(z(k, j)) > std::fabs(z(k, best))) best = j;
    res.window_top_channel.push_back(s.channels[run_cols[best]].name);
    res.window_top_z.push_back(z(k, best));
  }
  res.window_end_s = w.t_end_s;

  // Incidents and attribution.
  std::unique_ptr<bool[]> anomalous(new bool[nw]);
  for (std::size_t k = 0; k < nw; ++k) anomalous[k] = res.fused[k] >= 1.0;
  for (auto [a, b] : find_incidents(std::span<const bool>(anomalous.get(), nw), opts.incident)) {
    Incident inc;
    inc.first_window = a;
    inc.last_window = b;
    inc.start_s = w.t_start_s[a];
    inc.end_s = w.t_end_s[b];
    inc.start_unix_ns = run.t_unix_ns[w.first_row[a]];
    inc.end_unix_ns = run.t_unix_ns[w.first_row[b] + w.length - 1];
    for (std::size_t k = a; k <= b; ++k) inc.peak_score = std::max(inc.peak_score, res.fused[k]);
    // Per-channel mean z over the incident's anomalous windows.
    std::vector<double> zbar(nc, 0.0);
    std::size_t cnt = 0;
    for (std::size_t k = a; k <= b; ++k) {
      if (!anomalous[k]) continue;
      ++cnt;
      for (std::size_t j = 0; j < nc; ++j) zbar[j] += z(k, j);
    }
    for (double& x : zbar) x /= std::max<std::size_t>(cnt, 1);
    std::vector<std::size_t> order(nc);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
      return std::fabs(zbar[x]) > std::fabs(zbar[y]);
    });
    std::map<Subsystem, double> share;
    double total = 0;
    // Subsystem evidence. Significance comes from z (|z| ≥ 3); the weight of a significant
    // channel is its effect size, |ln((|value| + ε) / (|reference| + ε))| capped at ln 100,
    // with ε the channel's unit resolution. z alone would let a quiet but irrelevant channel
    // (virtual memory committed by a newly started process) outvote a large move on a noisy
    // one (CPU stall time 6 % → 82 %). Shares (%, 0/1 states) use ε = 5 points: a core going
    // from 0 % to 95 % busy is a big move, not a 95-fold one. A per-CPU channel weighs 1/N of
    // its effect on an N-CPU host: one core of sixteen is a sixteenth of the CPU (the host
    // aggregate of the same quantity carries the host-level evidence). Rises weigh 1 and falls
    // kFallWeight: a fault adds load
    // or errors, while the victim workload slowing down shows as falls spread over every
    // subsystem it uses, which must not outvote the cause.
    const std::size_t r0 = w.first_row[a], r1 = w.first_row[b] + w.length;
    auto incident_mean = [&](int c) {
      double sum = 0;
      std::size_t n = 0;
      for (std::size_t r = r0; r < r1; ++r)
        if (std::isfinite(s.values(r, c))) { sum += s.values(r, c); ++n; }
      return n ? sum / n : kNaN;
    };
    std::map<Subsystem, std::vector<double>> evidence;
    std::map<std::string, double> by_label;  // "" = host-wide channels
    double all_evidence = 0;
    const double n_cpus = std::max(1, run.meta.cores);
    for (std::size_t j : order) {
      const double az = std::fabs(zbar[j]);
      if (az < 3.0) break;
      const double v = incident_mean(run_cols[j]), ref = rz.median()[j];
      if (!std::isfinite(v) || !std::isfinite(ref)) continue;
      const ChannelInfo& ch = s.channels[run_cols[j]];
      const double eps = attribution_eps(ch.unit, floors[j]);
      const double effect = std::min(std::fabs(std::log((std::fabs(v) + eps) / (std::fabs(ref) + eps))), kMaxEffect);
      const double e = effect * (zbar[j] > 0 ? 1.0 : kFallWeight) / (is_per_cpu(ch.name) ? n_cpus : 1.0);
      evidence[s.channels[run_cols[j]].subsystem].push_back(e);
      by_label[channel_label(ch.name)] += e;
      all_evidence += e;
    }
    // Per subsystem, the sum of its kTopPerSubsystem strongest channels: one quantity seen
    // through many channels (bytes, packets, segments of the same traffic) counts once-ish.
    for (auto& [sub, es] : evidence) {
      std::sort(es.begin(), es.end(), std::greater<>());
      double sum = 0;
      for (std::size_t i = 0; i < es.size() && i < kTopPerSubsystem; ++i) sum += es[i];
      share[sub] = sum;
      total += sum;
    }
    if (total <= 0) total = 1;
    for (auto& [sub, v] : share) inc.subsystem_shares.emplace_back(sub, v / total);
    for (const auto& [label, e] : by_label)
      if (!label.empty() && all_evidence > 0 && e / all_evidence >= kFocusMinShare &&
          e / all_evidence > inc.focus_share) {
        inc.focus = label;
        inc.focus_share = e / all_evidence;
      }
    std::sort(inc.subsystem_shares.begin(), inc.subsystem_shares.end(),
              [](auto& x, auto& y) { return x.second > y.second; });
    if (!inc.subsystem_shares.empty()) {
      inc.subsystem = inc.subsystem_shares.front().first;
      inc.confidence = inc.subsystem_shares.front().second;
    }
    for (std::size_t i = 0; i < order.size() && int(inc.top.size()) < opts.top_channels; ++i) {
      const std::size_t j = order[i];
      const int c = run_cols[j];
      ChannelEvidence ev;
      ev.name = s.channels[c].name;
      ev.unit = s.channels[c].unit;
      ev.subsystem = s.channels[c].subsystem;
      ev.z = zbar[j];
      ev.reference = rz.median()[j];
      double sum = 0;
      std::size_t n = 0;
      for (std::size_t r = r0; r < r1; ++r)
        if (std::isfinite(s.values(r, c))) { sum += s.values(r, c); ++n; }
      ev.value = n ? sum / n : kNaN;
      inc.top.push_back(std::move(ev));
    }
    if (!inc.top.empty()) inc.action = suggest_action(inc.subsystem, inc.top.front());
    res.incidents.push_back(std::move(inc));
  }
  res.detectors.push_back(std::move(tz));
  res.detectors.push_back(std::move(tif));
  return res;
}

}  // namespace reveal
