// Reference model, self-reference fit and attribution; contract in window_model.h.
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
constexpr double kFallWeight = 0.25;
const double kMaxEffect = std::log(100.0);  // effect-size cap for attribution (100×)
constexpr std::size_t kTopPerSubsystem = 3;
constexpr double kZStreamFloor = 1.0;   // robust SDs: the z stream's scale is at least one z unit
constexpr double kIfStreamFloor = 0.01; // Isolation Forest score units (scores live in (0, 1])
constexpr double kSpeStreamFloor = 0.1; // ln(1 + SPE) units
constexpr double kT2StreamFloor = 0.1;  // ln(1 + T²) units
constexpr double kTailScaleFloor = 0.5;  // EVT tail σ ≥ this × the stream's scale floor
constexpr std::size_t kPcaBlock = 10;   // windows per block of the held-out PCA calibration
constexpr double kSuspect = 0.5;        // fused score that removes a window from a self reference
constexpr int kSelfPasses = 3;
constexpr double kNaN = __builtin_nan("");
constexpr double kInf = __builtin_inf();
// Fraction of the host's RAM below which a memory level shift is not scored.
constexpr double kRamFloorFraction = 0.005;

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
// Columns with varies[c] == 0 are left out.
std::vector<std::size_t> prune_correlated(const Matrix& ref, double cut, const std::vector<char>& varies) {
  std::vector<std::size_t> kept;
  for (std::size_t c = 0; c < ref.cols(); ++c) {
    if (!varies[c]) continue;
    bool dup = false;
    for (std::size_t k : kept)
      if (std::fabs(pearson(ref, c, k)) >= cut) { dup = true; break; }
    if (!dup) kept.push_back(c);
  }
  return kept;
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

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

}  // namespace

std::vector<double> finite_column(const Matrix& m, std::size_t c) {
  std::vector<double> v;
  v.reserve(m.rows());
  for (std::size_t r = 0; r < m.rows(); ++r)
    if (std::isfinite(m(r, c))) v.push_back(m(r, c));
  return v;
}

Calibration calibrate(const std::vector<double>& ref, double floor) {
  Calibration c;
  c.median = median_of(ref);
  const double mad = mad_of(ref, c.median);
  c.scale = std::max({1.4826 * mad, 1e-3 * std::fabs(c.median), floor});
  return c;
}

std::vector<int> varying_columns(const Series& s) {
  std::vector<int> cols;
  for (std::size_t c = 0; c < s.channels.size(); ++c) {
    auto v = finite_column(s.values, c);
    if (v.empty() || v.size() * 2 < s.t_s.size()) continue;
    auto [lo, hi] = std::minmax_element(v.begin(), v.end());
    if (*lo == *hi) continue;
    cols.push_back(int(c));
  }
  return cols;
}

std::vector<double> channel_floors(const Series& s, const std::vector<int>& cols) {
  std::vector<double> floors(cols.size());
  for (std::size_t j = 0; j < cols.size(); ++j) floors[j] = unit_floor(s.channels[cols[j]].unit);
  // Memory-sized levels (kB, pages, bytes of the memory subsystem): a shift smaller than
  // kRamFloorFraction of the host's RAM is operationally negligible however flat the channel
  // was (e.g. page cache growing by 300 MB on a 128 GB host), so it cannot score high.
  const int mt = s.find("proc.meminfo:MemTotal");
  const double mem_total_kb = mt < 0 ? kNaN : median_of(finite_column(s.values, std::size_t(mt)));
  if (mem_total_kb > 0) {
    const double kb = kRamFloorFraction * mem_total_kb;
    for (std::size_t j = 0; j < cols.size(); ++j) {
      const ChannelInfo& ch = s.channels[cols[j]];
      const double scale = ch.unit == "kB" ? 1.0 : ch.unit == "pages" ? 0.25
                           : (ch.unit == "bytes" && ch.subsystem == Subsystem::memory) ? 1024.0 : 0.0;
      floors[j] = std::max(floors[j], kb * scale);
    }
  }
  return floors;
}

