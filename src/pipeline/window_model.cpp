// The reference model over window features; contract in window_model.h.
#include "window_model.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <string>

namespace reveal::pipeline {
namespace {

constexpr double kZClip = 200.0;
constexpr double kZStreamFloor = 1.0;   // robust SDs: the z stream's scale is at least one z unit
constexpr double kIfStreamFloor = 0.01; // Isolation Forest score units (scores live in (0, 1])
constexpr double kSpeStreamFloor = 0.1; // ln(1 + SPE) units
constexpr double kT2StreamFloor = 0.1;  // ln(1 + T²) units
constexpr std::size_t kPcaBlock = 10;   // windows per block of the held-out PCA calibration
constexpr double kNaN = __builtin_nan("");
constexpr double kInf = __builtin_inf();

// Pearson r of two columns held contiguously (n values each; pairs with a non-finite value are
// left out); `degenerate` when fewer than 3 pairs or a column without spread.
double pearson(const double* x, const double* y, std::size_t n_rows, double degenerate = 0, std::size_t min_pairs = 3) {
  double sa = 0, sb = 0, saa = 0, sbb = 0, sab = 0;
  std::size_t n = 0;
  for (std::size_t r = 0; r < n_rows; ++r) {
    const double a = x[r], b = y[r];
    if (!std::isfinite(a) || !std::isfinite(b)) continue;
    ++n; sa += a; sb += b; saa += a * a; sbb += b * b; sab += a * b;
  }
  if (n < min_pairs) return degenerate;
  const double cov = sab - sa * sb / n, va = saa - sa * sa / n, vb = sbb - sb * sb / n;
  if (va <= 0 || vb <= 0) return degenerate;
  return cov / std::sqrt(va * vb);
}

// Greedy Pearson pruning in channel order: keep a column unless |r| ≥ cut with a kept one.
// Columns with varies[c] == 0 are left out. The columns are copied out of the row-major matrix
// once: r of every pair then reads two contiguous arrays, with the same sums in the same order.
// Screening: with more than 4 × kScreenRows rows, r is first taken over every k-th row
// (kScreenRows of them, each at a pseudo-random offset within its stretch of k, so no period
// of the data lines up with the sample), and a pair whose |r| there is under cut − kScreenMargin
// is taken as under the cut without the full count (a sample of fewer than kScreenPairs finite
// pairs, or without spread in either column, is no screen: the full count decides). For pairs that co-move throughout, the screen's standard error is
// about 1/√256 ≈ 0.06, so a pair at the cut passes it with a margin of 3 or more errors; a pair
// that co-moves only in a few rare spikes the sample misses can be screened out, and both are
// then kept (one more forest input, never one fewer). A host of hundreds of independent
// channels (per-CPU shares, noise) then costs 1/14 of the full count at an hour of history.
constexpr std::size_t kScreenRows = 256;
constexpr std::size_t kScreenPairs = 200;
constexpr double kScreenMargin = 0.2;

std::vector<std::size_t> prune_correlated(const Matrix& ref, double cut, const std::vector<char>& varies) {
  const std::size_t n = ref.rows(), nc = ref.cols();
  std::vector<std::size_t> at(nc, 0);  // a varying column's place in `cols`
  std::size_t nv = 0;
  for (std::size_t c = 0; c < nc; ++c)
    if (varies[c]) at[c] = nv++;
  std::vector<double> cols(n * nv);
  for (std::size_t r = 0; r < n; ++r) {
    const auto row = ref.row(r);
    for (std::size_t c = 0; c < nc; ++c)
      if (varies[c]) cols[at[c] * n + r] = row[c];
  }
  const bool screen = n > 4 * kScreenRows && cut - kScreenMargin > 0.05;
  const std::size_t step = screen ? n / kScreenRows : 1, ns = screen ? kScreenRows : 0;
  std::vector<std::size_t> rows(ns);  // one row in each stretch of `step`, at a fixed pseudo-random offset
  std::uint64_t lcg = 0x9E3779B97F4A7C15ull;
  for (std::size_t i = 0; i < ns; ++i) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    rows[i] = i * step + std::size_t((lcg >> 33) % step);
  }
  std::vector<double> sub(ns * nv);
  for (std::size_t v = 0; v < nv && screen; ++v)
    for (std::size_t i = 0; i < ns; ++i) sub[v * ns + i] = cols[v * n + rows[i]];
  std::vector<std::size_t> kept;
  for (std::size_t c = 0; c < nc; ++c) {
    if (!varies[c]) continue;
    bool dup = false;
    for (std::size_t k : kept) {
      if (screen) {
        const double rs = pearson(sub.data() + at[c] * ns, sub.data() + at[k] * ns, ns, kNaN, kScreenPairs);
        if (std::isfinite(rs) && std::fabs(rs) < cut - kScreenMargin) continue;
      }
      if (std::fabs(pearson(cols.data() + at[c] * n, cols.data() + at[k] * n, n)) >= cut) {
        dup = true;
        break;
      }
    }
    if (!dup) kept.push_back(c);
  }
  return kept;
}

// The three largest |v| so far, kept in descending order.
struct Top3 {
  double a = 0, b = 0, c = 0;
  void add(double v) {
    v = std::fabs(v);
    if (v > a) { c = b; b = a; a = v; }
    else if (v > b) { c = b; b = v; }
    else if (v > c) c = v;
  }
  double rms() const { return std::sqrt((a * a + b * b + c * c) / 3.0); }
};

}  // namespace

