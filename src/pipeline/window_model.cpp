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
constexpr std::size_t kPcaBlock = 10;   // windows per block of the held-out PCA calibration
constexpr double kSuspect = 0.5;        // fused score that removes a window from a self reference
constexpr int kSelfPasses = 3;
constexpr double kNaN = __builtin_nan("");
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

WindowModel::WindowModel(std::vector<double> floors, std::vector<Subsystem> subsystems, const DetectOptions& opts)
    : floors_(std::move(floors)), subsystems_(std::move(subsystems)), z_cut_(opts.z_cut),
      if_cut_(opts.if_cut), pca_cut_(opts.pca_cut), prune_r_(opts.prune_r), seed_(opts.seed),
      pca_use_(opts.pca), pca_({.variance = opts.pca_variance, .max_components = 50}) {
  const std::size_t nc = floors_.size();
  vlo_.resize(nc); vhi_.resize(nc); zlo_.resize(nc); zhi_.resize(nc); pfeat_.resize(nc);
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
  std::array<std::vector<double>, kNumSubsystems> subref;
  std::array<double, kNumSubsystems> sub{};
  for (const auto& r : refs)
    for (std::size_t k = 0; k < r.windows->first_row.size(); ++k) {
      if (r.keep && !(*r.keep)[k]) continue;
      zref.push_back(z_stream(*r.windows, k, *r.cols, zrow, &sub));
      for (std::size_t i = 0; i < kNumSubsystems; ++i)
        if (sub_present_[i]) subref[i].push_back(sub[i]);
    }
  kept_ = prune_correlated(means, prune_r_);
  feat_.assign(kept_.size() * 2, kNaN);
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
  std::vector<double> speref, t2ref;
  std::array<Matrix, 2> fold{Matrix(0, nc), Matrix(0, nc)};
  for (std::size_t k = 0; k < pf.rows(); ++k) fold[(k / kPcaBlock) % 2].append_row(pf.row(k));
  if (pca_use_ != PcaUse::off && fold[0].rows() >= 2 && fold[1].rows() >= 2) {
    for (int f = 0; f < 2; ++f) {
      PcaResidual held = pca_;
      held.fit(fold[f]);
      const Matrix& other = fold[1 - f];
      for (std::size_t k = 0; k < other.rows(); ++k) {
        const PcaScore ps = held.score(other.row(k));
        speref.push_back(std::log1p(ps.spe));
        t2ref.push_back(std::log1p(ps.t2));
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
  spe_cal_ = speref.empty() ? Calibration{} : calibrate(speref, kSpeStreamFloor);
  t2_cal_ = t2ref.empty() ? Calibration{} : calibrate(t2ref, kT2StreamFloor);
  const std::array<const std::vector<double>*, 4> streams{&zref, &ifref, &speref, &t2ref};
  for (std::size_t d = 0; d < streams.size(); ++d) {
    tail_ok_[d] = false;
    try {
      tails_[d].fit(*streams[d]);
      tail_ok_[d] = true;
    } catch (const std::invalid_argument&) {
      // Too few reference windows or a constant tail: no tail probability for this stream.
    }
  }
  for (std::size_t i = 0; i < kNumSubsystems; ++i)
    if (sub_present_[i]) sub_cal_[i] = calibrate(subref[i], kZStreamFloor);
}

WindowScore WindowModel::score(const Windows& w, std::size_t k, const std::vector<int>& cols,
                               std::span<double> z) const {
  features(w, k, cols, feat_);
  return score_with(w, k, cols, z, forest_.score(feat_));
}

std::vector<WindowScore> WindowModel::score_all(const Windows& w, const std::vector<int>& cols, Matrix& z) const {
  const std::size_t nw = w.first_row.size();
  Matrix f(nw, kept_.size() * 2);
  for (std::size_t k = 0; k < nw; ++k) features(w, k, cols, f.row(k));
  std::vector<double> if_raw(nw);
  forest_.score_many(f, if_raw);
  z = Matrix(nw, n_channels());
  std::vector<WindowScore> out(nw);
  for (std::size_t k = 0; k < nw; ++k) out[k] = score_with(w, k, cols, z.row(k), if_raw[k]);
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
  for (std::size_t d = 0; d < stream.size(); ++d)
    s.tail_p[d] = tail_ok_[d] && (d < 2 || pca_.fitted()) ? tails_[d].tail_probability(stream[d]) : kNaN;
  s.fused = std::max({0.0, s.z_cal / z_cut_, s.if_cal / if_cut_});
  s.sustained = s.z_cal >= z_cut_;
  if (pca_use_ == PcaUse::fuse) s.fused = std::max(s.fused, s.spe_cal / pca_cut_);
  return s;
}

std::vector<char> fit_self(WindowModel& model, const Windows& w, const std::vector<int>& cols,
                           std::vector<double>& fused) {
  // A self reference is contaminated by the faults it should find (a 30 s fault is a quarter
  // of a 2-minute run, which inflates medians and MADs): after each pass, drop the windows
  // that look suspicious (fused ≥ kSuspect, widened by one window length either side) from
  // the reference and score again, while at least half remain.
  const std::size_t nw = w.first_row.size(), L = std::max<std::size_t>(w.length, 1);
  Matrix z;
  std::vector<char> keep(nw, 1);
  auto pass = [&] {
    const ReferenceWindows ref{&w, &cols, &keep};
    model.fit(std::span(&ref, 1));
    const std::vector<WindowScore> scores = model.score_all(w, cols, z);
    fused.resize(nw);
    for (std::size_t k = 0; k < nw; ++k) fused[k] = scores[k].fused;
  };
  pass();
  for (int p = 1; p < kSelfPasses; ++p) {
    std::vector<char> next(nw, 1);
    for (std::size_t k = 0; k < nw; ++k)
      if (fused[k] >= kSuspect)
        for (std::size_t j = k >= L ? k - L : 0; j < std::min(nw, k + L + 1); ++j) next[j] = 0;
    const std::size_t n_keep = std::count(next.begin(), next.end(), 1);
    if (next == keep || n_keep * 2 < nw) break;
    keep = std::move(next);
    pass();
  }
  return keep;
}

void attribute(Incident& inc, std::span<const double> zbar, std::span<const double> mean_value,
               const WindowModel& model, const std::vector<const ChannelInfo*>& chans, int cores,
               int top_channels) {
  const std::size_t nc = zbar.size();
  const auto& ref_median = model.robust_z().median();
  std::vector<std::size_t> order(nc);
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return std::fabs(zbar[x]) > std::fabs(zbar[y]);
  });
  // Subsystem evidence. Significance comes from z (|z| ≥ 3); the weight of a significant
  // channel is its effect size, |ln((|value| + ε) / (|reference| + ε))| capped at ln 100,
  // with ε the channel's unit resolution. z alone would let a quiet but irrelevant channel
  // (virtual memory committed by a newly started process) outvote a large move on a noisy
  // one (CPU stall time 6 % → 82 %). Shares (%, 0/1 states) use ε = 5 points: a core going
  // from 0 % to 95 % busy is a big move, not a 95-fold one. A per-CPU channel weighs 1/N of
  // its effect on an N-CPU host: one core of sixteen is a sixteenth of the CPU (the host
  // aggregate of the same quantity carries the host-level evidence). Rises weigh 1 and falls
  // kFallWeight: a fault adds load or errors, while the victim workload slowing down shows as
  // falls spread over every subsystem it uses, which must not outvote the cause.
  std::map<Subsystem, std::vector<double>> evidence;
  std::map<std::string, double> by_label;  // "" = host-wide channels
  double all_evidence = 0;
  const double n_cpus = std::max(1, cores);
  for (std::size_t j : order) {
    if (std::fabs(zbar[j]) < 3.0) break;
    const double v = mean_value[j], ref = ref_median[j];
    if (!std::isfinite(v) || !std::isfinite(ref)) continue;
    const ChannelInfo& ch = *chans[j];
    const double eps = attribution_eps(ch.unit, model.floors()[j]);
    const double effect = std::min(std::fabs(std::log((std::fabs(v) + eps) / (std::fabs(ref) + eps))), kMaxEffect);
    const double e = effect * (zbar[j] > 0 ? 1.0 : kFallWeight) / (is_per_cpu(ch.name) ? n_cpus : 1.0);
    evidence[ch.subsystem].push_back(e);
    by_label[channel_label(ch.name)] += e;
    all_evidence += e;
  }
  // Per subsystem, the sum of its kTopPerSubsystem strongest channels: one quantity seen
  // through many channels (bytes, packets, segments of the same traffic) counts once-ish.
  std::map<Subsystem, double> share;
  double total = 0;
  for (auto& [sub, es] : evidence) {
    std::sort(es.begin(), es.end(), std::greater<>());
    double sum = 0;
    for (std::size_t i = 0; i < es.size() && i < kTopPerSubsystem; ++i) sum += es[i];
    share[sub] = sum;
    total += sum;
  }
  if (total <= 0) total = 1;
  inc.subsystem_shares.clear();
  for (auto& [sub, v] : share) inc.subsystem_shares.emplace_back(sub, v / total);
  inc.focus.clear();
  inc.focus_share = 0;
  for (const auto& [label, e] : by_label)
    if (!label.empty() && all_evidence > 0 && e / all_evidence >= kFocusMinShare && e / all_evidence > inc.focus_share) {
      inc.focus = label;
      inc.focus_share = e / all_evidence;
    }
  std::sort(inc.subsystem_shares.begin(), inc.subsystem_shares.end(),
            [](auto& x, auto& y) { return x.second > y.second; });
  inc.subsystem = Subsystem::system;
  inc.confidence = 0;
  if (!inc.subsystem_shares.empty()) {
    inc.subsystem = inc.subsystem_shares.front().first;
    inc.confidence = inc.subsystem_shares.front().second;
  }
  inc.top.clear();
  for (std::size_t i = 0; i < order.size() && int(inc.top.size()) < top_channels; ++i) {
    const std::size_t j = order[i];
    ChannelEvidence ev;
    ev.name = chans[j]->name;
    ev.unit = chans[j]->unit;
    ev.subsystem = chans[j]->subsystem;
    ev.z = zbar[j];
    ev.reference = ref_median[j];
    ev.value = mean_value[j];
    inc.top.push_back(std::move(ev));
  }
  inc.action = inc.top.empty() ? std::string() : suggest_action(inc.subsystem, inc.top.front());
}

}  // namespace reveal::pipeline