WindowModel::WindowModel(std::vector<double> floors, std::vector<Subsystem> subsystems, const DetectOptions& opts,
                         double window_period_s)
    : floors_(std::move(floors)), subsystems_(std::move(subsystems)), z_cut_(opts.z_cut),
      if_cut_(opts.if_cut), pca_cut_(opts.pca_cut), prune_r_(opts.prune_r), seed_(opts.seed),
      pca_use_(opts.pca), pca_({.variance = opts.pca_variance, .max_components = 50}) {
  if (!(window_period_s > 0) || !std::isfinite(window_period_s))
    throw DetectError("window period must be a positive number of seconds");
  period_s_ = window_period_s;
  set_false_per_day(opts.false_per_day);
  // The tails' scale floor: the mean excess of a normal distribution over its 90th percentile
  // is 0.47 SD, so a stream whose robust SD is at its floor has excesses of about half of it.
  const std::array<double, 4> sigma_floor{kZStreamFloor, kIfStreamFloor, kSpeStreamFloor, kT2StreamFloor};
  for (std::size_t d = 0; d < tails_.size(); ++d)
    tails_[d] = SpotTail({.min_gamma = 0, .min_sigma = kTailScaleFloor * sigma_floor[d]});
  const std::size_t nc = floors_.size();
  vlo_.resize(nc); vhi_.resize(nc); zlo_.resize(nc); zhi_.resize(nc); pfeat_.resize(nc); resid_.resize(nc);
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
  rz_.fit(means);
  rz_.floor_scale(floors_);

  std::vector<double> zref, zrow(nc);
  std::vector<char> startup;  // per reference window: in its recording's start-up (no tail fit)
  std::array<std::vector<double>, kNumSubsystems> subref;
  std::array<double, kNumSubsystems> sub{};
  for (const auto& r : refs)
    for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
      if (r.keep && !(*r.keep)[k]) continue;
      startup.push_back(k < r.tail_from);
      zref.push_back(z_stream(*r.windows, k, *r.cols, zrow, &sub));
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
  // Each stream's scale has a floor in its own units so that a reference of near-identical
  // scores cannot turn a tiny change into a huge one.
  z_cal_ = calibrate(zref, kZStreamFloor);
  if_cal_ = calibrate(ifref, kIfStreamFloor);
  spe_cal_ = speref.empty() ? Calibration{} : calibrate(finite(speref), kSpeStreamFloor);
  t2_cal_ = t2ref.empty() ? Calibration{} : calibrate(finite(t2ref), kT2StreamFloor);
  // The EVT tails describe normal windows: reference windows that the robust-SD calibration
  // itself flags (some stream ≥ its cut) are left out of every tail fit, and so are start-up
  // windows. A self reference keeps a fault that covers more than half of it, and its windows
  // would otherwise be the very peaks the tail is fitted on; start-up transients would inflate
  // the tail's scale.
  std::vector<char> normal(n_ref_, 1);
  for (std::size_t k = 0; k < n_ref_; ++k) {
    if (startup[k]) { normal[k] = 0; continue; }
    const bool spe_high = !speref.empty() && (speref[k] - spe_cal_.median) / spe_cal_.scale >= pca_cut_;
    const bool t2_high = !t2ref.empty() && (t2ref[k] - t2_cal_.median) / t2_cal_.scale >= pca_cut_;
    normal[k] = (zref[k] - z_cal_.median) / z_cal_.scale < z_cut_ && (ifref[k] - if_cal_.median) / if_cal_.scale < if_cut_ &&
                !spe_high && !t2_high;
  }
  const std::array<const std::vector<double>*, 4> streams{&zref, &ifref, &speref, &t2ref};
  // An Isolation Forest score is at most 2^(−1/c(ψ)) (every tree isolating the window at its
  // first split).
  if_reach_ = std::pow(2.0, -1.0 / std::max(average_path_length(double(std::min<std::size_t>(256, f.rows()))), 1e-9));
  std::vector<double> tail_ref;
  for (std::size_t d = 0; d < streams.size(); ++d) {
    tail_fit_[d] = false;
    tail_ref.clear();
    for (std::size_t k = 0; k < streams[d]->size(); ++k)
      if (normal[k]) tail_ref.push_back((*streams[d])[k]);
    try {
      tails_[d].fit(tail_ref);
      tail_fit_[d] = true;
    } catch (const std::invalid_argument&) {
      // Too few reference windows or a constant tail: no tail probability for this stream.
    }
  }
  set_false_per_day(false_per_day_);
  for (std::size_t i = 0; i < kNumSubsystems; ++i)
    if (sub_present_[i]) sub_cal_[i] = calibrate(subref[i], kZStreamFloor);
}