std::size_t strongest_channel(std::span<const double> z) {
  std::size_t best = 0;
  for (std::size_t j = 1; j < z.size(); ++j)
    if (std::fabs(z[j]) > std::fabs(z[best])) best = j;
  return best;
}

WindowModel::WindowModel(std::vector<double> floors, std::vector<Subsystem> subsystems, const DetectOptions& opts,
                         double window_period_s, std::vector<char> no_trail)
    : floors_(std::move(floors)), subsystems_(std::move(subsystems)), no_trail_(std::move(no_trail)),
      prune_r_(opts.prune_r), seed_(opts.seed),
      pca_use_(opts.pca), pca_({.variance = opts.pca_variance, .max_components = 50}),
      fusion_({opts.z_cut, opts.z_cut, opts.if_cut, opts.pca_cut, opts.pca_cut},
              {kZStreamFloor, kZStreamFloor, kIfStreamFloor, kSpeStreamFloor, kT2StreamFloor}, window_period_s,
              opts.false_per_day) {
  const std::size_t nc = floors_.size();
  vlo_.resize(nc); vhi_.resize(nc); zlo_.resize(nc); zhi_.resize(nc); pfeat_.resize(nc); resid_.resize(nc);
  vtr_.resize(nc); ztr_.resize(nc);
  for (Subsystem s : subsystems_) sub_present_[std::size_t(s)] = true;
}

// Detector 1: per-channel robust z of the deviation sustained over the whole window:
// z(min) when the window lies entirely above the reference median, z(max) when entirely
// below, else 0. A spike shorter than the window scores nothing here (Isolation Forest
// sees it through the window std); a level shift scores its full size.
// Window score = RMS of the 3 largest |z|; `sub` gets the same per subsystem.
double WindowModel::z_stream(const Windows& w, std::size_t k, const std::vector<int>& cols,
                             std::span<double> z, std::array<double, kNumSubsystems>* sub) const {
  const std::size_t nc = floors_.size();
  for (std::size_t j = 0; j < nc; ++j) {
    vlo_[j] = w.at(k, cols[j], kMin);
    vhi_[j] = w.at(k, cols[j], kMax);
  }
  rz_.z(vlo_, zlo_);
  rz_.z(vhi_, zhi_);
  Top3 all;
  std::array<Top3, kNumSubsystems> per{};
  for (std::size_t j = 0; j < nc; ++j) {
    z[j] = std::clamp(zlo_[j] > 0 ? zlo_[j] : zhi_[j] < 0 ? zhi_[j] : 0.0, -kZClip, kZClip);
    all.add(z[j]);
    per[std::size_t(subsystems_[j])].add(z[j]);
  }
  if (sub)
    for (std::size_t i = 0; i < kNumSubsystems; ++i) (*sub)[i] = sub_present_[i] ? per[i].rms() : kNaN;
  return all.rms();
}