void WindowModel::set_false_per_day(double f) {
  if (!(f > 0) || !std::isfinite(f)) throw DetectError("expected false incidents per day must be a positive number");
  false_per_day_ = f;
  // q = F·T_w / 1 day, at most 1/2 (a knob of thousands a day on long windows is not a rate).
  log_q_ = std::log(std::min(0.5, f * period_s_ / 86400.0));
  // A q/D quantile beyond the stream's range would silence the detector: such a stream (the
  // forest's bounded score, on a reference too short to resolve rate q) keeps its robust-SD
  // calibration. Robust z is clipped at kZClip; the PCA streams are unbounded.
  const std::array<double, 4> reachable{kZClip, if_reach_, kInf, kInf};
  const double q_d = std::exp(log_q_) / double(fused_detectors());
  for (std::size_t d = 0; d < tails_.size(); ++d)
    tail_ok_[d] = tail_fit_[d] && tails_[d].threshold(q_d) < reachable[d];
}

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
    if (sub_present_[i]) s.subsystem[i] = (s.subsystem[i] - sub_cal_[i].median) / sub_cal_[i].scale / z_cut_;
  s.if_raw = if_raw;
  s.z_cal = (s.z_raw - z_cal_.median) / z_cal_.scale;
  s.if_cal = (s.if_raw - if_cal_.median) / if_cal_.scale;
  if (pca_.fitted()) {
    pca_features(w, k, cols, pfeat_);
    const PcaScore ps = pca_.score(pfeat_);
    s.spe_raw = ps.spe;
    s.t2_raw = ps.t2;
    s.spe_cal = (std::log1p(ps.spe) - spe_cal_.median) / spe_cal_.scale;
    s.t2_cal = (std::log1p(ps.t2) - t2_cal_.median) / t2_cal_.scale;
  }
  const std::array<double, 4> stream{s.z_raw, s.if_raw, std::log1p(s.spe_raw), std::log1p(s.t2_raw)};
  const std::array<double, 4> robust{s.z_cal / z_cut_, s.if_cal / if_cut_, s.spe_cal / pca_cut_, s.t2_cal / pca_cut_};
  const std::size_t n_fused = fused_detectors();
  const double log_d = std::log(double(n_fused));
  s.fused = s.robust = 0;
  for (std::size_t d = 0; d < stream.size(); ++d) {
    const bool live = d < 2 || pca_.fitted();
    s.tail_p[d] = tail_fit_[d] && live ? tails_[d].tail_probability(stream[d]) : kNaN;
    // Bonferroni over the D fused detectors: the window is anomalous when some p_d ≤ q / D.
    s.level[d] = !live ? kNaN : tail_ok_[d] ? (tails_[d].log_tail_probability(stream[d]) + log_d) / log_q_ : robust[d];
    if (d >= n_fused) continue;
    s.fused = std::max(s.fused, s.level[d]);
    s.robust = std::max(s.robust, robust[d]);
    if (d == 0) s.sustained = s.level[d] >= 1.0;
  }
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
  if (d >= tails_.size() || (d >= 2 && !pca_.fitted()) || n_ref_ == 0) return kNaN;
  const std::array<Calibration, 4> cal{z_cal_, if_cal_, spe_cal_, t2_cal_};
  const std::array<double, 4> cut{z_cut_, if_cut_, pca_cut_, pca_cut_};
  const double q_d = std::exp(log_q_) / double(fused_detectors());
  const double x = tail_ok_[d] ? tails_[d].threshold(q_d) : cal[d].median + cut[d] * cal[d].scale;
  return d >= 2 ? std::expm1(x) : x;  // the PCA streams are calibrated on ln(1 + score)
}