// Detector 1 at the longer time scale: per channel the robust z of its trailing mean over the
// last `trail` samples (WindowStat kTrail) against the reference's trailing means, counted only
// when every one of those samples lies on the same side of the reference median (the trail's
// minimum above it, or its maximum below): the deviation held through the whole trail, as
// z_stream asks of a window. So a burst shorter than the trail scores nothing here (z_stream
// sees it), and none lingers once it has passed. A shift that holds for many samples scores by
// the spread of the trailing means, which averaging makes narrower than the windows' for
// channels whose noise is not slow: a busy host's extra runnable tasks (+4 on a run queue that
// varies by ±1) that utilisation and pressure, already saturated, cannot show. Window score =
// RMS of the 3 largest |z|.
double WindowModel::trail_stream(const Windows& w, std::size_t k, const std::vector<int>& cols) const {
  std::fill(ztr_.begin(), ztr_.end(), 0.0);
  if (!trail_) return kNaN;
  const std::size_t nc = floors_.size();
  std::size_t finite = 0;
  for (std::size_t j = 0; j < nc; ++j) {
    vtr_[j] = w.at(k, cols[j], kTrail);
    finite += std::isfinite(vtr_[j]) ? 1 : 0;
  }
  if (finite == 0) return kNaN;
  rzt_.z(vtr_, ztr_);
  const std::vector<double>& med = rzt_.median();
  Top3 all;
  for (std::size_t j = 0; j < nc; ++j) {
    const bool held = ztr_[j] > 0 ? w.at(k, cols[j], kTrailMin) > med[j] : ztr_[j] < 0 && w.at(k, cols[j], kTrailMax) < med[j];
    ztr_[j] = held ? std::clamp(ztr_[j], -kZClip, kZClip) : 0.0;
    all.add(ztr_[j]);
  }
  return all.rms();
}

void WindowModel::rise_z(const Windows& w, std::size_t k, const std::vector<int>& cols, std::span<const double> z,
                         std::span<double> out) const {
  trail_stream(w, k, cols);
  for (std::size_t j = 0; j < out.size(); ++j) out[j] = std::max(z[j], ztr_[j]);
}

// Detector 2 input: robust-standardised mean and std of the pruned channels.
void WindowModel::features(const Windows& w, std::size_t k, const std::vector<int>& cols,
                           std::span<double> out) const {
  for (std::size_t j = 0; j < kept_.size(); ++j) {
    const int c = cols[kept_[j]];
    const double sc = rz_.scale()[kept_[j]];
    out[2 * j] = (w.at(k, c, kMean) - rz_.median()[kept_[j]]) / sc;
    out[2 * j + 1] = w.at(k, c, kStd) / sc;
  }
}

void WindowModel::pca_features(const Windows& w, std::size_t k, const std::vector<int>& cols,
                               std::span<double> out) const {
  for (std::size_t j = 0; j < floors_.size(); ++j)
    out[j] = std::clamp((w.at(k, cols[j], kMean) - rz_.median()[j]) / rz_.scale()[j], -kZClip, kZClip);
}

void WindowModel::fit(std::span<const ReferenceWindows> refs) {
  const std::size_t nc = floors_.size();
  Matrix means(0, nc);
  std::vector<double> row(nc);
  for (const auto& r : refs)
    for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
      if (r.keep && !(*r.keep)[k]) continue;
      for (std::size_t j = 0; j < nc; ++j) row[j] = (*r.cols)[j] >= 0 ? r.windows->at(k, (*r.cols)[j], kMean) : kNaN;
      means.append_row(row);
    }
  n_ref_ = means.rows();
  if (n_ref_ == 0) throw DetectError("the reference holds no complete window");
  RobustZOptions rzo;
  rzo.steps_stand_out = refs.size() == 1 && refs[0].self;
  rz_ = RobustZ(rzo);
  rz_.fit(means);
  rz_.floor_scale(floors_);
  // The trailing means: only when the windows have a trail longer than themselves, and then
  // from the reference windows that have one (the first rows of a recording have none).
  Matrix trails(0, nc);
  trail_ = false;
  for (const auto& r : refs) {
    if (r.windows->trail <= r.windows->length) continue;
    const std::vector<char>* keep = r.keep_trail ? r.keep_trail : r.keep;
    for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
      if (keep && !(*keep)[k]) continue;
      bool any = false;
      for (std::size_t j = 0; j < nc; ++j) {
        row[j] = (*r.cols)[j] >= 0 ? r.windows->at(k, (*r.cols)[j], kTrail) : kNaN;
        any = any || std::isfinite(row[j]);
      }
      if (any) trails.append_row(row);
    }
  }
  if (trails.rows() > 0) {
    for (std::size_t j = 0; j < no_trail_.size() && j < nc; ++j)
      if (no_trail_[j])
        for (std::size_t i = 0; i < trails.rows(); ++i) trails(i, j) = kNaN;  // median NaN: z 0
    rzt_ = RobustZ(rzo);
    rzt_.fit(trails);
    rzt_.floor_scale(floors_);
    trail_ = true;
  } else {
    rzt_ = RobustZ();
  }

  std::vector<double> zref, trref, zrow(nc);
  std::vector<char> startup;  // per reference window: in its recording's start-up (no tail fit)
  std::array<std::vector<double>, kNumSubsystems> subref;
  std::array<double, kNumSubsystems> sub{};
  for (const auto& r : refs)
    for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
      if (r.keep && !(*r.keep)[k]) continue;
      startup.push_back(k < r.tail_from);
      zref.push_back(z_stream(*r.windows, k, *r.cols, zrow, &sub));
      trref.push_back(r.keep_trail && !(*r.keep_trail)[k] ? kNaN : trail_stream(*r.windows, k, *r.cols));
      for (std::size_t i = 0; i < kNumSubsystems; ++i)
        if (sub_present_[i]) subref[i].push_back(sub[i]);
    }
  // A channel whose window mean and std are the same in every reference window (constant there;
  // a baseline model keeps such channels for the robust z) gives the Isolation Forest nothing to
  // split on: it stays out of the forest's input, which leaves the trees and scores unchanged.
  std::vector<char> varies(nc, 0);
  std::vector<double> first_mean(nc, kNaN), first_std(nc, kNaN);
  for (const auto& r : refs)
    for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
      if (r.keep && !(*r.keep)[k]) continue;
      for (std::size_t j = 0; j < nc; ++j) {
        if ((*r.cols)[j] < 0 || varies[j]) continue;
        for (const auto& [stat, first] : {std::pair{kMean, &first_mean[j]}, std::pair{kStd, &first_std[j]}}) {
          const double v = r.windows->at(k, (*r.cols)[j], stat);
          if (!std::isfinite(v)) continue;
          if (std::isnan(*first)) *first = v;
          else if (v != *first) varies[j] = 1;
        }
      }
    }
  kept_ = prune_correlated(means, prune_r_, varies);
  feat_.assign(kept_.size() * 2, kNaN);
  fcontrib_.assign(kept_.size() * 2, 0.0);
  Matrix f(0, kept_.size() * 2);
  for (const auto& r : refs)
    for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
      if (r.keep && !(*r.keep)[k]) continue;
      features(*r.windows, k, *r.cols, feat_);
      f.append_row(feat_);
    }
  forest_ = IsolationForest({.n_trees = 100, .max_samples = 256, .seed = seed_});
  forest_.fit(f);
  std::vector<double> ifref(f.rows());
  forest_.score_many(f, ifref);
  Matrix pf(0, pca_use_ == PcaUse::off ? 0 : nc);
  if (pca_use_ != PcaUse::off)
    for (const auto& r : refs)
      for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
        if (r.keep && !(*r.keep)[k]) continue;
        pca_features(*r.windows, k, *r.cols, pfeat_);
        pf.append_row(pfeat_);
      }
  // A PCA plane fitted on few windows in many dimensions reconstructs its own windows almost
  // exactly, so in-sample SPE says nothing about new windows. The reference streams are
  // therefore held out: two folds of alternating blocks of kPcaBlock windows (blocks, because
  // neighbouring windows share samples), each scored by the plane fitted on the other.
  // speref/t2ref are in reference-window order (pf's rows), like zref and ifref.
  std::vector<double> speref, t2ref;
  std::array<Matrix, 2> fold{Matrix(0, nc), Matrix(0, nc)};
  std::array<std::vector<std::size_t>, 2> fold_rows;
  for (std::size_t k = 0; k < pf.rows(); ++k) {
    fold[(k / kPcaBlock) % 2].append_row(pf.row(k));
    fold_rows[(k / kPcaBlock) % 2].push_back(k);
  }
  if (pca_use_ != PcaUse::off && fold[0].rows() >= 2 && fold[1].rows() >= 2) {
    speref.assign(pf.rows(), kNaN);
    t2ref.assign(pf.rows(), kNaN);
    for (int f = 0; f < 2; ++f) {
      PcaResidual held = pca_;
      held.fit(fold[f]);
      const Matrix& other = fold[1 - f];
      for (std::size_t k = 0; k < other.rows(); ++k) {
        const PcaScore ps = held.score(other.row(k));
        speref[fold_rows[1 - f][k]] = std::log1p(ps.spe);
        t2ref[fold_rows[1 - f][k]] = std::log1p(ps.t2);
      }
    }
    pca_.fit(pf);
  } else {
    pca_.clear();
  }
  // An Isolation Forest score is at most 2^(−1/c(ψ)) (every tree isolating the window at its
  // first split). Robust z is clipped at kZClip; the PCA streams are unbounded.
  if_reach_ = std::pow(2.0, -1.0 / std::max(average_path_length(double(std::min<std::size_t>(256, f.rows()))), 1e-9));
  fusion_.fit({&zref, &trref, &ifref, &speref, &t2ref}, startup, reach(), fused_mask());
  for (std::size_t i = 0; i < kNumSubsystems; ++i)
    if (sub_present_[i]) sub_cal_[i] = calibrate(subref[i], kZStreamFloor);
}