StartupUse startup_reference(std::size_t windows, std::size_t settle_windows) {
  if (settle_windows == 0 || settle_windows >= windows) return {};
  if (settle_windows * 4 <= windows) return {settle_windows, settle_windows};
  return {0, (windows - settle_windows) * 2 >= windows ? settle_windows : 0};
}

std::vector<char> fit_self(WindowModel& model, const Windows& w, const std::vector<int>& cols,
                           std::size_t settle_windows, Progress* progress) {
  // A self reference is contaminated by the faults it should find (a 30 s fault is a quarter
  // of a 2-minute run, which inflates medians and MADs): after each pass, drop the windows
  // that look suspicious (robust-SD level ≥ kSuspect, widened by one window length either
  // side) from the reference and score again, while at least half remain. The robust-SD level
  // (median and MAD) tolerates that contamination; an EVT tail fitted on it does not (the
  // fault's windows would be its peaks).
  const std::size_t nw = w.first_row.size(), L = std::max<std::size_t>(w.length, 1);
  Matrix z;
  // Start-up windows are not normal behaviour (startup_reference()).
  const StartupUse su = startup_reference(nw, settle_windows);
  std::vector<char> base(nw, 1);
  std::fill_n(base.begin(), su.drop, 0);
  const std::size_t n_base = nw - su.drop, tail_from = su.tail_from;
  std::vector<char> keep = base;
  std::vector<double> level(nw);
  auto pass = [&] {
    const ReferenceWindows ref{&w, &cols, &keep, tail_from};
    model.fit(std::span(&ref, 1));
    const std::vector<WindowScore> scores = model.score_all(w, cols, z, progress, "fit");
    for (std::size_t k = 0; k < nw; ++k) level[k] = scores[k].robust;
  };
  pass();
  for (int p = 1; p < kSelfPasses; ++p) {
    std::vector<char> next = base;
    for (std::size_t k = 0; k < nw; ++k)
      if (level[k] >= kSuspect)
        for (std::size_t j = k >= L ? k - L : 0; j < std::min(nw, k + L + 1); ++j) next[j] = 0;
    const std::size_t n_keep = std::count(next.begin(), next.end(), 1);
    if (next == keep || n_keep * 2 < n_base) break;
    keep = std::move(next);
    pass();
  }
  return keep;
}

void attribute(Incident& inc, std::span<const double> zbar, std::span<const double> mean_value,
               const WindowModel& model, const std::vector<const ChannelInfo*>& chans, int cores,
               int top_channels, const DetectorEvidence& more) {
  const std::size_t nc = zbar.size();
  const auto& ref_median = model.robust_z().median();
  std::vector<std::size_t> order(nc);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::fabs(zbar[x]) > std::fabs(zbar[y]);
  });
  // robust_z's per-channel evidence. Significance comes from z (|z| ≥ 3); the weight of a
  // significant channel is its effect size, |ln((|value| + ε) / (|reference| + ε))| capped at
  // ln 100, with ε the channel's unit resolution. z alone would let a quiet but irrelevant
  // channel (virtual memory committed by a newly started process) outvote a large move on a
  // noisy one (CPU stall time 6 % → 82 %). Shares (%, 0/1 states) use ε = 5 points: a core
  // going from 0 % to 95 % busy is a big move, not a 95-fold one. A per-CPU channel weighs 1/N
  // of its effect on an N-CPU host: one core of sixteen is a sixteenth of the CPU (the host
  // aggregate of the same quantity carries the host-level evidence). Rises weigh 1 and falls
  // kFallWeight: a fault adds load or errors, while the victim workload slowing down shows as
  // falls spread over every subsystem it uses, which must not outvote the cause.
  // The same channel weights (falls, per-CPU channels) apply to the other detectors' shares.
  const double n_cpus = std::max(1, cores);
  const auto channel_weight = [&](std::size_t j) {
    return (zbar[j] < 0 ? kFallWeight : 1.0) / (is_per_cpu(chans[j]->name) ? n_cpus : 1.0);
  };
  std::vector<double> zev(nc, 0.0);
  double z_total = 0;
  for (std::size_t j : order) {
    if (std::fabs(zbar[j]) < 3.0) break;
    const double v = mean_value[j], ref = ref_median[j];
    if (!std::isfinite(v) || !std::isfinite(ref)) continue;
    const ChannelInfo& ch = *chans[j];
    const double eps = attribution_eps(ch.unit, model.floors()[j]);
    const double effect = std::min(std::fabs(std::log((std::fabs(v) + eps) / (std::fabs(ref) + eps))), kMaxEffect);
    zev[j] = effect * channel_weight(j);
    z_total += zev[j];
  }
  const auto weighted = [&](std::span<const double> share, std::vector<double>& out) -> std::span<const double> {
    if (share.size() != nc) return {};
    out.assign(nc, 0.0);
    for (std::size_t j = 0; j < nc; ++j) out[j] = share[j] * channel_weight(j);
    return out;
  };
  std::vector<double> ifw, spew;
  const std::span<const double> if_ev = weighted(more.iforest, ifw), spe_ev = weighted(more.pca_spe, spew);
  double if_total = 0, spe_total = 0;
  for (double v : ifw) if_total += v;
  for (double v : spew) spe_total += v;
  // Per subsystem, the sum of its kTopPerSubsystem strongest channels: one quantity seen
  // through many channels (bytes, packets, segments of the same traffic) counts once-ish.
  const auto subsystem_shares = [&](std::span<const double> per_channel) {
    std::map<Subsystem, std::vector<double>> by_sub;
    for (std::size_t j = 0; j < per_channel.size(); ++j)
      if (per_channel[j] > 0) by_sub[chans[j]->subsystem].push_back(per_channel[j]);
    std::vector<std::pair<Subsystem, double>> out;
    double total = 0;
    for (auto& [sub, es] : by_sub) {
      std::sort(es.begin(), es.end(), std::greater<>());
      double sum = 0;
      for (std::size_t i = 0; i < es.size() && i < kTopPerSubsystem; ++i) sum += es[i];
      out.emplace_back(sub, sum);
      total += sum;
    }
    for (auto& [sub, v] : out) v /= total > 0 ? total : 1.0;
    std::sort(out.begin(), out.end(), [](auto& x, auto& y) { return x.second > y.second; });
    return out;
  };
  // Each detector's view, and the weight it gets. robust_z alone when it flagged a window of the
  // incident on its own (peak level ≥ 1): each channel's own sustained deviation, weighed by its
  // effect size, explains a level shift best, while the multivariate detectors' contributions
  // in robust-z units favour channels that were merely quiet (a per-CPU busy % idle at 0.5 ± 0.2
  // dominates a PCA residual). Otherwise the forest and the PCA residual that flagged it, each
  // weighted by its peak level: a broken correlation or a change of variance, which no single
  // channel's level shows. robust_z alone when none flagged.
  const std::array<const char*, 3> names{"robust_z", "iforest", "pca_spe"};
  const std::array<std::span<const double>, 3> per_channel{std::span<const double>(zev), if_ev, spe_ev};
  const std::array<double, 3> totals{z_total, if_total, spe_total};
  std::array<double, 3> weight{};
  inc.detectors.clear();
  for (std::size_t d = 0; d < 3; ++d) {
    if (per_channel[d].size() != nc) continue;
    Incident::DetectorView view{names[d], more.peak_level[d], subsystem_shares(per_channel[d])};
    if (view.subsystem_shares.empty()) continue;
    weight[d] = std::isfinite(view.peak_level) && view.peak_level >= 1.0 ? view.peak_level : 0.0;
    inc.detectors.push_back(std::move(view));
  }
  if (weight[0] > 0 || weight[1] + weight[2] <= 0) weight = {1.0, 0.0, 0.0};
  const double wsum = weight[0] + weight[1] + weight[2];
  std::map<Subsystem, double> share;
  std::vector<double> combined(nc, 0.0);  // per channel: its weighted share of the evidence
  for (std::size_t d = 0; d < 3; ++d) {
    if (weight[d] <= 0 || per_channel[d].size() != nc || !(totals[d] > 0)) continue;
    for (const auto& view : inc.detectors)
      if (view.detector == names[d])
        for (const auto& [sub, v] : view.subsystem_shares) share[sub] += weight[d] / wsum * v;
    for (std::size_t j = 0; j < nc; ++j) combined[j] += weight[d] / wsum * per_channel[d][j] / totals[d];
  }
  inc.subsystem_shares.assign(share.begin(), share.end());
  std::sort(inc.subsystem_shares.begin(), inc.subsystem_shares.end(),
            [](auto& x, auto& y) { return x.second > y.second; });
  inc.subsystem = Subsystem::system;
  inc.confidence = 0;
  if (!inc.subsystem_shares.empty()) {
    inc.subsystem = inc.subsystem_shares.front().first;
    inc.confidence = inc.subsystem_shares.front().second;
  }
  // Focus: the label ("" = host-wide) with the largest share of the combined evidence.
  std::map<std::string, double> by_label;
  double all_evidence = 0;
  for (std::size_t j = 0; j < nc; ++j) {
    by_label[channel_label(chans[j]->name)] += combined[j];
    all_evidence += combined[j];
  }
  inc.focus.clear();
  inc.focus_share = 0;
  for (const auto& [label, e] : by_label)
    if (!label.empty() && all_evidence > 0 && e / all_evidence >= kFocusMinShare && e / all_evidence > inc.focus_share) {
      inc.focus = label;
      inc.focus_share = e / all_evidence;
    }
  // Top channels: by |z| when robust_z took part (its value-vs-reference reading is what an
  // operator checks), else by the combined share of the detectors that raised the incident.
  if (weight[0] <= 0)
    std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) { return combined[x] > combined[y]; });
  const auto evidence = [&](std::size_t j) {
    ChannelEvidence ev;
    ev.name = chans[j]->name;
    ev.unit = chans[j]->unit;
    ev.subsystem = chans[j]->subsystem;
    ev.z = zbar[j];
    ev.reference = ref_median[j];
    ev.value = mean_value[j];
    return ev;
  };
  inc.top.clear();
  for (std::size_t i = 0; i < order.size() && int(inc.top.size()) < top_channels; ++i)
    inc.top.push_back(evidence(order[i]));
  // The action names the strongest channel (in the same order) of the subsystem it is about:
  // the top channel may belong to another one when, say, a storage counter idle at 0 carries
  // more effect size than a move on a CPU channel.
  inc.action.clear();
  if (!order.empty()) {
    std::size_t lead = order.front();
    for (std::size_t j : order)
      if (chans[j]->subsystem == inc.subsystem) { lead = j; break; }
    inc.action = suggest_action(inc.subsystem, evidence(lead));
  }
}

}  // namespace reveal::pipeline