void WindowModel::set_false_per_day(double f) { fusion_.set_false_per_day(f, fused_mask()); }

std::array<bool, kNumStreams> WindowModel::fused_mask() const {
  return {true, trail_, true, pca_use_ == PcaUse::fuse && pca_.fitted(), false};
}

std::array<double, kNumStreams> WindowModel::reach() const { return {kZClip, kZClip, if_reach_, kInf, kInf}; }

WindowScore WindowModel::score(const Windows& w, std::size_t k, const std::vector<int>& cols,
                               std::span<double> z) const {
  features(w, k, cols, feat_);
  return score_with(w, k, cols, z, forest_.score(feat_));
}

std::vector<WindowScore> WindowModel::score_all(const Windows& w, const std::vector<int>& cols, Matrix& z,
                                                Progress* progress, std::string_view stage) const {
  const std::size_t nw = w.first_row.size();
  // Progress in three parts of nw each: features, the forest's batch, the other detectors.
  const std::size_t total = 3 * nw;
  Matrix f(nw, kept_.size() * 2);
  for (std::size_t k = 0; k < nw; ++k) {
    features(w, k, cols, f.row(k));
    report_progress(progress, stage, k + 1, total);
  }
  std::vector<double> if_raw(nw);
  forest_.score_many(f, if_raw);
  if (progress) progress->update(stage, 2 * nw, total);
  z = Matrix(nw, n_channels());
  std::vector<WindowScore> out(nw);
  for (std::size_t k = 0; k < nw; ++k) {
    out[k] = score_with(w, k, cols, z.row(k), if_raw[k]);
    report_progress(progress, stage, 2 * nw + k + 1, total);
  }
  return out;
}

WindowScore WindowModel::score_with(const Windows& w, std::size_t k, const std::vector<int>& cols,
                                    std::span<double> z, double if_raw) const {
  WindowScore s;
  s.z_raw = z_stream(w, k, cols, z, &s.subsystem);
  for (std::size_t i = 0; i < kNumSubsystems; ++i)
    if (sub_present_[i]) s.subsystem[i] = (s.subsystem[i] - sub_cal_[i].median) / sub_cal_[i].scale / z_cut();
  s.trail_raw = trail_stream(w, k, cols);
  s.if_raw = if_raw;
  if (pca_.fitted()) {
    pca_features(w, k, cols, pfeat_);
    const PcaScore ps = pca_.score(pfeat_);
    s.spe_raw = ps.spe;
    s.t2_raw = ps.t2;
  }
  const FusedLevels f =
      fusion_.fuse({s.z_raw, s.trail_raw, s.if_raw, std::log1p(s.spe_raw), std::log1p(s.t2_raw)}, pca_.fitted());
  s.z_cal = f.calibrated[kRobustZStream];
  s.trail_cal = f.calibrated[kTrailStream];
  s.if_cal = f.calibrated[kIForestStream];
  s.spe_cal = f.calibrated[kPcaSpeStream];
  s.t2_cal = f.calibrated[kPcaT2Stream];
  s.tail_p = f.tail_p;
  s.level = f.level;
  s.fused = f.fused;
  s.robust = f.robust;
  s.sustained = f.sustained;
  return s;
}

void WindowModel::contributions(const Windows& w, std::size_t k, const std::vector<int>& cols,
                                std::span<double> iforest, std::span<double> pca_spe) const {
  std::fill(iforest.begin(), iforest.end(), 0.0);
  std::fill(pca_spe.begin(), pca_spe.end(), 0.0);
  if (forest_.fitted()) {
    features(w, k, cols, feat_);
    forest_.feature_contributions(feat_, fcontrib_);
    for (std::size_t j = 0; j < kept_.size(); ++j) iforest[kept_[j]] = fcontrib_[2 * j] + fcontrib_[2 * j + 1];
  }
  if (pca_.fitted()) {
    pca_features(w, k, cols, pfeat_);
    const double spe = pca_.score(pfeat_, resid_).spe;
    if (spe > 0)
      for (std::size_t j = 0; j < resid_.size(); ++j) pca_spe[j] = resid_[j] * resid_[j] / spe;
  }
}

double WindowModel::threshold(std::size_t d) const {
  if (d >= kNumStreams || (d >= kPcaSpeStream && !pca_.fitted()) || (d == kTrailStream && !trail_) || n_ref_ == 0)
    return kNaN;
  const double x = fusion_.threshold(d);
  return d >= kPcaSpeStream ? std::expm1(x) : x;  // the PCA streams are calibrated on ln(1 + score)
}

}  // namespace reveal::pipeline
